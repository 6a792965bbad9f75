/* Wire encoder: events into 256 KiB frames, LZ4 dictionary-chained blocks.
 * The frame ring mirrors upstream's (3 frames, wrap after 2) so every block
 * may reference the previous 64 KiB, as the server's decoder ring allows. */
#include "encoder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"

#define RING_SIZE (BT_WIRE_RING_FRAMES * BT_WIRE_FRAME_SIZE)

int bt_encoder_init(struct bt_encoder *e, bt_encoder_write_fn write, void *ctx)
{
    memset(e, 0, sizeof(*e));
    e->ring = malloc(RING_SIZE);
    e->out = malloc(4 + BT_WIRE_LZ4_BOUND);
    e->lz4 = LZ4_createStream();
    if (!e->ring || !e->out || !e->lz4) {
        bt_encoder_free(e);
        return -ENOMEM;
    }
    e->write = write;
    e->write_ctx = ctx;
    e->room = BT_WIRE_FRAME_SIZE;
    bt_encoder_reset(e);
    return 0;
}

void bt_encoder_free(struct bt_encoder *e)
{
    free(e->conv);
    free(e->dropped);
    e->conv = NULL;
    e->dropped = NULL;
    e->proto = NULL;
    free(e->ring);
    free(e->out);
    if (e->lz4)
        LZ4_freeStream(e->lz4);
    e->ring = NULL;
    e->out = NULL;
    e->lz4 = NULL;
}

void bt_encoder_reset(struct bt_encoder *e)
{
    LZ4_resetStream_fast(e->lz4);
    e->start = 0;
    e->offset = 0;
    e->ref_thread = 0;
    e->ref_serial = 0;
    e->ref_gpu = 0;
    e->ref_ctx = 0;
    e->thread = 0;
    e->thread_valid = 0;
    e->error = 0;
}

/* The room a frame in 0.14.0's form may take: its conversion to an older
 * protocol grows by at most three times (compact zone times to wide ones),
 * and must still fit a frame. */
#define OLDER_FRAME (BT_WIRE_FRAME_SIZE / 3)
#define CONV_CAP    (3 * BT_WIRE_FRAME_SIZE + BT_PROTO_EVENT_MAX)

int bt_encoder_set_protocol(struct bt_encoder *e, const struct bt_proto *p)
{
    if (!p || p->number == BT_WIRE_PROTOCOL_VERSION) {
        e->proto = NULL;
        e->room = BT_WIRE_FRAME_SIZE;
        return 0;
    }
    if (!e->conv)
        e->conv = malloc(CONV_CAP);
    if (!e->dropped)
        e->dropped = calloc(BT_EV_COUNT, sizeof *e->dropped);
    if (!e->conv || !e->dropped)
        return -ENOMEM;
    e->proto = p;
    e->room = OLDER_FRAME;
    return 0;
}

/* An older protocol's frame: converted, then compressed on its own (the
 * converted bytes do not stay in place for the next block's dictionary). */
static int flush_converted(struct bt_encoder *e, size_t len)
{
    size_t n =
        bt_proto_down_events(e->proto, e->ring + e->start, len, e->conv, CONV_CAP, e->dropped);
    if (n == (size_t)-1 || n > BT_WIRE_FRAME_SIZE)
        return -EPROTO;
    if (n == 0)
        return 0; /* nothing the protocol carries */
    LZ4_resetStream_fast(e->lz4);
    int c = LZ4_compress_fast_continue(e->lz4, (const char *)e->conv, (char *)e->out + 4, (int)n,
                                       BT_WIRE_LZ4_BOUND, 1);
    if (c <= 0)
        return -EINVAL;
    bt_wire_put_u32(e->out, (uint32_t)c);
    return e->write(e->write_ctx, e->out, (size_t)c + 4);
}

int bt_encoder_flush(struct bt_encoder *e)
{
    size_t len = e->offset - e->start;
    if (len == 0)
        return e->error;
    if (e->error == 0 && e->proto) {
        int rc = flush_converted(e, len);
        if (rc < 0)
            e->error = rc;
    } else if (e->error == 0) {
        int n = LZ4_compress_fast_continue(e->lz4, (const char *)e->ring + e->start,
                                           (char *)e->out + 4, (int)len, BT_WIRE_LZ4_BOUND, 1);
        if (n <= 0) {
            e->error = -EINVAL;
        } else {
            bt_wire_put_u32(e->out, (uint32_t)n);
            int rc = e->write(e->write_ctx, e->out, (size_t)n + 4);
            if (rc < 0)
                e->error = rc;
        }
    }
    if (e->offset > 2 * BT_WIRE_FRAME_SIZE)
        e->offset = 0;
    e->start = e->offset;
    return e->error;
}

uint8_t *bt_encoder_reserve(struct bt_encoder *e, size_t n)
{
    if (e->offset - e->start + n > e->room && e->offset > e->start)
        bt_encoder_flush(e);
    uint8_t *p = e->ring + e->offset;
    e->offset += n;
    return p;
}

int bt_encoder_send_alone(struct bt_encoder *e, uint8_t type)
{
    bt_encoder_flush(e);
    *bt_encoder_reserve(e, 1) = type;
    return bt_encoder_flush(e);
}

void bt_enc_thread_context(struct bt_encoder *e, uint32_t thread)
{
    if (e->thread_valid && e->thread == thread)
        return;
    uint8_t *p = bt_encoder_reserve(e, 5);
    p[0] = BT_EV_THREAD_CONTEXT;
    bt_wire_put_u32(p + 1, thread);
    e->thread = thread;
    e->thread_valid = 1;
    e->ref_thread = 0;
}

static inline uint8_t *compact(struct bt_encoder *e, uint8_t wide, size_t lead, int64_t delta,
                               size_t extra, uint8_t **lead_at)
{
    uint8_t *p;
    if (delta >= 0 && delta < BT_WIRE_OFF16) {
        p = bt_encoder_reserve(e, 3 + lead + extra);
        p[0] = (uint8_t)(wide + 2);
        bt_wire_put_u16(p + 1 + lead, (uint16_t)delta);
        *lead_at = p + 1;
        return p + 3 + lead;
    }
    if (delta >= BT_WIRE_OFF16 && delta < BT_WIRE_OFF32) {
        p = bt_encoder_reserve(e, 5 + lead + extra);
        p[0] = (uint8_t)(wide + 1);
        bt_wire_put_u32(p + 1 + lead, (uint32_t)(delta - BT_WIRE_OFF16));
        *lead_at = p + 1;
        return p + 5 + lead;
    }
    p = bt_encoder_reserve(e, 9 + lead + extra);
    p[0] = wide;
    bt_wire_put_u64(p + 1 + lead, (uint64_t)(delta >= 0 ? delta - BT_WIRE_OFF32 : delta));
    *lead_at = p + 1;
    return p + 9 + lead;
}

uint8_t *bt_enc_compact_lead(struct bt_encoder *e, uint8_t wide, size_t lead, int64_t delta,
                             size_t extra, uint8_t **lead_at)
{
    return compact(e, wide, lead, delta, extra, lead_at);
}

static uint8_t *put_compact(struct bt_encoder *e, uint8_t wide, int64_t delta, size_t extra)
{
    uint8_t *unused;
    return compact(e, wide, 0, delta, extra, &unused);
}

static int64_t thread_delta(struct bt_encoder *e, int64_t time)
{
    int64_t d = time - e->ref_thread;
    e->ref_thread = time;
    return d;
}

static int64_t serial_delta(struct bt_encoder *e, int64_t time)
{
    int64_t d = time - e->ref_serial;
    e->ref_serial = time;
    return d;
}

void bt_enc_zone_begin(struct bt_encoder *e, int64_t time, uint64_t srcloc, int callstack)
{
    uint8_t wide = callstack ? BT_EV_ZONE_BEGIN_CALLSTACK : BT_EV_ZONE_BEGIN;
    bt_wire_put_u64(put_compact(e, wide, thread_delta(e, time), 8), srcloc);
}

void bt_enc_zone_begin_alloc(struct bt_encoder *e, int64_t time, uint64_t key, const void *payload,
                             size_t len, int callstack)
{
    bt_enc_keyed(e, BT_EV_SOURCE_LOCATION_PAYLOAD, key, payload, len);
    uint8_t *p = bt_encoder_reserve(e, 9);
    p[0] = callstack ? BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK : BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC;
    bt_wire_put_u64(p + 1, (uint64_t)thread_delta(e, time));
}

void bt_enc_zone_end(struct bt_encoder *e, int64_t time)
{
    put_compact(e, BT_EV_ZONE_END, thread_delta(e, time), 0);
}

void bt_enc_zone_validation(struct bt_encoder *e, uint32_t id)
{
    uint8_t *p = bt_encoder_reserve(e, 5);
    p[0] = BT_EV_ZONE_VALIDATION;
    bt_wire_put_u32(p + 1, id);
}

void bt_enc_staged_string(struct bt_encoder *e, int second, const char *text, size_t len)
{
    if (len > BT_WIRE_LONG_STRING_MAX)
        len = BT_WIRE_LONG_STRING_MAX;
    uint8_t *p;
    if (len < BT_WIRE_LONG_STRING_MIN) {
        p = bt_encoder_reserve(e, 2 + len);
        p[0] = second ? BT_EV_SECOND_STRING_DATA8 : BT_EV_SINGLE_STRING_DATA8;
        p[1] = (uint8_t)len;
        p += 2;
    } else {
        p = bt_encoder_reserve(e, 3 + len);
        p[0] = second ? BT_EV_SECOND_STRING_DATA : BT_EV_SINGLE_STRING_DATA;
        bt_wire_put_u16(p + 1, (uint16_t)(len - BT_WIRE_LONG_STRING_MIN));
        p += 3;
    }
    if (len)
        memcpy(p, text, len);
}

void bt_enc_zone_text(struct bt_encoder *e, int name, const char *text, size_t len)
{
    bt_enc_staged_string(e, 0, text, len);
    *bt_encoder_reserve(e, 1) = name ? BT_EV_ZONE_NAME : BT_EV_ZONE_TEXT;
}

static void put_bgr(uint8_t *p, uint32_t rgb)
{
    p[0] = (uint8_t)rgb;
    p[1] = (uint8_t)(rgb >> 8);
    p[2] = (uint8_t)(rgb >> 16);
}

void bt_enc_zone_color(struct bt_encoder *e, uint32_t rgb)
{
    uint8_t *p = bt_encoder_reserve(e, 4);
    p[0] = BT_EV_ZONE_COLOR;
    put_bgr(p + 1, rgb);
}

void bt_enc_zone_value(struct bt_encoder *e, uint64_t value)
{
    uint8_t *p = bt_encoder_reserve(e, 9);
    p[0] = BT_EV_ZONE_VALUE;
    bt_wire_put_u64(p + 1, value);
}

void bt_enc_message(struct bt_encoder *e, int64_t time, const char *text, size_t len, uint8_t meta,
                    int colored, uint32_t rgb, int callstack)
{
    bt_enc_staged_string(e, 0, text, len);
    uint8_t *p = bt_encoder_reserve(e, colored ? 13 : 10);
    bt_wire_put_u64(p + 1, (uint64_t)time);
    if (colored) {
        p[0] = callstack ? BT_EV_MESSAGE_COLOR_CALLSTACK : BT_EV_MESSAGE_COLOR;
        put_bgr(p + 9, rgb);
        p[12] = meta;
    } else {
        p[0] = callstack ? BT_EV_MESSAGE_CALLSTACK : BT_EV_MESSAGE;
        p[9] = meta;
    }
}

void bt_enc_message_literal(struct bt_encoder *e, int64_t time, uint64_t address, uint8_t meta,
                            int colored, uint32_t rgb, int callstack)
{
    uint8_t *p = bt_encoder_reserve(e, colored ? 20 : 17);
    bt_wire_put_u64(p + 1, (uint64_t)time);
    uint64_t tagged = (address << 8) | meta;
    if (colored) {
        p[0] = callstack ? BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK : BT_EV_MESSAGE_LITERAL_COLOR;
        put_bgr(p + 9, rgb);
        bt_wire_put_u64(p + 12, tagged);
    } else {
        p[0] = callstack ? BT_EV_MESSAGE_LITERAL_CALLSTACK : BT_EV_MESSAGE_LITERAL;
        bt_wire_put_u64(p + 9, tagged);
    }
}

void bt_enc_app_info(struct bt_encoder *e, int64_t time, const char *text, size_t len)
{
    bt_enc_staged_string(e, 0, text, len);
    uint8_t *p = bt_encoder_reserve(e, 9);
    p[0] = BT_EV_MESSAGE_APP_INFO;
    bt_wire_put_u64(p + 1, (uint64_t)time);
}

void bt_enc_plot(struct bt_encoder *e, uint8_t type, uint64_t name, int64_t time, uint64_t bits)
{
    size_t size = bt_wire_event_size[type];
    uint8_t *p = bt_encoder_reserve(e, size);
    p[0] = type;
    bt_wire_put_u64(p + 1, name);
    bt_wire_put_u64(p + 9, (uint64_t)thread_delta(e, time));
    if (type == BT_EV_PLOT_DATA_FLOAT)
        bt_wire_put_u32(p + 17, (uint32_t)bits);
    else
        bt_wire_put_u64(p + 17, bits);
}

void bt_enc_plot_config(struct bt_encoder *e, uint64_t name, uint8_t format, uint8_t step,
                        uint8_t fill, uint32_t color)
{
    uint8_t *p = bt_encoder_reserve(e, 16);
    p[0] = BT_EV_PLOT_CONFIG;
    bt_wire_put_u64(p + 1, name);
    p[9] = format;
    p[10] = step;
    p[11] = fill;
    bt_wire_put_u32(p + 12, color);
}

void bt_enc_frame_mark(struct bt_encoder *e, uint8_t type, int64_t time, uint64_t name)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = type;
    bt_wire_put_u64(p + 1, (uint64_t)time);
    bt_wire_put_u64(p + 9, name);
}

static void put_mem_name(struct bt_encoder *e, uint64_t name)
{
    uint8_t *p = bt_encoder_reserve(e, 9);
    p[0] = BT_EV_MEM_NAME_PAYLOAD;
    bt_wire_put_u64(p + 1, name);
}

/* Alloc and free share their layout up to the pointer; they differ in size
 * and in the four opcodes: plain, named, callstack, callstack named. */
static uint8_t *put_mem_head(struct bt_encoder *e, size_t size, const uint8_t type[4], int64_t time,
                             uint32_t thread, uint64_t ptr, uint64_t name, int callstack)
{
    if (name)
        put_mem_name(e, name);
    uint8_t *p = bt_encoder_reserve(e, size);
    p[0] = type[(callstack ? 2 : 0) + (name ? 1 : 0)];
    bt_wire_put_u64(p + 1, (uint64_t)serial_delta(e, time));
    bt_wire_put_u32(p + 9, thread);
    bt_wire_put_u64(p + 13, ptr);
    return p;
}

void bt_enc_mem_alloc(struct bt_encoder *e, int64_t time, uint32_t thread, uint64_t ptr,
                      uint64_t size, uint64_t name, int callstack)
{
    static const uint8_t type[4] = {BT_EV_MEM_ALLOC, BT_EV_MEM_ALLOC_NAMED,
                                    BT_EV_MEM_ALLOC_CALLSTACK, BT_EV_MEM_ALLOC_CALLSTACK_NAMED};
    uint8_t *p = put_mem_head(e, 27, type, time, thread, ptr, name, callstack);
    bt_wire_put_u32(p + 21, (uint32_t)size);
    bt_wire_put_u16(p + 25, (uint16_t)(size >> 32));
}

void bt_enc_mem_free(struct bt_encoder *e, int64_t time, uint32_t thread, uint64_t ptr,
                     uint64_t name, int callstack)
{
    static const uint8_t type[4] = {BT_EV_MEM_FREE, BT_EV_MEM_FREE_NAMED, BT_EV_MEM_FREE_CALLSTACK,
                                    BT_EV_MEM_FREE_CALLSTACK_NAMED};
    put_mem_head(e, 21, type, time, thread, ptr, name, callstack);
}

void bt_enc_mem_discard(struct bt_encoder *e, int64_t time, uint32_t thread, uint64_t name,
                        int callstack)
{
    uint8_t *p = bt_encoder_reserve(e, 21);
    p[0] = callstack ? BT_EV_MEM_DISCARD_CALLSTACK : BT_EV_MEM_DISCARD;
    bt_wire_put_u64(p + 1, (uint64_t)serial_delta(e, time));
    bt_wire_put_u32(p + 9, thread);
    bt_wire_put_u64(p + 13, name);
}

void bt_enc_callstack(struct bt_encoder *e, uint8_t binding, uint64_t key, const uint64_t *frames,
                      size_t n)
{
    uint8_t *p = bt_encoder_reserve(e, 11 + 8 * n + 1);
    p[0] = BT_EV_CALLSTACK_PAYLOAD;
    bt_wire_put_u64(p + 1, key);
    bt_wire_put_u16(p + 9, (uint16_t)(8 * n));
    for (size_t i = 0; i < n; i++)
        bt_wire_put_u64(p + 11 + 8 * i, frames[i]);
    p[11 + 8 * n] = binding;
}

void bt_enc_lock_announce(struct bt_encoder *e, uint32_t id, int64_t time, uint64_t srcloc,
                          uint8_t type)
{
    uint8_t *p = bt_encoder_reserve(e, 22);
    p[0] = BT_EV_LOCK_ANNOUNCE;
    bt_wire_put_u32(p + 1, id);
    bt_wire_put_u64(p + 5, (uint64_t)time);
    bt_wire_put_u64(p + 13, srcloc);
    p[21] = type;
}

void bt_enc_lock_terminate(struct bt_encoder *e, uint32_t id, int64_t time)
{
    uint8_t *p = bt_encoder_reserve(e, 13);
    p[0] = BT_EV_LOCK_TERMINATE;
    bt_wire_put_u32(p + 1, id);
    bt_wire_put_u64(p + 5, (uint64_t)time);
}

void bt_enc_lock_wait(struct bt_encoder *e, uint8_t type, uint32_t thread, uint32_t id,
                      int64_t time)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = type;
    bt_wire_put_u32(p + 1, thread);
    bt_wire_put_u32(p + 5, id);
    bt_wire_put_u64(p + 9, (uint64_t)serial_delta(e, time));
}

void bt_enc_lock_release(struct bt_encoder *e, uint32_t id, int64_t time)
{
    uint8_t *p = bt_encoder_reserve(e, 13);
    p[0] = BT_EV_LOCK_RELEASE;
    bt_wire_put_u32(p + 1, id);
    bt_wire_put_u64(p + 5, (uint64_t)serial_delta(e, time));
}

void bt_enc_lock_shared_release(struct bt_encoder *e, uint32_t id, int64_t time, uint32_t thread)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = BT_EV_LOCK_SHARED_RELEASE;
    bt_wire_put_u32(p + 1, id);
    bt_wire_put_u64(p + 5, (uint64_t)serial_delta(e, time));
    bt_wire_put_u32(p + 13, thread);
}

static int gpu_type_serial(uint8_t type)
{
    return type >= BT_EV_GPU_ZONE_BEGIN_SERIAL && type <= BT_EV_GPU_ZONE_END_SERIAL;
}

/* cpuTime i64, thread u32, queryId u16, context u8: the head of every GPU zone event. */
static uint8_t *put_gpu_zone_head(struct bt_encoder *e, size_t size, uint8_t type, int64_t time,
                                  uint32_t thread, uint16_t query, uint8_t context)
{
    int64_t d = gpu_type_serial(type) ? serial_delta(e, time) : thread_delta(e, time);
    uint8_t *p = bt_encoder_reserve(e, size);
    p[0] = type;
    bt_wire_put_u64(p + 1, (uint64_t)d);
    bt_wire_put_u32(p + 9, thread);
    bt_wire_put_u16(p + 13, query);
    p[15] = context;
    return p;
}

void bt_enc_gpu_zone_begin(struct bt_encoder *e, uint8_t type, int64_t time, uint32_t thread,
                           uint16_t query, uint8_t context, uint64_t srcloc)
{
    uint8_t *p = put_gpu_zone_head(e, 24, type, time, thread, query, context);
    bt_wire_put_u64(p + 16, srcloc);
}

void bt_enc_gpu_zone_begin_alloc(struct bt_encoder *e, uint8_t type, int64_t time, uint32_t thread,
                                 uint16_t query, uint8_t context, uint64_t key, const void *payload,
                                 size_t len)
{
    bt_enc_keyed(e, BT_EV_SOURCE_LOCATION_PAYLOAD, key, payload, len);
    put_gpu_zone_head(e, 16, type, time, thread, query, context);
}

void bt_enc_gpu_zone_end(struct bt_encoder *e, uint8_t type, int64_t time, uint16_t query,
                         uint8_t context)
{
    /* upstream leaves the thread of a GPU zone end zero */
    put_gpu_zone_head(e, 16, type, time, 0, query, context);
}

void bt_enc_gpu_time(struct bt_encoder *e, int64_t gpu_time, uint16_t query, uint8_t context)
{
    int64_t d = gpu_time - e->ref_gpu;
    e->ref_gpu = gpu_time;
    uint8_t *p = bt_encoder_reserve(e, 12);
    p[0] = BT_EV_GPU_TIME;
    bt_wire_put_u64(p + 1, (uint64_t)d);
    bt_wire_put_u16(p + 9, query);
    p[11] = context;
}

void bt_enc_gpu_new_context(struct bt_encoder *e, int64_t time, int64_t gpu_time, uint32_t thread,
                            float period, uint8_t context, uint8_t flags, uint8_t type)
{
    uint32_t bits;
    memcpy(&bits, &period, 4);
    uint8_t *p = bt_encoder_reserve(e, 28);
    p[0] = BT_EV_GPU_NEW_CONTEXT;
    bt_wire_put_u64(p + 1, (uint64_t)time);
    bt_wire_put_u64(p + 9, (uint64_t)gpu_time);
    bt_wire_put_u32(p + 17, thread);
    bt_wire_put_u32(p + 21, bits);
    p[25] = context;
    p[26] = flags;
    p[27] = type;
}

void bt_enc_gpu_context_name(struct bt_encoder *e, uint8_t context, const char *name, size_t len)
{
    bt_enc_staged_string(e, 0, name, len);
    uint8_t *p = bt_encoder_reserve(e, 2);
    p[0] = BT_EV_GPU_CONTEXT_NAME;
    p[1] = context;
}

void bt_enc_gpu_calibration(struct bt_encoder *e, int64_t time, int64_t gpu_time, int64_t cpu_delta,
                            uint8_t context)
{
    uint8_t *p = bt_encoder_reserve(e, 26);
    p[0] = BT_EV_GPU_CALIBRATION;
    bt_wire_put_u64(p + 1, (uint64_t)gpu_time);
    bt_wire_put_u64(p + 9, (uint64_t)time);
    bt_wire_put_u64(p + 17, (uint64_t)cpu_delta);
    p[25] = context;
}

void bt_enc_gpu_time_sync(struct bt_encoder *e, int64_t time, int64_t gpu_time, uint8_t context)
{
    uint8_t *p = bt_encoder_reserve(e, 18);
    p[0] = BT_EV_GPU_TIME_SYNC;
    bt_wire_put_u64(p + 1, (uint64_t)gpu_time);
    bt_wire_put_u64(p + 9, (uint64_t)time);
    p[17] = context;
}

void bt_enc_fiber_enter(struct bt_encoder *e, int64_t time, uint64_t fiber, uint32_t thread,
                        int32_t group_hint)
{
    int64_t d = thread_delta(e, time);
    uint8_t *p = bt_encoder_reserve(e, 25);
    p[0] = BT_EV_FIBER_ENTER;
    bt_wire_put_u64(p + 1, (uint64_t)d);
    bt_wire_put_u64(p + 9, fiber);
    bt_wire_put_u32(p + 17, thread);
    bt_wire_put_u32(p + 21, (uint32_t)group_hint);
}

void bt_enc_fiber_leave(struct bt_encoder *e, int64_t time, uint32_t thread)
{
    int64_t d = thread_delta(e, time);
    uint8_t *p = bt_encoder_reserve(e, 13);
    p[0] = BT_EV_FIBER_LEAVE;
    bt_wire_put_u64(p + 1, (uint64_t)d);
    bt_wire_put_u32(p + 9, thread);
}

void bt_enc_frame_image(struct bt_encoder *e, uint64_t key, const void *dxt1, size_t len,
                        uint32_t frame, uint16_t w, uint16_t h, int flip)
{
    bt_enc_keyed(e, BT_EV_FRAME_IMAGE_DATA, key, dxt1, len);
    uint8_t *p = bt_encoder_reserve(e, 10);
    p[0] = BT_EV_FRAME_IMAGE;
    bt_wire_put_u32(p + 1, frame);
    bt_wire_put_u16(p + 5, w);
    bt_wire_put_u16(p + 7, h);
    p[9] = (uint8_t)(flip != 0);
}

void bt_enc_lock_mark(struct bt_encoder *e, uint32_t thread, uint32_t id, uint64_t srcloc)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = BT_EV_LOCK_MARK;
    bt_wire_put_u32(p + 1, thread);
    bt_wire_put_u32(p + 5, id);
    bt_wire_put_u64(p + 9, srcloc);
}

void bt_enc_lock_name(struct bt_encoder *e, uint32_t id, const char *name, size_t len)
{
    bt_enc_staged_string(e, 0, name, len);
    uint8_t *p = bt_encoder_reserve(e, 5);
    p[0] = BT_EV_LOCK_NAME;
    bt_wire_put_u32(p + 1, id);
}

void bt_enc_keyed(struct bt_encoder *e, uint8_t type, uint64_t key, const void *data, size_t len)
{
    int wide = bt_wire_event_has_long_length(type);
    size_t max = wide ? BT_WIRE_FRAME_SIZE - 13 : 65535;
    if (len > max)
        len = max;
    size_t head = wide ? 13 : 11;
    uint8_t *p = bt_encoder_reserve(e, head + len);
    p[0] = type;
    bt_wire_put_u64(p + 1, key);
    if (wide)
        bt_wire_put_u32(p + 9, (uint32_t)len);
    else
        bt_wire_put_u16(p + 9, (uint16_t)len);
    if (len)
        memcpy(p + head, data, len);
}

void bt_enc_source_location(struct bt_encoder *e, uint64_t name, uint64_t function, uint64_t file,
                            uint32_t line, uint32_t rgb)
{
    uint8_t *p = bt_encoder_reserve(e, 32);
    p[0] = BT_EV_SOURCE_LOCATION;
    bt_wire_put_u64(p + 1, name);
    bt_wire_put_u64(p + 9, function);
    bt_wire_put_u64(p + 17, file);
    bt_wire_put_u32(p + 25, line);
    put_bgr(p + 29, rgb);
}

void bt_enc_callstack_frame_size(struct bt_encoder *e, uint64_t ptr, uint8_t count,
                                 const char *image, size_t image_len)
{
    bt_enc_staged_string(e, 0, image, image_len);
    uint8_t *p = bt_encoder_reserve(e, 10);
    p[0] = BT_EV_CALLSTACK_FRAME_SIZE;
    bt_wire_put_u64(p + 1, ptr);
    p[9] = count;
}

void bt_enc_callstack_frame(struct bt_encoder *e, const char *function, size_t function_len,
                            const char *file, size_t file_len, uint32_t line, uint64_t sym_addr,
                            uint32_t sym_len)
{
    bt_enc_staged_string(e, 0, function, function_len);
    bt_enc_staged_string(e, 1, file, file_len);
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = BT_EV_CALLSTACK_FRAME;
    bt_wire_put_u32(p + 1, line);
    bt_wire_put_u64(p + 5, sym_addr);
    bt_wire_put_u32(p + 13, sym_len);
}

void bt_enc_symbol_information(struct bt_encoder *e, const char *file, size_t file_len,
                               uint32_t line, uint64_t sym_addr)
{
    bt_enc_staged_string(e, 0, file, file_len);
    uint8_t *p = bt_encoder_reserve(e, 13);
    p[0] = BT_EV_SYMBOL_INFORMATION;
    bt_wire_put_u32(p + 1, line);
    bt_wire_put_u64(p + 5, sym_addr);
}

void bt_enc_simple(struct bt_encoder *e, uint8_t type)
{
    *bt_encoder_reserve(e, 1) = type;
}

void bt_enc_crash_report(struct bt_encoder *e, int64_t time, uint64_t text)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = BT_EV_CRASH_REPORT;
    bt_wire_put_u64(p + 1, (uint64_t)time);
    bt_wire_put_u64(p + 9, text);
}

void bt_enc_ack_source_code_not_available(struct bt_encoder *e, uint32_t id)
{
    uint8_t *p = bt_encoder_reserve(e, 5);
    p[0] = BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE;
    bt_wire_put_u32(p + 1, id);
}

void bt_enc_section_enter(struct bt_encoder *e, int64_t time, uint32_t id, uint16_t category,
                          const char *text, size_t len)
{
    bt_enc_staged_string(e, 0, text, len);
    int64_t d = thread_delta(e, time);
    uint8_t *p = bt_encoder_reserve(e, 15);
    p[0] = BT_EV_SECTION_ENTER;
    bt_wire_put_u64(p + 1, (uint64_t)d);
    bt_wire_put_u32(p + 9, id);
    bt_wire_put_u16(p + 13, category);
}

void bt_enc_section_leave(struct bt_encoder *e, int64_t time, uint32_t id)
{
    int64_t d = thread_delta(e, time);
    uint8_t *p = bt_encoder_reserve(e, 13);
    p[0] = BT_EV_SECTION_LEAVE;
    bt_wire_put_u64(p + 1, (uint64_t)d);
    bt_wire_put_u32(p + 9, id);
}

void bt_enc_section_setup(struct bt_encoder *e, uint16_t category, const char *text, size_t len)
{
    bt_enc_staged_string(e, 0, text, len);
    uint8_t *p = bt_encoder_reserve(e, 3);
    p[0] = BT_EV_SECTION_SETUP;
    bt_wire_put_u16(p + 1, category);
}

void bt_enc_param_setup(struct bt_encoder *e, uint32_t idx, uint64_t name, uint8_t type,
                        int32_t value)
{
    uint8_t *p = bt_encoder_reserve(e, 18);
    p[0] = BT_EV_PARAM_SETUP;
    bt_wire_put_u32(p + 1, idx);
    bt_wire_put_u64(p + 5, name);
    p[13] = type;
    bt_wire_put_u32(p + 14, (uint32_t)value);
}
