/* Zone statistics of a .tracy file: per source location the count, total,
 * mean, min, max and standard deviation of zone durations, counting what
 * upstream's statistics count (zones that ended, duration > 0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

struct agg {
    struct btr_sections sections; /* first: the sections' callbacks take it as ctx */
    struct btc_vec by_static;     /* struct btr_zone_stat per static id */
    struct btc_vec by_payload;    /* per payload id */
};

static struct btr_zone_stat *slot(struct btc_vec *v, size_t i)
{
    while (v->len <= i) {
        struct btr_zone_stat *z = btc_vec_push(v);
        if (!z)
            return NULL;
        z->min_ns = INT64_MAX;
    }
    return btc_vec_at(v, i);
}

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)t;
    struct agg *a = ctx;
    int64_t d = (int64_t)((uint64_t)z->end - (uint64_t)z->start);
    if (z->end < 0 || z->end <= z->start || d <= 0 || z->srcloc == 0)
        return 0;
    struct btr_zone_stat *s = z->srcloc > 0 ? slot(&a->by_static, (size_t)z->srcloc)
                                            : slot(&a->by_payload, (size_t)(-(int)z->srcloc));
    if (!s)
        return BTC_ERR_NOMEM;
    s->srcloc = z->srcloc;
    s->count++;
    s->total_ns = (int64_t)((uint64_t)s->total_ns + (uint64_t)d);
    s->sum_sq += (double)d * (double)d;
    if (d < s->min_ns)
        s->min_ns = d;
    if (d > s->max_ns)
        s->max_ns = d;
    return 0;
}

static int by_total(const void *a, const void *b)
{
    const struct btr_zone_stat *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

int btr_stats_compute(struct btr_stats *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    struct agg a;
    btc_vec_init(&a.by_static, sizeof(struct btr_zone_stat));
    btc_vec_init(&a.by_payload, sizeof(struct btr_zone_stat));
    btr_sections_init(&a.sections);
    struct btc_read_more more = {0};
    btr_sections_callbacks(&more);
    int rc =
        btc_tracy_read_more(path, &s->trace, on_zone, btr_sections_message, &more, &a, err, errlen);
    if (rc >= 0)
        btr_sections_finish(&a.sections, &s->trace);
    s->sections = a.sections;
    if (rc >= 0) {
        s->zones = calloc(a.by_static.len + a.by_payload.len + 1, sizeof *s->zones);
        if (!s->zones) {
            snprintf(err, errlen, "out of memory for the zone table");
            rc = BTC_ERR_NOMEM;
        }
    }
    struct btc_vec *lists[2] = {&a.by_static, &a.by_payload};
    for (int l = 0; l < 2 && rc >= 0; l++) {
        for (size_t i = 0; i < lists[l]->len; i++) {
            struct btr_zone_stat *z = btc_vec_at(lists[l], i);
            if (!z->count)
                continue;
            const struct btc_read_srcloc *loc = btc_trace_srcloc(&s->trace, z->srcloc);
            z->name =
                loc ? btc_trace_string(&s->trace, loc->name >= 0 ? loc->name : loc->function) : "";
            z->file = loc ? btc_trace_string(&s->trace, loc->file) : "";
            z->line = loc ? loc->line : 0;
            s->zones[s->nzones++] = *z;
        }
    }
    btc_vec_free(&a.by_static);
    btc_vec_free(&a.by_payload);
    if (rc >= 0)
        qsort(s->zones, s->nzones, sizeof *s->zones, by_total);
    return rc;
}

void btr_stats_free(struct btr_stats *s)
{
    free(s->zones);
    btr_sections_free(&s->sections);
    btc_trace_free(&s->trace);
}

static double std_dev(const struct btr_zone_stat *z)
{
    if (z->count < 2)
        return 0;
    double avg = (double)(z->total_ns / (int64_t)z->count);
    double ss = z->sum_sq - 2.0 * (double)z->total_ns * avg + avg * avg * (double)z->count;
    return sqrt(ss / (double)(z->count - 1));
}

/* Names with the separator or a quote are quoted CSV-style; control
 * characters (a newline too) are written as \xNN, as on the terminal. */
static void csv_field(FILE *out, const char *s, const char *sep)
{
    if (!strchr(s, '"') && !strstr(s, sep)) {
        btr_text_put(out, s);
        return;
    }
    fputc('"', out);
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        btr_text_write(out, s, (size_t)(q - s));
        fputs("\"\"", out);
    }
    btr_text_put(out, s);
    fputc('"', out);
}

void btr_stats_print_csv(const struct btr_stats *s, FILE *out, const char *sep)
{
    fprintf(
        out,
        "name%ssrc_file%ssrc_line%stotal_ns%stotal_perc%scounts%smean_ns%smin_ns%smax_ns%sstd_ns\n",
        sep, sep, sep, sep, sep, sep, sep, sep, sep);
    double last = (double)s->trace.last_time;
    for (size_t i = 0; i < s->nzones; i++) {
        const struct btr_zone_stat *z = &s->zones[i];
        csv_field(out, z->name, sep);
        fputs(sep, out);
        csv_field(out, z->file, sep);
        fprintf(out, "%s%u%s%lld%s%f%s%llu%s%lld%s%lld%s%lld%s%f\n", sep, z->line, sep,
                (long long)z->total_ns, sep, last > 0 ? 100.0 * (double)z->total_ns / last : 0.0,
                sep, (unsigned long long)z->count, sep,
                (long long)(z->total_ns / (int64_t)z->count), sep, (long long)z->min_ns, sep,
                (long long)z->max_ns, sep, std_dev(z));
    }
}

void btr_stats_print_table(const struct btr_stats *s, FILE *out)
{
    int wname = 4, wloc = 15;
    char loc[512], name[512], file[512];
    for (size_t i = 0; i < s->nzones; i++) {
        int n = (int)strlen(btr_text_safe(btr_demangle(s->zones[i].name), name, sizeof name));
        if (n > wname)
            wname = n;
        n = snprintf(loc, sizeof loc, "%s:%u", btr_text_safe(s->zones[i].file, file, sizeof file),
                     s->zones[i].line);
        if (n > wloc)
            wloc = n;
    }
    if (wname > 60)
        wname = 60;
    if (wloc > 60)
        wloc = 60;
    fprintf(out, "%-*s  %-*s  %10s  %14s  %12s  %12s  %12s\n", wname, "zone", wloc,
            "source location", "count", "total ns", "mean ns", "min ns", "max ns");
    for (size_t i = 0; i < s->nzones; i++) {
        const struct btr_zone_stat *z = &s->zones[i];
        snprintf(loc, sizeof loc, "%s:%u", btr_text_safe(z->file, file, sizeof file), z->line);
        fprintf(out, "%-*.*s  %-*.*s  %10llu  %14lld  %12lld  %12lld  %12lld\n", wname, wname,
                btr_text_safe(btr_demangle(z->name), name, sizeof name), wloc, wloc, loc,
                (unsigned long long)z->count, (long long)z->total_ns,
                (long long)(z->total_ns / (int64_t)z->count), (long long)z->min_ns,
                (long long)z->max_ns);
    }
}
