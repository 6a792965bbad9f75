/* Messages (plain, coloured, literal, with a callstack): their text kept
 * as a string, a wire key or a spooled text, and the record spooled. */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int btc_message_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_msg_rec r;
    memset(&r, 0, sizeof r);
    unsigned t = ev->type;
    int colored = t == BT_EV_MESSAGE_COLOR || t == BT_EV_MESSAGE_COLOR_CALLSTACK ||
                  t == BT_EV_MESSAGE_LITERAL_COLOR || t == BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
    int literal = t >= BT_EV_MESSAGE_LITERAL && t <= BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
    int callstack = t == BT_EV_MESSAGE_CALLSTACK || t == BT_EV_MESSAGE_COLOR_CALLSTACK ||
                    t == BT_EV_MESSAGE_LITERAL_CALLSTACK ||
                    t == BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
    int64_t ti = btcm_current_thread(m);
    if (ti < 0)
        return btcm_nomem(err, errlen);
    r.thread = (uint32_t)ti;
    r.time = ev->time;
    r.color = 0xFFFFFFFFu;
    if (colored)
        r.color = 0xFF000000u | ev->p[11] | ((uint32_t)ev->p[10] << 8) | ((uint32_t)ev->p[9] << 16);
    if (literal) {
        uint64_t v = bt_wire_get_u64(ev->p + (colored ? 12 : 9));
        r.meta = (uint8_t)v;
        uint64_t addr = v >> 8;
        r.text = addr | BTC_MSG_TEXT_IS_KEY;
        if (btcm_want_string(m, addr) < 0)
            return btcm_nomem(err, errlen);
        if (!addr) {
            int64_t idx = btcm_intern(m, "", 0);
            if (idx < 0)
                return btcm_nomem(err, errlen);
            r.text = (uint64_t)idx;
        }
    } else {
        r.meta = ev->p[colored ? 12 : 9];
        uint64_t k;
        if (btc_texts_append(&m->texts, ev->str1, (uint32_t)ev->str1_len, &k) < 0) {
            btcm_spool_failed(err, errlen, "text");
            return BTC_ERR_IO;
        }
        r.text = k | BTC_MSG_TEXT_IS_SPOOLED;
    }
    if ((r.meta & 0xF) > BT_MSG_SOURCE_TRACY || (r.meta >> 4) > BT_MSG_SEVERITY_FATAL)
        return btcm_fail(ev, err, errlen,
                         "message meta byte 0x%02x: source or severity out of range", r.meta);
    if (callstack) {
        struct btc_thread *th = btcm_thread_at(m, ti);
        if (!th->pending_callstack)
            return btcm_fail(ev, err, errlen, "expected a Callstack event before this message");
        r.callstack = th->pending_callstack;
        th->pending_callstack = 0;
    }
    btcm_thread_at(m, ti)->messages++;
    if (m->msgs.count && r.time < m->last_msg_time)
        m->msgs_unsorted = 1;
    m->last_msg_time = r.time;
    btcm_see_time(m, ev->time);
    if (btc_spool_append(&m->msgs, &r, NULL) < 0) {
        btcm_spool_failed(err, errlen, "message");
        return BTC_ERR_IO;
    }
    return BTC_OK;
}
