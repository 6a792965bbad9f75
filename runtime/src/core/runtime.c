/* The state the emitting side and the worker share (runtime.h): the room
 * hand-off between producers that wait for room and the worker that makes
 * it, the serial queue (Vyukov's bounded queue, multi-slot claims), and the
 * count of dropped events. */
#define _GNU_SOURCE
#include "runtime.h"

#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct bt_runtime bt_rt = {.mutex = PTHREAD_MUTEX_INITIALIZER};

/* A sleeper also wakes every SPACE_WAIT_MS, to see state changes (a capture
 * that went away turns waiting into dropping) without being told. */
#define SPACE_WAIT_MS 100

void bt_space_wait(uint32_t seen)
{
    atomic_fetch_add_explicit(&bt_rt.space_waiters, 1, memory_order_seq_cst);
    /* After counting ourselves: a worker that starts a nap from now on sees
     * the count and does not nap (bt_worker_nap_begin). */
    if (bt_rt.worker_bell >= 0 &&
        atomic_load_explicit(&bt_rt.worker_napping, memory_order_seq_cst)) {
        uint64_t one = 1;
        ssize_t w = write(bt_rt.worker_bell, &one, sizeof(one));
        (void)w; /* full (it is rung already) is fine */
    }
    struct timespec ts = {0, SPACE_WAIT_MS * 1000000L};
    /* Returns at once if the worker bumped the word since `seen`. */
    syscall(SYS_futex, &bt_rt.space_seq, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    atomic_fetch_sub_explicit(&bt_rt.space_waiters, 1, memory_order_relaxed);
}

void bt_space_signal(void)
{
    atomic_fetch_add_explicit(&bt_rt.space_seq, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&bt_rt.space_waiters, memory_order_seq_cst) > 0)
        syscall(SYS_futex, &bt_rt.space_seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

int bt_worker_nap_begin(int progress)
{
    atomic_store_explicit(&bt_rt.worker_napping, 1, memory_order_seq_cst);
    if (progress && atomic_load_explicit(&bt_rt.space_waiters, memory_order_seq_cst) > 0) {
        atomic_store_explicit(&bt_rt.worker_napping, 0, memory_order_relaxed);
        return 0;
    }
    return 1;
}

void bt_worker_nap_end(int rung)
{
    atomic_store_explicit(&bt_rt.worker_napping, 0, memory_order_relaxed);
    if (rung) {
        uint64_t count;
        ssize_t r = read(bt_rt.worker_bell, &count, sizeof(count)); /* non-blocking */
        (void)r;
    }
}

int bt_buffer_full_wait(uint32_t seen)
{
    int state = atomic_load_explicit(&bt_rt.state, memory_order_acquire);
    int worker = atomic_load_explicit(&bt_rt.worker_alive, memory_order_acquire);
    if (!worker || state == BT_STATE_FINISHED || (state == BT_STATE_WAITING && !bt_rt.no_exit)) {
        atomic_fetch_add_explicit(&bt_rt.dropped, 1, memory_order_relaxed);
        return 0;
    }
    bt_space_wait(seen);
    return 1;
}

int bt_serial_init(struct bt_serial *q, size_t bytes)
{
    size_t count = bytes / sizeof(struct bt_slot);
    q->slots = aligned_alloc(64, count * sizeof(struct bt_slot));
    if (!q->slots)
        return -1;
    for (size_t i = 0; i < count; i++)
        atomic_init(&q->slots[i].seq, i);
    q->mask = count - 1;
    atomic_init(&q->enqueue_pos, 0);
    q->dequeue_pos = 0;
    return 0;
}

/* Serial queue, producer side (Vyukov's bounded queue, multi-slot claims). */
struct bt_slot *bt_serial_reserve(unsigned count, uint64_t *first)
{
    struct bt_serial *q = &bt_rt.serial;
    uint64_t pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
    for (;;) {
        uint64_t last = pos + count - 1;
        uint32_t seen = bt_space_seq();
        uint64_t seq = atomic_load_explicit(&q->slots[last & q->mask].seq, memory_order_acquire);
        int64_t diff = (int64_t)(seq - last);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->enqueue_pos, &pos, pos + count,
                                                      memory_order_relaxed, memory_order_relaxed))
                break;
        } else if (diff < 0) {
            if (!bt_buffer_full_wait(seen))
                return NULL;
            pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
        } else {
            pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
        }
    }
    *first = pos;
    return &q->slots[pos & q->mask];
}

struct bt_slot *bt_serial_peek(struct bt_serial *q)
{
    uint64_t pos = q->dequeue_pos;
    struct bt_slot *s = &q->slots[pos & q->mask];
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != pos + 1)
        return NULL;
    for (unsigned i = 0; i < s->u.ev.extra; i++) {
        struct bt_slot *x = &q->slots[(pos + 1 + i) & q->mask];
        if (atomic_load_explicit(&x->seq, memory_order_acquire) != pos + 1 + i + 1)
            return NULL;
    }
    return s;
}

void bt_serial_release(struct bt_serial *q, const struct bt_slot *s)
{
    unsigned n = 1u + s->u.ev.extra;
    uint64_t pos = q->dequeue_pos;
    uint64_t size = q->mask + 1;
    for (unsigned i = 0; i < n; i++)
        atomic_store_explicit(&q->slots[(pos + i) & q->mask].seq, pos + i + size,
                              memory_order_release);
    q->dequeue_pos = pos + n;
}

uint64_t bt_dropped_events(void)
{
    return atomic_load_explicit(&bt_rt.dropped, memory_order_relaxed);
}
