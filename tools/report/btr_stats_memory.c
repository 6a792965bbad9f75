/* Memory per pool for stats: allocations, frees, the peak of bytes in use
 * and what was never freed, with the innermost function of each leak's
 * allocation callstack. Events come per pool in allocation order; the peak
 * sweeps them with a min-heap of the frees still to come, so it holds 16
 * bytes per allocation live at one time, not per event. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

#define TOP_LEAK_SITES 10

static struct btr_pending_free *heap_at(struct btc_vec *h, size_t i)
{
    return btc_vec_at(h, i);
}

static void heap_swap(struct btc_vec *h, size_t a, size_t b)
{
    struct btr_pending_free x = *heap_at(h, a);
    *heap_at(h, a) = *heap_at(h, b);
    *heap_at(h, b) = x;
}

int btr_pending_push(struct btc_vec *h, int64_t time, uint64_t size)
{
    struct btr_pending_free *e = btc_vec_push(h);
    if (!e)
        return BTC_ERR_NOMEM;
    *e = (struct btr_pending_free){time, size};
    for (size_t i = h->len - 1; i > 0 && heap_at(h, (i - 1) / 2)->time > heap_at(h, i)->time;
         i = (i - 1) / 2)
        heap_swap(h, i, (i - 1) / 2);
    return BTC_OK;
}

void btr_pending_pop(struct btc_vec *h)
{
    *heap_at(h, 0) = *heap_at(h, h->len - 1);
    h->len--;
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->len && heap_at(h, l)->time < heap_at(h, m)->time)
            m = l;
        if (r < h->len && heap_at(h, r)->time < heap_at(h, m)->time)
            m = r;
        if (m == i)
            break;
        heap_swap(h, i, m);
        i = m;
    }
}

static int add_leak(struct btr_sections *sec, const struct btc_read_mem *m)
{
    uint64_t key = (uint64_t)m->pool << 32 | m->cs_alloc;
    uint64_t *at = btc_map_get(&sec->leak_index, key);
    if (at) {
        struct btr_leak_site *s = btc_vec_at(&sec->leak_sites, (size_t)*at - 1);
        s->count++;
        s->bytes += m->size;
        return BTC_OK;
    }
    struct btr_leak_site *s = btc_vec_push(&sec->leak_sites);
    if (!s || btc_map_put(&sec->leak_index, key, sec->leak_sites.len) < 0)
        return BTC_ERR_NOMEM;
    *s = (struct btr_leak_site){m->pool, m->cs_alloc, 1, m->size};
    return BTC_OK;
}

int btr_memory_on_event(struct btr_sections *sec, const struct btc_trace *t,
                        const struct btc_read_mem *m)
{
    (void)t;
    while (sec->pools.len <= m->pool)
        if (!btc_vec_push(&sec->pools))
            return BTC_ERR_NOMEM;
    struct btr_pool_stat *p = btc_vec_at(&sec->pools, m->pool);
    if (m->pool != sec->pool) {
        sec->pending.len = 0; /* a new pool: the last one's frees no longer matter */
        sec->pool = m->pool;
    }
    /* At the same time a free counts before an allocation, as upstream's
     * memory plot (and the chrome export's counter) counts them. */
    while (sec->pending.len && heap_at(&sec->pending, 0)->time <= m->time_alloc) {
        p->live -= heap_at(&sec->pending, 0)->size;
        btr_pending_pop(&sec->pending);
    }
    p->allocs++;
    p->live += m->size;
    if (p->live > p->peak)
        p->peak = p->live;
    if (m->time_free >= 0) {
        p->frees++;
        return btr_pending_push(&sec->pending, m->time_free, m->size);
    }
    p->leaks++;
    p->leaked_bytes += m->size;
    /* Leaks are few in a healthy program; one site per callstack keeps
     * them bounded by the program's distinct allocation callstacks. */
    return add_leak(sec, m);
}

void btr_memory_finish(struct btr_sections *sec)
{
    btc_vec_free(&sec->pending);
    btc_vec_init(&sec->pending, sizeof(struct btr_pending_free));
}

static int by_bytes(const void *a, const void *b)
{
    const struct btr_leak_site *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return (x->callstack > y->callstack) - (x->callstack < y->callstack);
}

/* The innermost function of a leak's callstack: string index + 1, 0 none
 * (no callstack), UINT32_MAX unknown. */
static uint32_t top_of(const struct btc_trace *t, uint32_t callstack)
{
    if (!callstack)
        return 0;
    const uint64_t *top = btc_map_get(&t->sample_top, callstack);
    return top ? (uint32_t)*top : UINT32_MAX;
}

/* Leak sites merged by pool and innermost function (a loop's allocations
 * have as many callstacks as return addresses, but one place to fix);
 * callstack holds top_of's value. */
static size_t merge_sites(const struct btr_sections *sec, const struct btc_trace *t,
                          struct btr_leak_site *v)
{
    struct btc_map at;
    btc_map_init(&at);
    size_t n = 0;
    for (size_t i = 0; i < sec->leak_sites.len; i++) {
        const struct btr_leak_site *s = btc_vec_at(&sec->leak_sites, i);
        uint32_t top = top_of(t, s->callstack);
        uint64_t key = (uint64_t)s->pool << 32 | top;
        uint64_t *slot = btc_map_get(&at, key);
        if (slot) {
            v[*slot - 1].count += s->count;
            v[*slot - 1].bytes += s->bytes;
            continue;
        }
        v[n] = (struct btr_leak_site){s->pool, top, s->count, s->bytes};
        n++;
        if (btc_map_put(&at, key, n) < 0)
            break; /* out of memory: what was merged so far */
    }
    btc_map_free(&at);
    return n;
}

const char *btr_pool_name(const struct btc_trace *t, uint32_t pool)
{
    const struct btc_read_pool *rp = pool < t->pools.len ? btc_vec_at(&t->pools, pool) : NULL;
    return rp && rp->name >= 0 ? btr_demangle(btc_trace_string(t, rp->name)) : "default";
}

void btr_memory_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out)
{
    if (!sec->pools.len)
        return;
    fprintf(out, "\nMemory\n%-32s  %10s  %10s  %14s  %8s  %14s\n", "pool", "allocs", "frees",
            "peak bytes", "leaks", "leaked bytes");
    for (size_t i = 0; i < sec->pools.len; i++) {
        const struct btr_pool_stat *p = btc_vec_at(&sec->pools, i);
        if (!p->allocs)
            continue;
        char safe[512];
        fprintf(out,
                "%-32.32s  %10" PRIu64 "  %10" PRIu64 "  %14" PRIu64 "  %8" PRIu64 "  %14" PRIu64
                "\n",
                btr_text_safe(btr_pool_name(t, (uint32_t)i), safe, sizeof safe), p->allocs,
                p->frees, p->peak, p->leaks, p->leaked_bytes);
    }
    if (!sec->leak_sites.len)
        return;
    struct btr_leak_site *v = malloc(sec->leak_sites.len * sizeof *v);
    if (!v)
        return;
    size_t n = merge_sites(sec, t, v);
    qsort(v, n, sizeof *v, by_bytes);
    fprintf(out, "%-48s  %-20s  %8s  %14s\n", "leaked from (innermost function)", "pool", "leaks",
            "bytes");
    for (size_t i = 0; i < n && i < TOP_LEAK_SITES; i++) {
        const char *fn = v[i].callstack == 0 ? "(no callstack)"
                         : v[i].callstack == UINT32_MAX
                             ? "[unknown]"
                             : btr_demangle(btc_trace_string(t, (int64_t)v[i].callstack - 1));
        char safe_fn[512], safe_pool[512];
        fprintf(out, "%-48.48s  %-20.20s  %8" PRIu64 "  %14" PRIu64 "\n",
                btr_text_safe(fn, safe_fn, sizeof safe_fn),
                btr_text_safe(btr_pool_name(t, v[i].pool), safe_pool, sizeof safe_pool), v[i].count,
                v[i].bytes);
    }
    if (n > TOP_LEAK_SITES)
        fprintf(out, "(%zu more places)\n", n - TOP_LEAK_SITES);
    free(v);
}
