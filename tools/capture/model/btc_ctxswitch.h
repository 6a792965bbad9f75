/* Context switches of a capture: when each thread ran, on which CPU, why it
 * stopped and when it was woken (the client traces the whole system, so
 * threads of other processes appear too, named through ExternalName
 * queries); the regions of each CPU; per-thread running time, regions and
 * migrations; and the regions of fibers (a fiber "runs" between entering
 * and leaving). Regions go to spools; per thread and per CPU only the state
 * the next event needs is held. */
#ifndef BTC_CTXSWITCH_H
#define BTC_CTXSWITCH_H

#include <stdint.h>

#include "btc_spool.h"
#include "btc_util.h"

#define BTC_CTX_REASON_WAKEUP (-2) /* a region that is only a wakeup so far */
#define BTC_CTX_REASON_FIBER  99   /* a fiber's region */
#define BTC_CTX_CPUS          256

/* Spool record of one region of a thread (host-internal). */
struct btc_ctxsw_rec {
    int64_t wakeup, start, end; /* ns; end -1 while it runs */
    uint64_t thread;            /* fibers: the thread that ran it; else 0 */
    uint32_t owner;             /* index in btc_ctxswitch.threads */
    uint8_t cpu, wakeup_cpu;
    int8_t reason, state;
};

/* Spool record of one region of a CPU. */
struct btc_cpu_rec {
    int64_t start, end;
    uint16_t thread; /* external thread index (the file's section 13) */
    uint8_t cpu;
    uint8_t pad[5];
};

struct btc_ctx_thread {
    uint64_t tid;
    uint64_t count;            /* regions */
    uint64_t last_index;       /* spool record of the last region */
    struct btc_ctxsw_rec last; /* a copy of it, patched in place */
    uint8_t prev_cpu;          /* of the region before it */
    int64_t prev_wakeup;
    int64_t pending_wakeup; /* a wakeup that came while it still ran, 0 none */
    uint8_t pending_cpu;
};

struct btc_cpu_thread {
    uint64_t tid;
    int64_t running_time;
    uint32_t regions, migrations;
};

struct btc_ext_name {
    uint64_t tid;
    int64_t process, thread; /* string index, -1 unknown */
};

struct btc_ctxswitch {
    struct btc_spool regions, cpu_regions;
    struct btc_vec threads; /* struct btc_ctx_thread */
    struct btc_map thread_index;
    struct btc_vec cpu_threads; /* struct btc_cpu_thread */
    struct btc_map cpu_thread_index;
    uint64_t cpu_last[BTC_CTX_CPUS]; /* spool record + 1 of each CPU's last region */
    uint64_t cpu_count[BTC_CTX_CPUS];
    uint64_t cpu_total;
    struct btc_vec ext_tids; /* u64, in order of first sight */
    struct btc_map ext_index;
    struct btc_vec ext_names; /* struct btc_ext_name */
    struct btc_map ext_name_index;
};

int btc_ctxswitch_init(struct btc_ctxswitch *c, const char *spool_dir, char *err, size_t errlen);
void btc_ctxswitch_free(struct btc_ctxswitch *c);

struct btc_model;
struct btc_event;
/* Applies ContextSwitch and ThreadWakeup events. */
int btc_ctxswitch_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* Applies an ExternalName or ExternalThreadName answer. */
int btc_ctxswitch_name(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* A thread (host) enters fiber `to` (0: it leaves `from`) at time t; from is
 * the fiber it ran, 0 none. Fiber ids are the file's thread ids. */
int btc_ctxswitch_fiber(struct btc_model *m, uint64_t host, uint64_t from, uint64_t to, int64_t t);

#endif
