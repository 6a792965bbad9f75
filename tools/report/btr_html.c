/* boardtrace-report html: one self-contained page (no network, nothing
 * loaded: inline style, hand-written SVG, a small inline script) with the
 * top zones, a flame graph of zones by call path per thread that zooms and
 * searches, a per-thread timeline (btr_html_timeline.c), the frame-time
 * histograms, the memory pools and their bytes in use over time and the
 * plots' curves (btr_html_series.c), and the messages, locks and plots as
 * stats prints them; with a BASE trace, the diff table and a differential
 * flame graph (boxes coloured by their path's change).
 * Zones are aggregated by call path (btr_calltree.c) and paths under 1/5000
 * of their thread's time are left out, so the page stays small
 * whatever the trace's length. */
#define _GNU_SOURCE /* open_memstream */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <boardtrace/config.h>

#include "btr_calltree.h"
#include "btr_diff.h"
#include "btr_html.h"

#define TOP_ZONES   50
#define PRUNE_SHARE 5000 /* a path under a thread's time / this is left out */
#define HIST_BINS   40

static const char style[] =
    "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
    "td:first-child,th:first-child,td.l{text-align:left}"
    "h2{margin-top:1.5em}.slower{color:#b00}.faster{color:#070}"
    "svg text{font:11px monospace;pointer-events:none}"
    "rect.z{stroke:#fff;stroke-width:.5;cursor:pointer}rect.hit{fill:#e0f!important}"
    "#search{margin:.3em 0}";

/* The flame graph: data in "flame" (names, and per thread a tree of
 * [name, inclusive ns, self ns, count, (BASE's ns, -1 none, with a base,)
 * children]); a click zooms into a node, the button resets, the field
 * highlights names holding its text. Against a base, boxes are coloured by
 * their change and say it in data-change. */
static const char script[] =
    "'use strict';(function(){"
    "const D=JSON.parse(document.getElementById('flame').textContent);"
    "const W=1100,H=17,K=D.diff?5:4;const box=document.getElementById('flames');"
    "function depth(n){let d=0;for(const c of n[K])d=Math.max(d,depth(c));return d+1;}"
    "function color(s){let h=0;for(const ch of s)h=(h*31+ch.charCodeAt(0))>>>0;"
    "return 'hsl('+(h%60)+',75%,'+(55+h%20)+'%)';}"
    "function change(n){if(n[4]<0)return 'new';const r=n[1]/Math.max(n[4],1);"
    "return r>1.05?'grew':r<1/1.05?'shrank':'same';}"
    "const shade={new:'hsl(280,55%,70%)',grew:'hsl(0,75%,65%)',shrank:'hsl(215,75%,65%)',"
    "same:'hsl(0,0%,78%)'};"
    "const ms=v=>(v/1e6).toFixed(3)+' ms';"
    "function draw(t,focus){const svg=t.svg;while(svg.firstChild)svg.firstChild.remove();"
    "const rows=depth(focus);svg.setAttribute('height',rows*H);"
    "svg.setAttribute('viewBox','0 0 '+W+' '+rows*H);"
    "const scale=W/Math.max(focus[1],1);"
    "(function put(n,x,y){const w=n[1]*scale;if(w<.3)return;"
    "const r=document.createElementNS('http://www.w3.org/2000/svg','rect');"
    "const name=D.names[n[0]];"
    "r.setAttribute('x',x);r.setAttribute('y',y);r.setAttribute('width',w);"
    "r.setAttribute('height',H-1);r.setAttribute('class','z');r.dataset.name=name;"
    "let text=name+': '+n[3]+' zones, '+ms(n[1])+', self '+ms(n[2]);"
    "if(D.diff){const c=change(n);r.dataset.change=c;r.setAttribute('fill',shade[c]);"
    "text+=n[4]<0?', not in the base':', base '+ms(n[4]);}"
    "else r.setAttribute('fill',color(name));"
    "const tip=document.createElementNS('http://www.w3.org/2000/svg','title');"
    "tip.textContent=text;"
    "r.appendChild(tip);r.addEventListener('click',()=>draw(t,n));svg.appendChild(r);"
    "if(w>30){const tx=document.createElementNS('http://www.w3.org/2000/svg','text');"
    "tx.setAttribute('x',x+3);tx.setAttribute('y',y+12);"
    "tx.textContent=name.slice(0,Math.floor(w/7));svg.appendChild(tx);}"
    "let cx=x;for(const c of n[K]){put(c,cx,y+H);cx+=c[1]*scale;}})(focus,0,0);"
    "mark();}"
    "function mark(){const q=document.getElementById('search').value;"
    "for(const r of document.querySelectorAll('rect.z'))"
    "r.classList.toggle('hit',q!==''&&r.dataset.name.includes(q));}"
    "for(const th of D.threads){const h=document.createElement('h3');h.textContent=th.name;"
    "const b=document.createElement('button');b.textContent='reset zoom';"
    "const svg=document.createElementNS('http://www.w3.org/2000/svg','svg');"
    "svg.setAttribute('width',W);box.append(h,b,svg);const t={svg};"
    "b.addEventListener('click',()=>draw(t,th.root));draw(t,th.root);}"
    "document.getElementById('search').addEventListener('input',mark);"
    "document.body.dataset.rendered=String(D.threads.length);"
    "})();";

struct frame {
    uint32_t node;
    uint32_t next_child; /* the child to visit next, 0 when done */
    uint32_t base;       /* the same call path in BASE's tree, 0 none */
};

/* BASE's trees, for the differential flame graph. */
struct flame_base {
    const struct btr_calltree *c;
    const struct btc_trace *t;
    const int64_t *incl;
};

/* The child of BASE's node base whose zone has the name of NEW's srcloc. */
static uint32_t base_child(const struct flame_base *b, uint32_t base, const char *name)
{
    if (!b || !base)
        return 0;
    for (uint32_t k = btr_call_node(b->c, base)->child; k; k = btr_call_node(b->c, k)->next)
        if (!strcmp(btr_zone_name(b->t, btr_call_node(b->c, k)->srcloc), name))
            return k;
    return 0;
}

/* ",BASE_NS" of a node drawn against BASE (-1: the path is not in BASE). */
static void base_cell(FILE *out, const struct flame_base *b, uint32_t base)
{
    if (b)
        fprintf(out, ",%" PRId64, base ? b->incl[base] : -1);
}

/* Inclusive time of every node (its self time and its children's), the
 * measure the flame graph lays out: a zone that never ended has no total
 * of its own but still holds its children. Iterative, post-order. */
static int64_t *inclusive(const struct btr_calltree *c)
{
    int64_t *incl = calloc(c->nodes.len + 1, sizeof *incl);
    struct btc_vec stack;
    btc_vec_init(&stack, sizeof(struct frame));
    for (size_t i = 0; incl && i < c->threads.len; i++) {
        const struct btr_call_thread *th = btc_vec_at(&c->threads, i);
        struct frame *f = btc_vec_push(&stack);
        if (!f)
            goto fail;
        *f = (struct frame){th->root, btr_call_node(c, th->root)->child, 0};
        while (stack.len) {
            f = btc_vec_at(&stack, stack.len - 1);
            if (f->next_child) {
                uint32_t k = f->next_child;
                f->next_child = btr_call_node(c, k)->next;
                struct frame *g = btc_vec_push(&stack);
                if (!g)
                    goto fail;
                *g = (struct frame){k, btr_call_node(c, k)->child, 0};
                continue;
            }
            const struct btr_call_node *n = btr_call_node(c, f->node);
            incl[f->node] += n->self_ns;
            uint32_t done = f->node;
            stack.len--;
            if (stack.len)
                incl[((struct frame *)btc_vec_at(&stack, stack.len - 1))->node] += incl[done];
        }
    }
    btc_vec_free(&stack);
    return incl;
fail:
    btc_vec_free(&stack);
    free(incl);
    return NULL;
}

/* A thread's tree as nested arrays, paths under the threshold left out;
 * against BASE (b, its thread's root base_root), each node also carries
 * the same path's time in BASE. */
static int write_tree(FILE *out, const struct btr_calltree *c, const struct btc_trace *t,
                      uint32_t root, const int64_t *incl, const int32_t *name_of,
                      const struct flame_base *b, uint32_t base_root, uint64_t *kept,
                      uint64_t *pruned)
{
    int64_t least = incl[root] / PRUNE_SHARE;
    struct btc_vec stack;
    btc_vec_init(&stack, sizeof(struct frame));
    struct frame *f = btc_vec_push(&stack);
    if (!f)
        return BTC_ERR_NOMEM;
    *f = (struct frame){root, btr_call_node(c, root)->child, base_root};
    const struct btr_call_node *r = btr_call_node(c, root);
    fprintf(out, "[%d,%" PRId64 ",%" PRId64 ",%" PRIu64, name_of[r->srcloc + 32768], incl[root],
            r->self_ns, r->count);
    base_cell(out, b, base_root);
    fputs(",[", out);
    int first = 1;
    while (stack.len) {
        f = btc_vec_at(&stack, stack.len - 1);
        uint32_t k = f->next_child;
        if (!k) {
            fputs("]]", out);
            stack.len--;
            first = 0;
            continue;
        }
        f->next_child = btr_call_node(c, k)->next;
        if (incl[k] < least || incl[k] <= 0) {
            (*pruned)++;
            continue;
        }
        const struct btr_call_node *n = btr_call_node(c, k);
        uint32_t base = base_child(b, f->base, btr_zone_name(t, n->srcloc));
        fprintf(out, "%s[%d,%" PRId64 ",%" PRId64 ",%" PRIu64, first ? "" : ",",
                name_of[n->srcloc + 32768], incl[k], n->self_ns, n->count);
        base_cell(out, b, base);
        fputs(",[", out);
        (*kept)++;
        first = 1;
        struct frame *g = btc_vec_push(&stack);
        if (!g) {
            btc_vec_free(&stack);
            return BTC_ERR_NOMEM;
        }
        *g = (struct frame){k, n->child, base};
    }
    btc_vec_free(&stack);
    return 0;
}

/* BASE's root of the thread named name, 0 none. */
static uint32_t base_thread(const struct flame_base *b, const char *name)
{
    for (size_t i = 0; b && i < b->c->threads.len; i++) {
        const struct btr_call_thread *th = btc_vec_at(&b->c->threads, i);
        char buf[64];
        if (!strcmp(btr_thread_name(b->t, th->id, buf, sizeof buf), name))
            return th->root;
    }
    return 0;
}

static int write_flame(FILE *out, const struct btr_calltree *c, const struct btc_trace *t,
                       const struct flame_base *b, uint64_t *kept, uint64_t *pruned)
{
    int64_t *incl = inclusive(c);
    int32_t *name_of = malloc(65536 * sizeof *name_of);
    if (!incl || !name_of) {
        free(incl);
        free(name_of);
        return BTC_ERR_NOMEM;
    }
    memset(name_of, 0xff, 65536 * sizeof *name_of);
    fprintf(out, "<script type=\"application/json\" id=\"flame\">{\"diff\":%s,\"names\":[\"all\"",
            b ? "true" : "false");
    int32_t names = 1;
    name_of[32768] = 0; /* the root: srcloc 0 */
    for (size_t i = 1; i < c->nodes.len; i++) {
        int16_t s = btr_call_node(c, (uint32_t)i)->srcloc;
        if (name_of[s + 32768] >= 0)
            continue;
        name_of[s + 32768] = names++;
        fputc(',', out);
        btr_html_script_string(out, btr_zone_name(t, s));
    }
    fputs("],\"threads\":[", out);
    int rc = 0;
    for (size_t i = 0; i < c->threads.len && rc >= 0; i++) {
        const struct btr_call_thread *th = btc_vec_at(&c->threads, i);
        char buf[64];
        const char *name = btr_thread_name(t, th->id, buf, sizeof buf);
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        btr_html_script_string(out, name);
        fputs(",\"root\":", out);
        rc = write_tree(out, c, t, th->root, incl, name_of, b, base_thread(b, name), kept, pruned);
        fputc('}', out);
    }
    fputs("]}</script>\n", out);
    free(incl);
    free(name_of);
    return rc;
}

static void zones_table(FILE *out, const struct btr_stats *s)
{
    fprintf(out,
            "<h2>Top zones</h2><table id=\"zones\"><tr><th>zone</th><th>location</th>"
            "<th>count</th><th>total ns</th><th>mean ns</th><th>min ns</th><th>max ns</th></tr>\n");
    for (size_t i = 0; i < s->nzones && i < TOP_ZONES; i++) {
        const struct btr_zone_stat *z = &s->zones[i];
        fputs("<tr><td>", out);
        btr_html_text(out, btr_demangle(z->name));
        fputs("</td><td class=\"l\">", out);
        btr_html_text(out, z->file);
        fprintf(out,
                ":%u</td><td>%" PRIu64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64
                "</td><td>%" PRId64 "</td></tr>\n",
                z->line, z->count, z->total_ns, z->total_ns / (int64_t)z->count, z->min_ns,
                z->max_ns);
    }
    fprintf(out, "</table><p>%zu zones by source location in all, the first %d shown.</p>\n",
            s->nzones, TOP_ZONES);
}

/* Per frame set: a histogram of frame times up to its p99 (the rest in the
 * last bar), as SVG bars. */
static void frames_section(FILE *out, const struct btr_stats *s)
{
    const struct btc_vec *sets = &s->sections.frame_sets;
    if (!sets->len)
        return;
    fputs("<h2>Frames</h2>\n", out);
    for (size_t i = 0; i < sets->len; i++) {
        const struct btr_frame_stat *f = btc_vec_at(sets, i);
        const struct btc_read_frameset *fs =
            i < s->trace.framesets.len ? btc_vec_at(&s->trace.framesets, i) : NULL;
        fputs("<h3>", out);
        btr_html_text(out,
                      fs && fs->name >= 0 ? btc_trace_string(&s->trace, fs->name) : "(default)");
        fprintf(out,
                "</h3><p>%" PRIu64 " frames; mean %" PRId64 " ns, p50 %" PRId64 " ns, p99 %" PRId64
                " ns</p>\n",
                f->frames, f->timed ? f->total_ns / (int64_t)f->timed : 0, f->p50_ns, f->p99_ns);
        if (!f->timed || f->buckets || !f->durations.len)
            continue;
        uint64_t bins[HIST_BINS] = {0}, most = 1;
        double top = (double)(f->p99_ns > 0 ? f->p99_ns : 1);
        for (size_t k = 0; k < f->durations.len; k++) {
            double d = (double)*(int64_t *)btc_vec_at(&f->durations, k);
            size_t b = d >= top ? HIST_BINS - 1 : (size_t)(d / top * (HIST_BINS - 1));
            if (++bins[b] > most)
                most = bins[b];
        }
        fprintf(out, "<svg class=\"hist\" width=\"%d\" height=\"120\">", HIST_BINS * 16);
        for (int b = 0; b < HIST_BINS; b++) {
            double h = 100.0 * (double)bins[b] / (double)most;
            fprintf(out,
                    "<rect x=\"%d\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"#48c\">"
                    "<title>%.0f-%.0f ns: %" PRIu64 " frames</title></rect>",
                    b * 16, 100 - h, h, top * b / (HIST_BINS - 1), top * (b + 1) / (HIST_BINS - 1),
                    bins[b]);
        }
        fprintf(out,
                "<text x=\"0\" y=\"115\">0</text><text x=\"%d\" y=\"115\">%" PRId64
                " ns (p99) and over</text></svg>\n",
                HIST_BINS * 16 - 200, f->p99_ns);
    }
}

static void memory_section(FILE *out, const struct btr_stats *s)
{
    const struct btc_vec *pools = &s->sections.pools;
    if (!pools->len)
        return;
    fputs("<h2>Memory</h2><table id=\"memory\"><tr><th>pool</th><th>allocs</th><th>frees</th>"
          "<th>peak bytes</th><th>leaks</th></tr>\n",
          out);
    for (size_t i = 0; i < pools->len; i++) {
        const struct btr_pool_stat *p = btc_vec_at(pools, i);
        const struct btc_read_pool *rp =
            i < s->trace.pools.len ? btc_vec_at(&s->trace.pools, i) : NULL;
        fputs("<tr><td>", out);
        btr_html_text(out,
                      rp && rp->name >= 0 ? btc_trace_string(&s->trace, rp->name) : "(default)");
        fprintf(out,
                "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td></tr>\n",
                p->allocs, p->frees, p->peak, p->leaks);
    }
    fputs("</table>\n", out);
}

/* Messages (counts by severity, the first errors), locks and plots, as
 * stats prints them, in a <pre>. */
static void text_sections(FILE *out, const struct btr_stats *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return;
    btr_messages_print(&s->sections, &s->trace, m);
    btr_locks_print(&s->trace, m);
    btr_plots_print(&s->sections, &s->trace, m);
    fclose(m);
    if (len) {
        fputs("<h2>Messages, locks and plots</h2><pre id=\"text\">", out);
        btr_html_escaped(out, text); /* the sections printed it printable */
        fputs("</pre>\n", out);
    }
    free(text);
}

static void diff_section(FILE *out, const struct btr_diff *d)
{
    fprintf(out,
            "<h2>Against the base</h2><p>Real: the Mann-Whitney test at %.4g %% confidence "
            "(Bonferroni over %zu rows) and the median moved %.4g %% or more.</p>"
            "<table id=\"diff\"><tr><th>zone</th><th>location</th><th>total ns base</th>"
            "<th>total ns new</th><th>p50 ns base</th><th>p50 ns new</th><th>p50 change</th>"
            "<th>verdict</th></tr>\n",
            100 * d->opt.confidence, d->tested, d->opt.min_change_pct);
    for (size_t i = 0; i < d->nzones; i++) {
        const struct btr_diff_row *r = &d->zones[i];
        double pct = btr_diff_pct(r->side[0].p50_ns, r->side[1].p50_ns);
        fprintf(out, "<tr class=\"%s\"><td>", btr_verdict_name(r->verdict));
        btr_html_text(out, btr_demangle(r->name));
        fputs("</td><td class=\"l\">", out);
        btr_html_text(out, r->file);
        fprintf(out,
                ":%u</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64
                "</td><td>",
                r->line, r->side[0].total_ns, r->side[1].total_ns, r->side[0].p50_ns,
                r->side[1].p50_ns);
        if (isnan(pct))
            fputs("-", out);
        else
            fprintf(out, "%+.1f%%", pct);
        fprintf(out, "</td><td>%s</td></tr>\n", btr_verdict_name(r->verdict));
    }
    fprintf(out,
            "</table><p id=\"total\">Time in zones (each thread's outermost zones): %" PRId64
            " ns in the base, %" PRId64 " ns here",
            d->zones_ns[0], d->zones_ns[1]);
    double total = btr_diff_pct(d->zones_ns[0], d->zones_ns[1]);
    if (!isnan(total))
        fprintf(out, ", %+.1f %%", total);
    fputs(".</p>\n", out);
}

/* What the read of TRACE gathers besides stats: the call paths, the
 * timeline and the curves. */
struct html_read {
    struct btr_calltree calls;
    struct btr_timeline timeline;
    struct btr_series series;
};

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    struct html_read *r = ctx;
    int rc = btr_calltree_on_zone(&r->calls, t, z);
    return rc < 0 ? rc : btr_timeline_on_zone(&r->timeline, z);
}

static int on_mem(void *ctx, const struct btc_trace *t, const struct btc_read_mem *m)
{
    (void)t;
    return btr_series_on_mem(&((struct html_read *)ctx)->series, m);
}

static int on_point(void *ctx, const struct btc_trace *t, const struct btc_read_point *p)
{
    (void)t;
    return btr_series_on_point(&((struct html_read *)ctx)->series, p);
}

int btr_html_export(const char *path, const char *base, FILE *out, uint64_t *kept, char *err,
                    size_t errlen)
{
    struct btr_stats s;
    struct html_read r;
    struct btc_trace t;
    struct btr_diff d;
    memset(&d, 0, sizeof d);
    btr_calltree_init(&r.calls);
    *kept = 0;
    int rc = btr_stats_compute(&s, path, err, errlen);
    int read_tree = rc >= 0;
    if (read_tree) {
        /* stats' read gave the span the timeline and curves are cut in. */
        btr_timeline_init(&r.timeline, s.trace.last_time);
        btr_series_init(&r.series, s.trace.last_time);
        struct btc_read_more more = {.mem = on_mem, .point = on_point};
        rc = btc_tracy_read_more(path, &t, on_zone, NULL, &more, &r, err, errlen);
        btr_series_finish(&r.series);
    }
    struct btr_diff_options opt = {
        .confidence = 0.99, .min_change_pct = 5, .fail_above_pct = -1, .fail_above_total_pct = -1};
    if (rc >= 0 && base)
        rc = btr_diff_compute(&d, base, path, &opt, err, errlen);
    /* BASE's call paths for the differential flame graph. */
    struct btr_calltree bc;
    struct btc_trace bt;
    btr_calltree_init(&bc);
    int read_base = rc >= 0 && base;
    if (read_base)
        rc = btc_tracy_read(base, &bt, btr_calltree_on_zone, &bc, err, errlen);
    int64_t *base_incl = rc >= 0 && base ? inclusive(&bc) : NULL;
    if (rc >= 0 && base && !base_incl)
        rc = BTC_ERR_NOMEM;
    struct flame_base fb = {&bc, read_base ? &bt : NULL, base_incl};
    if (rc >= 0) {
        fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
              "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
              "script-src 'unsafe-inline'; style-src 'unsafe-inline'\"><title>",
              out);
        btr_html_text(out, s.trace.capture_name[0] ? s.trace.capture_name : path);
        fprintf(out, "</title><style>%s</style></head><body>\n<h1>", style);
        btr_html_text(out, s.trace.capture_name[0] ? s.trace.capture_name : path);
        fputs("</h1><p>Program ", out);
        btr_html_text(out, s.trace.program);
        fprintf(out,
                ", %" PRIu64 " zones, %.3f s; made by boardtrace-report " BT_VERSION_STRING
                "</p>\n",
                s.trace.zones, (double)s.trace.last_time / 1e9);
        zones_table(out, &s);
        if (base)
            diff_section(out, &d);
        uint64_t pruned = 0;
        fputs("<h2>Flame graph</h2><p>Zones by call path per thread; width is time. Click to "
              "zoom. <input id=\"search\" placeholder=\"highlight names holding\"></p>"
              "<div id=\"flames\"></div>\n",
              out);
        if (base)
            fputs("<p>Against the base: red boxes took more time than the same call path "
                  "there, blue less (5 % or more), grey about the same, purple paths the "
                  "base does not have.</p>",
                  out);
        rc = write_flame(out, &r.calls, &t, base ? &fb : NULL, kept, &pruned);
        fprintf(out,
                "<p>%" PRIu64 " call paths shown, %" PRIu64
                " under 1/%d of their thread's time left out.</p>\n",
                *kept, pruned, PRUNE_SHARE);
        btr_timeline_write(out, &r.timeline, &t);
        frames_section(out, &s);
        memory_section(out, &s);
        btr_series_write(out, &r.series, &s);
        text_sections(out, &s);
        fprintf(out, "<script>%s</script>\n</body></html>\n", script);
    }
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "out of memory for the report");
    if (base)
        btr_diff_free(&d);
    free(base_incl);
    btr_calltree_free(&bc);
    if (read_base)
        btc_trace_free(&bt);
    btr_calltree_free(&r.calls);
    if (read_tree) {
        btr_timeline_free(&r.timeline);
        btr_series_free(&r.series);
        btc_trace_free(&t);
    }
    btr_stats_free(&s);
    return rc;
}
