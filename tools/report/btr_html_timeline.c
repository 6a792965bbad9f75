/* The HTML report's per-thread timeline: the trace's span cut in
 * BTR_TIMELINE_BINS bins, and per thread and depth (the outermost
 * BTR_TIMELINE_DEPTHS) the zone that covered most of each bin, drawn as SVG
 * bars whose opacity says how busy the depth was there. Bins, not zones,
 * are kept: the page's size follows threads x depths x bins. Zones that
 * never ended are left out, as stats counts only ended ones. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "btr_calltree.h"
#include "btr_html.h"

#define CELLS_PER_THREAD (BTR_TIMELINE_DEPTHS * BTR_TIMELINE_BINS)
#define LABEL_W          160 /* px for the thread's name */
#define BIN_W            2   /* px per bin */
#define ROW_H            14  /* px per depth */
#define THREAD_GAP       8   /* px between threads */

void btr_timeline_init(struct btr_timeline *tl, int64_t span)
{
    memset(tl, 0, sizeof *tl);
    tl->span = span > 0 ? span : 1;
    btc_vec_init(&tl->threads, sizeof(uint64_t));
    btc_map_init(&tl->thread_cell);
    btc_vec_init(&tl->cells, sizeof(struct btr_timeline_cell));
    btc_map_init(&tl->ns);
}

void btr_timeline_free(struct btr_timeline *tl)
{
    btc_vec_free(&tl->threads);
    btc_map_free(&tl->thread_cell);
    btc_vec_free(&tl->cells);
    btc_map_free(&tl->ns);
}

/* The first cell of the thread's, its cells added when it is new. */
static int thread_cells(struct btr_timeline *tl, uint64_t id, size_t *first)
{
    uint64_t *at = btc_map_get(&tl->thread_cell, id);
    if (at) {
        *first = (size_t)(*at - 1) * CELLS_PER_THREAD;
        return BTC_OK;
    }
    uint64_t *slot = btc_vec_push(&tl->threads);
    if (!slot || btc_vec_reserve(&tl->cells, CELLS_PER_THREAD) < 0 ||
        btc_map_put(&tl->thread_cell, id, tl->threads.len) < 0)
        return BTC_ERR_NOMEM;
    *slot = id;
    for (int i = 0; i < CELLS_PER_THREAD; i++)
        btc_vec_push(&tl->cells); /* room reserved above */
    *first = (tl->threads.len - 1) * CELLS_PER_THREAD;
    return BTC_OK;
}

/* The start of bin k in ns. */
static int64_t bin_start(const struct btr_timeline *tl, int64_t k)
{
    return (int64_t)((__int128)tl->span * k / BTR_TIMELINE_BINS);
}

static int add(struct btr_timeline *tl, size_t cell, int16_t srcloc, int64_t ns)
{
    struct btr_timeline_cell *c = btc_vec_at(&tl->cells, cell);
    c->busy_ns += ns;
    uint64_t key = (uint64_t)cell << 16 | (uint16_t)srcloc;
    uint64_t *v = btc_map_get(&tl->ns, key);
    int64_t total = ns;
    if (v)
        total = (int64_t)(*v += (uint64_t)ns);
    else if (btc_map_put(&tl->ns, key, (uint64_t)ns) < 0)
        return BTC_ERR_NOMEM;
    /* Totals only grow, so the running greatest is the cell's busiest. */
    if (total > c->best_ns) {
        c->best_ns = total;
        c->best = srcloc;
    }
    return BTC_OK;
}

int btr_timeline_on_zone(struct btr_timeline *tl, const struct btc_read_zone *z)
{
    if (z->end < 0 || z->depth >= BTR_TIMELINE_DEPTHS)
        return BTC_OK;
    int64_t a = z->start < 0 ? 0 : z->start;
    int64_t b = z->end > tl->span ? tl->span : z->end;
    if (b <= a)
        return BTC_OK;
    size_t first;
    int rc = thread_cells(tl, z->thread_id, &first);
    if (rc < 0)
        return rc;
    first += (size_t)z->depth * BTR_TIMELINE_BINS;
    int64_t k = (int64_t)((__int128)a * BTR_TIMELINE_BINS / tl->span);
    for (; k < BTR_TIMELINE_BINS && bin_start(tl, k) < b; k++) {
        int64_t lo = bin_start(tl, k), hi = bin_start(tl, k + 1);
        int64_t ns = (b < hi ? b : hi) - (a > lo ? a : lo);
        if (ns > 0 && (rc = add(tl, first + (size_t)k, z->srcloc, ns)) < 0)
            return rc;
    }
    return BTC_OK;
}

/* As the flame graph's script colours a name (for ASCII names the same). */
static void put_color(FILE *out, const char *name)
{
    uint32_t h = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = h * 31 + *p;
    fprintf(out, "hsl(%u,75%%,%u%%)", h % 60, 55 + h % 20);
}

/* One bar: bins [k0, k1) of a depth's row whose busiest zone is srcloc. */
static void put_bar(FILE *out, const struct btr_timeline *tl, const struct btc_trace *t,
                    const struct btr_timeline_cell *row, int k0, int k1, int depth, int y)
{
    int64_t ns = 0, busy = 0;
    for (int k = k0; k < k1; k++) {
        ns += row[k].best_ns;
        busy += row[k].busy_ns;
    }
    int64_t width = bin_start(tl, k1) - bin_start(tl, k0);
    double share = (double)busy / (double)(width > 0 ? width : 1);
    const char *name = btr_zone_name(t, row[k0].best);
    fprintf(out,
            "<rect class=\"tl\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill-opacity=\"%.2f\" "
            "data-ns=\"%" PRId64 "\" data-zone=\"",
            LABEL_W + k0 * BIN_W, y + depth * ROW_H, (k1 - k0) * BIN_W, ROW_H - 1,
            share < 0.25 ? 0.25
            : share > 1  ? 1
                         : share,
            ns);
    btr_html_text(out, name);
    fputs("\" fill=\"", out);
    put_color(out, name);
    fputs("\"><title>", out);
    btr_html_text(out, name);
    fprintf(out,
            ": %.3f ms from %.6f s to %.6f s at depth %d, that depth busy %.0f %%</title></rect>",
            (double)ns / 1e6, (double)bin_start(tl, k0) / 1e9, (double)bin_start(tl, k1) / 1e9,
            depth, 100 * share);
}

/* Time covered by a thread's outermost zones, and its rows (depths drawn). */
static int64_t thread_busy(const struct btr_timeline *tl, size_t i, int *rows)
{
    const struct btr_timeline_cell *c = btc_vec_at(&tl->cells, i * CELLS_PER_THREAD);
    int64_t busy = 0;
    *rows = 1;
    for (int k = 0; k < CELLS_PER_THREAD; k++) {
        if (k < BTR_TIMELINE_BINS)
            busy += c[k].busy_ns;
        if (c[k].best_ns)
            *rows = k / BTR_TIMELINE_BINS + 1;
    }
    return busy;
}

/* Which threads are drawn: all, or the BTR_TIMELINE_THREADS busiest (a
 * thread takes up to depths x bins bars: the page's size stays bounded). */
static int choose_threads(const struct btr_timeline *tl, char *shown)
{
    size_t n = tl->threads.len, want = n < BTR_TIMELINE_THREADS ? n : BTR_TIMELINE_THREADS;
    memset(shown, n > BTR_TIMELINE_THREADS ? 0 : 1, n);
    for (size_t pick = 0; n > BTR_TIMELINE_THREADS && pick < want; pick++) {
        size_t best = n;
        int64_t most = -1;
        for (size_t i = 0; i < n; i++) {
            int rows;
            int64_t busy = thread_busy(tl, i, &rows);
            if (!shown[i] && busy > most) {
                most = busy;
                best = i;
            }
        }
        shown[best] = 1;
    }
    return (int)want;
}

void btr_timeline_write(FILE *out, const struct btr_timeline *tl, const struct btc_trace *t)
{
    if (!tl->threads.len)
        return;
    char *shown = malloc(tl->threads.len);
    if (!shown)
        return;
    int drawn = choose_threads(tl, shown);
    int height = 20;
    for (size_t i = 0; i < tl->threads.len; i++) {
        int rows;
        thread_busy(tl, i, &rows);
        if (shown[i])
            height += rows * ROW_H + THREAD_GAP;
    }
    int width = LABEL_W + BTR_TIMELINE_BINS * BIN_W;
    fprintf(out,
            "<h2>Timeline</h2><p>Per thread, the outermost %d depths of zones over the trace's "
            "%.3f s in %d slices: each bar is the zone that took most of its slices at that "
            "depth, opaque as that depth was busy.",
            BTR_TIMELINE_DEPTHS, (double)tl->span / 1e9, BTR_TIMELINE_BINS);
    if ((size_t)drawn < tl->threads.len)
        fprintf(out, " Shown: the %d of %zu threads whose outermost zones took the most time.",
                drawn, tl->threads.len);
    fprintf(out, "</p>\n<svg id=\"timeline\" width=\"%d\" height=\"%d\">", width, height);
    int y = 0;
    for (size_t i = 0; i < tl->threads.len; i++) {
        if (!shown[i])
            continue;
        const struct btr_timeline_cell *c = btc_vec_at(&tl->cells, i * CELLS_PER_THREAD);
        char buf[64];
        const char *name =
            btr_thread_name(t, *(uint64_t *)btc_vec_at(&tl->threads, i), buf, sizeof buf);
        int rows;
        int64_t busy = thread_busy(tl, i, &rows);
        fprintf(out, "<g class=\"thread\" data-busy-ns=\"%" PRId64 "\" data-thread=\"", busy);
        btr_html_text(out, name);
        fprintf(out, "\"><text x=\"0\" y=\"%d\">", y + 11);
        btr_html_text(out, name);
        fputs("</text>", out);
        for (int d = 0; d < rows; d++) {
            const struct btr_timeline_cell *row = c + d * BTR_TIMELINE_BINS;
            for (int k0 = 0; k0 < BTR_TIMELINE_BINS;) {
                int k1 = k0 + 1;
                while (k1 < BTR_TIMELINE_BINS && row[k1].best_ns && row[k0].best_ns &&
                       row[k1].best == row[k0].best)
                    k1++;
                if (row[k0].best_ns)
                    put_bar(out, tl, t, row, k0, k1, d, y);
                k0 = k1;
            }
        }
        fputs("</g>", out);
        y += rows * ROW_H + THREAD_GAP;
    }
    for (int q = 0; q <= 4; q++)
        fprintf(out, "<text x=\"%d\" y=\"%d\">%.3f s</text>",
                LABEL_W + q * (BTR_TIMELINE_BINS * BIN_W - 60) / 4, y + 12,
                (double)tl->span * q / 4 / 1e9);
    fputs("</svg>\n", out);
    free(shown);
}
