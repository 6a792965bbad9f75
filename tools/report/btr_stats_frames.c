/* Frames for stats: per frame set the frames, and the mean and 99th
 * percentile of frame times. A continuous set's frame lasts until the next
 * one starts, its last until the trace's end (as upstream's GUI measures
 * it); a discontinuous set's frames have their own ends, and frames never
 * ended are not timed.
 *
 * The p99 is exact (nearest rank over every duration, 8 bytes each) up to
 * BTR_FRAMES_EXACT frames in a set; past that the set switches to a
 * histogram of buckets 1 % wide, and the p99 printed is the upper bound of
 * its bucket: at most 1 % above the exact value. Memory stays at 8 MiB plus
 * 35 KiB per set however long the trace. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "btr_report.h"

static const double bucket_growth = 1.01;

static size_t bucket_of(int64_t d)
{
    if (d <= 1)
        return 0;
    double b = floor(log((double)d) / log(bucket_growth)) + 1;
    return b >= BTR_FRAME_BUCKETS ? BTR_FRAME_BUCKETS - 1 : (size_t)b;
}

/* The largest duration bucket b holds. */
static int64_t bucket_top(size_t b)
{
    if (b == 0)
        return 1;
    return (int64_t)ceil(pow(bucket_growth, (double)b));
}

static int add_duration(struct btr_frame_stat *f, int64_t d)
{
    if (d < 0)
        return BTC_OK;
    f->timed++;
    f->total_ns = (int64_t)((uint64_t)f->total_ns + (uint64_t)d); /* no overflow trap */
    if (d < f->min_ns)
        f->min_ns = d;
    if (d > f->max_ns)
        f->max_ns = d;
    if (!f->buckets && f->durations.len < BTR_FRAMES_EXACT) {
        int64_t *slot = btc_vec_push(&f->durations);
        if (!slot)
            return BTC_ERR_NOMEM;
        *slot = d;
        return BTC_OK;
    }
    if (!f->buckets) {
        f->buckets = calloc(BTR_FRAME_BUCKETS, sizeof *f->buckets);
        if (!f->buckets)
            return BTC_ERR_NOMEM;
        for (size_t i = 0; i < f->durations.len; i++)
            f->buckets[bucket_of(*(int64_t *)btc_vec_at(&f->durations, i))]++;
        btc_vec_free(&f->durations);
        btc_vec_init(&f->durations, sizeof(int64_t));
    }
    f->buckets[bucket_of(d)]++;
    return BTC_OK;
}

int btr_frames_on_frame(struct btr_sections *sec, const struct btc_read_frame *fr)
{
    while (sec->frame_sets.len <= fr->set) {
        struct btr_frame_stat *f = btc_vec_push(&sec->frame_sets);
        if (!f)
            return BTC_ERR_NOMEM;
        *f = (struct btr_frame_stat){.min_ns = INT64_MAX, .last_start = -1};
        btc_vec_init(&f->durations, sizeof(int64_t));
    }
    struct btr_frame_stat *f = btc_vec_at(&sec->frame_sets, fr->set);
    f->frames++;
    if (fr->end >= 0)
        return add_duration(f, (int64_t)((uint64_t)fr->end - (uint64_t)fr->start));
    f->continuous = 1;
    int rc = f->last_start >= 0
                 ? add_duration(f, (int64_t)((uint64_t)fr->start - (uint64_t)f->last_start))
                 : BTC_OK;
    f->last_start = fr->start;
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest duration with pct % of frames at most it;
 * past the exact count, the upper bound of its bucket. */
static int64_t percentile(const struct btr_frame_stat *f, unsigned pct)
{
    uint64_t rank = (f->timed * pct + 99) / 100;
    if (!f->buckets)
        return *(int64_t *)btc_vec_at(&f->durations, (size_t)rank - 1);
    uint64_t seen = 0;
    for (size_t b = 0; b < BTR_FRAME_BUCKETS; b++) {
        seen += f->buckets[b];
        if (seen >= rank)
            return bucket_top(b) < f->max_ns ? bucket_top(b) : f->max_ns;
    }
    return f->max_ns;
}

void btr_frames_finish(struct btr_sections *sec, const struct btc_trace *t)
{
    for (size_t i = 0; i < sec->frame_sets.len; i++) {
        struct btr_frame_stat *f = btc_vec_at(&sec->frame_sets, i);
        if (f->last_start >= 0 && t->last_time > f->last_start)
            add_duration(f, (int64_t)((uint64_t)t->last_time - (uint64_t)f->last_start));
        f->last_start = -1;
        if (!f->timed)
            continue;
        if (!f->buckets)
            qsort(f->durations.data, f->durations.len, sizeof(int64_t), cmp_i64);
        f->p50_ns = percentile(f, 50);
        f->p99_ns = percentile(f, 99);
    }
}

void btr_frames_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out)
{
    if (!sec->frame_sets.len)
        return;
    fprintf(out, "\nFrames\n%-32s  %10s  %14s  %14s  %14s  %14s\n", "frame set", "frames",
            "mean ns", "p99 ns", "min ns", "max ns");
    for (size_t i = 0; i < sec->frame_sets.len; i++) {
        const struct btr_frame_stat *f = btc_vec_at(&sec->frame_sets, i);
        const struct btc_read_frameset *fs =
            i < t->framesets.len ? btc_vec_at(&t->framesets, i) : NULL;
        const char *name =
            fs && fs->name >= 0 ? btr_demangle(btc_trace_string(t, fs->name)) : "(default)";
        char safe[512];
        fprintf(out, "%-32.32s  %10" PRIu64, btr_text_safe(name, safe, sizeof safe), f->frames);
        if (f->timed)
            fprintf(out, "  %14" PRId64 "  %14" PRId64 "%s %14" PRId64 "  %14" PRId64 "\n",
                    f->total_ns / (int64_t)f->timed, f->p99_ns, f->buckets ? "~" : " ", f->min_ns,
                    f->max_ns);
        else
            fputc('\n', out);
    }
}

void btr_frames_free(struct btr_sections *sec)
{
    for (size_t i = 0; i < sec->frame_sets.len; i++) {
        struct btr_frame_stat *f = btc_vec_at(&sec->frame_sets, i);
        btc_vec_free(&f->durations);
        free(f->buckets);
    }
    btc_vec_free(&sec->frame_sets);
}
