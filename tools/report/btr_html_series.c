/* The HTML report's curves: memory in use per pool and each plot, over the
 * trace's span cut in BTR_SERIES_BINS bins, each bin keeping the least and
 * greatest value it saw, drawn as an SVG band. Memory in use is swept as
 * stats sweeps it for the peak (allocations in order, each after the frees
 * due by then), so the curve's top is stats' peak. */
#include <inttypes.h>
#include <string.h>

#include "btr_html.h"

#define BINS_SIZE (BTR_SERIES_BINS * sizeof(struct btr_series_bin))
#define CURVE_W   800 /* px */
#define CURVE_H   80  /* px */

void btr_series_init(struct btr_series *se, int64_t span)
{
    memset(se, 0, sizeof *se);
    se->span = span > 0 ? span : 1;
    btc_vec_init(&se->pools, BINS_SIZE);
    btc_vec_init(&se->plots, BINS_SIZE);
    btc_vec_init(&se->pending, sizeof(struct btr_pending_free));
    se->pool = UINT32_MAX;
}

void btr_series_free(struct btr_series *se)
{
    btc_vec_free(&se->pools);
    btc_vec_free(&se->plots);
    btc_vec_free(&se->pending);
}

/* The bins of entry i, added (unseen) up to it. */
static struct btr_series_bin *bins_of(struct btc_vec *v, uint32_t i)
{
    while (v->len <= i)
        if (!btc_vec_push(v))
            return NULL;
    return btc_vec_at(v, i);
}

static void record(const struct btr_series *se, struct btr_series_bin *bins, int64_t time, double v)
{
    int64_t k = time <= 0 ? 0 : (int64_t)((__int128)time * BTR_SERIES_BINS / se->span);
    struct btr_series_bin *b = &bins[k < BTR_SERIES_BINS ? k : BTR_SERIES_BINS - 1];
    if (!b->seen || v < b->lo)
        b->lo = v;
    if (!b->seen || v > b->hi)
        b->hi = v;
    b->seen = 1;
    b->last = v;
}

/* The frees due by time (all with INT64_MAX), each lowering the curve. */
static void free_until(struct btr_series *se, struct btr_series_bin *bins, int64_t time)
{
    while (se->pending.len) {
        const struct btr_pending_free *f = btc_vec_at(&se->pending, 0);
        if (f->time > time)
            break;
        se->live -= f->size;
        record(se, bins, f->time, (double)se->live);
        btr_pending_pop(&se->pending);
    }
}

int btr_series_on_mem(struct btr_series *se, const struct btc_read_mem *m)
{
    if (m->pool != se->pool) {
        btr_series_finish(se);
        se->pool = m->pool;
    }
    struct btr_series_bin *bins = bins_of(&se->pools, m->pool);
    if (!bins)
        return BTC_ERR_NOMEM;
    /* At the same time a free counts before an allocation, as in stats. */
    free_until(se, bins, m->time_alloc);
    se->live += m->size;
    record(se, bins, m->time_alloc, (double)se->live);
    return m->time_free >= 0 ? btr_pending_push(&se->pending, m->time_free, m->size) : BTC_OK;
}

int btr_series_on_point(struct btr_series *se, const struct btc_read_point *p)
{
    struct btr_series_bin *bins = bins_of(&se->plots, p->plot);
    if (!bins)
        return BTC_ERR_NOMEM;
    record(se, bins, p->time, p->value);
    return BTC_OK;
}

void btr_series_finish(struct btr_series *se)
{
    if (se->pool < se->pools.len)
        free_until(se, btc_vec_at(&se->pools, se->pool), INT64_MAX);
    se->pending.len = 0;
    se->live = 0;
}

/* One curve: the bins seen (memory: the bins between carry the level
 * before them) as a band from their least to their greatest value, and
 * those values in data-lo and data-hi. */
static int curve(FILE *out, const struct btr_series_bin *in, const char *kind, const char *name,
                 int carry)
{
    struct btr_series_bin b[BTR_SERIES_BINS];
    memcpy(b, in, sizeof b);
    double lo = 0, hi = 0;
    int any = 0;
    for (int k = 0; k < BTR_SERIES_BINS; k++) {
        if (!b[k].seen && carry && k && b[k - 1].seen)
            b[k] = (struct btr_series_bin){b[k - 1].last, b[k - 1].last, b[k - 1].last, 1};
        if (!b[k].seen)
            continue;
        lo = any && lo < b[k].lo ? lo : b[k].lo;
        hi = any && hi > b[k].hi ? hi : b[k].hi;
        any = 1;
    }
    if (!any)
        return 0;
    if (carry && lo > 0)
        lo = 0; /* memory from nothing */
    double range = hi > lo ? hi - lo : 1;
    fprintf(out, "<figure class=\"series\" data-kind=\"%s\" data-name=\"", kind);
    btr_html_text(out, name);
    fputs("\"><figcaption>", out);
    btr_html_text(out, name);
    fprintf(out, ": %.6g to %.6g%s</figcaption>", lo, hi, carry ? " bytes in use" : "");
    for (int side = 0; side < 2; side++) {
        fputs(side ? "<data class=\"hi\" value=\"" : "<data class=\"lo\" value=\"", out);
        int first = 1;
        for (int k = 0; k < BTR_SERIES_BINS; k++)
            if (b[k].seen) {
                fprintf(out, first ? "%.17g" : " %.17g", side ? b[k].hi : b[k].lo);
                first = 0;
            }
        fputs("\"></data>", out);
    }
    fprintf(out,
            "<svg width=\"%d\" height=\"%d\"><polygon fill=\"#48c\" stroke=\"#248\" "
            "stroke-width=\".5\" points=\"",
            CURVE_W, CURVE_H + 2);
    double step = (double)CURVE_W / BTR_SERIES_BINS;
    for (int k = 0; k < BTR_SERIES_BINS; k++)
        if (b[k].seen)
            fprintf(out, "%.1f,%.1f %.1f,%.1f ", k * step, 1 + CURVE_H * (hi - b[k].hi) / range,
                    (k + 1) * step, 1 + CURVE_H * (hi - b[k].hi) / range);
    for (int k = BTR_SERIES_BINS - 1; k >= 0; k--)
        if (b[k].seen)
            fprintf(out, "%.1f,%.1f %.1f,%.1f ", (k + 1) * step,
                    1 + CURVE_H * (hi - b[k].lo) / range, k * step,
                    1 + CURVE_H * (hi - b[k].lo) / range);
    fputs("\"></polygon></svg></figure>\n", out);
    return 1;
}

static int has_points(const struct btr_series_bin *b)
{
    for (int k = 0; k < BTR_SERIES_BINS; k++)
        if (b[k].seen)
            return 1;
    return 0;
}

/* The curves of one kind, the first BTR_SERIES_MAX that have points (some
 * 25 KB each: the page stays bounded), and how many more there were. */
static void curves(FILE *out, const struct btc_vec *v, const struct btc_trace *t, int plots)
{
    size_t drawn = 0, more = 0;
    for (size_t i = 0; i < v->len && (!plots || i < t->plots.len); i++) {
        const struct btr_series_bin *b = btc_vec_at(v, i);
        if (!has_points(b))
            continue;
        if (drawn == BTR_SERIES_MAX) {
            more++;
            continue;
        }
        const char *name =
            plots ? btr_plot_name(t, btc_vec_at(&t->plots, i)) : btr_pool_name(t, (uint32_t)i);
        drawn += (size_t)curve(out, b, plots ? "plot" : "memory", name, !plots);
    }
    if (more)
        fprintf(out, "<p>%zu more %s, not drawn (stats lists them).</p>\n", more,
                plots ? "plots" : "pools");
}

void btr_series_write(FILE *out, const struct btr_series *se, const struct btr_stats *s)
{
    const struct btc_trace *t = &s->trace;
    if (se->pools.len) {
        fprintf(out,
                "<h2>Memory over time</h2><p>Bytes in use per pool over the trace's %.3f s in "
                "%d slices, each from its least to its greatest.</p>\n",
                (double)se->span / 1e9, BTR_SERIES_BINS);
        curves(out, &se->pools, t, 0);
    }
    if (se->plots.len) {
        fprintf(out,
                "<h2>Plots</h2><p>Each plot's points over the trace's %.3f s in %d slices, "
                "each from its least to its greatest value.</p>\n",
                (double)se->span / 1e9, BTR_SERIES_BINS);
        curves(out, &se->plots, t, 1);
    }
}
