/* The event model of a capture: what the decoded stream means (threads and
 * their open zones, source locations, strings by key, plots, frames, memory
 * pools, locks, callstacks), which queries the server still owes the client,
 * and when the capture is complete. Bulk records go to spool files; this
 * struct keeps only what is bounded by the program's distinct names/sites. */
#ifndef BTC_MODEL_H
#define BTC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "btc_callstacks.h"
#include "btc_code.h"
#include "btc_ctxswitch.h"
#include "btc_decode.h"
#include "btc_frame_images.h"
#include "btc_gpu.h"
#include "btc_hw_samples.h"
#include "btc_samples.h"
#include "btc_sections.h"
#include "btc_spool.h"
#include "btc_timeline.h"
#include "btc_util.h"

/* Spool record layouts (host-internal, never leave the capturing machine).
 * Zones are spooled in a compact form of the file's encoding (btc_timeline.h). */
struct btc_extra_rec {
    uint32_t callstack; /* 0 none, else callstack index + 1 */
    uint32_t text;      /* 0 none, else text-spool number + 1 */
    uint32_t name;
    uint32_t color; /* 0xBBGGRR, 0 none */
};

#define BTC_MSG_TEXT_IS_KEY     (1ull << 63)
#define BTC_MSG_TEXT_IS_SPOOLED (1ull << 62)
struct btc_msg_rec {
    uint32_t thread;
    uint32_t color;
    int64_t time;
    uint64_t text; /* string index, wire key | IS_KEY, or text-spool number | IS_SPOOLED */
    uint32_t callstack;
    uint8_t meta;
    uint8_t app_info; /* MessageAppInfo: not a thread message */
    uint8_t pad[2];
};

struct btc_plot_rec {
    uint32_t plot;
    uint32_t pad;
    int64_t time;
    double value;
};

enum btc_frame_kind { BTC_FRAME_MARK = 0, BTC_FRAME_START = 1, BTC_FRAME_END = 2 };
struct btc_frame_rec {
    uint32_t set;
    uint32_t kind;
    int64_t time;
};

struct btc_mem_rec {
    uint32_t pool;
    uint16_t thread_alloc; /* file thread index */
    uint16_t thread_free;
    uint64_t ptr;
    uint64_t size;
    uint32_t cs_alloc;
    uint32_t cs_free;
    int64_t time_alloc;
    int64_t time_free; /* -1 never freed */
};

struct btc_lock_rec {
    uint32_t lock;
    int16_t srcloc;
    uint8_t thread; /* index in the lock's thread list */
    uint8_t type;   /* 0 Wait, 1 Obtain, 2 Release, 3..5 shared variants */
    int64_t time;
};

struct btc_open_zone {
    uint64_t at; /* its begin's patch field in the timeline spool */
    int64_t start;
    uint32_t children;
    uint32_t validation;
    uint8_t tag_back; /* how far before at its tag is */
    struct btc_extra_rec extra;
    int has_extra;
    char *text; /* zone text so far, spooled when the zone ends */
    uint32_t text_len;
};

struct btc_thread {
    uint64_t tid;
    int64_t name; /* string index, -1 unknown */
    uint64_t zones;
    uint64_t top_zones;   /* zones begun with no zone open */
    int64_t timeline_ref; /* the time its timeline's next delta is against */
    uint64_t child_lists;
    uint64_t messages;
    struct btc_vec stack; /* struct btc_open_zone */
    uint32_t next_validation;
    uint32_t pending_callstack;
    int64_t fiber;      /* OS thread: the fiber it runs (model index), -1 none */
    uint8_t is_fiber;   /* this record is a fiber */
    int32_t group_hint; /* ThreadGroupHint / FiberEnter */
    /* CPU samples (btc_samples.c): all, those taken at context switches,
     * those whose top frame is in the kernel. */
    uint64_t samples, ctx_samples, kernel_samples;
    int64_t last_sample;      /* time of the latest sample */
    uint8_t samples_unsorted; /* a sample came earlier than the one before */
};

struct btc_srcloc {
    uint64_t key;                  /* static: wire key */
    uint64_t name, function, file; /* static: wire string keys; payload: string index + 1 */
    uint32_t line;
    uint32_t color;
    int resolved;
};

/* Plot types of the file. */
#define BTC_PLOT_TYPE_USER    0u
#define BTC_PLOT_TYPE_SYSTIME 2u
#define BTC_PLOT_TYPE_POWER   3u

struct btc_plot {
    uint64_t key; /* 0 for the CPU-usage plot */
    uint8_t type;
    uint8_t format, step, fill;
    uint32_t color;
    double min, max, sum;
    uint64_t count;
    int64_t last_time;
    int unsorted;        /* a point came earlier than the one before (several threads) */
    int64_t last_report; /* power plots: time of the last SysPowerReport */
};

struct btc_frameset {
    uint64_t key;
    int continuous;
    int open; /* discontinuous: a start without its end */
    uint64_t count;
};

struct btc_pool {
    uint64_t name;
    uint64_t count, freed;
    uint64_t high, low, usage;
    struct btc_map live; /* ptr -> spool record index */
};

#define BTC_LOCK_MAX_THREADS 64
struct btc_lock {
    uint32_t id;
    int16_t srcloc;
    uint8_t type;
    int64_t name; /* string index, -1 none */
    int64_t announce, terminate;
    uint64_t tids[BTC_LOCK_MAX_THREADS];
    unsigned nthreads;
    uint64_t events;
    uint8_t holder;
    /* Per thread of the lock: its last wait or obtain event (spool record
     * + 1, 0 none), which a LockMark gives a source location. */
    uint64_t markable[BTC_LOCK_MAX_THREADS];
};

struct btc_cpu {
    uint32_t package, die, core, thread;
};

struct btc_query {
    uint8_t type;
    uint64_t ptr;
    uint32_t extra;
};

struct btc_query_queue {
    struct btc_vec items; /* struct btc_query */
    size_t head;
};

struct btc_prewrite;

struct btc_model {
    struct btc_welcome welcome;
    struct btc_strtab strings;
    struct btc_map key_strings; /* wire string key -> string index */
    int64_t last_time;

    struct btc_vec threads; /* struct btc_thread */
    struct btc_map thread_index;
    struct btc_map fiber_index; /* fiber key -> model index */
    uint64_t current_tid;       /* from the last ThreadContext */
    int64_t current_thread;     /* its model index, -1 until an event needs it */

    struct btc_vec srclocs; /* static, struct btc_srcloc; file id = index + 1 */
    struct btc_map srcloc_index;
    uint64_t last_srcloc_key;       /* the last static srcloc looked up */
    int16_t last_srcloc_id;         /* its id, 0 none */
    struct btc_vec payload_srclocs; /* struct btc_srcloc; file id = -(index + 1) */
    struct btc_strtab payload_bytes;
    struct btc_vec srcloc_zone_counts;  /* u64 per static srcloc */
    struct btc_vec payload_zone_counts; /* u64 per payload srcloc */
    int64_t pending_payload_srcloc;     /* SourceLocationPayload awaiting its zone, -1 none */

    struct btc_vec plots; /* struct btc_plot */
    struct btc_map plot_index;
    struct btc_map power_index; /* SysPowerReport name key -> plot */
    struct btc_vec framesets;   /* struct btc_frameset */
    struct btc_map frameset_index;
    struct btc_vec pools; /* struct btc_pool */
    struct btc_map pool_index;
    uint64_t pending_pool_name; /* MemNamePayload, 0 none */
    uint64_t mem_sizes_unknown; /* allocations of 2^47 bytes or more, kept with size 0 */
    uint32_t pending_serial_callstack;
    struct btc_vec locks; /* struct btc_lock */
    struct btc_map lock_index;

    struct btc_callstacks callstacks; /* with their frames and symbols (btc_callstacks.c) */
    struct btc_vec app_info;          /* u32 string index */
    int64_t systime_plot;             /* index of the CPU-usage plot, -1 until SysTimeReport */
    struct btc_vec cpus;              /* struct btc_cpu, from CpuTopology */
    struct btc_map tid_pid;           /* TidToPid */

    /* Queries: queued (two priorities), sent-and-unanswered per type, and the
     * source locations asked for, in order (their answers carry no key). */
    struct btc_query_queue prio, normal;
    struct btc_map pending[BT_QUERY_COUNT];
    struct btc_vec srcloc_fifo; /* u64 keys */
    size_t srcloc_fifo_head;
    int64_t budget;

    int terminated; /* Terminate event received */
    int64_t last_msg_time;
    int msgs_unsorted; /* a message came earlier than the one before */
    int crashed;
    /* The CrashReport, as the file's crash event: the thread's id, when,
     * the text's string key, and the callstack bound to it (0 none). */
    struct {
        uint64_t tid;
        int64_t time;
        uint64_t text;
        uint32_t callstack;
        int64_t thread; /* model index, for a callstack sent after the report */
        int reported;
    } crash;
    uint64_t zone_count;
    uint64_t event_count;
    /* Strings and names nobody asked for, dropped: a client could otherwise
     * fill the capture's memory with text no part of the trace uses. */
    uint64_t unsolicited_strings, unsolicited_bytes;

    struct btc_timeline zones;
    /* The .tracy writer's head start on one thread's zones (NULL: none),
     * which its owner frees before the model (btc_tracy_prewrite.h). */
    struct btc_prewrite *prewrite;
    struct btc_spool extras, msgs, plot_points, frames, mem, lock_events;
    struct btc_texts texts;               /* zone texts and messages: mostly one of a kind */
    struct btc_gpu gpu;                   /* GPU contexts and zones (btc_gpu.c) */
    struct btc_samples samples;           /* CPU samples (btc_samples.c) */
    struct btc_ctxswitch ctxswitch;       /* context switches (btc_ctxswitch.c) */
    struct btc_frame_images frame_images; /* (btc_frame_images.c) */
    struct btc_code code;                 /* code transfer (btc_code.c) */
    struct btc_hw_samples hw_samples;     /* (btc_hw_samples.c) */
    struct btc_sections sections;         /* (btc_sections.c) */
    uint64_t zone_text_max;               /* highest text-spool number + 1 a zone refers to */
    char spool_dir[4096];
};

int btc_model_init(struct btc_model *m, const struct btc_welcome *w, const char *spool_dir,
                   char *err, size_t errlen);
void btc_model_free(struct btc_model *m);

/* The decoder callback (a btc_event_fn); ctx is the model. */
int btc_model_event(void *ctx, const struct btc_event *ev, char *err, size_t errlen);

/* The decoder's zone fast path into model m (struct btc_zone_fast), for
 * btc_decoder.zones. */
struct btc_zone_fast btc_model_zone_fast(struct btc_model *m);

/* Sets the query budget (upstream: min(SO_SNDBUF / 13, 8192) - 4). */
void btc_model_set_budget(struct btc_model *m, int64_t budget);

/* Moves up to max queued queries (priority first, within the budget) to out
 * as 13-byte packets; returns the number of packets. */
size_t btc_model_take_queries(struct btc_model *m, uint8_t *out, size_t max);

/* Queries sent and not answered yet, plus those still queued. */
uint64_t btc_model_outstanding(const struct btc_model *m);

/* Whether the client sent Terminate and every rule of the end of a capture
 * holds (protocol notes 5.5): nothing pending, no staged string, no open zone. */
int btc_model_complete(const struct btc_model *m, const struct btc_decoder *d);

/* Ends every zone still open (end -1) so the spool is consistent; called once
 * when the capture ends, whatever the reason. */
int btc_model_finish(struct btc_model *m);

#endif
