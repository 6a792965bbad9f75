// boardtrace-report's flame-graph formats read by speedscope's own import
// code: the release bundle of the npm package pinned in node/, run in a node
// vm with its page rendering cut off and its text importer exposed. For each
// recorded trace of the data folder: the speedscope JSON and the collapsed
// stacks import; each thread is a profile; per zone name, the self time of
// the evented profiles equals that of the collapsed lines, and the total
// time equals what `stats --csv` reports.
// Usage: node check_speedscope.cjs BOARDTRACE_REPORT DATA_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const { execFileSync } = require('child_process');

const [report, dataDir] = process.argv.slice(2);
const release = path.join(__dirname, 'node', 'node_modules', 'speedscope', 'dist', 'release');
if (!fs.existsSync(release)) {
  console.log(`SKIP: ${release} is missing: run tools/setup.sh (npm ci in tests/report/node)`);
  process.exit(77);
}

// The bundle's import entry point and its page rendering, as version 1.25.0
// writes them (the lock file pins it); a new version fails here, loudly.
function loadImporter() {
  const bundle = fs.readdirSync(release).find(f => /^speedscope-.*\.js$/.test(f));
  let src = fs.readFileSync(path.join(release, bundle), 'utf8');
  const entry = 'async function Ff(t,e){return(await jr).importProfileGroupFromText(t,e)}';
  const render = 'mo(C(Os,null,C(Rf,null)),document.body,document.body.lastElementChild||void 0);';
  if (!src.includes(entry) || !src.includes(render))
    throw new Error(`${bundle}: not the speedscope 1.25.0 bundle this check knows`);
  src = src.replace(entry, entry + 'globalThis.__btImport=Ff;').replace(render, '');
  // What the bundle touches of a page while it loads, without a page.
  const inert = name =>
    new Proxy(function () {}, {
      get: (t, p) => (p === 'then' ? undefined : p === Symbol.toPrimitive ? () => '' : inert(name)),
      apply: () => inert(name),
      construct: () => inert(name),
    });
  const ctx = {
    console: { log() {}, warn: console.warn, error: console.error, info() {} },
    setTimeout, clearTimeout, Promise, URL, TextDecoder, TextEncoder, Uint8Array, ArrayBuffer,
    atob, btoa, performance,
    document: inert('document'),
    navigator: { userAgent: 'node', platform: 'linux' },
    location: { hash: '', search: '', href: 'file:///check', protocol: 'file:' },
    matchMedia: () => ({ matches: false, addEventListener() {}, addListener() {} }),
    localStorage: { getItem: () => null, setItem() {} },
    addEventListener() {},
  };
  ctx.window = ctx.self = ctx.globalThis = ctx;
  vm.createContext(ctx);
  vm.runInContext(src, ctx);
  if (typeof ctx.__btImport !== 'function') throw new Error('speedscope importer not exposed');
  return ctx.__btImport;
}

function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exitCode = 1;
}

const run = args => execFileSync(report, args, { maxBuffer: 1 << 30 }).toString('utf8');

// stats --csv: total_ns per name (a name may have several source locations).
function statsTotals(trace) {
  const totals = new Map();
  const lines = run(['stats', '--csv', trace]).split('\n').slice(1).filter(Boolean);
  for (const line of lines) {
    const cells = [];
    for (let i = 0; i < line.length; ) {
      let cell = '';
      if (line[i] === '"') {
        for (i++; i < line.length; i++) {
          if (line[i] === '"' && line[i + 1] === '"') (cell += '"'), i++;
          else if (line[i] === '"') break;
          else cell += line[i];
        }
        i += 2;
      } else {
        const comma = line.indexOf(',', i);
        const end = comma < 0 ? line.length : comma;
        cell = line.slice(i, end);
        i = end + 1;
      }
      cells.push(cell);
    }
    totals.set(cells[0], (totals.get(cells[0]) || 0) + Number(cells[3]));
  }
  return totals;
}

// Per name over every profile: self and total weights, and whether the
// name is on some path twice (its total then counted by speedscope's rule).
function byName(group) {
  const self = new Map(), total = new Map(), recursive = new Set();
  for (const p of group.profiles) {
    const stack = [];
    p.forEachCall(
      node => {
        const name = node.frame.name;
        if (stack.includes(name)) recursive.add(name);
        stack.push(name);
      },
      () => stack.pop()
    );
    p.forEachFrame(f => {
      self.set(f.name, (self.get(f.name) || 0) + f.getSelfWeight());
      total.set(f.name, (total.get(f.name) || 0) + f.getTotalWeight());
    });
  }
  return { self, total, recursive };
}

async function checkTrace(importer, trace) {
  const json = run(['speedscope', trace]);
  const collapsed = run(['collapsed', trace]);
  const stats = statsTotals(trace);
  const threads = new Set(collapsed.split('\n').filter(Boolean).map(l => l.split(';')[0]));

  const evented = await importer('trace.speedscope.json', json);
  if (!evented || !evented.profiles.length) return fail(`${trace}: speedscope imported nothing`);
  const names = evented.profiles.map(p => p.getName());
  for (const t of threads)
    if (!names.includes(t)) fail(`${trace}: thread ${t} of the collapsed lines has no profile`);
  for (const p of evented.profiles)
    if (p.getWeightUnit() !== 'nanoseconds') fail(`${trace}: ${p.getName()}: unit ${p.getWeightUnit()}`);

  const stacks = await importer('trace.collapsed.txt', collapsed);
  if (!stacks || !stacks.profiles.length) return fail(`${trace}: collapsed imported nothing`);

  const e = byName(evented);
  const c = byName(stacks);
  let checked = 0;
  for (const [name, want] of stats) {
    if (!(want > 0)) continue;
    const es = e.self.get(name), cs = c.self.get(name) || 0;
    if (es !== cs) fail(`${trace}: ${name}: self ${es} ns in speedscope JSON, ${cs} in collapsed`);
    if (!e.recursive.has(name) && e.total.get(name) !== want)
      fail(`${trace}: ${name}: total ${e.total.get(name)} ns in speedscope JSON, ${want} in stats`);
    if (!c.recursive.has(name) && c.total.get(name) !== want)
      fail(`${trace}: ${name}: total ${c.total.get(name)} ns in collapsed, ${want} in stats`);
    checked++;
  }
  if (!checked) fail(`${trace}: no zone compared`);
  console.log(`${path.basename(path.dirname(trace))}: ${evented.profiles.length} profiles, ` +
              `${checked} zone names match stats`);
}

(async () => {
  const importer = loadImporter();
  const traces = fs.readdirSync(dataDir)
    .map(d => path.join(dataDir, d, 'session.tracy'))
    .filter(f => fs.existsSync(f));
  if (traces.length < 5) fail(`only ${traces.length} traces in ${dataDir}`);
  for (const t of traces) await checkTrace(importer, t);
})().catch(err => {
  console.error(err);
  process.exit(1);
});
