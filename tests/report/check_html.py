#!/usr/bin/env python3
"""boardtrace-report html opened in headless Chromium (Debian's package),
without a network (its own network namespace): the page must log nothing
to the console (a request it tried would show there, blocked by its policy
or failing), its script must draw a flame graph for every thread, and its
zone table must hold stats' top zones with their counts and totals, its
messages, locks and plots stats' lines; with a BASE the diff table must
hold each zone's totals in both traces, the time in zones diff's, and
every flame-graph box say its change against the base. The timeline must draw every thread that has
zones (the 16 busiest when there are more), its outermost row covering the time the thread's zones take, and no
zone more time than stats gives it; the memory curves must reach stats'
peak per pool and the plot curves each plot's least and greatest value.
With CAPTURE and BT_TRACED, a trace of more threads and plots than the page
draws (bt_traced wide 20 70, recorded here) must show the caps: the
timeline the 16 busiest threads, the first 64 plots and how many more.

Usage: check_html.py BOARDTRACE_REPORT DATA_DIR OUT_DIR [CAPTURE BT_TRACED]
Exit 0 pass, 1 fail, 77 skipped (no chromium or unshare: tools/setup.sh)."""
import csv
import html.parser
import io
import json
import os
import shutil
import socket
import subprocess
import sys

report, data_dir, out_dir = sys.argv[1:4]
capture, bt_traced = (sys.argv[4:6] + [None, None])[:2]
TIMELINE_THREADS = 16  # BTR_TIMELINE_THREADS
SERIES_MAX = 64  # BTR_SERIES_MAX
chromium = shutil.which("chromium")
if not chromium or not shutil.which("unshare"):
    print("SKIP: chromium or unshare missing (tools/setup.sh installs chromium)")
    sys.exit(77)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(args):
    return subprocess.run([report] + args, check=True, capture_output=True).stdout.decode()


class Tables(html.parser.HTMLParser):
    """The page's tables by id (rows of cell texts), its rects and body."""

    def __init__(self):
        super().__init__()
        self.tables, self.table, self.row, self.cell = {}, None, None, None
        self.rects, self.body, self.changes = 0, {}, []
        self.pre, self.in_pre = "", False
        self.timeline, self.bars, self.series = {}, [], []
        self.total, self.in_total = "", False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = self.tables.setdefault(a.get("id", ""), [])
        elif tag == "tr" and self.table is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""
        elif tag == "rect" and a.get("class", "").split()[:1] == ["z"]:
            self.rects += 1
            self.changes.append(a.get("data-change"))
        elif tag == "g" and a.get("class") == "thread":
            self.timeline[a["data-thread"]] = int(a["data-busy-ns"])
        elif tag == "rect" and a.get("class") == "tl":
            self.bars.append((a["data-zone"], int(a["data-ns"])))
        elif tag == "figure" and a.get("class") == "series":
            self.series.append({"kind": a["data-kind"], "name": a["data-name"]})
        elif tag == "data" and self.series:
            self.series[-1][a["class"]] = [float(v) for v in a["value"].split()]
        elif tag == "body":
            self.body = a
        elif tag == "pre":
            self.in_pre = True
        elif tag == "p" and a.get("id") == "total":
            self.in_total = True

    def handle_endtag(self, tag):
        if tag == "pre":
            self.in_pre = False
        if tag == "p":
            self.in_total = False
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.table.append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.in_pre:
            self.pre += data
        if self.in_total:
            self.total += data
        if self.cell is not None:
            self.cell += data


def open_in_chromium(page, name):
    """The DOM after the page's script ran; a screenshot beside it."""
    profile = os.path.join(out_dir, name + ".profile")
    shot = os.path.join(out_dir, name + ".png")
    args = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
            "--enable-logging=stderr", "--v=0", "--user-data-dir=" + profile,
            "--window-size=1280,2400"]
    url = "file://" + os.path.abspath(page)
    script = 'ip link set lo up && exec "$@"'
    dom = subprocess.run(["unshare", "-n", "sh", "-c", script, "sh"] + args + ["--dump-dom", url],
                         capture_output=True, timeout=300)
    subprocess.run(["unshare", "-n", "sh", "-c", script, "sh"] + args + ["--screenshot=" + shot, url],
                   capture_output=True, timeout=300)
    for line in dom.stderr.decode(errors="replace").splitlines():
        if ":CONSOLE" in line:
            fail(f"{name}: the page logged: {line}")
    if not os.path.exists(shot) or os.path.getsize(shot) < 10000:
        fail(f"{name}: no screenshot")
    p = Tables()
    p.feed(dom.stdout.decode())
    return p


def stats_rows(trace):
    rows = list(csv.DictReader(io.StringIO(run(["stats", "--csv", trace]))))
    return [(r["name"], r["src_file"] + ":" + r["src_line"], r["counts"], r["total_ns"]) for r in rows]


def stats_table(text, title):
    """The rows of a stats section (a line TITLE, a header, rows up to a
    blank line) as (name, the other columns): names are 32 wide."""
    lines = text.splitlines()
    if title not in lines:
        return []
    rows = []
    for line in lines[lines.index(title) + 2:]:
        if not line.strip() or line.startswith("leaked from"):
            break
        rows.append((line[:32].rstrip(), line[32:].split()))
    return rows


def check_timeline(p, trace, name):
    busy = {}
    for line in run(["collapsed", trace]).splitlines():
        path, ns = line.rsplit(" ", 1)
        thread = path.split(";")[0]
        busy[thread] = busy.get(thread, 0) + int(ns)
    if len(busy) > TIMELINE_THREADS:  # the page draws the busiest
        busy = dict(sorted(busy.items(), key=lambda kv: -kv[1])[:TIMELINE_THREADS])
    if p.timeline != busy:
        fail(f"{name}: timeline threads and their outermost rows' time {p.timeline}, "
             f"the zones' self times per thread (collapsed) {busy}")
    totals = {}
    for r in stats_rows(trace):
        totals[r[0]] = totals.get(r[0], 0) + int(r[3])
    drawn = {}
    for zone, ns in p.bars:
        drawn[zone] = drawn.get(zone, 0) + ns
    for zone, ns in drawn.items():
        if ns > totals.get(zone, 0):
            fail(f"{name}: the timeline draws {zone} for {ns} ns, stats gives it {totals.get(zone)}")
    if not p.bars:
        fail(f"{name}: the timeline draws no bar")
    print(f"{name}: timeline of {len(p.timeline)} threads, {len(p.bars)} bars, as collapsed")


def check_series(p, stats_text, name, text):
    pools = [(n, int(c[2])) for n, c in stats_table(stats_text, "Memory")]
    curves = [(c["name"][:32], max(c["hi"])) for c in p.series if c["kind"] == "memory"]
    if curves != pools:
        fail(f"{name}: memory curves (pool, peak) {curves}, stats {pools}")
    plots = [(n, float(c[2]), float(c[3])) for n, c in stats_table(stats_text, "Plots")
             if int(c[1])]
    drawn = [(c["name"][:32], float(f"{min(c['lo']):.6g}"), float(f"{max(c['hi']):.6g}"))
             for c in p.series if c["kind"] == "plot"]
    if len(plots) > SERIES_MAX:  # the first ones drawn, the rest counted
        more = f"{len(plots) - SERIES_MAX} more plots, not drawn"
        if more not in text:
            fail(f"{name}: {len(plots)} plots and the page does not say {more!r}")
        plots = plots[:SERIES_MAX]
    if drawn != plots:
        fail(f"{name}: plot curves (name, min, max) {drawn}, stats {plots}")
    print(f"{name}: {len(curves)} memory curves at stats' peaks, {len(drawn)} plots "
          f"at stats' min and max")


def check_single(trace, name):
    page = os.path.join(out_dir, name + ".html")
    run(["html", "-o", page, trace])
    with open(page, encoding="utf-8") as f:
        text = f.read()
    for needle in ("http:", "https:", "src=", "<link"):
        if needle in text.replace("http://www.w3.org/2000/svg", ""):
            fail(f"{name}: the page holds {needle!r}: it must load nothing")
    p = open_in_chromium(page, name)
    threads = {line.split(";")[0] for line in run(["collapsed", trace]).splitlines()}
    if p.body.get("data-rendered") != str(len(threads)):
        fail(f"{name}: script drew {p.body.get('data-rendered')} threads, {len(threads)} have zones")
    if p.rects < len(threads):
        fail(f"{name}: {p.rects} flame-graph boxes for {len(threads)} threads")
    got = [(r[0], r[1], r[2], r[3]) for r in p.tables.get("zones", [])[1:]]
    want = stats_rows(trace)[: len(got)]
    if not got or got != want:
        fail(f"{name}: zone table {got[:3]}... differs from stats {want[:3]}...")
    stats_text = run(["stats", trace])
    pre = [line for line in p.pre.splitlines() if line.strip()]
    missing = [line for line in pre if line not in stats_text.splitlines()]
    if missing:
        fail(f"{name}: the page's messages, locks and plots say what stats does not: {missing[:3]}")
    print(f"{name}: {len(pre)} lines of messages, locks and plots as in stats")
    print(f"{name}: {len(got)} zones as in stats, {len(threads)} threads drawn, {p.rects} boxes")
    check_timeline(p, trace, name)
    check_series(p, stats_text, name, text)
    return p


def check_diff(base, new, name):
    page = os.path.join(out_dir, name + ".html")
    run(["html", "-o", page, new, base])
    p = open_in_chromium(page, name)
    rows = p.tables.get("diff", [])[1:]
    totals = [{(r[0], r[1]): r[3] for r in stats_rows(t)} for t in (base, new)]
    if not rows:
        fail(f"{name}: no diff table")
    for r in rows:
        for side, cell in ((0, r[2]), (1, r[3])):
            want = totals[side].get((r[0], r[1]), "0")
            if cell != want:
                fail(f"{name}: {r[0]} total {cell} on side {side}, stats says {want}")
    total = json.loads(run(["diff", "--json", base, new]))["total"]
    want = f"{total['base_ns']} ns in the base, {total['new_ns']} ns here"
    if want not in p.total:
        fail(f"{name}: the time in zones reads {p.total!r}, diff --json gives {want!r}")
    # The differential flame graph: every box says its change; the two
    # recordings of one program share their call paths.
    if not p.rects or None in p.changes:
        fail(f"{name}: {p.rects} flame-graph boxes, changes {p.changes}")
    if all(c == "new" for c in p.changes):
        fail(f"{name}: no call path matched the base's")
    print(f"{name}: {len(rows)} diff rows with stats' totals of both traces, "
          f"{p.rects} flame-graph boxes against the base: {sorted(set(p.changes))}")


check_single(os.path.join(data_dir, "tracy-0.14.0-full", "session.tracy"), "full")
check_single(os.path.join(data_dir, "tracy-0.10.0-session", "session.tracy"), "v0.10")
if capture and bt_traced:
    # More threads and plots than the page draws.
    wide = os.path.join(out_dir, "wide.tracy")
    if os.path.exists(wide):
        os.remove(wide)  # an earlier run's: the capture keeps an existing file
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, TRACY_NO_EXIT="1", TRACY_PORT=str(port), TRACY_NO_BROADCAST="1",
               TRACY_NO_SAMPLING="1", TRACY_NO_SYS_TRACE="1")
    program = subprocess.Popen([bt_traced, "wide", "20", "70"], env=env)
    subprocess.run([capture, "-o", wide, "-p", str(port), "--connect-timeout", "120"],
                   check=True, capture_output=True, timeout=600)
    if program.wait(timeout=600) != 0:
        fail("wide: bt_traced wide 20 70 failed")
    p = check_single(wide, "wide")
    if len(p.timeline) != TIMELINE_THREADS:
        fail(f"wide: the timeline draws {len(p.timeline)} of 20 threads, not {TIMELINE_THREADS}")
    drawn = len([c for c in p.series if c["kind"] == "plot"])
    if drawn != SERIES_MAX:
        fail(f"wide: {drawn} plot curves of 70, not {SERIES_MAX}")
    print(f"wide: {len(p.timeline)} of 20 threads in the timeline, {drawn} of 70 plots drawn")
check_diff(os.path.join(data_dir, "tracy-0.13.1-session", "session.tracy"),
           os.path.join(data_dir, "tracy-0.14.0-session", "session.tracy"), "diff")
sys.exit(1 if failures else 0)
