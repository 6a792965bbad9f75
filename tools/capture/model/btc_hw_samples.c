/* Hardware samples (see btc_hw_samples.h), recorded as upstream's server
 * does: per address, one time list per counter. */
#define _GNU_SOURCE
#include "btc_hw_samples.h"

#include <stdio.h>
#include <string.h>

#include "btc_model.h"
#include "btc_model_parts.h"

int btc_hw_samples_init(struct btc_hw_samples *h, const char *spool_dir, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->spool.fd = -1;
    return btc_spool_open(&h->spool, spool_dir, sizeof(struct btc_hw_rec), err, errlen);
}

void btc_hw_samples_free(struct btc_hw_samples *h)
{
    btc_spool_close(&h->spool);
}

int btc_hw_samples_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    /* ip u64 @1, time @9 */
    struct btc_hw_rec r = {.addr = bt_wire_get_u64(ev->p + 1),
                           .time = ev->ticks == 0 ? 0 : ev->time,
                           .kind = (uint8_t)(ev->type - BT_EV_HW_SAMPLE_CPU_CYCLE)};
    if (btc_spool_append(&m->hw_samples.spool, &r, NULL) < 0) {
        btcm_spool_failed(err, errlen, "hardware sample");
        return BTC_ERR_IO;
    }
    m->hw_samples.count[r.kind]++;
    btcm_see_time(m, r.time);
    return BTC_OK;
}
