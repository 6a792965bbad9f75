/* Two traces compared (boardtrace-report diff): per zone (name and source
 * location) count, total, mean, p50 and p99 in each and their change, with
 * a Mann-Whitney rank test of the durations saying whether the change is
 * real; per frame set the frame times' p50 and p99; per memory pool the
 * peak; in all, the time in zones (each thread's outermost zones' durations
 * summed: nested zones are not counted again). btr_diff.c computes, btr_diff_print.c writes table,
 * CSV or JSON. */
#ifndef BTR_DIFF_H
#define BTR_DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "btr_report.h"

/* What a change is, zones and frame sets alike. */
enum btr_verdict {
    BTR_SAME,       /* not a real change at the confidence */
    BTR_SLOWER,     /* real: durations grew */
    BTR_FASTER,     /* real: durations shrank */
    BTR_UNTESTED,   /* too few durations on a side, or not all kept */
    BTR_APPEARED,   /* only in NEW */
    BTR_DISAPPEARED /* only in BASE */
};

struct btr_diff_side {
    uint64_t count;
    int64_t total_ns, mean_ns, p50_ns, p99_ns;
};

struct btr_diff_row {
    const char *name, *file; /* file "" for frame sets */
    uint32_t line;
    struct btr_diff_side side[2]; /* BASE, NEW */
    double p_value;               /* two-sided, 1 when not tested */
    enum btr_verdict verdict;
    int over_limit; /* a real regression of mean or p99 above --fail-above */
};

struct btr_diff_pool {
    const char *name;
    int present[2];
    uint64_t peak[2], allocs[2];
};

struct btr_diff_options {
    double confidence;     /* e.g. 0.99 */
    double min_change_pct; /* a real change also moves the median this much */
    double fail_above_pct; /* < 0: no gate */
    /* The same for the time in zones in all (< 0: no gate): one number a
     * trace, so no test; the limit has to stand above the runs' noise. */
    double fail_above_total_pct;
};

struct btr_diff {
    struct btr_diff_options opt;
    struct btc_trace trace[2];
    struct btr_sections sections[2];
    struct btr_diff_row *zones, *frames;
    size_t nzones, nframes, tested; /* tested: rows the rank test ran on */
    struct btr_diff_pool *pools;
    size_t npools;
    uint64_t over_limit; /* rows over --fail-above */
    int64_t zones_ns[2]; /* time in zones: outermost zones' durations, BASE and NEW */
    int total_over;      /* zones_ns grew more than --fail-above-total */
};

/* Reads both traces (each keeps every zone's duration, 8 bytes a zone,
 * within the reader's memory limit) and compares them. On failure err says
 * which file and why. */
int btr_diff_compute(struct btr_diff *d, const char *base, const char *next,
                     const struct btr_diff_options *opt, char *err, size_t errlen);
void btr_diff_free(struct btr_diff *d);

/* The change from BASE to NEW in percent (NaN when BASE is 0). */
double btr_diff_pct(int64_t base, int64_t next);
const char *btr_verdict_name(enum btr_verdict v);

/* Mann-Whitney U of two sorted samples, normal approximation with tie and
 * continuity corrections: the two-sided p-value (1 when every value is
 * equal). */
double btr_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb);

void btr_diff_print_table(const struct btr_diff *d, FILE *out);
void btr_diff_print_csv(const struct btr_diff *d, FILE *out);
void btr_diff_print_json(const struct btr_diff *d, FILE *out);

#endif
