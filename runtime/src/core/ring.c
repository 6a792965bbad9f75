/* Each thread's ring (ring.h): made at the thread's first event, retired by
 * the thread's end (the zones it left open end there), let go in a forked
 * child; and the crash handler's record, written without waiting. */
#define _GNU_SOURCE
#include "ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Thread_local struct bt_thread *bt_tls_thread BT_TLS_IE;
_Thread_local uint8_t bt_tls_emitting BT_TLS_IE;

static pthread_key_t thread_key;

/* In a forked child: no worker drains anything, so no thread traces. */
static int forked;

/* A thread's end (its key's destructor): the zones it left open end here,
 * as a viewer expects every zone to (unless it switched fibers: then its
 * count may stand for zones ended on other threads). */
static void thread_retire(void *arg)
{
    struct bt_thread *t = arg;
    if (t->open_zones && atomic_load_explicit(&t->fiber_emitted, memory_order_relaxed) == 0 &&
        bt_emit_enter()) {
        int64_t now = bt_timer_now();
        while (t->open_zones)
            bt_zone_end_at(t, now);
        bt_emit_leave();
    }
    for (unsigned i = 0; i < BT_MADE_SLOTS; i++)
        free(t->made[i].data);
    memset(t->made, 0, sizeof(t->made));
    bt_tls_thread = NULL;
    atomic_store_explicit(&t->retired, 1, memory_order_release);
}

int bt_ring_init(void)
{
    return pthread_key_create(&thread_key, thread_retire);
}

void bt_ring_after_fork_child(void)
{
    forked = 1;
    bt_tls_thread = NULL;
    pthread_setspecific(thread_key, NULL);
}

int bt_ring_forked(void)
{
    return forked;
}

struct bt_thread *bt_ring_register(void)
{
    if (forked)
        return NULL;
    size_t size = (sizeof(struct bt_thread) + 63) & ~(size_t)63;
    struct bt_thread *t = aligned_alloc(64, size);
    if (!t)
        return NULL;
    memset(t, 0, size);
    t->data = malloc(bt_rt.ring_size);
    if (!t->data) {
        free(t);
        return NULL;
    }
    /* touch every page now: a page fault inside an event costs ~1 us */
    memset(t->data, 0, bt_rt.ring_size);
    t->mask = bt_rt.ring_size - 1;
    t->tid = (uint32_t)syscall(SYS_gettid);
    pthread_mutex_lock(&bt_rt.mutex);
    t->next = bt_rt.threads;
    bt_rt.threads = t;
    pthread_mutex_unlock(&bt_rt.mutex);
    pthread_setspecific(thread_key, t);
    bt_tls_thread = t;
    return t;
}

int bt_crash_record(const char *text, const uint64_t *frames, int nframes)
{
    struct bt_thread *t = bt_tls_thread;
    if (!t || nframes < 0)
        return 0;
    nframes = bt_clamp_depth(nframes);
    size_t need = BT_REC_HEADER + 8u * (size_t)nframes + 8u;
    size_t size = t->mask + 1, to_end = size - (t->head_local & t->mask);
    size_t total = need <= to_end ? need : to_end + need;
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
    if (t->head_local + total - tail > size)
        return 0;
    t->tail_cache = tail;
    uint8_t *p = bt_ring_reserve(t, need, 0);
    uint64_t address = (uint64_t)(uintptr_t)text;
    bt_rec_header(p, BT_REC_CRASH, (uint8_t)nframes, 8, 0, bt_timer_now());
    memcpy(p + BT_REC_HEADER, frames, 8u * (size_t)nframes);
    memcpy(p + BT_REC_HEADER + 8u * (size_t)nframes, &address, 8);
    bt_ring_commit(t, need);
    return 1;
}
