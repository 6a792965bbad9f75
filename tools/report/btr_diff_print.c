/* boardtrace-report diff's output (btr_diff.h): an aligned table for
 * people, CSV and JSON for machines. Changes are in percent of BASE; a
 * zone only in one trace has no change ("new", "gone"). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "btr_diff.h"

static void pct_cell(FILE *out, double pct)
{
    if (isnan(pct))
        fprintf(out, "  %8s", "-");
    else
        fprintf(out, "  %+7.1f%%", pct);
}

static void header_note(const struct btr_diff *d, FILE *out)
{
    fprintf(out,
            "A change is real when the Mann-Whitney rank test of the durations rejects \"no "
            "change\" at %.4g %% confidence, Bonferroni-corrected over the %zu rows tested, and "
            "the median moved by at least %.4g %%.\n",
            100 * d->opt.confidence, d->tested, d->opt.min_change_pct);
}

static void row_line(FILE *out, const struct btr_diff_row *r, int wname, int wloc)
{
    char name[512], file[512], loc[600];
    snprintf(loc, sizeof loc, "%s:%u", btr_text_safe(r->file, file, sizeof file), r->line);
    fprintf(out, "%-*.*s  %-*.*s  %8" PRIu64 "  %8" PRIu64, wname, wname,
            btr_text_safe(btr_demangle(r->name), name, sizeof name), wloc, wloc,
            r->file[0] ? loc : "", r->side[0].count, r->side[1].count);
    const struct btr_diff_side *a = &r->side[0], *b = &r->side[1];
    fprintf(out, "  %13" PRId64 "  %13" PRId64, a->total_ns, b->total_ns);
    pct_cell(out, btr_diff_pct(a->total_ns, b->total_ns));
    fprintf(out, "  %11" PRId64 "  %11" PRId64, a->mean_ns, b->mean_ns);
    pct_cell(out, btr_diff_pct(a->mean_ns, b->mean_ns));
    fprintf(out, "  %11" PRId64 "  %11" PRId64, a->p50_ns, b->p50_ns);
    pct_cell(out, btr_diff_pct(a->p50_ns, b->p50_ns));
    fprintf(out, "  %11" PRId64 "  %11" PRId64, a->p99_ns, b->p99_ns);
    pct_cell(out, btr_diff_pct(a->p99_ns, b->p99_ns));
    fprintf(out, "  %9.2g  %s%s\n", r->p_value, btr_verdict_name(r->verdict),
            r->over_limit ? " OVER LIMIT" : "");
}

static void rows_table(FILE *out, const char *title, const struct btr_diff_row *rows, size_t n)
{
    int wname = 4, wloc = 8;
    char buf[512], loc[600];
    for (size_t i = 0; i < n; i++) {
        int k = (int)strlen(btr_text_safe(btr_demangle(rows[i].name), buf, sizeof buf));
        wname = k > wname ? k : wname;
        k = rows[i].file[0] ? snprintf(loc, sizeof loc, "%s:%u",
                                       btr_text_safe(rows[i].file, buf, sizeof buf), rows[i].line)
                            : 0;
        wloc = k > wloc ? k : wloc;
    }
    wname = wname > 48 ? 48 : wname;
    wloc = wloc > 40 ? 40 : wloc;
    fprintf(out,
            "\n%s\n%-*s  %-*s  %8s  %8s  %13s  %13s  %9s  %11s  %11s  %9s  %11s  %11s  %9s"
            "  %11s  %11s  %9s  %9s  %s\n",
            title, wname, "name", wloc, "location", "count", "count", "total ns", "total ns",
            "change", "mean ns", "mean ns", "change", "p50 ns", "p50 ns", "change", "p99 ns",
            "p99 ns", "change", "p", "verdict");
    fprintf(out,
            "%-*s  %-*s  %8s  %8s  %13s  %13s  %9s  %11s  %11s  %9s  %11s  %11s  %9s  %11s"
            "  %11s  %9s\n",
            wname, "", wloc, "", "base", "new", "base", "new", "", "base", "new", "", "base", "new",
            "", "base", "new", "");
    for (size_t i = 0; i < n; i++)
        row_line(out, &rows[i], wname, wloc);
}

void btr_diff_print_table(const struct btr_diff *d, FILE *out)
{
    header_note(d, out);
    rows_table(out, "Zones, by change of total time", d->zones, d->nzones);
    if (d->nframes)
        rows_table(out, "Frames (frame times per set)", d->frames, d->nframes);
    if (d->npools) {
        fprintf(out, "\nMemory\n%-32s  %14s  %14s  %9s  %10s  %10s\n", "pool", "peak base",
                "peak new", "change", "allocs", "allocs");
        for (size_t i = 0; i < d->npools; i++) {
            const struct btr_diff_pool *p = &d->pools[i];
            char safe[512];
            fprintf(out, "%-32.32s  %14" PRIu64 "  %14" PRIu64,
                    btr_text_safe(p->name, safe, sizeof safe), p->peak[0], p->peak[1]);
            pct_cell(out, p->present[0] && p->present[1]
                              ? btr_diff_pct((int64_t)p->peak[0], (int64_t)p->peak[1])
                              : NAN);
            fprintf(out, "  %10" PRIu64 "  %10" PRIu64 "%s\n", p->allocs[0], p->allocs[1],
                    !p->present[0]   ? "  new"
                    : !p->present[1] ? "  gone"
                                     : "");
        }
    }
    fprintf(out,
            "\nTime in zones (the outermost zones of every thread): %" PRId64 " ns base, %" PRId64
            " ns new",
            d->zones_ns[0], d->zones_ns[1]);
    pct_cell(out, btr_diff_pct(d->zones_ns[0], d->zones_ns[1]));
    fputc('\n', out);
    if (d->opt.fail_above_pct >= 0)
        fprintf(out, "\n%" PRIu64 " real regression%s of mean or p99 above %.4g %%\n",
                d->over_limit, d->over_limit == 1 ? "" : "s", d->opt.fail_above_pct);
    if (d->opt.fail_above_total_pct >= 0)
        fprintf(out, "time in zones %s above %.4g %%\n", d->total_over ? "grew" : "did not grow",
                d->opt.fail_above_total_pct);
}

/* CSV fields quoted when they hold a comma or a quote (as stats --csv). */
static void csv_field(FILE *out, const char *s)
{
    if (!strchr(s, '"') && !strchr(s, ',')) {
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

static void csv_pct(FILE *out, double pct)
{
    if (isnan(pct))
        fputs(",", out);
    else
        fprintf(out, ",%.3f", pct);
}

static void csv_rows(FILE *out, const char *kind, const struct btr_diff_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct btr_diff_row *r = &rows[i];
        const struct btr_diff_side *a = &r->side[0], *b = &r->side[1];
        fprintf(out, "%s,", kind);
        csv_field(out, r->name);
        fputc(',', out);
        csv_field(out, r->file);
        fprintf(out, ",%u,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64, r->line, a->count,
                b->count, a->total_ns, b->total_ns);
        csv_pct(out, btr_diff_pct(a->total_ns, b->total_ns));
        fprintf(out, ",%" PRId64 ",%" PRId64, a->mean_ns, b->mean_ns);
        csv_pct(out, btr_diff_pct(a->mean_ns, b->mean_ns));
        fprintf(out, ",%" PRId64 ",%" PRId64, a->p50_ns, b->p50_ns);
        csv_pct(out, btr_diff_pct(a->p50_ns, b->p50_ns));
        fprintf(out, ",%" PRId64 ",%" PRId64, a->p99_ns, b->p99_ns);
        csv_pct(out, btr_diff_pct(a->p99_ns, b->p99_ns));
        fprintf(out, ",%.6g,%s,%d\n", r->p_value, btr_verdict_name(r->verdict), r->over_limit);
    }
}

void btr_diff_print_csv(const struct btr_diff *d, FILE *out)
{
    fputs("kind,name,src_file,src_line,base_count,new_count,base_total_ns,new_total_ns,"
          "total_change_pct,base_mean_ns,new_mean_ns,mean_change_pct,base_p50_ns,new_p50_ns,"
          "p50_change_pct,base_p99_ns,new_p99_ns,p99_change_pct,p_value,verdict,over_limit\n",
          out);
    csv_rows(out, "zone", d->zones, d->nzones);
    csv_rows(out, "frames", d->frames, d->nframes);
    /* The time in zones: one row of kind total, its totals only. */
    fprintf(out, "total,time in zones,,0,,,%" PRId64 ",%" PRId64, d->zones_ns[0], d->zones_ns[1]);
    csv_pct(out, btr_diff_pct(d->zones_ns[0], d->zones_ns[1]));
    fprintf(out, ",,,,,,,,,,,,%d\n", d->total_over);
}

static void json_pct(FILE *out, const char *key, double pct)
{
    if (isnan(pct))
        fprintf(out, ",\"%s\":null", key);
    else
        fprintf(out, ",\"%s\":%.3f", key, pct);
}

static void json_side(FILE *out, const char *key, const struct btr_diff_side *s)
{
    fprintf(out,
            ",\"%s\":{\"count\":%" PRIu64 ",\"total_ns\":%" PRId64 ",\"mean_ns\":%" PRId64
            ",\"p50_ns\":%" PRId64 ",\"p99_ns\":%" PRId64 "}",
            key, s->count, s->total_ns, s->mean_ns, s->p50_ns, s->p99_ns);
}

static void json_rows(FILE *out, const char *key, const struct btr_diff_row *rows, size_t n)
{
    fprintf(out, ",\n\"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        const struct btr_diff_row *r = &rows[i];
        const struct btr_diff_side *a = &r->side[0], *b = &r->side[1];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        btr_json_string(out, btr_demangle(r->name));
        if (r->file[0]) {
            fputs(",\"file\":", out);
            btr_json_string(out, r->file);
            fprintf(out, ",\"line\":%u", r->line);
        }
        json_side(out, "base", a);
        json_side(out, "new", b);
        json_pct(out, "total_change_pct", btr_diff_pct(a->total_ns, b->total_ns));
        json_pct(out, "mean_change_pct", btr_diff_pct(a->mean_ns, b->mean_ns));
        json_pct(out, "p50_change_pct", btr_diff_pct(a->p50_ns, b->p50_ns));
        json_pct(out, "p99_change_pct", btr_diff_pct(a->p99_ns, b->p99_ns));
        fprintf(out, ",\"p_value\":%.6g,\"verdict\":\"%s\",\"over_limit\":%s}", r->p_value,
                btr_verdict_name(r->verdict), r->over_limit ? "true" : "false");
    }
    fputs("]", out);
}

void btr_diff_print_json(const struct btr_diff *d, FILE *out)
{
    fprintf(out, "{\"confidence\":%.6g,\"min_change_pct\":%.6g,\"tested\":%zu", d->opt.confidence,
            d->opt.min_change_pct, d->tested);
    if (d->opt.fail_above_pct >= 0)
        fprintf(out, ",\"fail_above_pct\":%.6g", d->opt.fail_above_pct);
    fprintf(out, ",\"over_limit\":%" PRIu64, d->over_limit);
    fprintf(out, ",\n\"total\":{\"base_ns\":%" PRId64 ",\"new_ns\":%" PRId64, d->zones_ns[0],
            d->zones_ns[1]);
    json_pct(out, "change_pct", btr_diff_pct(d->zones_ns[0], d->zones_ns[1]));
    if (d->opt.fail_above_total_pct >= 0)
        fprintf(out, ",\"fail_above_pct\":%.6g", d->opt.fail_above_total_pct);
    fprintf(out, ",\"over_limit\":%s}", d->total_over ? "true" : "false");
    json_rows(out, "zones", d->zones, d->nzones);
    json_rows(out, "frames", d->frames, d->nframes);
    fputs(",\n\"memory\":[", out);
    for (size_t i = 0; i < d->npools; i++) {
        const struct btr_diff_pool *p = &d->pools[i];
        fputs(i ? ",\n{\"pool\":" : "\n{\"pool\":", out);
        btr_json_string(out, p->name);
        for (int s = 0; s < 2; s++) {
            if (p->present[s])
                fprintf(out, ",\"%s\":{\"peak_bytes\":%" PRIu64 ",\"allocs\":%" PRIu64 "}",
                        s ? "new" : "base", p->peak[s], p->allocs[s]);
        }
        fputc('}', out);
    }
    fputs("]}\n", out);
}
