/* GPU timelines of a capture: contexts (type, period, calibration, name,
 * annotation names) and their zones, each with CPU times (when the host
 * thread issued the query) and GPU times (when the GPU ran it), nested per
 * timeline as upstream's loader expects. The zones go to a spool; only open
 * zones and unanswered GPU queries are held in memory. */
#ifndef BTC_GPU_H
#define BTC_GPU_H

#include <stdint.h>

#include "btc_spool.h"
#include "btc_util.h"

/* Spool record of one GPU zone (host-internal). */
struct btc_gpu_zone_rec {
    int64_t cpu_start, cpu_end; /* ns; cpu_end -1 while open */
    int64_t gpu_start, gpu_end; /* ns; -1 until the GPU time arrives */
    uint32_t callstack;         /* 0 none, else callstack id */
    uint32_t children;
    uint32_t timeline; /* index in its context's timelines */
    int16_t srcloc;
    uint16_t thread; /* file thread index; 0 for contexts bound to one thread */
    uint16_t query;
    uint8_t ctx; /* index in btc_gpu.ctxs */
    uint8_t pad[5];
};

struct btc_gpu_open {
    uint64_t rec;
    uint32_t children;
};

struct btc_gpu_timeline {
    uint64_t tid;
    uint64_t top;         /* zones with no parent */
    struct btc_vec stack; /* struct btc_gpu_open */
};

struct btc_gpu_note_name {
    int64_t id;
    int64_t name; /* string index */
};

struct btc_gpu_note {
    uint16_t query;
    int64_t id;
    double value;
};

struct btc_gpu_ctx {
    uint8_t wire_id; /* the context number on the wire */
    uint8_t type;
    uint8_t calibration; /* the client calibrates the GPU clock */
    float period;        /* ns per GPU tick */
    uint64_t thread;     /* 0: zones carry their own thread */
    int64_t name;        /* string index, -1 none */
    uint64_t count;      /* zones whose GPU start arrived */
    /* Clock translation, as upstream's server does it. */
    int64_t time_diff, calibrated_gpu, calibrated_cpu, last_gpu_time;
    double calibration_mod;
    uint64_t overflow, overflow_mul;
    struct btc_vec timelines;  /* struct btc_gpu_timeline */
    struct btc_vec note_names; /* struct btc_gpu_note_name */
    struct btc_vec notes;      /* struct btc_gpu_note */
};

struct btc_gpu {
    struct btc_vec ctxs;  /* struct btc_gpu_ctx, in creation order */
    int16_t by_wire[256]; /* wire context -> index in ctxs, -1 none */
    struct btc_spool zones;
    struct btc_map queries;    /* ctx << 16 | query -> zone record */
    struct btc_map started;    /* zone record -> 1 once its GPU start arrived */
    struct btc_map srcloc_cnt; /* (u16) srcloc -> zones */
    uint64_t zone_count;       /* zones begun */
    uint64_t child_lists;      /* zones with at least one child */
};

int btc_gpu_init(struct btc_gpu *g, const char *spool_dir, char *err, size_t errlen);
void btc_gpu_free(struct btc_gpu *g);

struct btc_model;
struct btc_event;
/* Applies one GPU event (GpuNewContext, GpuZoneBegin*, GpuZoneEnd*, GpuTime,
 * GpuCalibration, GpuTimeSync, GpuContextName, GpuAnnotationName,
 * GpuZoneAnnotation). */
int btc_gpu_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* Ends the zones still open (CPU end -1) so the spool is consistent. */
int btc_gpu_finish(struct btc_gpu *g);

#endif
