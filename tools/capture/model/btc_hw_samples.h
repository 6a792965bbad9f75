/* Hardware samples of a capture: the instruction addresses the CPU's
 * performance counters caught (cycles, retired instructions, cache
 * references and misses, branches retired and mispredicted), for the GUI's
 * per-instruction counts. They go to a spool. */
#ifndef BTC_HW_SAMPLES_H
#define BTC_HW_SAMPLES_H

#include <stdint.h>

#include "btc_spool.h"

#define BTC_HW_KINDS 6 /* in the file's order: cycles ... branch misses */

struct btc_hw_rec {
    uint64_t addr;
    int64_t time; /* ns; 0 when the client had no time */
    uint8_t kind; /* 0..5 */
    uint8_t pad[7];
};

struct btc_hw_samples {
    struct btc_spool spool;
    uint64_t count[BTC_HW_KINDS];
};

int btc_hw_samples_init(struct btc_hw_samples *h, const char *spool_dir, char *err, size_t errlen);
void btc_hw_samples_free(struct btc_hw_samples *h);

struct btc_model;
struct btc_event;
/* Applies the six HwSample* events. */
int btc_hw_samples_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);

#endif
