/* Hardware samples in the .tracy file (section 38): per address, the times
 * of each of the six counters, each list against its own reference. The
 * samples are grouped in memory (24 bytes each) when the file is written. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "btc_tracy_write_parts.h"

struct hw {
    uint64_t addr;
    int64_t time;
    uint32_t kind, seq;
};

static int cmp_hw(const void *a, const void *b)
{
    const struct hw *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int btcw_hw_samples(struct writer *wr)
{
    struct btc_hw_samples *h = &wr->m->hw_samples;
    struct fw *w = &wr->w;
    uint64_t n = 0;
    for (int k = 0; k < BTC_HW_KINDS; k++)
        n += h->count[k];
    if (!n) {
        put_u64(w, 0);
        return BTC_OK;
    }
    struct hw *v = malloc(n * sizeof *v);
    if (!v)
        return BTC_ERR_NOMEM;
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &h->spool) < 0) {
        free(v);
        return btcw_io_fail(wr, "hardware sample");
    }
    uint64_t k = 0;
    const uint8_t *p;
    int rc;
    while (k < n && (rc = btc_spool_reader_next(&r, &p)) > 0) {
        struct btc_hw_rec s;
        memcpy(&s, p, sizeof s);
        v[k] = (struct hw){s.addr, s.time, s.kind, (uint32_t)k};
        k++;
    }
    btc_spool_reader_close(&r);
    if (k < n) {
        free(v);
        return btcw_io_fail(wr, "hardware sample");
    }
    qsort(v, n, sizeof *v, cmp_hw);
    uint64_t addrs = 0;
    for (uint64_t i = 0; i < n; i++)
        addrs += i == 0 || v[i].addr != v[i - 1].addr;
    put_u64(w, addrs);
    for (uint64_t i = 0; i < n;) {
        uint64_t addr = v[i].addr;
        put_u64(w, addr);
        for (uint32_t kind = 0; kind < BTC_HW_KINDS; kind++) {
            uint64_t e = i;
            while (e < n && v[e].addr == addr && v[e].kind == kind)
                e++;
            put_u64(w, e - i);
            int64_t ref = 0;
            for (; i < e; i++)
                put_wto(w, &ref, v[i].time);
        }
    }
    free(v);
    return BTC_OK;
}
