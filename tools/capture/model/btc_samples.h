/* CPU samples of a capture: the callstacks the client's sampler took, at a
 * timer tick or at a context switch, each attributed to its thread (which
 * may be any thread of the program, the client's own ones included). They
 * go to a spool; per-thread counts live on the model's threads. */
#ifndef BTC_SAMPLES_H
#define BTC_SAMPLES_H

#include <stdint.h>

#include "btc_spool.h"

/* Spool record of one sample (host-internal). */
struct btc_sample_rec {
    int64_t time;       /* ns; 0 when the client sent no time */
    uint32_t thread;    /* model thread index */
    uint32_t callstack; /* callstack id */
    uint8_t ctx_switch; /* taken at a context switch */
    uint8_t pad[7];
};

struct btc_samples {
    struct btc_spool spool;
    uint64_t count, ctx_count;
};

int btc_samples_init(struct btc_samples *s, const char *spool_dir, char *err, size_t errlen);
void btc_samples_free(struct btc_samples *s);

struct btc_model;
struct btc_event;
/* Applies CallstackSample* and CallstackSampleContextSwitch* events. */
int btc_samples_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);

#endif
