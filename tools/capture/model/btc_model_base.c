/* The model's shared helpers (see btc_model_base.h), below the hub
 * (btc_model.c) and the units for each kind of event, which all call them;
 * they call only the queries (btc_queries.c) and btc_util. */
#define _GNU_SOURCE
#include "btc_model_base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "btc_callstacks.h"
#include "btc_format.h"

/* ---- errors ------------------------------------------------------------ */

int btcm_fail(const struct btc_event *ev, char *err, size_t errlen, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = bt_wire_event_name(ev->type);
    snprintf(err, errlen, "stream offset %llu: event %s (%u): %s", (unsigned long long)ev->offset,
             name ? name : "unknown", ev->type, what);
    return BTC_ERR_PROTOCOL;
}

int btcm_nomem(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory while applying events");
    return BTC_ERR_NOMEM;
}

int btcm_spool_failed(char *err, size_t errlen, const char *what)
{
    int e = errno;
    snprintf(err, errlen, "cannot write the %s spool: %s", what,
             e ? strerror(e) : "a write failed");
    return BTC_ERR_IO;
}

/* ---- strings and source locations -------------------------------------- */

int64_t btcm_intern(struct btc_model *m, const char *s, size_t len)
{
    return btc_strtab_intern(&m->strings, s, len);
}

/* Asks for the text of a wire string key unless it is known or zero. */
int btcm_want_string(struct btc_model *m, uint64_t key)
{
    if (!key || btc_map_get(&m->key_strings, key))
        return BTC_OK;
    return btcm_query(m, BT_QUERY_STRING, key);
}

/* Static source location id for a wire key (querying it on first sight). */
int btcm_static_srcloc(struct btc_model *m, uint64_t key, int16_t *id)
{
    /* Loops begin the same zone over and over: remember the last one. */
    if (m->last_srcloc_id && m->last_srcloc_key == key) {
        *id = m->last_srcloc_id;
        return BTC_OK;
    }
    uint64_t *v = btc_map_get(&m->srcloc_index, key);
    if (v) {
        m->last_srcloc_key = key;
        m->last_srcloc_id = (int16_t)*v;
    }
    if (v) {
        *id = (int16_t)*v;
        return BTC_OK;
    }
    if (m->srclocs.len >= BTCM_MAX_SRCLOCS)
        return BTC_ERR_PROTOCOL;
    struct btc_srcloc *s = btc_vec_push(&m->srclocs);
    uint64_t *cnt = btc_vec_push(&m->srcloc_zone_counts);
    if (!s || !cnt)
        return BTC_ERR_NOMEM;
    s->key = key;
    *id = (int16_t)m->srclocs.len;
    if (btc_map_put(&m->srcloc_index, key, (uint64_t)*id) < 0)
        return BTC_ERR_NOMEM;
    return btcm_query(m, BT_QUERY_SOURCE_LOCATION, key);
}

/* ---- threads and fibers ------------------------------------------------ */

/* A new thread record; its name is asked with query type q for key. */
static int64_t new_thread(struct btc_model *m, uint64_t tid, uint8_t q, uint64_t key)
{
    /* File thread indices are u16 with 0 reserved. */
    if (m->threads.len >= 65534)
        return BTC_ERR_PROTOCOL;
    struct btc_thread *t = btc_vec_push(&m->threads);
    if (!t)
        return BTC_ERR_NOMEM;
    t->tid = tid;
    t->name = -1;
    t->fiber = -1;
    btc_vec_init(&t->stack, sizeof(struct btc_open_zone));
    int64_t i = (int64_t)m->threads.len - 1;
    if (btc_map_put(&m->thread_index, tid, (uint64_t)i) < 0 || btcm_query(m, q, key) < 0)
        return BTC_ERR_NOMEM;
    return i;
}

int64_t btcm_get_thread(struct btc_model *m, uint64_t tid)
{
    uint64_t *idx = btc_map_get(&m->thread_index, tid);
    if (idx)
        return (int64_t)*idx;
    return new_thread(m, tid, BT_QUERY_THREAD_STRING, tid);
}

/* A fiber is a thread of its own in the file, with upstream's id
 * (1 << 32 | n-th fiber) and a name asked by its key. */
int64_t btcm_get_fiber(struct btc_model *m, uint64_t key)
{
    uint64_t *idx = btc_map_get(&m->fiber_index, key);
    if (idx)
        return (int64_t)*idx;
    int64_t i = new_thread(m, (1ull << 32) | m->fiber_index.len, BT_QUERY_FIBER_NAME, key);
    if (i < 0)
        return i;
    ((struct btc_thread *)btc_vec_at(&m->threads, (size_t)i))->is_fiber = 1;
    return btc_map_put(&m->fiber_index, key, (uint64_t)i) < 0 ? BTC_ERR_NOMEM : i;
}

/* The thread per-thread events belong to: the last ThreadContext's, or the
 * fiber that thread has entered. */
int64_t btcm_current_thread(struct btc_model *m)
{
    if (m->current_thread < 0)
        m->current_thread = btcm_get_thread(m, m->current_tid);
    return m->current_thread < 0 ? m->current_thread : btcm_acting_thread(m);
}

/* ---- callstack frames -------------------------------------------------- */

int btcm_query_frame(struct btc_model *m, uint64_t addr)
{
    struct btc_callstacks *c = &m->callstacks;
    if (btc_tagmap_get(&c->frame_state, addr))
        return 0;
    /* The frame's state is its pending mark too: one map entry a frame. */
    if (btc_tagmap_put(&c->frame_state, addr, BTC_FRAME_ASKED) < 0 ||
        btcm_query_raw(m, BT_QUERY_CALLSTACK_FRAME, addr, 0) < 0)
        return -1;
    c->frames_asked++;
    c->frames_retagged += !btc_frame_id_keeps(addr);
    return 0;
}
