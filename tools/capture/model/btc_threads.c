/* Fibers: FiberEnter and FiberLeave, a thread's current fiber and the
 * fiber's run as a region of its own. The records of threads and fibers
 * (made, and their names asked, on first sight) and which one the
 * per-thread events are for are the model's helpers (btc_model_base.c). */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FiberEnter and FiberLeave: the thread's current fiber, and the fiber's
 * run as a region of its own. */
int btc_threads_fiber(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    /* FiberEnter: time, fiber u64 @9, thread u32 @17, group hint @21;
     * FiberLeave: time, thread u32 @9. */
    int enter = ev->type == BT_EV_FIBER_ENTER;
    int64_t ti = btcm_get_thread(m, bt_wire_get_u32(p + (enter ? 17 : 9)));
    int64_t fi = enter ? btcm_get_fiber(m, bt_wire_get_u64(p + 9)) : -1;
    if (ti < 0 || (enter && fi < 0))
        return (ti == BTC_ERR_PROTOCOL || fi == BTC_ERR_PROTOCOL)
                   ? btcm_fail(ev, err, errlen, "too many threads")
                   : btcm_nomem(err, errlen);
    /* The fiber's run is a region of its own (upstream's fiber
     * context switches). */
    int64_t was = btcm_thread_at(m, ti)->fiber;
    if (btc_ctxswitch_fiber(m, btcm_thread_at(m, ti)->tid,
                            was >= 0 ? btcm_thread_at(m, was)->tid : 0,
                            enter ? btcm_thread_at(m, fi)->tid : 0, ev->time) < 0) {
        btcm_spool_failed(err, errlen, "context switch");
        return BTC_ERR_IO;
    }
    btcm_thread_at(m, ti)->fiber = fi;
    if (enter)
        btcm_thread_at(m, fi)->group_hint = (int32_t)bt_wire_get_u32(p + 21);
    btcm_see_time(m, ev->time);
    return BTC_OK;
}
