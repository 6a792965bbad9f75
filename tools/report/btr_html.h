/* The parts of boardtrace-report html (btr_html.c puts the page together):
 * text escaping (btr_html_text.c), the per-thread timeline
 * (btr_html_timeline.c) and the memory and plot curves (btr_html_series.c).
 * The timeline and the curves are gathered in the read that builds the
 * flame graph, binned over the trace's span, so they stay small whatever
 * the trace's length. */
#ifndef BTR_HTML_H
#define BTR_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "btr_report.h"

/* Text from the trace for HTML: what is not printable as \xNN
 * (btr_text_put), then &, <, >, " escaped; btr_html_escaped escapes only
 * (for text printable already). */
void btr_html_text(FILE *out, const char *s);
void btr_html_escaped(FILE *out, const char *p);
/* A JSON string inside <script>: "</" must not close the element. */
void btr_html_script_string(FILE *out, const char *s);

/* Timeline: per thread with zones and per depth up to BTR_TIMELINE_DEPTHS,
 * the span cut in BTR_TIMELINE_BINS; each bin shows the zone that covered
 * most of it and how busy that depth was there. */
#define BTR_TIMELINE_BINS    400
#define BTR_TIMELINE_DEPTHS  4
#define BTR_TIMELINE_THREADS 16 /* drawn: the busiest, when there are more */
struct btr_timeline_cell {
    int64_t busy_ns; /* covered by zones of this depth */
    int64_t best_ns; /* of that, by the busiest source location */
    int16_t best;    /* its source location */
};
struct btr_timeline {
    int64_t span;               /* the trace's last time, ns */
    struct btc_vec threads;     /* u64 thread id, in the order first seen */
    struct btc_map thread_cell; /* thread id -> index + 1 */
    struct btc_vec cells;       /* struct btr_timeline_cell, per thread, depth, bin */
    struct btc_map ns;          /* (cell << 16 | srcloc) -> ns covered */
};
void btr_timeline_init(struct btr_timeline *tl, int64_t span);
void btr_timeline_free(struct btr_timeline *tl);
int btr_timeline_on_zone(struct btr_timeline *tl, const struct btc_read_zone *z);
void btr_timeline_write(FILE *out, const struct btr_timeline *tl, const struct btc_trace *t);

/* Curves: memory in use per pool (exact at each allocation and free, as
 * stats' peak sweeps them) and each plot's points, kept per bin of the span
 * as their least and greatest value. */
#define BTR_SERIES_BINS 400
#define BTR_SERIES_MAX  64 /* curves of each kind drawn */
struct btr_series_bin {
    double lo, hi, last;
    int seen;
};
struct btr_series {
    int64_t span;
    struct btc_vec pools;   /* struct btr_series_bin [BTR_SERIES_BINS] per pool */
    struct btc_vec plots;   /* the same per plot */
    struct btc_vec pending; /* struct btr_pending_free: the pool being read */
    uint32_t pool;
    uint64_t live;
};
void btr_series_init(struct btr_series *se, int64_t span);
void btr_series_free(struct btr_series *se);
int btr_series_on_mem(struct btr_series *se, const struct btc_read_mem *m);
int btr_series_on_point(struct btr_series *se, const struct btc_read_point *p);
/* After the read: the frees still pending in the last pool. */
void btr_series_finish(struct btr_series *se);
void btr_series_write(FILE *out, const struct btr_series *se, const struct btr_stats *s);

#endif
