/* Frame marks: continuous frames and the start and end of discontinuous
 * ones, per frame set. */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int btc_frame_mark(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint64_t key = bt_wire_get_u64(ev->p + 9);
    int discontinuous = ev->type != BT_EV_FRAME_MARK_MSG;
    if (key >> 63)
        return btcm_fail(ev, err, errlen, "frame name key 0x%016" PRIx64 " has bit 63 set", key);
    uint64_t *v = btc_map_get(&m->frameset_index, key);
    int64_t si;
    if (key == 0) {
        si = 0;
    } else if (v) {
        si = (int64_t)*v;
    } else {
        if (ev->type == BT_EV_FRAME_MARK_MSG_END) {
            if (m->welcome.flags & BT_WELCOME_FLAG_ON_DEMAND)
                return BTC_OK;
            return btcm_fail(ev, err, errlen, "end of a discontinuous frame that never started");
        }
        struct btc_frameset *fs = btc_vec_push(&m->framesets);
        if (!fs)
            return btcm_nomem(err, errlen);
        fs->key = key;
        fs->continuous = !discontinuous;
        si = (int64_t)m->framesets.len - 1;
        if (btc_map_put(&m->frameset_index, key, (uint64_t)si) < 0 ||
            (!btc_map_get(&m->key_strings, key) && btcm_query(m, BT_QUERY_FRAME_NAME, key) < 0))
            return btcm_nomem(err, errlen);
    }
    struct btc_frameset *fs = btc_vec_at(&m->framesets, (size_t)si);
    if (fs->continuous == discontinuous)
        return btcm_fail(ev, err, errlen, "frame set used both as continuous and discontinuous");
    struct btc_frame_rec r = {.set = (uint32_t)si, .time = ev->time};
    if (ev->type == BT_EV_FRAME_MARK_MSG_START) {
        if (fs->open)
            return btcm_fail(ev, err, errlen, "discontinuous frame started twice without an end");
        fs->open = 1;
        r.kind = BTC_FRAME_START;
    } else if (ev->type == BT_EV_FRAME_MARK_MSG_END) {
        if (!fs->open)
            return btcm_fail(ev, err, errlen, "discontinuous frame ended twice");
        fs->open = 0;
        fs->count++;
        r.kind = BTC_FRAME_END;
    } else {
        fs->count++;
    }
    btcm_see_time(m, ev->time);
    return btc_spool_append(&m->frames, &r, NULL) < 0 ? BTC_ERR_IO : BTC_OK;
}
