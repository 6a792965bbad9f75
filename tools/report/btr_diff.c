/* boardtrace-report diff's numbers (btr_diff.h): both traces read with the
 * stats sections (frames, memory) and every zone's duration kept per source
 * location, zones matched by name, file and line, frame sets and pools by
 * name. A change is real when the Mann-Whitney test rejects "same
 * distribution" at the confidence, Bonferroni-corrected for the number of
 * rows tested, and the median moved by at least the minimum change. The
 * time in zones in all sums the outermost zones (depth 0) of every
 * thread. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "btr_diff.h"

/* Fewer durations than this on a side are not tested. */
#define MIN_TESTED 8

struct side_read {
    struct btr_sections sections; /* first: the sections' callbacks take it as ctx */
    struct btc_vec by_static;     /* struct btc_vec of int64_t, per static source location */
    struct btc_vec by_payload;    /* per payload source location */
    uint64_t bytes, limit;
    int over;         /* stopped at the memory limit */
    int64_t zones_ns; /* the outermost zones' durations */
};

/* A zone of one side once read: its durations sorted. */
struct side_zone {
    int16_t srcloc;
    const char *name, *file;
    uint32_t line;
    const struct btc_vec *durations;
    struct btr_diff_side s;
};

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)t;
    struct side_read *r = ctx;
    int64_t d = (int64_t)((uint64_t)z->end - (uint64_t)z->start);
    if (z->end < 0 || z->end <= z->start || d <= 0 || z->srcloc == 0)
        return 0;
    if (z->depth == 0)
        r->zones_ns += d;
    struct btc_vec *list = z->srcloc > 0 ? &r->by_static : &r->by_payload;
    size_t at = z->srcloc > 0 ? (size_t)z->srcloc : (size_t)(-(int)z->srcloc);
    while (list->len <= at) {
        struct btc_vec *v = btc_vec_push(list);
        if (!v)
            return BTC_ERR_NOMEM;
        btc_vec_init(v, sizeof(int64_t));
    }
    r->bytes += sizeof(int64_t);
    if (r->bytes > r->limit) {
        r->over = 1;
        return BTC_ERR_STOPPED;
    }
    int64_t *slot = btc_vec_push(btc_vec_at(list, at));
    if (!slot)
        return BTC_ERR_NOMEM;
    *slot = d;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank over sorted durations. */
static int64_t percentile(const int64_t *v, size_t n, unsigned pct)
{
    size_t rank = (n * pct + 99) / 100;
    return v[rank ? rank - 1 : 0];
}

static struct btr_diff_side side_of(const int64_t *v, size_t n)
{
    struct btr_diff_side s = {.count = n};
    for (size_t i = 0; i < n; i++)
        s.total_ns = (int64_t)((uint64_t)s.total_ns + (uint64_t)v[i]);
    if (n) {
        s.mean_ns = s.total_ns / (int64_t)n;
        s.p50_ns = percentile(v, n, 50);
        s.p99_ns = percentile(v, n, 99);
    }
    return s;
}

double btr_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    double n1 = (double)na, n2 = (double)nb, n = n1 + n2;
    double r1 = 0, ties = 0, rank = 0;
    size_t i = 0, k = 0;
    while (i < na || k < nb) {
        int64_t v = i < na && (k >= nb || a[i] <= b[k]) ? a[i] : b[k];
        size_t ca = 0, cb = 0;
        while (i < na && a[i] == v)
            i++, ca++;
        while (k < nb && b[k] == v)
            k++, cb++;
        double t = (double)(ca + cb);
        r1 += (double)ca * (rank + (t + 1) / 2); /* the tied values' mean rank */
        rank += t;
        ties += t * t * t - t;
    }
    double u = r1 - n1 * (n1 + 1) / 2, mu = n1 * n2 / 2;
    double var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
    if (var <= 0)
        return 1;
    double dev = fabs(u - mu) - 0.5;
    if (dev < 0)
        dev = 0;
    return erfc(dev / sqrt(var) / sqrt(2.0));
}

double btr_diff_pct(int64_t base, int64_t next)
{
    return base ? 100.0 * ((double)next - (double)base) / (double)base : NAN;
}

const char *btr_verdict_name(enum btr_verdict v)
{
    static const char *const names[] = {"same", "slower", "faster", "untested", "new", "gone"};
    return names[v];
}

static void side_free(struct side_read *r)
{
    struct btc_vec *lists[2] = {&r->by_static, &r->by_payload};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->len; i++)
            btc_vec_free(btc_vec_at(lists[l], i));
        btc_vec_free(lists[l]);
    }
}

/* The zones of a side with durations, sorted, in a new array. */
static struct side_zone *side_zones(struct side_read *r, const struct btc_trace *t, size_t *n)
{
    struct side_zone *v = calloc(r->by_static.len + r->by_payload.len + 1, sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    struct btc_vec *lists[2] = {&r->by_static, &r->by_payload};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->len; i++) {
            struct btc_vec *d = btc_vec_at(lists[l], i);
            if (!d->len)
                continue;
            qsort(d->data, d->len, sizeof(int64_t), cmp_i64);
            int16_t srcloc = l == 0 ? (int16_t)i : (int16_t)(-(int)i);
            const struct btc_read_srcloc *loc = btc_trace_srcloc(t, srcloc);
            v[*n] = (struct side_zone){
                .srcloc = srcloc,
                .name = loc ? btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function) : "?",
                .file = loc ? btc_trace_string(t, loc->file) : "",
                .line = loc ? loc->line : 0,
                .durations = d,
                .s = side_of(d->data, d->len)};
            (*n)++;
        }
    }
    return v;
}

static int read_side(struct btr_diff *d, int i, const char *path, struct side_read *r, char *err,
                     size_t errlen)
{
    memset(r, 0, sizeof *r);
    btc_vec_init(&r->by_static, sizeof(struct btc_vec));
    btc_vec_init(&r->by_payload, sizeof(struct btc_vec));
    btr_sections_init(&r->sections);
    r->limit = btc_tracy_read_memory_limit();
    struct btc_read_more more = {0};
    btr_sections_callbacks(&more);
    char why[400] = "";
    int rc = btc_tracy_read_more(path, &d->trace[i], on_zone, btr_sections_message, &more, r, why,
                                 sizeof why);
    if (r->over)
        snprintf(why, sizeof why,
                 "its zones' durations need more than the memory limit of %llu bytes (8 bytes a "
                 "zone)",
                 (unsigned long long)r->limit);
    if (rc >= 0)
        btr_sections_finish(&r->sections, &d->trace[i]);
    d->sections[i] = r->sections;
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", path, why[0] ? why : "cannot be read");
    return rc;
}

/* The test and the verdict of a row whose both sides have durations. */
static void judge(struct btr_diff_row *row, const int64_t *a, size_t na, const int64_t *b,
                  size_t nb, size_t *tested)
{
    row->p_value = 1;
    row->verdict = BTR_UNTESTED;
    if (!a || !b || na < MIN_TESTED || nb < MIN_TESTED)
        return;
    row->p_value = btr_mann_whitney(a, na, b, nb);
    row->verdict = BTR_SAME;
    (*tested)++;
}

/* Once every row is tested: which changes are real, and over the gate. */
static void decide(struct btr_diff *d, struct btr_diff_row *rows, size_t n)
{
    double alpha = (1 - d->opt.confidence) / (double)(d->tested ? d->tested : 1);
    for (size_t i = 0; i < n; i++) {
        struct btr_diff_row *r = &rows[i];
        if (r->verdict != BTR_SAME)
            continue;
        double median = btr_diff_pct(r->side[0].p50_ns, r->side[1].p50_ns);
        if (r->p_value < alpha && fabs(median) >= d->opt.min_change_pct)
            r->verdict = median > 0 ? BTR_SLOWER : BTR_FASTER;
        if (r->verdict == BTR_SLOWER && d->opt.fail_above_pct >= 0 &&
            (btr_diff_pct(r->side[0].mean_ns, r->side[1].mean_ns) > d->opt.fail_above_pct ||
             btr_diff_pct(r->side[0].p99_ns, r->side[1].p99_ns) > d->opt.fail_above_pct)) {
            r->over_limit = 1;
            d->over_limit++;
        }
    }
}

static int by_change(const void *a, const void *b)
{
    const struct btr_diff_row *x = a, *y = b;
    double dx = fabs((double)x->side[1].total_ns - (double)x->side[0].total_ns);
    double dy = fabs((double)y->side[1].total_ns - (double)y->side[0].total_ns);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->file, y->file);
}

static int compare_zones(struct btr_diff *d, struct side_zone *z[2], size_t n[2])
{
    d->zones = calloc(n[0] + n[1] + 1, sizeof *d->zones);
    if (!d->zones)
        return BTC_ERR_NOMEM;
    char *matched = calloc(n[1] + 1, 1);
    if (!matched)
        return BTC_ERR_NOMEM;
    for (size_t i = 0; i < n[0]; i++) {
        const struct side_zone *a = &z[0][i], *b = NULL;
        for (size_t k = 0; k < n[1] && !b; k++) {
            const struct side_zone *c = &z[1][k];
            if (!matched[k] && c->line == a->line && !strcmp(c->name, a->name) &&
                !strcmp(c->file, a->file)) {
                b = c;
                matched[k] = 1;
            }
        }
        struct btr_diff_row *row = &d->zones[d->nzones++];
        *row = (struct btr_diff_row){.name = a->name, .file = a->file, .line = a->line};
        row->side[0] = a->s;
        row->p_value = 1;
        row->verdict = BTR_DISAPPEARED;
        if (b) {
            row->side[1] = b->s;
            judge(row, a->durations->data, a->durations->len, b->durations->data, b->durations->len,
                  &d->tested);
        }
    }
    for (size_t k = 0; k < n[1]; k++) {
        if (matched[k])
            continue;
        const struct side_zone *b = &z[1][k];
        struct btr_diff_row *row = &d->zones[d->nzones++];
        *row = (struct btr_diff_row){.name = b->name, .file = b->file, .line = b->line};
        row->side[1] = b->s;
        row->p_value = 1;
        row->verdict = BTR_APPEARED;
    }
    free(matched);
    return 0;
}

static const char *frameset_name(const struct btc_trace *t, size_t i)
{
    const struct btc_read_frameset *fs = i < t->framesets.len ? btc_vec_at(&t->framesets, i) : NULL;
    return fs && fs->name >= 0 ? btc_trace_string(t, fs->name) : "(default)";
}

static const char *pool_name(const struct btc_trace *t, size_t i)
{
    const struct btc_read_pool *p = i < t->pools.len ? btc_vec_at(&t->pools, i) : NULL;
    return p && p->name >= 0 ? btc_trace_string(t, p->name) : "(default)";
}

static struct btr_diff_side frame_side(const struct btr_frame_stat *f)
{
    return (struct btr_diff_side){.count = f->frames,
                                  .total_ns = f->total_ns,
                                  .mean_ns = f->timed ? f->total_ns / (int64_t)f->timed : 0,
                                  .p50_ns = f->p50_ns,
                                  .p99_ns = f->p99_ns};
}

/* Frame sets by name: the exact durations (sorted by the stats' finish)
 * are tested as zones are; a set past the exact count is not. */
static int compare_frames(struct btr_diff *d)
{
    size_t n0 = d->sections[0].frame_sets.len, n1 = d->sections[1].frame_sets.len;
    d->frames = calloc(n0 + n1 + 1, sizeof *d->frames);
    if (!d->frames)
        return BTC_ERR_NOMEM;
    for (int side = 0; side < 2; side++) {
        const struct btc_vec *sets = &d->sections[side].frame_sets;
        for (size_t i = 0; i < sets->len; i++) {
            const struct btr_frame_stat *f = btc_vec_at(sets, i);
            const char *name = frameset_name(&d->trace[side], i);
            struct btr_diff_row *row = NULL;
            for (size_t k = 0; k < d->nframes && !row; k++)
                if (!strcmp(d->frames[k].name, name))
                    row = &d->frames[k];
            if (!row) {
                row = &d->frames[d->nframes++];
                *row = (struct btr_diff_row){.name = name, .file = "", .p_value = 1};
                row->verdict = side ? BTR_APPEARED : BTR_DISAPPEARED;
            }
            row->side[side] = frame_side(f);
            if (!side)
                continue;
            if (row->verdict == BTR_APPEARED)
                continue;
            const struct btr_frame_stat *base = NULL;
            for (size_t k = 0; k < n0 && !base; k++)
                if (!strcmp(frameset_name(&d->trace[0], k), name))
                    base = btc_vec_at(&d->sections[0].frame_sets, k);
            int exact = !base->buckets && !f->buckets;
            judge(row, exact ? base->durations.data : NULL, base->durations.len,
                  exact ? f->durations.data : NULL, f->durations.len, &d->tested);
        }
    }
    return 0;
}

static int compare_pools(struct btr_diff *d)
{
    size_t n0 = d->sections[0].pools.len, n1 = d->sections[1].pools.len;
    d->pools = calloc(n0 + n1 + 1, sizeof *d->pools);
    if (!d->pools)
        return BTC_ERR_NOMEM;
    for (int side = 0; side < 2; side++) {
        const struct btc_vec *pools = &d->sections[side].pools;
        for (size_t i = 0; i < pools->len; i++) {
            const struct btr_pool_stat *p = btc_vec_at(pools, i);
            if (!p->allocs)
                continue;
            const char *name = pool_name(&d->trace[side], i);
            struct btr_diff_pool *row = NULL;
            for (size_t k = 0; k < d->npools && !row; k++)
                if (!strcmp(d->pools[k].name, name))
                    row = &d->pools[k];
            if (!row) {
                row = &d->pools[d->npools++];
                row->name = name;
            }
            row->present[side] = 1;
            row->peak[side] = p->peak;
            row->allocs[side] = p->allocs;
        }
    }
    return 0;
}

int btr_diff_compute(struct btr_diff *d, const char *base, const char *next,
                     const struct btr_diff_options *opt, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->opt = *opt;
    struct side_read r[2];
    struct side_zone *z[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    const char *paths[2] = {base, next};
    int rc = 0, sides = 0;
    for (int i = 0; i < 2 && rc >= 0; i++, sides++)
        rc = read_side(d, i, paths[i], &r[i], err, errlen);
    for (int i = 0; i < 2 && rc >= 0; i++)
        if (!(z[i] = side_zones(&r[i], &d->trace[i], &n[i])))
            rc = BTC_ERR_NOMEM;
    if (rc >= 0)
        rc = compare_zones(d, z, n);
    if (rc >= 0)
        rc = compare_frames(d);
    if (rc >= 0)
        rc = compare_pools(d);
    if (rc >= 0) {
        decide(d, d->zones, d->nzones);
        decide(d, d->frames, d->nframes);
        qsort(d->zones, d->nzones, sizeof *d->zones, by_change);
        d->zones_ns[0] = r[0].zones_ns;
        d->zones_ns[1] = r[1].zones_ns;
        d->total_over = d->opt.fail_above_total_pct >= 0 &&
                        btr_diff_pct(d->zones_ns[0], d->zones_ns[1]) > d->opt.fail_above_total_pct;
    }
    if (rc == BTC_ERR_NOMEM && !err[0])
        snprintf(err, errlen, "out of memory comparing %s and %s", base, next);
    for (int i = 0; i < sides; i++)
        side_free(&r[i]);
    free(z[0]);
    free(z[1]);
    return rc;
}

void btr_diff_free(struct btr_diff *d)
{
    free(d->zones);
    free(d->frames);
    free(d->pools);
    for (int i = 0; i < 2; i++) {
        btr_sections_free(&d->sections[i]);
        btc_trace_free(&d->trace[i]);
    }
}
