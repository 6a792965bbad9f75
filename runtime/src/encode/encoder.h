/* Encoder of the client-to-server event stream: packs events into frames of
 * at most 256 KiB, keeps the four time references and the compact time forms,
 * stages strings, and LZ4-compresses each frame (dictionary-chained, like
 * upstream) before handing it to a write callback. Knows nothing of sockets. */
#ifndef BT_ENCODER_H
#define BT_ENCODER_H

#include <stddef.h>
#include <stdint.h>

/* Writes one finished frame (u32 size + LZ4 block); returns 0 or -errno. */
typedef int (*bt_encoder_write_fn)(void *ctx, const void *data, size_t len);

struct bt_encoder {
    uint8_t *ring; /* 3 frames: previous frames stay addressable for LZ4 */
    size_t start;  /* first byte of the frame being built */
    size_t offset; /* end of the frame being built */
    void *lz4;     /* LZ4_stream_t */
    uint8_t *out;
    int64_t ref_thread; /* THR reference */
    int64_t ref_serial; /* SER reference */
    int64_t ref_gpu;    /* GPU reference (GpuTime) */
    int64_t ref_ctx;    /* CTX reference (context switches, wakeups, samples) */
    uint32_t thread;    /* thread of the last ThreadContext */
    int thread_valid;
    bt_encoder_write_fn write;
    void *write_ctx;
    int error; /* first write error, sticky until bt_encoder_reset */
    /* A server of an older protocol (NULL: 82): each frame is built in
     * 0.14.0's form, a third of a frame at most, and converted before it is
     * compressed (bt_proto_down_events) into conv; what the protocol cannot
     * carry is dropped and counted per event type. */
    const struct bt_proto *proto;
    size_t room; /* the frame's room in 0.14.0's form: a whole frame, or a third */
    uint8_t *conv;
    uint32_t *dropped; /* BT_EV_COUNT counters */
};

int bt_encoder_init(struct bt_encoder *e, bt_encoder_write_fn write, void *ctx);
void bt_encoder_free(struct bt_encoder *e);
/* Starts a new connection: references, thread and compressor state. */
void bt_encoder_reset(struct bt_encoder *e);
/* The server speaks protocol p (82 until called; NULL means 82). Returns 0
 * or -ENOMEM. */
int bt_encoder_set_protocol(struct bt_encoder *e, const struct bt_proto *p);
/* Compresses and writes the pending frame, if any. Returns e->error. */
int bt_encoder_flush(struct bt_encoder *e);
/* Room for n bytes (n <= 262144) in the current frame, flushing first when
 * they would not fit, so events never straddle frames. */
uint8_t *bt_encoder_reserve(struct bt_encoder *e, size_t n);
/* Sends `type` as a 1-byte frame of its own (upstream's Terminate). */
int bt_encoder_send_alone(struct bt_encoder *e, uint8_t type);

/* Writes `wide` (an event's 64-bit time form) or its 32/16-bit siblings
 * (wide + 1, + 2) for delta, per protocol notes 4.3.2, with `lead` bytes
 * between the type and the time (a sample's thread) left at *lead_at;
 * returns where the `extra` bytes after the time go. */
uint8_t *bt_enc_compact_lead(struct bt_encoder *e, uint8_t wide, size_t lead, int64_t delta,
                             size_t extra, uint8_t **lead_at);

/* Per-thread batch header; also resets THR. Emitted only on a change. */
void bt_enc_thread_context(struct bt_encoder *e, uint32_t thread);

/* Zones; times are absolute ticks. */
void bt_enc_zone_begin(struct bt_encoder *e, int64_t time, uint64_t srcloc, int callstack);
/* key: the SourceLocationPayload's key, which the server ignores. */
void bt_enc_zone_begin_alloc(struct bt_encoder *e, int64_t time, uint64_t key, const void *payload,
                             size_t len, int callstack);
void bt_enc_zone_end(struct bt_encoder *e, int64_t time);
void bt_enc_zone_validation(struct bt_encoder *e, uint32_t id);
void bt_enc_zone_text(struct bt_encoder *e, int name, const char *text, size_t len);
void bt_enc_zone_color(struct bt_encoder *e, uint32_t rgb);
void bt_enc_zone_value(struct bt_encoder *e, uint64_t value);

/* Staged strings: single (second = 0) or second (second = 1). */
void bt_enc_staged_string(struct bt_encoder *e, int second, const char *text, size_t len);

/* Messages. meta = source | severity << 4; colored: rgb used. */
void bt_enc_message(struct bt_encoder *e, int64_t time, const char *text, size_t len, uint8_t meta,
                    int colored, uint32_t rgb, int callstack);
void bt_enc_message_literal(struct bt_encoder *e, int64_t time, uint64_t address, uint8_t meta,
                            int colored, uint32_t rgb, int callstack);
void bt_enc_app_info(struct bt_encoder *e, int64_t time, const char *text, size_t len);

/* Plots: type is BT_EV_PLOT_DATA_INT/FLOAT/DOUBLE; bits is the raw value. */
void bt_enc_plot(struct bt_encoder *e, uint8_t type, uint64_t name, int64_t time, uint64_t bits);
void bt_enc_plot_config(struct bt_encoder *e, uint64_t name, uint8_t format, uint8_t step,
                        uint8_t fill, uint32_t color);

/* Frame marks: type BT_EV_FRAME_MARK_MSG / _START / _END. */
void bt_enc_frame_mark(struct bt_encoder *e, uint8_t type, int64_t time, uint64_t name);

/* Memory (serial time). name 0 = default pool; callstack: preceded by
 * bt_enc_callstack_payload + serial binding. */
void bt_enc_mem_alloc(struct bt_encoder *e, int64_t time, uint32_t thread, uint64_t ptr,
                      uint64_t size, uint64_t name, int callstack);
void bt_enc_mem_free(struct bt_encoder *e, int64_t time, uint32_t thread, uint64_t ptr,
                     uint64_t name, int callstack);
void bt_enc_mem_discard(struct bt_encoder *e, int64_t time, uint32_t thread, uint64_t name,
                        int callstack);

/* A callstack and what it binds to: BT_EV_CALLSTACK (next thread event) or
 * BT_EV_CALLSTACK_SERIAL (next memory event). The key is ignored by the server. */
void bt_enc_callstack(struct bt_encoder *e, uint8_t binding, uint64_t key, const uint64_t *frames,
                      size_t n);

/* Locks. */
void bt_enc_lock_announce(struct bt_encoder *e, uint32_t id, int64_t time, uint64_t srcloc,
                          uint8_t type);
void bt_enc_lock_terminate(struct bt_encoder *e, uint32_t id, int64_t time);
void bt_enc_lock_wait(struct bt_encoder *e, uint8_t type, uint32_t thread, uint32_t id,
                      int64_t time);
void bt_enc_lock_release(struct bt_encoder *e, uint32_t id, int64_t time);
void bt_enc_lock_mark(struct bt_encoder *e, uint32_t thread, uint32_t id, uint64_t srcloc);
void bt_enc_lock_name(struct bt_encoder *e, uint32_t id, const char *name, size_t len);

void bt_enc_lock_shared_release(struct bt_encoder *e, uint32_t id, int64_t time, uint32_t thread);

/* GPU (protocol notes 4.6): zone events take the serial time chain for the
 * serial types (50-54) and the thread chain, after bt_enc_thread_context,
 * for the others. srcloc: a key, or the payload for the alloc types. */
void bt_enc_gpu_zone_begin(struct bt_encoder *e, uint8_t type, int64_t time, uint32_t thread,
                           uint16_t query, uint8_t context, uint64_t srcloc);
void bt_enc_gpu_zone_begin_alloc(struct bt_encoder *e, uint8_t type, int64_t time, uint32_t thread,
                                 uint16_t query, uint8_t context, uint64_t key, const void *payload,
                                 size_t len);
void bt_enc_gpu_zone_end(struct bt_encoder *e, uint8_t type, int64_t time, uint16_t query,
                         uint8_t context);
void bt_enc_gpu_time(struct bt_encoder *e, int64_t gpu_time, uint16_t query, uint8_t context);
void bt_enc_gpu_new_context(struct bt_encoder *e, int64_t time, int64_t gpu_time, uint32_t thread,
                            float period, uint8_t context, uint8_t flags, uint8_t type);
void bt_enc_gpu_context_name(struct bt_encoder *e, uint8_t context, const char *name, size_t len);
void bt_enc_gpu_calibration(struct bt_encoder *e, int64_t time, int64_t gpu_time, int64_t cpu_delta,
                            uint8_t context);
void bt_enc_gpu_time_sync(struct bt_encoder *e, int64_t time, int64_t gpu_time, uint8_t context);

/* System tracing (encoder_sys.c). Samples, context switches and wakeups
 * are on the CTX chain: send them in time order. A sample's frames are
 * innermost first. HW samples and the rest carry no chained time. */
void bt_enc_sample(struct bt_encoder *e, int ctx_switch, uint32_t thread, int64_t time,
                   const uint64_t *frames, size_t n);
void bt_enc_context_switch(struct bt_encoder *e, int64_t time, uint32_t old_thread,
                           uint32_t new_thread, uint8_t cpu, uint8_t reason, uint8_t state,
                           int8_t new_prio, int8_t old_prio);
void bt_enc_thread_wakeup(struct bt_encoder *e, int64_t time, uint32_t thread, uint8_t cpu);
void bt_enc_hw_sample(struct bt_encoder *e, uint8_t type, uint64_t ip, int64_t time);
void bt_enc_cpu_topology(struct bt_encoder *e, uint32_t package, uint32_t die, uint32_t core,
                         uint32_t thread);
void bt_enc_tid_to_pid(struct bt_encoder *e, uint64_t tid, uint64_t pid);
/* Right after the ThreadName answer of a thread that has a group hint. */
void bt_enc_thread_group_hint(struct bt_encoder *e, uint32_t tid, int32_t group_hint);

/* Sections: after bt_enc_thread_context (enter and leave are on the thread
 * time chain). */
void bt_enc_section_enter(struct bt_encoder *e, int64_t time, uint32_t id, uint16_t category,
                          const char *text, size_t len);
void bt_enc_section_leave(struct bt_encoder *e, int64_t time, uint32_t id);
void bt_enc_section_setup(struct bt_encoder *e, uint16_t category, const char *text, size_t len);
/* A parameter the GUI may change (name: a string key). */
void bt_enc_param_setup(struct bt_encoder *e, uint32_t idx, uint64_t name, uint8_t type,
                        int32_t value);

/* Fibers: after bt_enc_thread_context (thread time chain). */
void bt_enc_fiber_enter(struct bt_encoder *e, int64_t time, uint64_t fiber, uint32_t thread,
                        int32_t group_hint);
void bt_enc_fiber_leave(struct bt_encoder *e, int64_t time, uint32_t thread);

/* A frame image: its DXT1 data, then the event naming its frame. */
void bt_enc_frame_image(struct bt_encoder *e, uint64_t key, const void *dxt1, size_t len,
                        uint32_t frame, uint16_t w, uint16_t h, int flip);

/* Query answers. */
void bt_enc_keyed(struct bt_encoder *e, uint8_t type, uint64_t key, const void *data, size_t len);
void bt_enc_source_location(struct bt_encoder *e, uint64_t name, uint64_t function, uint64_t file,
                            uint32_t line, uint32_t rgb);
void bt_enc_callstack_frame_size(struct bt_encoder *e, uint64_t ptr, uint8_t count,
                                 const char *image, size_t image_len);
void bt_enc_callstack_frame(struct bt_encoder *e, const char *function, size_t function_len,
                            const char *file, size_t file_len, uint32_t line, uint64_t sym_addr,
                            uint32_t sym_len);
void bt_enc_symbol_information(struct bt_encoder *e, const char *file, size_t file_len,
                               uint32_t line, uint64_t sym_addr);
void bt_enc_simple(struct bt_encoder *e, uint8_t type);
/* CrashReport: when (absolute) and the text's string key; the Callstack
 * event before it on the thread is the crash's. */
void bt_enc_crash_report(struct bt_encoder *e, int64_t time, uint64_t text);
void bt_enc_ack_source_code_not_available(struct bt_encoder *e, uint32_t id);

#endif
