/* CPU samples (see btc_samples.h), recorded as upstream's server does: every
 * sample joins its thread's list, those taken at a context switch a second
 * list as well, and a sample whose top frame is a kernel address counts as a
 * kernel sample. */
#define _GNU_SOURCE
#include "btc_samples.h"

#include <stdio.h>
#include <string.h>

#include "btc_format.h"
#include "btc_model.h"
#include "btc_model_parts.h"

int btc_samples_init(struct btc_samples *s, const char *spool_dir, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->spool.fd = -1;
    return btc_spool_open(&s->spool, spool_dir, sizeof(struct btc_sample_rec), err, errlen);
}

void btc_samples_free(struct btc_samples *s)
{
    btc_spool_close(&s->spool);
}

int btc_samples_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    unsigned t = ev->type;
    int ctx_switch = t == BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH ||
                     t == BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH32 ||
                     t == BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16;
    if (!m->callstacks.last)
        return btcm_fail(ev, err, errlen, "expected a CallstackPayload before this sample");
    uint32_t callstack = m->callstacks.last;
    int64_t ti = btcm_get_thread(m, bt_wire_get_u32(ev->p + 1));
    if (ti < 0)
        return ti == BTC_ERR_NOMEM ? btcm_nomem(err, errlen)
                                   : btcm_fail(ev, err, errlen, "too many threads");
    /* A clock reading of 0 means the client had no time for it. */
    int64_t time = ev->ticks == 0 ? 0 : ev->time;
    struct btc_sample_rec r = {
        .time = time, .thread = (uint32_t)ti, .callstack = callstack, .ctx_switch = ctx_switch};
    if (btc_spool_append(&m->samples.spool, &r, NULL) < 0) {
        btcm_spool_failed(err, errlen, "sample");
        return BTC_ERR_IO;
    }
    m->callstacks.last = 0;
    struct btc_thread *th = btcm_thread_at(m, ti);
    if (th->samples && time != 0 && th->last_sample >= time)
        th->samples_unsorted = 1;
    if (time > th->last_sample)
        th->last_sample = time;
    th->samples++;
    th->ctx_samples += ctx_switch;
    /* The top frame's address: a kernel one has its top bit set (as the
     * file keeps it: a tag is not a kernel address). */
    uint32_t len;
    const char *cs = btc_strtab_get(&m->callstacks.stacks, callstack - 1, &len);
    uint64_t top = cs && len >= 8 ? bt_wire_get_u64((const uint8_t *)cs) : 0;
    th->kernel_samples += btc_frame_address(top) >> 63;
    m->samples.count++;
    m->samples.ctx_count += ctx_switch;
    btcm_see_time(m, time);
    return BTC_OK;
}
