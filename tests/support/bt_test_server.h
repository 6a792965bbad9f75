/* A Tracy server for tests: connects to a traced program like tracy-capture
 * does, performs the handshake, decodes the LZ4 frames and every event (time
 * references, staged strings), sends the queries a real server sends, checks
 * the answers and the protocol rules, and counts what arrived. */
#ifndef BT_TEST_SERVER_H
#define BT_TEST_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct bt_ts_map {
    uint64_t *keys;
    uint64_t *values;
    uint8_t *used;
    size_t cap;
    size_t count;
};

/* Per-event callback of the decoder: raw bytes of one event and, for events
 * that carry a time, the absolute time after the reference chain. */
typedef void (*bt_ts_event_fn)(void *ctx, const uint8_t *ev, size_t size, int64_t time);

struct bt_ts_decoder {
    void *lz4; /* LZ4_streamDecode_t */
    uint8_t *ring;
    size_t ring_off;
    int64_t ref_thread;
    int64_t ref_serial;
    int64_t ref_gpu;
    int64_t ref_ctx; /* context switches, wakeups and CPU samples */
    uint32_t thread;
    bt_ts_event_fn on_event;
    void *ctx;
    char error[256];
    /* The protocol the server speaks (NULL: 82): each frame must hold only
     * that protocol's events, in its sizes, and is converted to 0.14.0's
     * form (bt_proto_up_events) before the checks; conv holds it. */
    const struct bt_proto *proto;
    uint8_t *conv;
};

int bt_ts_decoder_init(struct bt_ts_decoder *d, bt_ts_event_fn on_event, void *ctx);
void bt_ts_decoder_free(struct bt_ts_decoder *d);
/* Decompresses one block and walks its events; 0, or -1 with d->error set. */
int bt_ts_decoder_frame(struct bt_ts_decoder *d, const uint8_t *block, size_t len);

struct bt_ts_thread {
    uint32_t tid;
    uint64_t zones;
    uint32_t depth;
    int64_t open_begin[8192];
};

/* What the server keeps of system tracing (bt_test_server_sys.c). */
struct bt_ts_sys {
    uint64_t samples;        /* CPU samples (timer) */
    uint64_t switch_samples; /* callstacks of threads switched out */
    uint64_t context_switches, wakeups, topology, tid_to_pid, hw_samples;
    uint64_t external_names; /* ExternalName and ExternalThreadName answers */
    uint64_t pending_external;
    int payload_waiting;              /* a CallstackPayload not yet taken */
    uint64_t payload_top;             /* its innermost frame */
    struct bt_ts_map top_samples;     /* innermost frame address -> samples */
    struct bt_ts_map thread_samples;  /* tid -> samples */
    struct bt_ts_map thread_switches; /* tid -> runs started */
    struct bt_ts_map run;             /* tid -> state << 56 | cpu */
    struct bt_ts_map run_time;        /* tid -> when its run started or ended */
    struct bt_ts_map external;        /* tid -> names still due (bit 0 thread, bit 1 process) */
    uint32_t cpu_thread[256];         /* the thread each CPU last started */
    uint8_t cpu_seen[256];
};

struct bt_test_server {
    int fd;
    struct bt_ts_decoder dec;
    uint8_t welcome[1170];
    double timer_mul;
    int64_t init_begin;
    uint8_t flags;

    /* what has been asked and not answered */
    uint64_t pending_strings, pending_threads, pending_plots, pending_frames;
    uint64_t pending_callstack_frames, pending_symbols, pending_other;
    uint64_t srcloc_fifo[4096];
    size_t srcloc_head, srcloc_tail;
    uint8_t out[13 * 1024];
    size_t out_len;

    /* staged strings */
    char single[65536];
    int single_len; /* -1: none */
    char second[65536];
    int second_len;

    /* known keys (value: index into strings[], or a count) */
    struct bt_ts_map strings; /* string key -> 1 + index of text */
    struct bt_ts_map srclocs; /* srcloc key -> 1 + index into srcloc_info[] */
    struct bt_ts_map thread_names;
    struct bt_ts_map plot_names;
    struct bt_ts_map frame_names;
    struct bt_ts_map frames_seen;     /* callstack frame address -> 1 */
    struct bt_ts_map first_frames;    /* innermost frame address -> callstacks */
    struct bt_ts_map frame_functions; /* frame address -> 1 + index of its function text */
    uint64_t answering_frame;         /* address of the CallstackFrameSize being answered */
    struct bt_ts_map symbols_seen;
    struct bt_ts_map zone_counts; /* srcloc key (or payload id) -> zones */
    struct bt_ts_map plot_points; /* plot key -> points */
    struct bt_ts_map frame_marks; /* frame name key -> marks (any type) */
    struct bt_ts_map frame_last;  /* frame name key -> last time */
    struct bt_ts_map live;        /* pool key ^ ptr -> size (live allocations) */
    struct bt_ts_map pool_allocs; /* pool key -> allocations */
    struct bt_ts_map pool_frees;  /* pool key -> frees */
    struct bt_ts_map pool_last;   /* pool key -> last alloc time */
    char **texts;
    size_t texts_count, texts_cap;
    struct {
        uint64_t name, function, file;
        uint32_t line;
    } * srcloc_info;
    size_t srcloc_count, srcloc_cap;
    char **payloads; /* distinct SourceLocationPayloads, key = ~index */
    size_t *payload_lens;
    size_t payloads_count, payloads_cap;
    uint64_t mem_name;        /* MemNamePayload waiting for its event */
    uint64_t pending_payload; /* payload id waiting for its ZoneBeginAllocSrcLoc */
    int pending_callstack;    /* Callstack(10) seen, waiting for its event */
    struct bt_ts_thread *threads;
    size_t threads_count, threads_cap;
    struct bt_ts_thread *current;

    /* counts */
    uint64_t zones_total, zone_texts, zone_names, zone_values, zone_colors;
    uint64_t messages, messages_colored, messages_literal, app_infos;
    uint64_t callstacks, callstack_frames_answered, symbols_answered;
    uint64_t lock_announces, lock_waits, lock_obtains, lock_releases, lock_names;
    uint64_t messages_by_severity[6];
    uint64_t drop_notes; /* the runtime's "... events dropped" notes (older protocols) */
    uint64_t lock_shared_waits, lock_shared_obtains, lock_shared_releases;
    uint64_t gpu_contexts, gpu_context_names, gpu_zone_begins, gpu_zone_begins_serial;
    uint64_t gpu_zone_begins_alloc, gpu_zone_callstacks, gpu_zone_ends, gpu_times;
    uint64_t gpu_calibrations, gpu_time_syncs;
    uint8_t gpu_known[256]; /* contexts announced */
    uint64_t fiber_enters, fiber_leaves, fiber_names, pending_fibers;
    struct bt_ts_map thread_hints;  /* tid -> 1 << 32 | u32 group hint */
    struct bt_ts_map sections_open; /* section id -> 1 while entered */
    uint64_t thread_group_hints, section_enters, section_leaves, section_setups;
    uint64_t param_setups;
    /* set by the test: answer each ParamSetup with a Parameter query that
     * changes the value to value + 1, as a user in the GUI would */
    int change_params;
    struct bt_ts_map fibers;       /* fiber key -> 1 + index of its name text */
    struct bt_ts_map in_fiber;     /* thread -> the pseudo thread of the fiber it runs */
    struct bt_ts_map lock_waiting; /* lock id << 32 | thread (bit 63: shared) -> waiting */
    uint32_t context_tid;          /* thread of the last ThreadContext */
    uint64_t frame_images, pending_image_len;
    /* code transfer (welcome flag CodeTransfer and an executable time): the
     * symbol code of each new symbol and the source file of each static
     * source location are asked for, as upstream's server does */
    struct bt_ts_map file_keys;     /* srcloc file string key -> 1 */
    struct bt_ts_map code_asked;    /* symbol address -> size asked */
    struct bt_ts_map sources_asked; /* query id -> 1 + index of the file name text */
    struct bt_ts_map source_names;  /* FNV-1a of a file name -> 1: asked once */
    uint32_t next_source_id;
    uint64_t symbol_code, symbol_code_bytes, symbol_code_unavailable;
    uint64_t source_files, source_file_bytes, source_files_unavailable;
    uint64_t source_mismatches; /* files whose bytes differ from the disk's */
    uint64_t source_virtual;    /* answers for files not on this machine (the
                                   program's source callback); texts kept */
    int pending_image;
    uint64_t events, frames_received, bytes_received;
    uint64_t canonical_violations;
    int64_t longest_zone;  /* ticks */
    uint64_t message_hash; /* sum of the FNV-1a hashes of staged message texts */
    int terminate_seen;
    int done; /* ServerQueryTerminate sent */

    struct bt_ts_sys sys;

    char error[512];
    bt_ts_event_fn tap; /* optional: sees every event too */
    void *tap_ctx;
};

/* An encoder's output kept in memory (bt_encoder_write_fn over it). */
struct bt_ts_sink {
    uint8_t *data;
    size_t len, cap;
    size_t writes; /* calls: one per frame the encoder flushed */
};
int bt_ts_sink_write(void *ctx, const void *data, size_t len);

/* The whole of dir/name, malloc'd (*len: its size); NULL if unreadable. */
uint8_t *bt_ts_read_file(const char *dir, const char *name, size_t *len);

/* Connects to addr:port (IPv4 or IPv6 literal), retrying for timeout_ms. */
int bt_ts_connect(struct bt_test_server *s, const char *addr, uint16_t port, int timeout_ms);
/* Sends shibboleth + version; returns the handshake status byte, or -1. On
 * Welcome, reads the welcome message. */
int bt_ts_handshake(struct bt_test_server *s, uint32_t version);
/* Receives until the client's Terminate is in and every query answered, then
 * sends ServerQueryTerminate. 0 on success, -1 with s->error. */
int bt_ts_run(struct bt_test_server *s, int timeout_ms);
void bt_ts_close(struct bt_test_server *s);
/* Sends a String or SourceLocation query of the test's choosing now. */
int bt_ts_ask(struct bt_test_server *s, uint8_t type, uint64_t key);

/* Lookups for assertions, by resolved name. */
uint64_t bt_ts_zones_named(const struct bt_test_server *s, const char *name);
uint64_t bt_ts_plot_points(const struct bt_test_server *s, const char *name);
uint64_t bt_ts_frame_marks(const struct bt_test_server *s, const char *name); /* NULL: default */
uint64_t bt_ts_pool_allocs(const struct bt_test_server *s, const char *pool); /* NULL: default */
uint64_t bt_ts_pool_frees(const struct bt_test_server *s, const char *pool);
const char *bt_ts_thread_name(const struct bt_test_server *s, uint32_t tid);
/* The group hint sent for the thread of that name; 0 if none was sent. */
int32_t bt_ts_thread_hint(const struct bt_test_server *s, const char *thread_name);
const char *bt_ts_string(const struct bt_test_server *s, uint64_t key);
/* Whether a fiber of that name was entered (and its name answered). */
int bt_ts_saw_fiber(const struct bt_test_server *s, const char *name);
/* Whether some text (message, app info, zone text) equal to text arrived. */
int bt_ts_saw_text(const struct bt_test_server *s, const char *text);
int bt_ts_saw_text_ending(const struct bt_test_server *s, const char *suffix);
int bt_ts_saw_text_containing(const struct bt_test_server *s, const char *part);
/* Callstacks whose innermost frame the client resolved to `function`. */
uint64_t bt_ts_callstacks_starting_in(const struct bt_test_server *s, const char *function);
/* CPU samples whose innermost frame the client resolved to `function`; a
 * thread's samples and the runs it started (context switches to it). */
uint64_t bt_ts_samples_in(const struct bt_test_server *s, const char *function);
uint64_t bt_ts_thread_samples(const struct bt_test_server *s, uint32_t tid);
uint64_t bt_ts_thread_switches(const struct bt_test_server *s, uint32_t tid);

/* FNV-1a of a text, as summed into message_hash. */
uint64_t bt_ts_text_hash(const char *text, size_t len);

/* Map helpers (exposed for tests that keep their own tallies). */
uint64_t *bt_ts_map_get(struct bt_ts_map *m, uint64_t key, int create);
uint64_t bt_ts_map_value(const struct bt_ts_map *m, uint64_t key);

#endif
