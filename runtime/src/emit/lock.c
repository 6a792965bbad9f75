/* Locks, exclusive and shared: announced into the runtime's lock table (the
 * worker announces them to a capture before any of their events), used
 * through the serial queue so waits, obtains and releases of every thread
 * arrive in the order they happened. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "core/timer.h"
#include "emit.h"
#include "lifetime/start.h"

static int lock_emit(uint8_t kind, const struct bt_lock *lock, uint64_t b)
{
    struct bt_serial_ev ev = {kind, 0, lock->id, b, 0};
    return bt_serial_emit(&ev, 0, 0);
}

static struct bt_lock *announce(const struct bt_srcloc *loc, uint8_t type)
{
    if (bt_runtime_start() != 0)
        return NULL;
    struct bt_lock *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->loc = loc;
    l->type = type;
    l->announce_time = bt_timer_now();
    pthread_mutex_lock(&bt_rt.mutex);
    l->id = bt_rt.next_lock_id++;
    l->next = bt_rt.locks;
    bt_rt.locks = l;
    pthread_mutex_unlock(&bt_rt.mutex);
    return l;
}

struct bt_lock *bt_lock_announce(const struct bt_srcloc *loc)
{
    return announce(loc, BT_LOCK_TYPE_LOCKABLE);
}

struct bt_lock *bt_shared_lock_announce(const struct bt_srcloc *loc)
{
    return announce(loc, BT_LOCK_TYPE_SHARED_LOCKABLE);
}

void bt_lock_terminate(struct bt_lock *lock)
{
    if (lock)
        lock_emit(BT_SLOT_LOCK_TERMINATE, lock, 0);
}

int bt_lock_before_lock(struct bt_lock *lock)
{
    return lock ? lock_emit(BT_SLOT_LOCK_WAIT, lock, 0) : 0;
}

void bt_lock_after_lock(struct bt_lock *lock)
{
    if (lock)
        lock->held_dropped = !lock_emit(BT_SLOT_LOCK_OBTAIN, lock, 0);
}

void bt_lock_after_unlock(struct bt_lock *lock)
{
    if (!lock)
        return;
    if (lock->held_dropped) {
        lock->held_dropped = 0;
        return;
    }
    lock_emit(BT_SLOT_LOCK_RELEASE, lock, 0);
}

/* A successful try-lock is sent as a wait and an obtain: upstream's client
 * sends the obtain alone, and upstream's own loader then asserts (an obtain
 * must follow a wait of the same thread). */
void bt_lock_after_try_lock(struct bt_lock *lock, int acquired)
{
    if (acquired && bt_lock_before_lock(lock))
        bt_lock_after_lock(lock);
}

int bt_lock_before_shared_lock(struct bt_lock *lock)
{
    return lock ? lock_emit(BT_SLOT_LOCK_SHARED_WAIT, lock, 0) : 0;
}

void bt_lock_after_shared_lock(struct bt_lock *lock)
{
    if (lock && !lock_emit(BT_SLOT_LOCK_SHARED_OBTAIN, lock, 0))
        atomic_fetch_add_explicit(&lock->shared_dropped, 1, memory_order_relaxed);
}

void bt_lock_after_shared_unlock(struct bt_lock *lock)
{
    if (!lock)
        return;
    /* a release whose obtain was dropped is dropped too (any holder's) */
    uint32_t dropped = atomic_load_explicit(&lock->shared_dropped, memory_order_relaxed);
    while (dropped > 0) {
        if (atomic_compare_exchange_weak_explicit(&lock->shared_dropped, &dropped, dropped - 1,
                                                  memory_order_relaxed, memory_order_relaxed))
            return;
    }
    lock_emit(BT_SLOT_LOCK_SHARED_RELEASE, lock, 0);
}

void bt_lock_after_try_shared_lock(struct bt_lock *lock, int acquired)
{
    if (acquired && bt_lock_before_shared_lock(lock))
        bt_lock_after_shared_lock(lock);
}

void bt_lock_mark(struct bt_lock *lock, const struct bt_srcloc *loc)
{
    if (lock)
        lock_emit(BT_SLOT_LOCK_MARK, lock, (uint64_t)(uintptr_t)loc);
}

void bt_lock_set_name(struct bt_lock *lock, const char *name, size_t len)
{
    if (!lock || !name)
        return;
    char *copy = strndup(name, len);
    if (!copy)
        return;
    pthread_mutex_lock(&bt_rt.mutex);
    free(lock->name);
    lock->name = copy;
    lock->name_sent = 0;
    pthread_mutex_unlock(&bt_rt.mutex);
}
