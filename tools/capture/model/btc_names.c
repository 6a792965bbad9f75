/* Names: the string table, the texts asked by wire key (StringData,
 * ThreadName, PlotName, FrameName, FiberName answers) and the static source
 * locations, numbered on first sight and filled in by their answer. */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t intern(struct btc_model *m, const char *s, size_t len)
{
    return btc_strtab_intern(&m->strings, s, len);
}

/* Asks for the text of a wire string key unless it is known or zero. */
static int want_string(struct btc_model *m, uint64_t key)
{
    if (!key || btc_map_get(&m->key_strings, key))
        return BTC_OK;
    return btcm_query(m, BT_QUERY_STRING, key);
}

/* Static source location id for a wire key (querying it on first sight). */
static int static_srcloc(struct btc_model *m, uint64_t key, int16_t *id)
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

int btc_names_source_location(struct btc_model *m, const struct btc_event *ev, char *err,
                              size_t errlen)
{
    if (m->srcloc_fifo_head >= m->srcloc_fifo.len)
        return btcm_fail(ev, err, errlen, "source location answer with no query outstanding");
    uint64_t key = ((uint64_t *)m->srcloc_fifo.data)[m->srcloc_fifo_head++];
    if (m->srcloc_fifo_head == m->srcloc_fifo.len)
        m->srcloc_fifo_head = m->srcloc_fifo.len = 0;
    btcm_answered(m, BT_QUERY_SOURCE_LOCATION, key);
    uint64_t *id = btc_map_get(&m->srcloc_index, key);
    struct btc_srcloc *s = btc_vec_at(&m->srclocs, (size_t)*id - 1);
    const uint8_t *p = ev->p;
    s->name = bt_wire_get_u64(p + 1);
    s->function = bt_wire_get_u64(p + 9);
    s->file = bt_wire_get_u64(p + 17);
    s->line = bt_wire_get_u32(p + 25);
    s->color = p[31] | ((uint32_t)p[30] << 8) | ((uint32_t)p[29] << 16);
    s->resolved = 1;
    if (want_string(m, s->name) < 0 || want_string(m, s->function) < 0 ||
        want_string(m, s->file) < 0 || btc_code_source_key(m, s->file) < 0)
        return btcm_nomem(err, errlen);
    return BTC_OK;
}

int btc_names_keyed_string(struct btc_model *m, const struct btc_event *ev, char *err,
                           size_t errlen)
{
    uint8_t q;
    switch (ev->type) {
    case BT_EV_STRING_DATA:
        q = BT_QUERY_STRING;
        break;
    case BT_EV_THREAD_NAME:
        q = BT_QUERY_THREAD_STRING;
        break;
    case BT_EV_PLOT_NAME:
        q = BT_QUERY_PLOT_NAME;
        break;
    case BT_EV_FRAME_NAME:
        q = BT_QUERY_FRAME_NAME;
        break;
    case BT_EV_FIBER_NAME:
        q = BT_QUERY_FIBER_NAME;
        break;
    default:
        return BTC_OK;
    }
    if (!btcm_answered(m, q, ev->key)) {
        m->unsolicited_strings++;
        m->unsolicited_bytes += ev->data_len;
        return BTC_OK;
    }
    int64_t idx = intern(m, (const char *)ev->data, ev->data_len);
    if (idx < 0)
        return btcm_nomem(err, errlen);
    if (q == BT_QUERY_THREAD_STRING || q == BT_QUERY_FIBER_NAME) {
        uint64_t *ti =
            btc_map_get(q == BT_QUERY_FIBER_NAME ? &m->fiber_index : &m->thread_index, ev->key);
        if (ti)
            btcm_thread_at(m, (int64_t)*ti)->name = idx;
        return BTC_OK;
    }
    if (btc_map_put(&m->key_strings, ev->key, (uint64_t)idx) < 0 ||
        btc_code_key_string(m, ev->key, idx) < 0)
        return btcm_nomem(err, errlen);
    return BTC_OK;
}

int btcm_static_srcloc(struct btc_model *m, uint64_t key, int16_t *id)
{
    return static_srcloc(m, key, id);
}

int64_t btcm_intern(struct btc_model *m, const char *s, size_t len)
{
    return intern(m, s, len);
}

int btcm_want_string(struct btc_model *m, uint64_t key)
{
    return want_string(m, key);
}
