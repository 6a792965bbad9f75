/* The model's shared helpers, below the hub (btc_model.c) and the units
 * for each kind of event (btc_zones.c, btc_gpu.c, ...), which all call
 * them: errors, strings and source locations, threads and fibers, the
 * callstack frames asked (btc_model_base.c), and the queries to the client
 * (btc_queries.c). They call nothing of the model above them. Internal to
 * the capture core. */
#ifndef BTC_MODEL_BASE_H
#define BTC_MODEL_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "btc_model.h"

/* Source location ids are int16 in the file, on each side of 0. */
#define BTCM_MAX_SRCLOCS 32767

/* Sets err to "stream offset N: event NAME (T): WHAT"; returns BTC_ERR_PROTOCOL. */
int btcm_fail(const struct btc_event *ev, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets err to the out-of-memory message; returns BTC_ERR_NOMEM. */
int btcm_nomem(char *err, size_t errlen);
/* Sets err to "cannot write the WHAT spool: " and why (errno, as the spool
 * left it); returns BTC_ERR_IO. */
int btcm_spool_failed(char *err, size_t errlen, const char *what);
/* Static source location id for a wire key (queried on first sight);
 * BTC_ERR_PROTOCOL when there are too many. */
int btcm_static_srcloc(struct btc_model *m, uint64_t key, int16_t *id);
/* Model index of a thread id (created, and its name asked, on first sight). */
int64_t btcm_get_thread(struct btc_model *m, uint64_t tid);
/* Model index of the thread (or the fiber it runs) per-thread events are for. */
int64_t btcm_current_thread(struct btc_model *m);
/* Model index of the fiber with this key (a thread of its own, created on first sight). */
int64_t btcm_get_fiber(struct btc_model *m, uint64_t key);
static inline struct btc_thread *btcm_thread_at(struct btc_model *m, int64_t index)
{
    return btc_vec_at(&m->threads, (size_t)index);
}
/* The thread events go to once the current one is known: the fiber it
 * runs, if any, else itself. Inline: the zone fast path uses it. */
static inline int64_t btcm_acting_thread(struct btc_model *m)
{
    int64_t fiber = btcm_thread_at(m, m->current_thread)->fiber;
    return fiber >= 0 ? fiber : m->current_thread;
}
/* String index of bytes, interned. */
int64_t btcm_intern(struct btc_model *m, const char *s, size_t len);
/* Asks for the text of a wire string key unless it is known or zero. */
int btcm_want_string(struct btc_model *m, uint64_t key);
/* Queues a query to the client (once per type and key). */
int btcm_query(struct btc_model *m, uint8_t type, uint64_t key);
/* Asks for the callstack frame at addr unless it is known; -1: no memory. */
int btcm_query_frame(struct btc_model *m, uint64_t addr);
/* The same with the query's extra word (SymbolCode: the symbol's size). */
int btcm_query_extra(struct btc_model *m, uint8_t type, uint64_t key, uint32_t extra);
/* Queues a query every time (DataTransfer parts repeat), answered by an
 * acknowledgement the caller counts. */
int btcm_query_raw(struct btc_model *m, uint8_t type, uint64_t key, uint32_t extra);
/* Marks the answer to (type, key) received; returns whether it was asked. */
int btcm_answered(struct btc_model *m, uint8_t type, uint64_t key);
/* Whether (type, key) was asked and is not answered yet. */
int btcm_pending(const struct btc_model *m, uint8_t type, uint64_t key);
/* Gives back query budget for answers counted outside the model. */
void btcm_budget(struct btc_model *m, int64_t n);
/* Moves the trace's last time forward to t. */
static inline void btcm_see_time(struct btc_model *m, int64_t t)
{
    if (t > m->last_time)
        m->last_time = t;
}

#endif
