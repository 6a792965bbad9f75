/* The emitting side's common steps: a thread's first event, which starts
 * the runtime if a constructor has not yet, and the plain queries of the
 * API (time, connection). */
#define _GNU_SOURCE
#include "emit.h"

#include <string.h>

#include "lifetime/start.h"

__attribute__((noinline)) struct bt_thread *bt_emit_thread_register(void)
{
    if (bt_ring_forked() || bt_runtime_start() != 0)
        return NULL;
    return bt_ring_register();
}

int bt_emit_record(struct bt_thread *t, uint8_t kind, int depth, uint32_t b, const void *p1,
                   size_t n1, const void *p2, size_t n2, size_t keep, uintptr_t caller)
{
    uint64_t frames[64];
    depth = bt_clamp_depth(depth);
    int nframes = depth > 0 ? bt_callstack_capture(frames, depth, caller) : 0;
    size_t payload = n1 + n2;
    size_t need = BT_REC_HEADER + 8u * (size_t)nframes + BT_REC_ALIGN(payload);
    uint8_t *p = bt_ring_reserve(t, need, keep);
    if (!p)
        return 0;
    int64_t now = bt_timer_now();
    bt_rec_header(p, kind, (uint8_t)nframes, (uint16_t)payload, b, now);
    uint8_t *q = p + BT_REC_HEADER;
    if (nframes) {
        memcpy(q, frames, 8u * (size_t)nframes);
        q += 8u * (size_t)nframes;
    }
    if (n1)
        memcpy(q, p1, n1);
    if (n2)
        memcpy(q + n1, p2, n2);
    bt_ring_commit(t, need);
    return 1;
}

int64_t bt_time_now(void)
{
    return bt_timer_now();
}

int bt_is_connected(void)
{
    return atomic_load_explicit(&bt_rt.state, memory_order_relaxed) == BT_STATE_CONNECTED;
}
