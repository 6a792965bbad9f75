/* The .tracy writer's plots (points sorted by time, per plot) and memory
 * pools (allocations and frees from the memory spool, with their callstacks
 * and the frees' threads). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btc_format.h"
#include "btc_tracy.h"
#include "btc_tracy_write_parts.h"

struct plot_point {
    int64_t time;
    double value;
    uint64_t seq;
};

static int cmp_point(const void *a, const void *b)
{
    const struct plot_point *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int btcw_plots(struct writer *wr)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    put_u64(w, m->plots.len);
    for (size_t i = 0; i < m->plots.len; i++) {
        struct btc_plot *pl = btc_vec_at(&m->plots, i);
        put_u8(w, pl->type);
        put_u8(w, pl->format);
        put_u8(w, pl->step);
        put_u8(w, pl->fill);
        put_u32(w, pl->color);
        put_u64(w, pl->key);
        put_f64(w, pl->count ? pl->min : 0);
        put_f64(w, pl->count ? pl->max : 0);
        put_f64(w, pl->sum);
        put_u64(w, pl->count);
        if (!pl->count)
            continue;
        if (!pl->unsorted) {
            /* Points in time order (one thread): straight from the spool. */
            struct btc_spool_reader r;
            if (btc_spool_reader_open(&r, &m->plot_points) < 0)
                return btcw_io_fail(wr, "plot");
            const uint8_t *p;
            int rc;
            int64_t ref = 0;
            uint64_t n = 0;
            while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
                struct btc_plot_rec pr;
                memcpy(&pr, p, sizeof pr);
                if (pr.plot == i && n < pl->count) {
                    put_wto(w, &ref, pr.time);
                    put_f64(w, pr.value);
                    n++;
                }
            }
            btc_spool_reader_close(&r);
            if (rc < 0 || n != pl->count)
                return btcw_io_fail(wr, "plot");
            continue;
        }
        /* Points of one plot from several threads may interleave out of
         * order: sort them in memory (24 bytes a point, this plot only). */
        struct plot_point *v = malloc(pl->count * sizeof *v);
        if (!v)
            return BTC_ERR_NOMEM;
        struct btc_spool_reader r;
        if (btc_spool_reader_open(&r, &m->plot_points) < 0) {
            free(v);
            return btcw_io_fail(wr, "plot");
        }
        const uint8_t *p;
        int rc;
        uint64_t n = 0;
        while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
            struct btc_plot_rec pr;
            memcpy(&pr, p, sizeof pr);
            if (pr.plot == i && n < pl->count) {
                v[n].time = pr.time;
                v[n].value = pr.value;
                v[n].seq = n;
                n++;
            }
        }
        btc_spool_reader_close(&r);
        if (rc < 0 || n != pl->count) {
            free(v);
            return btcw_io_fail(wr, "plot");
        }
        qsort(v, n, sizeof *v, cmp_point);
        int64_t ref = 0;
        for (uint64_t k = 0; k < n; k++) {
            put_wto(w, &ref, v[k].time);
            put_f64(w, v[k].value);
        }
        free(v);
    }
    return BTC_OK;
}

int btcw_memory(struct writer *wr)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    put_u64(w, m->pools.len);
    put_u64(w, m->mem.count);
    for (size_t i = 0; i < m->pools.len; i++) {
        struct btc_pool *pool = btc_vec_at(&m->pools, i);
        put_u64(w, pool->name);
        put_u64(w, pool->count);
        put_u64(w, pool->count - pool->freed);
        put_u64(w, pool->freed);
        uint64_t high = 0, low = UINT64_MAX, usage = 0;
        int64_t ref = 0;
        struct btc_spool_reader r;
        if (btc_spool_reader_open(&r, &m->mem) < 0)
            return btcw_io_fail(wr, "memory");
        const uint8_t *p;
        int rc;
        while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
            struct btc_mem_rec e;
            memcpy(&e, p, sizeof e);
            if (e.pool != i)
                continue;
            put_u64(w, e.ptr);
            put_u64(w, e.size);
            put_u24(w, e.cs_alloc);
            put_u24(w, e.cs_free);
            put_wto(w, &ref, e.time_alloc);
            put_u64(w,
                    e.time_free < 0 ? UINT64_MAX : (uint64_t)e.time_free - (uint64_t)e.time_alloc);
            put_u16(w, e.thread_alloc);
            put_u16(w, e.thread_free);
            if (e.ptr + e.size > high)
                high = e.ptr + e.size;
            if (e.ptr < low)
                low = e.ptr;
            if (e.time_free < 0)
                usage += e.size;
        }
        btc_spool_reader_close(&r);
        if (rc < 0)
            return btcw_io_fail(wr, "memory");
        put_u64(w, high);
        put_u64(w, low);
        put_u64(w, usage);
        put_u64(w, pool->name);
    }
    return BTC_OK;
}
