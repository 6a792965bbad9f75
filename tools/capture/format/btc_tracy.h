/* Writing and reading .tracy files (upstream Tracy's trace format, in the
 * layout of any release from 0.10.0 to 0.14.0: btc_file_versions.h). The
 * writer builds the file from a finished capture model and its spools; the
 * reader streams any such file (ours or upstream's) to callbacks without
 * holding its zones in memory. */
#ifndef BTC_TRACY_H
#define BTC_TRACY_H

#include <stddef.h>
#include <stdint.h>

#include "btc_format.h"
#include "btc_model.h"
#include "btc_util.h"

/* Writes the model as a .tracy file; version is one of the releases' file
 * versions (btc_file_versions.h), each written with that release's layout. *bytes receives the file
 * size. A regular file at path is replaced only by a complete new one (temporary name, then
 * rename); on failure it is left as it was. */
int btc_tracy_write(struct btc_model *m, const char *path, uint32_t version, uint64_t *bytes,
                    char *err, size_t errlen);
/* The same with the compression chosen: zstd (level 3, as upstream's
 * tracy-capture writes; what btc_tracy_write does) or, with lz4, LZ4 as
 * upstream's "fast" files (every release reads both): several times faster
 * to write, some 2.5 times larger. */
int btc_tracy_write_compressed(struct btc_model *m, const char *path, uint32_t version, int lz4,
                               uint64_t *bytes, char *err, size_t errlen);

/* The end of the file's timeline in ns from the program's start, as written
 * (the last event, or the end of the program's initialisation): the span
 * the Tracy GUI shows. */
int64_t btc_tracy_last_time(const struct btc_model *m);

/* ---- reader ----------------------------------------------------------- */

struct btc_read_srcloc {
    int64_t name, function, file; /* string index, -1 none */
    uint32_t line, color;
};

struct btc_read_zone {
    uint64_t thread_id;
    int16_t srcloc;
    uint32_t depth;
    int64_t start, end; /* ns; end -1 when the zone never ended */
    uint32_t extra;
};

struct btc_read_frameset {
    int64_t name; /* string index, -1 for the default set */
    int continuous;
    uint64_t frames;
};

struct btc_read_pool {
    int64_t name; /* string index, -1 for the default pool */
    uint64_t events, active, freed, allocs_with_callstack, frees_with_callstack;
};

struct btc_read_plot {
    int64_t name;
    uint8_t type;
    uint64_t points;
    double min, max;
};

/* GPU zones per (context, source location): durations on the GPU, counted
 * as upstream's statistics count them (ended, longer than 0 ns). */
struct btc_read_gpu_stat {
    uint32_t ctx;
    int16_t srcloc;
    uint64_t zones, count;
    int64_t total_ns, min_ns, max_ns;
};

/* A function hit by CPU samples: "self" when it was the innermost frame,
 * "inclusive" when it was anywhere in the stack (once per sample). */
struct btc_read_sampled {
    int64_t name, image; /* string index, -1 unknown */
    uint64_t self, inclusive;
};

/* A lock (section of locks): its name (the LockName, else its source
 * location's function, which names the variable), and how long threads
 * waited for it: from each LockWait (or LockSharedWait) of a thread to that
 * thread's next obtain (btc_tracy_read_locks.c). */
struct btc_read_lock {
    uint32_t id;
    int64_t name; /* string index, -1 none */
    int16_t srcloc;
    uint8_t type; /* 0 lockable, 1 shared */
    uint64_t threads, events;
    uint64_t waits; /* waits that ended in an obtain */
    int64_t wait_ns, wait_max_ns;
};

struct btc_read_thread {
    uint64_t id;
    int64_t name; /* string index, -1 none */
    uint64_t zones, messages;
    uint64_t samples, ctx_samples, kernel_samples; /* CPU samples (all, at context switches) */
    uint64_t ctx_switches;                         /* the thread's running regions */
    int is_fiber;
    int32_t group_hint; /* the GUI's thread group (SetThreadNameWithHint), 0 none */
};

/* What a trace holds, apart from zones (those go to the zone callback). */
struct btc_trace {
    uint32_t version;
    double timer_mul;
    int64_t resolution, last_time;
    uint64_t pid, capture_time;
    uint8_t cpu_arch;
    char capture_name[BTC_FILE_NAME_MAX];
    char program[BTC_FILE_NAME_MAX];
    char host_info[BTC_FILE_NAME_MAX];
    struct btc_strtab strings;  /* in file order: index = string index */
    struct btc_vec string_keys; /* u64 file key of each string */
    struct btc_map key_string;  /* pointer key -> string index (sections 8-9) */
    struct btc_vec statics;     /* struct btc_read_srcloc, file id s > 0 is entry s - 1 */
    struct btc_vec payloads;    /* struct btc_read_srcloc, file id s < 0 is entry -s - 1 */
    struct btc_vec framesets;   /* struct btc_read_frameset */
    struct btc_vec threads;     /* struct btc_read_thread */
    struct btc_vec pools;       /* struct btc_read_pool */
    struct btc_vec plots;       /* struct btc_read_plot */
    struct btc_vec lock_stats;  /* struct btc_read_lock, in file order */
    struct btc_vec app_info;    /* u32 string index */
    /* The crash event: the crashed thread's id (0 no crash), when, its text
     * (string index, -1 none) and callstack id (0 none). */
    uint64_t crash_thread;
    int64_t crash_time, crash_text;
    uint32_t crash_callstack;
    uint64_t zones, zones_unended, messages, messages_user, messages_colored, messages_tracy;
    uint64_t messages_with_callstack, locks, lock_events;
    uint64_t lock_events_marked; /* given a source location by a LockMark */
    uint64_t callstacks, callstack_frames, symbols;
    uint64_t extras;
    uint64_t cpu_threads; /* CPU topology entries */
    uint64_t tid_pids;
    uint64_t samples, ctx_samples; /* CPU samples of all threads */
    uint64_t ctx_switches;         /* regions of the program's threads and fibers */
    uint64_t cpu_ctx_switches;     /* regions of the CPUs */
    uint64_t external_names, external_threads, cpu_thread_data;
    uint64_t cpu_regions, cpu_migrations; /* sums over the CPU thread data */
    uint64_t frame_images;
    uint64_t symbol_code, symbol_code_bytes;     /* transferred machine code */
    uint64_t source_files, source_file_bytes;    /* the source file cache */
    uint64_t hw_sample_addresses, hw_samples[6]; /* cycles ... branch misses */
    uint64_t sections, section_categories;       /* 0.14.0 files */
    uint64_t gpu_contexts, gpu_zones, gpu_zones_with_callstack;
    uint64_t gpu_zones_timed; /* the file's count: zones whose GPU start arrived */
    struct btc_vec gpu_names; /* i64 string index of each GPU context's name, -1 none */
    struct btc_vec gpu_stats; /* struct btc_read_gpu_stat */
    /* CPU samples taken at a timer tick (context-switch ones left out),
     * per function, by self count: filled from the callstacks. */
    uint64_t timer_samples;
    struct btc_vec sampled;   /* struct btc_read_sampled */
    struct btc_map cs_counts; /* callstack id -> timer samples (while reading) */
    /* Callstack id -> string index + 1 of its innermost frame's function,
     * for the callstacks of timer samples (absent: unknown). */
    struct btc_map sample_top;
    /* Callstack ids of allocations never freed: the reader resolves their
     * innermost function into sample_top as well (leaks' top frames). */
    struct btc_map leak_cs;
    /* While reading a lock: per thread of it, when its pending wait began
     * (-1 none). Upstream's locks have at most 64 threads. */
    int64_t lock_waiting[64];
};

/* Called for each zone in file order (per thread, depth first). */
typedef int (*btc_zone_fn)(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z);

int btc_tracy_read(const char *path, struct btc_trace *t, btc_zone_fn fn, void *ctx, char *err,
                   size_t errlen);

/* What a read may hold in strings and tables (zones and messages stream
 * through the callbacks): a file that needs more fails with a message
 * saying so. 0 restores the default. */
#define BTC_READ_MEMORY_DEFAULT (1024ull << 20)
void btc_tracy_read_set_memory_limit(uint64_t bytes);
uint64_t btc_tracy_read_memory_limit(void);

/* Called for each message in time order (before any zone); source is
 * 0 user, 1 Tracy (always 0 in 0.11.1 files). */
struct btc_read_message {
    int64_t time;
    const char *text;
    uint32_t color; /* 0xAABBGGRR */
    uint8_t source, severity;
};
typedef int (*btc_message_fn)(void *ctx, const struct btc_trace *t,
                              const struct btc_read_message *m);
/* More of the trace, for exports: GPU zones (depth first per timeline, as
 * the file holds them), frames (continuous sets: end -1, the frame lasts
 * until the next), plot points (plot = index in t->plots, filled before
 * its points) and memory events (by pool, in allocation order). Frame set
 * names are known only once the read is done. */
struct btc_read_gpu_zone {
    uint32_t ctx;      /* index in t->gpu_names */
    uint64_t timeline; /* thread id, 0 for contexts bound to one thread */
    uint32_t depth;
    int16_t srcloc;
    int64_t cpu_start, cpu_end, gpu_start, gpu_end;
};
struct btc_read_frame {
    uint32_t set; /* index in t->framesets */
    int64_t start, end;
};
struct btc_read_point {
    uint32_t plot;
    int64_t time;
    double value;
};
struct btc_read_mem {
    uint32_t pool; /* index in t->pools */
    uint64_t ptr, size;
    int64_t time_alloc, time_free; /* time_free -1: never freed */
    uint32_t cs_alloc;             /* callstack id of the allocation, 0 none */
};
/* CPU samples, per thread in time order: first those taken at context
 * switches (ctx_switch 1), then all of them, those again included. */
struct btc_read_sample {
    uint64_t thread;
    int64_t time;
    uint32_t callstack; /* its function: t->sample_top, once the read is done */
    uint8_t ctx_switch;
};
struct btc_read_more {
    int (*sample)(void *ctx, const struct btc_trace *t, const struct btc_read_sample *s);
    int (*gpu_zone)(void *ctx, const struct btc_trace *t, const struct btc_read_gpu_zone *z);
    int (*frame)(void *ctx, const struct btc_trace *t, const struct btc_read_frame *f);
    int (*point)(void *ctx, const struct btc_trace *t, const struct btc_read_point *p);
    int (*mem)(void *ctx, const struct btc_trace *t, const struct btc_read_mem *m);
};

/* btc_tracy_read with a message callback as well. */
int btc_tracy_read_messages(const char *path, struct btc_trace *t, btc_zone_fn fn,
                            btc_message_fn mfn, void *ctx, char *err, size_t errlen);
/* The same from an in-memory file image (fuzzing, tests). */
int btc_tracy_read_mem(const uint8_t *buf, size_t n, struct btc_trace *t, btc_zone_fn fn,
                       btc_message_fn mfn, void *ctx, char *err, size_t errlen);
/* btc_tracy_read_messages with the callbacks of more (any may be NULL). */
int btc_tracy_read_more(const char *path, struct btc_trace *t, btc_zone_fn fn, btc_message_fn mfn,
                        const struct btc_read_more *more, void *ctx, char *err, size_t errlen);
void btc_trace_free(struct btc_trace *t);

/* ---- rewriting callstack frames (symbolizing) -------------------------- */

/* One subframe of a callstack frame: string indices, source line, and the
 * address of its symbol (0 unknown). */
struct btc_rewrite_sub {
    uint32_t name, file; /* string index, UINT32_MAX none */
    uint32_t line;
    uint64_t sym_addr;
};

struct btc_rewrite {
    /* Each callstack frame (addr: its id, the return address) with its n
     * subframes, which the hook may change in place (never their number).
     * t holds the strings read so far: all of the file's. */
    void (*frame)(void *ctx, const struct btc_trace *t, uint64_t addr, struct btc_rewrite_sub *sub,
                  unsigned n);
    void *ctx;
    /* Strings appended to the file's table: their indices follow its own
     * (the count a first pass saw in t). */
    const char *const *extra;
    const uint32_t *extra_len;
    uint64_t extra_count;
};

/* Copies IN to OUT (a zstd .tracy, replaced only once complete) with the
 * hook's changes to the frames and the extra strings; with OUT NULL only
 * reads, calling the hook (a first pass). Returns BTC_OK or an error. */
int btc_tracy_rewrite(const char *in, const char *out, const struct btc_rewrite *rw, char *err,
                      size_t errlen);

/* The lock accumulator the reader feeds (btc_tracy_read_locks.c): a lock's
 * header, then each of its events in file order (times in ns). */
int btc_read_lock_begin(struct btc_trace *t, uint32_t id, int64_t name, int16_t srcloc,
                        uint8_t type, uint64_t threads, uint64_t events);
void btc_read_lock_event(struct btc_trace *t, int64_t time, uint8_t thread, uint8_t type);

/* A string of the trace by index ("" for -1 or out of range). */
const char *btc_trace_string(const struct btc_trace *t, int64_t idx);
/* The source location of a zone's file srcloc id, or NULL. */
const struct btc_read_srcloc *btc_trace_srcloc(const struct btc_trace *t, int16_t id);

#endif
