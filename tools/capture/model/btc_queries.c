/* The queries the model asks the client (source locations, strings, thread
 * names, frames, code): queued once per type and key, counted until their
 * answer arrives, and within the budget the capture sets; and when the
 * capture is complete (terminated, every query answered, every zone closed). */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void btc_model_set_budget(struct btc_model *m, int64_t budget)
{
    m->budget = budget;
}

/* Queued and pending queries kept allocated once all are answered. */
#define TRANSIENT_KEEP 4096

static int enqueue(struct btc_model *m, uint8_t type, uint64_t ptr, uint32_t extra)
{
    struct btc_query_queue *q = type < BT_QUERY_FIRST_NORMAL ? &m->prio : &m->normal;
    struct btc_query *it = btc_vec_push(&q->items);
    if (!it)
        return BTC_ERR_NOMEM;
    it->type = type;
    it->ptr = ptr;
    it->extra = extra;
    return BTC_OK;
}

static int query_extra(struct btc_model *m, uint8_t type, uint64_t ptr, uint32_t extra)
{
    if (btc_map_get(&m->pending[type], ptr))
        return BTC_OK;
    if (btc_map_put(&m->pending[type], ptr, 1) < 0 || enqueue(m, type, ptr, extra) < 0)
        return BTC_ERR_NOMEM;
    if (type == BT_QUERY_SOURCE_LOCATION) {
        uint64_t *k = btc_vec_push(&m->srcloc_fifo);
        if (!k)
            return BTC_ERR_NOMEM;
        *k = ptr;
    }
    return BTC_OK;
}

static int query(struct btc_model *m, uint8_t type, uint64_t ptr)
{
    return query_extra(m, type, ptr, 0);
}

/* Marks the answer to (type, ptr) received; returns whether it was asked. */
static int answered(struct btc_model *m, uint8_t type, uint64_t ptr)
{
    struct btc_map *pending = &m->pending[type];
    if (!btc_map_remove(pending, ptr))
        return 0;
    /* A burst of queries (every instruction of the code received) leaves a
     * large empty table behind: give it back. */
    if (pending->len == 0 && pending->cap > TRANSIENT_KEEP)
        btc_map_free(pending);
    m->budget++;
    return 1;
}

static int queue_pop(struct btc_query_queue *q, struct btc_query *out)
{
    if (q->head >= q->items.len)
        return 0;
    *out = *(struct btc_query *)btc_vec_at(&q->items, q->head++);
    if (q->head == q->items.len) {
        q->head = 0;
        q->items.len = 0;
        if (q->items.cap > TRANSIENT_KEEP)
            btc_vec_free(&q->items);
    }
    return 1;
}

size_t btc_model_take_queries(struct btc_model *m, uint8_t *out, size_t max)
{
    size_t n = 0;
    struct btc_query q;
    while (n < max && m->budget > 0 && (queue_pop(&m->prio, &q) || queue_pop(&m->normal, &q))) {
        uint8_t *p = out + n * BT_QUERY_SIZE;
        p[BT_QUERY_OFF_TYPE] = q.type;
        bt_wire_put_u64(p + BT_QUERY_OFF_PTR, q.ptr);
        bt_wire_put_u32(p + BT_QUERY_OFF_EXTRA, q.extra);
        m->budget--;
        n++;
    }
    return n;
}

uint64_t btc_model_outstanding(const struct btc_model *m)
{
    uint64_t n = 0;
    for (int i = 0; i < BT_QUERY_COUNT; i++)
        n += m->pending[i].len;
    return n + m->callstacks.frames_asked + m->code.transfers_pending + m->code.symbols_pending;
}

int btc_model_complete(const struct btc_model *m, const struct btc_decoder *d)
{
    if (!m->terminated || btc_model_outstanding(m) || m->callstacks.staging)
        return 0;
    if (d && (d->has_single || d->has_second))
        return 0;
    if (m->crashed)
        return 1;
    for (size_t i = 0; i < m->threads.len; i++)
        if (((struct btc_thread *)btc_vec_at(&m->threads, i))->stack.len)
            return 0;
    return 1;
}

int btcm_query(struct btc_model *m, uint8_t type, uint64_t key)
{
    return query(m, type, key);
}

int btcm_query_extra(struct btc_model *m, uint8_t type, uint64_t key, uint32_t extra)
{
    return query_extra(m, type, key, extra);
}

int btcm_query_raw(struct btc_model *m, uint8_t type, uint64_t key, uint32_t extra)
{
    return enqueue(m, type, key, extra);
}

int btcm_answered(struct btc_model *m, uint8_t type, uint64_t key)
{
    return answered(m, type, key);
}

int btcm_pending(const struct btc_model *m, uint8_t type, uint64_t key)
{
    return btc_map_get(&m->pending[type], key) != NULL;
}

void btcm_budget(struct btc_model *m, int64_t n)
{
    m->budget += n;
}
