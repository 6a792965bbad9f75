/* The serial queue's producer side (the queue: core/runtime.c): memory and
 * frame-mark events here; locks, GPU, fibers and frame images (lock.c,
 * gpu.c, fiber.c, frame_image.c) go through bt_serial_emit too. One
 * process-wide order, so an allocation handed to another thread is always
 * sent before its free. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "emit.h"
#include "lifetime/start.h"

static int serial_emit_body(const struct bt_serial_ev *ev, int depth, uintptr_t caller)
{
    /* a thread's ring exists only once the runtime has started */
    struct bt_thread *t = bt_emit_thread();
    if (!t && (bt_ring_forked() || bt_runtime_start() != 0))
        return 0;
    uint64_t frames[64];
    depth = bt_clamp_depth(depth);
    int nframes = depth > 0 ? bt_callstack_capture(frames, depth, caller) : 0;
    unsigned extra = ((unsigned)nframes + BT_SLOT_FRAMES - 1) / BT_SLOT_FRAMES;
    /* counted before the slot and before any later record of the ring, so
     * the worker that sees those records sees the count (worker/drain.c) */
    int fiber = ev->kind == BT_SLOT_FIBER_ENTER || ev->kind == BT_SLOT_FIBER_LEAVE;
    if (fiber && t)
        atomic_fetch_add_explicit(&t->fiber_emitted, 1, memory_order_release);
    uint64_t pos;
    struct bt_slot *s = bt_serial_reserve(1 + extra, &pos);
    if (!s) {
        if (fiber && t)
            atomic_fetch_sub_explicit(&t->fiber_emitted, 1, memory_order_release);
        return 0;
    }
    struct bt_serial *q = &bt_rt.serial;
    s->u.ev.kind = ev->kind;
    s->u.ev.sub = ev->sub;
    s->u.ev.frames = (uint8_t)nframes;
    s->u.ev.extra = (uint8_t)extra;
    s->u.ev.thread = t ? t->tid : 0;
    s->u.ev.time = bt_timer_now();
    s->u.ev.a = ev->a;
    s->u.ev.b = ev->b;
    s->u.ev.c = ev->c;
    s->u.ev.ring_pos = t ? t->head_local : 0;
    for (unsigned i = 0; i < extra; i++) {
        struct bt_slot *x = &q->slots[(pos + 1 + i) & q->mask];
        unsigned n = (unsigned)nframes - i * BT_SLOT_FRAMES;
        memcpy(x->u.frame, frames + i * BT_SLOT_FRAMES,
               8u * (n < BT_SLOT_FRAMES ? n : BT_SLOT_FRAMES));
        atomic_store_explicit(&x->seq, pos + 1 + i + 1, memory_order_release);
    }
    atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
    return 1;
}

/* Guarded as the ring's events are: a handler's serial event while its
 * thread holds an unpublished slot could wait for room the worker can only
 * make once that slot is published. */
int bt_serial_emit(const struct bt_serial_ev *ev, int depth, uintptr_t caller)
{
    if (!bt_emit_enter())
        return 0;
    int sent = serial_emit_body(ev, depth, caller);
    bt_emit_leave();
    return sent;
}

static int serial_emit(uint8_t kind, uint64_t a, uint64_t b, uint64_t c, int depth,
                       uintptr_t caller)
{
    struct bt_serial_ev ev = {kind, 0, a, b, c};
    return bt_serial_emit(&ev, depth, caller);
}

_Atomic uint32_t bt_frame_count;

void bt_frame_mark(const char *name)
{
    if (!name)
        atomic_fetch_add_explicit(&bt_frame_count, 1, memory_order_relaxed);
    serial_emit(BT_SLOT_FRAME, BT_EV_FRAME_MARK_MSG, 0, (uint64_t)(uintptr_t)name, 0, CALLER);
}

void bt_frame_mark_start(const char *name)
{
    serial_emit(BT_SLOT_FRAME, BT_EV_FRAME_MARK_MSG_START, 0, (uint64_t)(uintptr_t)name, 0, CALLER);
}

void bt_frame_mark_end(const char *name)
{
    serial_emit(BT_SLOT_FRAME, BT_EV_FRAME_MARK_MSG_END, 0, (uint64_t)(uintptr_t)name, 0, CALLER);
}

void bt_mem_alloc_at(const void *ptr, size_t size, const char *pool, int depth, uintptr_t caller)
{
    serial_emit(BT_SLOT_MEM_ALLOC, (uint64_t)(uintptr_t)ptr, size, (uint64_t)(uintptr_t)pool, depth,
                caller);
}

void bt_mem_free_at(const void *ptr, const char *pool, int depth, uintptr_t caller)
{
    serial_emit(BT_SLOT_MEM_FREE, (uint64_t)(uintptr_t)ptr, 0, (uint64_t)(uintptr_t)pool, depth,
                caller);
}

void bt_mem_discard_at(const char *pool, int depth, uintptr_t caller)
{
    if (pool)
        serial_emit(BT_SLOT_MEM_DISCARD, 0, 0, (uint64_t)(uintptr_t)pool, depth, caller);
}

void bt_mem_alloc(const void *ptr, size_t size, const char *pool, int depth)
{
    bt_mem_alloc_at(ptr, size, pool, depth, CALLER);
}

void bt_mem_free(const void *ptr, const char *pool, int depth)
{
    bt_mem_free_at(ptr, pool, depth, CALLER);
}

void bt_mem_discard(const char *pool, int depth)
{
    bt_mem_discard_at(pool, depth, CALLER);
}
