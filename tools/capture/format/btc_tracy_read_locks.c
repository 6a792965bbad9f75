/* Lock contention while reading a .tracy file: per lock, how often and how
 * long its threads waited, from each thread's wait event to its next obtain
 * (the event types as the file numbers them: wait, obtain, release, then
 * the same three shared). Fed by the reader's lock section. */
#include <string.h>

#include "btc_tracy.h"

enum { EV_WAIT, EV_OBTAIN, EV_RELEASE, EV_WAIT_SHARED, EV_OBTAIN_SHARED, EV_RELEASE_SHARED };

int btc_read_lock_begin(struct btc_trace *t, uint32_t id, int64_t name, int16_t srcloc,
                        uint8_t type, uint64_t threads, uint64_t events)
{
    struct btc_read_lock *l = btc_vec_push(&t->lock_stats);
    if (!l)
        return BTC_ERR_NOMEM;
    *l = (struct btc_read_lock){.id = id,
                                .name = name,
                                .srcloc = srcloc,
                                .type = type,
                                .threads = threads,
                                .events = events};
    for (size_t i = 0; i < sizeof t->lock_waiting / sizeof t->lock_waiting[0]; i++)
        t->lock_waiting[i] = -1;
    return BTC_OK;
}

void btc_read_lock_event(struct btc_trace *t, int64_t time, uint8_t thread, uint8_t type)
{
    if (!t->lock_stats.len || thread >= sizeof t->lock_waiting / sizeof t->lock_waiting[0])
        return;
    struct btc_read_lock *l = btc_vec_at(&t->lock_stats, t->lock_stats.len - 1);
    int64_t *from = &t->lock_waiting[thread];
    if (type == EV_WAIT || type == EV_WAIT_SHARED) {
        *from = time;
        return;
    }
    if ((type != EV_OBTAIN && type != EV_OBTAIN_SHARED) || *from < 0)
        return;
    /* Unsigned: a damaged file's times must not overflow. */
    int64_t waited = time >= *from ? (int64_t)((uint64_t)time - (uint64_t)*from) : 0;
    *from = -1;
    l->waits++;
    l->wait_ns = (int64_t)((uint64_t)l->wait_ns + (uint64_t)waited);
    if (waited > l->wait_max_ns)
        l->wait_max_ns = waited;
}
