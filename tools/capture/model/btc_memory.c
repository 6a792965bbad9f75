/* Memory events: allocations and frees per pool (the default one or a
 * named one), with their callstacks, and discards of a whole pool. */
#define _GNU_SOURCE
#include "btc_format.h"
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t get_pool(struct btc_model *m, uint64_t name)
{
    if (!name)
        return 0;
    uint64_t *v = btc_map_get(&m->pool_index, name);
    if (v)
        return (int64_t)*v;
    struct btc_pool *p = btc_vec_push(&m->pools);
    if (!p)
        return BTC_ERR_NOMEM;
    p->name = name;
    btc_map_init(&p->live);
    int64_t i = (int64_t)m->pools.len - 1;
    if (btc_map_put(&m->pool_index, name, (uint64_t)i) < 0 || btcm_want_string(m, name) < 0)
        return BTC_ERR_NOMEM;
    return i;
}

int btc_memory_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    unsigned t = ev->type;
    int named = t == BT_EV_MEM_ALLOC_NAMED || t == BT_EV_MEM_FREE_NAMED ||
                t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED || t == BT_EV_MEM_FREE_CALLSTACK_NAMED;
    int callstack = t == BT_EV_MEM_ALLOC_CALLSTACK || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED ||
                    t == BT_EV_MEM_FREE_CALLSTACK || t == BT_EV_MEM_FREE_CALLSTACK_NAMED ||
                    t == BT_EV_MEM_DISCARD_CALLSTACK;
    int alloc = t == BT_EV_MEM_ALLOC || t == BT_EV_MEM_ALLOC_NAMED ||
                t == BT_EV_MEM_ALLOC_CALLSTACK || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED;
    int discard = t == BT_EV_MEM_DISCARD || t == BT_EV_MEM_DISCARD_CALLSTACK;
    uint32_t tid = bt_wire_get_u32(ev->p + 9);
    uint64_t ptr = bt_wire_get_u64(ev->p + 13);
    uint64_t name = 0;
    if (discard) {
        name = ptr;
    } else if (named) {
        if (!m->pending_pool_name)
            return btcm_fail(ev, err, errlen, "expected a MemNamePayload before this event");
        name = m->pending_pool_name;
        m->pending_pool_name = 0;
    }
    uint32_t cs = 0;
    if (callstack) {
        if (!m->pending_serial_callstack)
            return btcm_fail(ev, err, errlen, "expected a CallstackSerial event before this event");
        cs = m->pending_serial_callstack;
        m->pending_serial_callstack = 0;
    }
    int64_t ti = btcm_get_thread(m, tid);
    int64_t pi = get_pool(m, name);
    if (ti < 0 || pi < 0)
        return ti == BTC_ERR_PROTOCOL ? btcm_fail(ev, err, errlen, "too many threads")
                                      : btcm_nomem(err, errlen);
    struct btc_pool *pool = btc_vec_at(&m->pools, (size_t)pi);
    uint16_t fthread = (uint16_t)(ti + 1);
    int ignore_faults =
        m->welcome.flags & (BT_WELCOME_FLAG_IGNORE_MEM_FAULTS | BT_WELCOME_FLAG_ON_DEMAND);
    btcm_see_time(m, ev->time);
    if (alloc) {
        uint64_t size = bt_wire_get_u32(ev->p + 21) | ((uint64_t)bt_wire_get_u16(ev->p + 25) << 32);
        /* No board has 128 TiB: such a size is a negative one or garbage,
         * which upstream's loader asserts on. The allocation is kept, its
         * size unknown (0: see BTC_MEM_SIZE_MAX). */
        if (size > BTC_MEM_SIZE_MAX) {
            size = 0;
            m->mem_sizes_unknown++;
        }
        if (btc_map_get(&pool->live, ptr)) {
            if (!(m->welcome.flags & BT_WELCOME_FLAG_IGNORE_MEM_FAULTS))
                return btcm_fail(ev, err, errlen,
                                 "allocation of 0x%" PRIx64 ", which is already allocated", ptr);
        }
        struct btc_mem_rec r = {.pool = (uint32_t)pi,
                                .thread_alloc = fthread,
                                .ptr = ptr,
                                .size = size,
                                .cs_alloc = cs,
                                .time_alloc = ev->time,
                                .time_free = -1};
        uint64_t idx;
        if (btc_spool_append(&m->mem, &r, &idx) < 0 || btc_map_put(&pool->live, ptr, idx) < 0)
            return btcm_nomem(err, errlen);
        pool->count++;
        return BTC_OK;
    }
    struct btc_mem_rec r = {.thread_free = fthread, .cs_free = cs, .time_free = ev->time};
    size_t off = offsetof(struct btc_mem_rec, thread_free);
    size_t off_cs = offsetof(struct btc_mem_rec, cs_free);
    size_t off_t = offsetof(struct btc_mem_rec, time_free);
    if (discard) {
        for (size_t i = 0; i < pool->live.cap; i++) {
            if (!pool->live.used[i])
                continue;
            uint64_t idx = pool->live.vals[i];
            if (btc_spool_patch(&m->mem, idx, off, &r.thread_free, 2) < 0 ||
                btc_spool_patch(&m->mem, idx, off_cs, &r.cs_free, 4) < 0 ||
                btc_spool_patch(&m->mem, idx, off_t, &r.time_free, 8) < 0)
                return BTC_ERR_IO;
            pool->freed++;
        }
        btc_map_clear(&pool->live);
        return BTC_OK;
    }
    if (ptr == 0)
        return BTC_OK;
    uint64_t *idxp = btc_map_get(&pool->live, ptr);
    if (!idxp) {
        if (ignore_faults)
            return BTC_OK;
        return btcm_fail(ev, err, errlen, "free of 0x%" PRIx64 ", which is not allocated", ptr);
    }
    uint64_t idx = *idxp;
    btc_map_remove(&pool->live, ptr);
    if (btc_spool_patch(&m->mem, idx, off, &r.thread_free, 2) < 0 ||
        btc_spool_patch(&m->mem, idx, off_cs, &r.cs_free, 4) < 0 ||
        btc_spool_patch(&m->mem, idx, off_t, &r.time_free, 8) < 0)
        return BTC_ERR_IO;
    pool->freed++;
    return BTC_OK;
}
