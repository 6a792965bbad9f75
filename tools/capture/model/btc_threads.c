/* Threads and fibers: a thread's record made (and its name asked) on first
 * sight of its id, a fiber as a thread of its own, and which one the
 * per-thread events are for (the last ThreadContext's, or its fiber). */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new thread record; its name is asked with query type q for key. */
static int64_t new_thread(struct btc_model *m, uint64_t tid, uint8_t q, uint64_t key)
{
    /* File thread indices are u16 with 0 reserved. */
    if (m->threads.len >= 65534)
        return BTC_ERR_PROTOCOL;
    struct btc_thread *t = btc_vec_push(&m->threads);
    if (!t)
        return BTC_ERR_NOMEM;
    t->tid = tid;
    t->name = -1;
    t->fiber = -1;
    btc_vec_init(&t->stack, sizeof(struct btc_open_zone));
    int64_t i = (int64_t)m->threads.len - 1;
    if (btc_map_put(&m->thread_index, tid, (uint64_t)i) < 0 || btcm_query(m, q, key) < 0)
        return BTC_ERR_NOMEM;
    return i;
}

static int64_t get_thread(struct btc_model *m, uint64_t tid)
{
    uint64_t *idx = btc_map_get(&m->thread_index, tid);
    if (idx)
        return (int64_t)*idx;
    return new_thread(m, tid, BT_QUERY_THREAD_STRING, tid);
}

/* A fiber is a thread of its own in the file, with upstream's id
 * (1 << 32 | n-th fiber) and a name asked by its key. */
static int64_t get_fiber(struct btc_model *m, uint64_t key)
{
    uint64_t *idx = btc_map_get(&m->fiber_index, key);
    if (idx)
        return (int64_t)*idx;
    int64_t i = new_thread(m, (1ull << 32) | m->fiber_index.len, BT_QUERY_FIBER_NAME, key);
    if (i < 0)
        return i;
    ((struct btc_thread *)btc_vec_at(&m->threads, (size_t)i))->is_fiber = 1;
    return btc_map_put(&m->fiber_index, key, (uint64_t)i) < 0 ? BTC_ERR_NOMEM : i;
}

/* The thread per-thread events belong to: the last ThreadContext's, or the
 * fiber that thread has entered. */
static int64_t current_thread(struct btc_model *m)
{
    if (m->current_thread < 0)
        m->current_thread = get_thread(m, m->current_tid);
    return m->current_thread < 0 ? m->current_thread : btcm_acting_thread(m);
}

int64_t btcm_get_thread(struct btc_model *m, uint64_t tid)
{
    return get_thread(m, tid);
}

int64_t btcm_current_thread(struct btc_model *m)
{
    return current_thread(m);
}

/* FiberEnter and FiberLeave: the thread's current fiber, and the fiber's
 * run as a region of its own. */
int btc_threads_fiber(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    /* FiberEnter: time, fiber u64 @9, thread u32 @17, group hint @21;
     * FiberLeave: time, thread u32 @9. */
    int enter = ev->type == BT_EV_FIBER_ENTER;
    int64_t ti = get_thread(m, bt_wire_get_u32(p + (enter ? 17 : 9)));
    int64_t fi = enter ? get_fiber(m, bt_wire_get_u64(p + 9)) : -1;
    if (ti < 0 || (enter && fi < 0))
        return (ti == BTC_ERR_PROTOCOL || fi == BTC_ERR_PROTOCOL)
                   ? btcm_fail(ev, err, errlen, "too many threads")
                   : btcm_nomem(err, errlen);
    /* The fiber's run is a region of its own (upstream's fiber
     * context switches). */
    int64_t was = btcm_thread_at(m, ti)->fiber;
    if (btc_ctxswitch_fiber(m, btcm_thread_at(m, ti)->tid,
                            was >= 0 ? btcm_thread_at(m, was)->tid : 0,
                            enter ? btcm_thread_at(m, fi)->tid : 0, ev->time) < 0) {
        btcm_spool_failed(err, errlen, "context switch");
        return BTC_ERR_IO;
    }
    btcm_thread_at(m, ti)->fiber = fi;
    if (enter)
        btcm_thread_at(m, fi)->group_hint = (int32_t)bt_wire_get_u32(p + 21);
    btcm_see_time(m, ev->time);
    return BTC_OK;
}
