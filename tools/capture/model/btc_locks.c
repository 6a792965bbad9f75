/* Locks: announced, named, waited for, obtained and released (exclusive
 * or shared), marked, terminated; each lock's timeline of these. */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct btc_lock *find_lock(struct btc_model *m, uint32_t id, uint32_t *index)
{
    uint64_t *v = btc_map_get(&m->lock_index, id);
    if (!v)
        return NULL;
    *index = (uint32_t)*v;
    return btc_vec_at(&m->locks, (size_t)*v);
}

int btc_lock_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    unsigned t = ev->type;
    if (t == BT_EV_LOCK_ANNOUNCE) {
        uint32_t id = bt_wire_get_u32(p + 1);
        uint32_t li;
        if (find_lock(m, id, &li))
            return btcm_fail(ev, err, errlen, "lock %u announced twice", id);
        struct btc_lock *l = btc_vec_push(&m->locks);
        if (!l)
            return btcm_nomem(err, errlen);
        l->id = id;
        l->type = p[21];
        l->name = -1;
        l->announce = ev->time;
        if (btc_map_put(&m->lock_index, id, m->locks.len - 1) < 0)
            return btcm_nomem(err, errlen);
        int rc = btcm_static_srcloc(m, bt_wire_get_u64(p + 13), &l->srcloc);
        if (rc < 0)
            return rc == BTC_ERR_NOMEM ? btcm_nomem(err, errlen)
                                       : btcm_fail(ev, err, errlen, "too many source locations");
        btcm_see_time(m, ev->time);
        return BTC_OK;
    }
    if (t == BT_EV_LOCK_MARK) {
        /* As upstream: the mark names where the thread's last wait or
         * obtain of this lock happened. */
        int16_t sl;
        int rc = btcm_static_srcloc(m, bt_wire_get_u64(p + 9), &sl);
        if (rc >= 0 && btcm_get_thread(m, bt_wire_get_u32(p + 1)) < 0)
            rc = BTC_ERR_NOMEM;
        if (rc < 0)
            return btcm_fail(ev, err, errlen, "cannot record the lock mark");
        uint32_t li;
        struct btc_lock *l = find_lock(m, bt_wire_get_u32(p + 5), &li);
        if (!l)
            return btcm_fail(ev, err, errlen, "lock %u marked before its LockAnnounce",
                             bt_wire_get_u32(p + 5));
        uint64_t tid = bt_wire_get_u32(p + 1);
        for (unsigned k = 0; k < l->nthreads; k++) {
            if (l->tids[k] != tid || !l->markable[k])
                continue;
            if (btc_spool_patch(&m->lock_events, l->markable[k] - 1,
                                offsetof(struct btc_lock_rec, srcloc), &sl, sizeof sl) < 0) {
                btcm_spool_failed(err, errlen, "lock");
                return BTC_ERR_IO;
            }
            break;
        }
        return BTC_OK;
    }
    uint32_t id = bt_wire_get_u32(p + ((t == BT_EV_LOCK_RELEASE || t == BT_EV_LOCK_SHARED_RELEASE ||
                                        t == BT_EV_LOCK_NAME || t == BT_EV_LOCK_TERMINATE)
                                           ? 1
                                           : 5));
    uint32_t li;
    struct btc_lock *l = find_lock(m, id, &li);
    if (!l)
        return btcm_fail(ev, err, errlen, "lock %u used before its LockAnnounce", id);
    if (t == BT_EV_LOCK_TERMINATE) {
        l->terminate = ev->time;
        btcm_see_time(m, ev->time);
        return BTC_OK;
    }
    if (t == BT_EV_LOCK_NAME) {
        int64_t idx = btcm_intern(m, ev->str1, ev->str1_len);
        if (idx < 0)
            return btcm_nomem(err, errlen);
        l->name = idx;
        return BTC_OK;
    }
    struct btc_lock_rec r = {.lock = li, .time = ev->time};
    uint64_t tid;
    switch (t) {
    case BT_EV_LOCK_WAIT:
        r.type = 0;
        break;
    case BT_EV_LOCK_OBTAIN:
        r.type = 1;
        break;
    case BT_EV_LOCK_RELEASE:
        r.type = 2;
        break;
    case BT_EV_LOCK_SHARED_WAIT:
        r.type = 3;
        break;
    case BT_EV_LOCK_SHARED_OBTAIN:
        r.type = 4;
        break;
    default:
        r.type = 5;
        break;
    }
    if (t == BT_EV_LOCK_RELEASE) {
        if (!l->nthreads)
            return btcm_fail(ev, err, errlen, "release of lock %u that nobody obtained", id);
        r.thread = l->holder;
    } else {
        tid = bt_wire_get_u32(p + (t == BT_EV_LOCK_SHARED_RELEASE ? 13 : 1));
        unsigned k = 0;
        while (k < l->nthreads && l->tids[k] != tid)
            k++;
        if (k == l->nthreads) {
            if (k == BTC_LOCK_MAX_THREADS)
                return btcm_fail(ev, err, errlen, "lock %u used by more than %d threads", id,
                                 BTC_LOCK_MAX_THREADS);
            l->tids[l->nthreads++] = tid;
            if (btcm_get_thread(m, tid) < 0)
                return btcm_nomem(err, errlen);
        }
        r.thread = (uint8_t)k;
        if (t == BT_EV_LOCK_OBTAIN)
            l->holder = (uint8_t)k;
    }
    uint64_t idx;
    if (btc_spool_append(&m->lock_events, &r, &idx) < 0)
        return BTC_ERR_IO;
    if (r.type != 2 && r.type != 5) /* waits and obtains can be marked */
        l->markable[r.thread] = idx + 1;
    l->events++;
    btcm_see_time(m, ev->time);
    return BTC_OK;
}
