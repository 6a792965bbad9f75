/* Names: the answers that fill in the texts asked by wire key (StringData,
 * ThreadName, PlotName, FrameName, FiberName) and the static source
 * locations (SourceLocation). Interning, asking and numbering on first
 * sight are the model's helpers (btc_model_base.c). */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (btcm_want_string(m, s->name) < 0 || btcm_want_string(m, s->function) < 0 ||
        btcm_want_string(m, s->file) < 0 || btc_code_source_key(m, s->file) < 0)
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
    int64_t idx = btcm_intern(m, (const char *)ev->data, ev->data_len);
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
