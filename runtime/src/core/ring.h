/* Each thread's ring (ring.c): its registration at the thread's first event,
 * its end with the thread, and the writing of a record into it. The writing
 * is inline here: it is the emit path's (emit/), a few loads and stores with
 * no call unless the ring is full. */
#ifndef BT_RING_H
#define BT_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime.h"
#include "timer.h"

#define BT_TLS_IE __attribute__((tls_model("initial-exec")))

/* The calling thread's ring, NULL before its first event. */
extern _Thread_local struct bt_thread *bt_tls_thread BT_TLS_IE;

/* Set while the thread is inside an emitting call: a signal handler that
 * emits on the thread it interrupted would otherwise write over the record
 * being written (and move the ring's head under it). Its events are dropped
 * and counted instead; a plain thread-local byte, as a handler runs on the
 * thread it interrupts, so the hot path stays free of atomics. */
extern _Thread_local uint8_t bt_tls_emitting BT_TLS_IE;

/* 0 = a signal handler interrupted an emitting call of this thread: drop
 * (and count) the event. Else the caller emits and then calls
 * bt_emit_leave. */
static inline int bt_emit_enter(void)
{
    if (__builtin_expect(bt_tls_emitting, 0)) {
        atomic_fetch_add_explicit(&bt_rt.dropped, 1, memory_order_relaxed);
        return 0;
    }
    bt_tls_emitting = 1;
    atomic_signal_fence(memory_order_seq_cst);
    return 1;
}

static inline void bt_emit_leave(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    bt_tls_emitting = 0;
}

/* Largest payload one record may carry: a record must always fit a ring. */
static inline size_t bt_payload_max(void)
{
    size_t quarter = bt_rt.ring_size / 4;
    return quarter < BT_TEXT_MAX ? quarter : BT_TEXT_MAX;
}

/* Room for `need` contiguous bytes, keeping `keep` bytes free for the ends of
 * open zones so that, when events are being dropped, a recorded begin still
 * gets its end. When waiting for the worker instead, the ends will find room
 * anyway and the reserve is not needed (deep nesting must not wait forever).
 * NULL = dropped. */
static inline uint8_t *bt_ring_reserve(struct bt_thread *t, size_t need, size_t keep)
{
    size_t size = t->mask + 1;
    uint64_t pos = t->head_local;
    size_t idx = pos & t->mask;
    size_t to_end = size - idx;
    size_t total = need <= to_end ? need : to_end + need;
    while (pos + total + keep - t->tail_cache > size) {
        uint32_t seen = bt_space_seq();
        t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
        if (pos + total + keep - t->tail_cache <= size)
            break;
        if (!bt_buffer_full_wait(seen))
            return NULL;
        keep = 0;
    }
    if (need > to_end) {
        t->data[idx] = BT_REC_PAD;
        t->head_local = pos + to_end;
        idx = 0;
    }
    return t->data + idx;
}

static inline void bt_ring_commit(struct bt_thread *t, size_t n)
{
    t->head_local += n;
    atomic_store_explicit(&t->head, t->head_local, memory_order_release);
}

/* The room kept for the ends of the thread's open zones. */
static inline size_t bt_zone_keep(const struct bt_thread *t)
{
    return (size_t)t->open_zones * BT_REC_HEADER;
}

static inline void bt_rec_header(uint8_t *p, uint8_t kind, uint8_t frames, uint16_t len, uint32_t b,
                                 int64_t time)
{
    struct bt_rec r = {kind, frames, len, b, time};
    memcpy(p, &r, sizeof(r));
}

/* An explicit depth is honoured in every mode, as upstream does; the mode
 * only chooses what the plain forms ask for (runtime/README.md). */
static inline int bt_clamp_depth(int depth)
{
    if (depth <= 0)
        return 0;
    return depth > 62 ? 62 : depth;
}

/* The end of the thread's innermost open zone, at `now`. */
static inline __attribute__((always_inline)) void bt_zone_end_at(struct bt_thread *t, int64_t now)
{
    t->open_zones--;
    uint8_t *p = bt_ring_reserve(t, BT_REC_HEADER, bt_zone_keep(t));
    if (!p)
        return;
    bt_rec_header(p, BT_REC_ZONE_END, 0, 0, 0, now);
    bt_ring_commit(t, BT_REC_HEADER);
}

/* Creates the per-thread key whose destructor retires a thread's ring (and
 * ends the zones it left open). */
int bt_ring_init(void);
/* In a forked child (one thread, no worker): every emitting call of every
 * thread returns at once from now on. */
void bt_ring_after_fork_child(void);
/* Whether this is a forked child (no thread of it traces). */
int bt_ring_forked(void);
/* The calling thread's ring, allocated (its pages touched) and listed for
 * the worker; the runtime must be started. NULL in a forked child or
 * without memory. */
struct bt_thread *bt_ring_register(void);

/* The crash handler's record (lifetime/crash.c) on the calling thread's
 * ring: only if the thread has one (nothing is allocated in a signal
 * handler) and it has room now (no wait). Returns 0 if it could not be
 * written. */
int bt_crash_record(const char *text, const uint64_t *frames, int nframes);

#endif
