/* A thread's CPU samples in the .tracy file (end of section 23): the
 * context-switch samples, then all samples, each list sorted by time and
 * written against its own reference. Streamed from the sample spool when
 * the thread's samples came in order, sorted in memory when they did not. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "btc_tracy_write_parts.h"

struct sample {
    int64_t time;
    uint32_t callstack;
    uint32_t seq;
};

static int cmp_sample(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One list: the thread's samples (only_ctx: those at context switches). */
static int write_list(struct writer *wr, uint32_t thread, uint64_t n, int only_ctx, int sorted)
{
    struct fw *w = &wr->w;
    put_u64(w, n);
    if (!n)
        return BTC_OK;
    struct sample *v = NULL;
    if (!sorted && !(v = malloc(n * sizeof *v)))
        return BTC_ERR_NOMEM;
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &wr->m->samples.spool) < 0) {
        free(v);
        return btcw_io_fail(wr, "sample");
    }
    int64_t ref = 0;
    uint64_t k = 0;
    const uint8_t *p;
    int rc;
    while (k < n && (rc = btc_spool_reader_next(&r, &p)) > 0) {
        struct btc_sample_rec s;
        memcpy(&s, p, sizeof s);
        if (s.thread != thread || (only_ctx && !s.ctx_switch))
            continue;
        if (sorted) {
            put_wto(w, &ref, s.time);
            put_u24(w, s.callstack);
        } else {
            v[k] = (struct sample){s.time, s.callstack, (uint32_t)k};
        }
        k++;
    }
    btc_spool_reader_close(&r);
    if (k < n) {
        free(v);
        return btcw_io_fail(wr, "sample");
    }
    if (!sorted) {
        qsort(v, n, sizeof *v, cmp_sample);
        for (uint64_t i = 0; i < n; i++) {
            put_wto(w, &ref, v[i].time);
            put_u24(w, v[i].callstack);
        }
        free(v);
    }
    return BTC_OK;
}

int btcw_thread_samples(struct writer *wr, uint32_t thread)
{
    const struct btc_thread *t = btc_vec_at(&wr->m->threads, thread);
    int rc = write_list(wr, thread, t->ctx_samples, 1, !t->samples_unsorted);
    return rc < 0 ? rc : write_list(wr, thread, t->samples, 0, !t->samples_unsorted);
}
