/* Tracy's C API by its own names (see tracy_c.c), locks: Tracy's lockable
 * contexts are boardtrace's lock handles. A unit of its own, so that a
 * program that traces no lock links neither it nor lock.c. */
#define _GNU_SOURCE
#include "tracy_c.h"

#define LOCK(l) ((struct bt_lock *)(void *)(l))

struct __tracy_lockable_context_data *
___tracy_announce_lockable_ctx(const struct ___tracy_source_location_data *srcloc)
{
    return (struct __tracy_lockable_context_data *)(void *)bt_lock_announce(SRCLOC(srcloc));
}

void ___tracy_terminate_lockable_ctx(struct __tracy_lockable_context_data *lockdata)
{
    bt_lock_terminate(LOCK(lockdata));
}

int32_t ___tracy_before_lock_lockable_ctx(struct __tracy_lockable_context_data *lockdata)
{
    return bt_lock_before_lock(LOCK(lockdata));
}

void ___tracy_after_lock_lockable_ctx(struct __tracy_lockable_context_data *lockdata)
{
    bt_lock_after_lock(LOCK(lockdata));
}

void ___tracy_after_unlock_lockable_ctx(struct __tracy_lockable_context_data *lockdata)
{
    bt_lock_after_unlock(LOCK(lockdata));
}

void ___tracy_after_try_lock_lockable_ctx(struct __tracy_lockable_context_data *lockdata,
                                          int32_t acquired)
{
    bt_lock_after_try_lock(LOCK(lockdata), acquired);
}

void ___tracy_mark_lockable_ctx(struct __tracy_lockable_context_data *lockdata,
                                const struct ___tracy_source_location_data *srcloc)
{
    bt_lock_mark(LOCK(lockdata), SRCLOC(srcloc));
}

void ___tracy_custom_name_lockable_ctx(struct __tracy_lockable_context_data *lockdata,
                                       const char *name, size_t nameSz)
{
    bt_lock_set_name(LOCK(lockdata), name, nameSz);
}

struct __tracy_shared_lockable_context_data *
___tracy_announce_shared_lockable_ctx(const struct ___tracy_source_location_data *srcloc)
{
    return (struct __tracy_shared_lockable_context_data *)(void *)bt_shared_lock_announce(
        SRCLOC(srcloc));
}

void ___tracy_terminate_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata)
{
    bt_lock_terminate(LOCK(lockdata));
}

int32_t
___tracy_before_lock_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata)
{
    return bt_lock_before_lock(LOCK(lockdata));
}

void ___tracy_after_lock_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata)
{
    bt_lock_after_lock(LOCK(lockdata));
}

void ___tracy_after_unlock_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata)
{
    bt_lock_after_unlock(LOCK(lockdata));
}

void ___tracy_after_try_lock_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata, int32_t acquired)
{
    bt_lock_after_try_lock(LOCK(lockdata), acquired);
}

int32_t ___tracy_before_lock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata)
{
    return bt_lock_before_shared_lock(LOCK(lockdata));
}

void ___tracy_after_lock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata)
{
    bt_lock_after_shared_lock(LOCK(lockdata));
}

void ___tracy_after_unlock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata)
{
    bt_lock_after_shared_unlock(LOCK(lockdata));
}

void ___tracy_after_try_lock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata, int32_t acquired)
{
    bt_lock_after_try_shared_lock(LOCK(lockdata), acquired);
}

void ___tracy_mark_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata,
                                       const struct ___tracy_source_location_data *srcloc)
{
    bt_lock_mark(LOCK(lockdata), SRCLOC(srcloc));
}

void ___tracy_custom_name_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata,
                                              const char *name, size_t nameSz)
{
    bt_lock_set_name(LOCK(lockdata), name, nameSz);
}
