/* The runtime's encoder reproduces upstream's event layouts byte for byte:
 * every event of the recorded upstream sessions (tests/data: the first one,
 * instrumentation only, and the full one: GPU, fibers, locks, frame image,
 * code transfer, system tracing) is decoded, fed to our encoder as the
 * logical event it is (same times, keys, strings), and our decoded output
 * must equal the recording, event by event, including the delta-coded times
 * of the reference chains and the compact forms. Only the kinds the runtime
 * never emits (system tracing, kept for issue 11) are carried verbatim.
 * Usage: test_runtime_recording SESSION_DIR FULL_SESSION_DIR */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "bt_test_server.h"
#include "encode/encoder.h"

static const char *session_dir, *full_session_dir;

struct event {
    uint8_t *raw;
    size_t size;
    int64_t time;
};

struct event_list {
    struct event *v;
    size_t count, cap;
};

static void collect(void *ctx, const uint8_t *ev, size_t size, int64_t time)
{
    struct event_list *l = ctx;
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
    }
    l->v[l->count].raw = malloc(size);
    memcpy(l->v[l->count].raw, ev, size);
    l->v[l->count].size = size;
    l->v[l->count].time = time;
    l->count++;
}

static void list_free(struct event_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->v[i].raw);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* Decodes a client-to-server byte stream of u32-sized LZ4 frames. */
static void decode_frames(const uint8_t *p, size_t n, struct event_list *out)
{
    struct bt_ts_decoder d;
    assert_int_equal(bt_ts_decoder_init(&d, collect, out), 0);
    size_t off = 0;
    while (off + 4 <= n) {
        uint32_t len = bt_wire_get_u32(p + off);
        off += 4;
        assert_true(off + len <= n);
        if (bt_ts_decoder_frame(&d, p + off, len) != 0)
            fail_msg("%s", d.error);
        off += len;
    }
    assert_int_equal(off, n);
    bt_ts_decoder_free(&d);
}

/* Pending pieces of multi-event constructs, as upstream stages them. */
struct staged {
    char single[65536];
    size_t single_len;
    char second[65536];
    size_t second_len;
    uint64_t mem_name;
    uint64_t frames[8192];
    size_t frame_count;
    uint64_t callstack_key;
    const uint8_t *payload;
    size_t payload_len;
    uint64_t payload_key;
    const uint8_t *callstack_raw; /* the payload event, for samples carried verbatim */
    size_t callstack_raw_size;
    const uint8_t *image;
    size_t image_len;
    uint64_t image_key;
    uint64_t verbatim[256]; /* events carried as they are, by type */
};

static uint32_t rgb_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* Re-encodes one recorded event through the runtime's encoder. */
static void reencode(struct bt_encoder *e, struct staged *st, const struct event *ev)
{
    const uint8_t *p = ev->raw;
    uint8_t t = p[0];
    switch (t) {
    case BT_EV_THREAD_CONTEXT:
        bt_enc_thread_context(e, bt_wire_get_u32(p + 1));
        break;
    case BT_EV_ZONE_VALIDATION:
        bt_enc_zone_validation(e, bt_wire_get_u32(p + 1));
        break;
    case BT_EV_ZONE_BEGIN:
    case BT_EV_ZONE_BEGIN32:
    case BT_EV_ZONE_BEGIN16:
        bt_enc_zone_begin(e, ev->time, bt_wire_get_u64(p + ev->size - 8), 0);
        break;
    case BT_EV_ZONE_BEGIN_CALLSTACK:
    case BT_EV_ZONE_BEGIN_CALLSTACK32:
    case BT_EV_ZONE_BEGIN_CALLSTACK16:
        bt_enc_zone_begin(e, ev->time, bt_wire_get_u64(p + ev->size - 8), 1);
        break;
    case BT_EV_ZONE_END:
    case BT_EV_ZONE_END32:
    case BT_EV_ZONE_END16:
        bt_enc_zone_end(e, ev->time);
        break;
    case BT_EV_ZONE_VALUE:
        bt_enc_zone_value(e, bt_wire_get_u64(p + 1));
        break;
    case BT_EV_ZONE_COLOR:
        bt_enc_zone_color(e, rgb_at(p + 1));
        break;
    case BT_EV_SINGLE_STRING_DATA8:
    case BT_EV_SINGLE_STRING_DATA: {
        size_t head = t == BT_EV_SINGLE_STRING_DATA8 ? 2 : 3;
        st->single_len = ev->size - head;
        memcpy(st->single, p + head, st->single_len);
        break;
    }
    case BT_EV_SECOND_STRING_DATA8:
    case BT_EV_SECOND_STRING_DATA: {
        size_t head = t == BT_EV_SECOND_STRING_DATA8 ? 2 : 3;
        st->second_len = ev->size - head;
        memcpy(st->second, p + head, st->second_len);
        break;
    }
    case BT_EV_ZONE_TEXT:
    case BT_EV_ZONE_NAME:
        bt_enc_zone_text(e, t == BT_EV_ZONE_NAME, st->single, st->single_len);
        break;
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_CALLSTACK:
        bt_enc_message(e, ev->time, st->single, st->single_len, p[9], 0, 0,
                       t == BT_EV_MESSAGE_CALLSTACK);
        break;
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_COLOR_CALLSTACK:
        bt_enc_message(e, ev->time, st->single, st->single_len, p[12], 1, rgb_at(p + 9),
                       t == BT_EV_MESSAGE_COLOR_CALLSTACK);
        break;
    case BT_EV_MESSAGE_APP_INFO:
        bt_enc_app_info(e, ev->time, st->single, st->single_len);
        break;
    case BT_EV_MESSAGE_LITERAL:
    case BT_EV_MESSAGE_LITERAL_CALLSTACK: {
        uint64_t tagged = bt_wire_get_u64(p + 9);
        bt_enc_message_literal(e, ev->time, tagged >> 8, (uint8_t)tagged, 0, 0,
                               t == BT_EV_MESSAGE_LITERAL_CALLSTACK);
        break;
    }
    case BT_EV_MESSAGE_LITERAL_COLOR:
    case BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK: {
        uint64_t tagged = bt_wire_get_u64(p + 12);
        bt_enc_message_literal(e, ev->time, tagged >> 8, (uint8_t)tagged, 1, rgb_at(p + 9),
                               t == BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK);
        break;
    }
    case BT_EV_SOURCE_LOCATION_PAYLOAD:
        st->payload_key = bt_wire_get_u64(p + 1);
        st->payload = p + 11;
        st->payload_len = bt_wire_get_u16(p + 9);
        break;
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
        bt_enc_zone_begin_alloc(e, ev->time, st->payload_key, st->payload, st->payload_len,
                                t == BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK);
        break;
    case BT_EV_CALLSTACK_PAYLOAD:
        st->callstack_raw = p;
        st->callstack_raw_size = ev->size;
        st->callstack_key = bt_wire_get_u64(p + 1);
        st->frame_count = bt_wire_get_u16(p + 9) / 8;
        for (size_t i = 0; i < st->frame_count; i++)
            st->frames[i] = bt_wire_get_u64(p + 11 + 8 * i);
        break;
    case BT_EV_CALLSTACK:
    case BT_EV_CALLSTACK_SERIAL:
        bt_enc_callstack(e, t, st->callstack_key, st->frames, st->frame_count);
        break;
    case BT_EV_MEM_NAME_PAYLOAD:
        st->mem_name = bt_wire_get_u64(p + 1);
        break;
    case BT_EV_MEM_ALLOC:
    case BT_EV_MEM_ALLOC_NAMED:
    case BT_EV_MEM_ALLOC_CALLSTACK:
    case BT_EV_MEM_ALLOC_CALLSTACK_NAMED: {
        int named = t == BT_EV_MEM_ALLOC_NAMED || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED;
        uint64_t size = bt_wire_get_u32(p + 21) | (uint64_t)bt_wire_get_u16(p + 25) << 32;
        bt_enc_mem_alloc(e, ev->time, bt_wire_get_u32(p + 9), bt_wire_get_u64(p + 13), size,
                         named ? st->mem_name : 0, t >= BT_EV_MEM_ALLOC_CALLSTACK);
        break;
    }
    case BT_EV_MEM_FREE:
    case BT_EV_MEM_FREE_NAMED:
    case BT_EV_MEM_FREE_CALLSTACK:
    case BT_EV_MEM_FREE_CALLSTACK_NAMED: {
        int named = t == BT_EV_MEM_FREE_NAMED || t == BT_EV_MEM_FREE_CALLSTACK_NAMED;
        bt_enc_mem_free(e, ev->time, bt_wire_get_u32(p + 9), bt_wire_get_u64(p + 13),
                        named ? st->mem_name : 0, t >= BT_EV_MEM_FREE_CALLSTACK);
        break;
    }
    case BT_EV_PLOT_DATA_INT:
    case BT_EV_PLOT_DATA_DOUBLE:
        bt_enc_plot(e, t, bt_wire_get_u64(p + 1), ev->time, bt_wire_get_u64(p + 17));
        break;
    case BT_EV_PLOT_DATA_FLOAT:
        bt_enc_plot(e, t, bt_wire_get_u64(p + 1), ev->time, bt_wire_get_u32(p + 17));
        break;
    case BT_EV_FRAME_MARK_MSG:
    case BT_EV_FRAME_MARK_MSG_START:
    case BT_EV_FRAME_MARK_MSG_END:
        bt_enc_frame_mark(e, t, ev->time, bt_wire_get_u64(p + 9));
        break;
    case BT_EV_SOURCE_LOCATION:
        bt_enc_source_location(e, bt_wire_get_u64(p + 1), bt_wire_get_u64(p + 9),
                               bt_wire_get_u64(p + 17), bt_wire_get_u32(p + 25), rgb_at(p + 29));
        break;
    case BT_EV_STRING_DATA:
    case BT_EV_THREAD_NAME:
    case BT_EV_PLOT_NAME:
    case BT_EV_FRAME_NAME:
        bt_enc_keyed(e, t, bt_wire_get_u64(p + 1), p + 11, bt_wire_get_u16(p + 9));
        break;
    case BT_EV_CALLSTACK_FRAME_SIZE:
        bt_enc_callstack_frame_size(e, bt_wire_get_u64(p + 1), p[9], st->single, st->single_len);
        break;
    case BT_EV_CALLSTACK_FRAME:
        bt_enc_callstack_frame(e, st->single, st->single_len, st->second, st->second_len,
                               bt_wire_get_u32(p + 1), bt_wire_get_u64(p + 5),
                               bt_wire_get_u32(p + 13));
        break;
    case BT_EV_SYMBOL_INFORMATION:
        bt_enc_symbol_information(e, st->single, st->single_len, bt_wire_get_u32(p + 1),
                                  bt_wire_get_u64(p + 5));
        break;
    case BT_EV_TERMINATE:
        bt_encoder_send_alone(e, BT_EV_TERMINATE);
        break;
    case BT_EV_PLOT_CONFIG:
        bt_enc_plot_config(e, bt_wire_get_u64(p + 1), p[9], p[10], p[11], bt_wire_get_u32(p + 12));
        break;
    case BT_EV_MEM_DISCARD:
    case BT_EV_MEM_DISCARD_CALLSTACK:
        bt_enc_mem_discard(e, ev->time, bt_wire_get_u32(p + 9), bt_wire_get_u64(p + 13),
                           t == BT_EV_MEM_DISCARD_CALLSTACK);
        break;
    case BT_EV_LOCK_ANNOUNCE:
        bt_enc_lock_announce(e, bt_wire_get_u32(p + 1), (int64_t)bt_wire_get_u64(p + 5),
                             bt_wire_get_u64(p + 13), p[21]);
        break;
    case BT_EV_LOCK_TERMINATE:
        bt_enc_lock_terminate(e, bt_wire_get_u32(p + 1), (int64_t)bt_wire_get_u64(p + 5));
        break;
    case BT_EV_LOCK_WAIT:
    case BT_EV_LOCK_OBTAIN:
    case BT_EV_LOCK_SHARED_WAIT:
    case BT_EV_LOCK_SHARED_OBTAIN:
        bt_enc_lock_wait(e, t, bt_wire_get_u32(p + 1), bt_wire_get_u32(p + 5), ev->time);
        break;
    case BT_EV_LOCK_RELEASE:
        bt_enc_lock_release(e, bt_wire_get_u32(p + 1), ev->time);
        break;
    case BT_EV_LOCK_SHARED_RELEASE:
        bt_enc_lock_shared_release(e, bt_wire_get_u32(p + 1), ev->time, bt_wire_get_u32(p + 13));
        break;
    case BT_EV_LOCK_MARK:
        bt_enc_lock_mark(e, bt_wire_get_u32(p + 1), bt_wire_get_u32(p + 5), bt_wire_get_u64(p + 9));
        break;
    case BT_EV_LOCK_NAME:
        bt_enc_lock_name(e, bt_wire_get_u32(p + 1), st->single, st->single_len);
        break;
    case BT_EV_GPU_NEW_CONTEXT: {
        float period;
        uint32_t bits = bt_wire_get_u32(p + 21);
        memcpy(&period, &bits, 4);
        bt_enc_gpu_new_context(e, (int64_t)bt_wire_get_u64(p + 1), (int64_t)bt_wire_get_u64(p + 9),
                               bt_wire_get_u32(p + 17), period, p[25], p[26], p[27]);
        break;
    }
    case BT_EV_GPU_CONTEXT_NAME:
        bt_enc_gpu_context_name(e, p[1], st->single, st->single_len);
        break;
    case BT_EV_GPU_CALIBRATION:
        bt_enc_gpu_calibration(e, (int64_t)bt_wire_get_u64(p + 9), (int64_t)bt_wire_get_u64(p + 1),
                               (int64_t)bt_wire_get_u64(p + 17), p[25]);
        break;
    case BT_EV_GPU_TIME_SYNC:
        bt_enc_gpu_time_sync(e, (int64_t)bt_wire_get_u64(p + 9), (int64_t)bt_wire_get_u64(p + 1),
                             p[17]);
        break;
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
        bt_enc_gpu_zone_begin(e, t, ev->time, bt_wire_get_u32(p + 9), bt_wire_get_u16(p + 13),
                              p[15], bt_wire_get_u64(p + 16));
        break;
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
        bt_enc_gpu_zone_begin_alloc(e, t, ev->time, bt_wire_get_u32(p + 9), bt_wire_get_u16(p + 13),
                                    p[15], st->payload_key, st->payload, st->payload_len);
        break;
    case BT_EV_GPU_ZONE_END:
    case BT_EV_GPU_ZONE_END_SERIAL:
        if (bt_wire_get_u32(p + 9) != 0)
            fail_msg("a GPU zone end with a thread: the encoder writes 0");
        bt_enc_gpu_zone_end(e, t, ev->time, bt_wire_get_u16(p + 13), p[15]);
        break;
    case BT_EV_GPU_TIME:
        bt_enc_gpu_time(e, ev->time, bt_wire_get_u16(p + 9), p[11]);
        break;
    case BT_EV_FIBER_ENTER:
        bt_enc_fiber_enter(e, ev->time, bt_wire_get_u64(p + 9), bt_wire_get_u32(p + 17),
                           (int32_t)bt_wire_get_u32(p + 21));
        break;
    case BT_EV_FIBER_LEAVE:
        bt_enc_fiber_leave(e, ev->time, bt_wire_get_u32(p + 9));
        break;
    case BT_EV_FRAME_IMAGE_DATA:
        st->image_key = bt_wire_get_u64(p + 1);
        st->image_len = bt_wire_get_u32(p + 9);
        st->image = p + 13;
        break;
    case BT_EV_FRAME_IMAGE:
        bt_enc_frame_image(e, st->image_key, st->image, st->image_len, bt_wire_get_u32(p + 1),
                           bt_wire_get_u16(p + 5), bt_wire_get_u16(p + 7), p[9]);
        break;
    case BT_EV_SYMBOL_CODE:
    case BT_EV_SOURCE_CODE:
        bt_enc_keyed(e, t, bt_wire_get_u64(p + 1), p + 13, bt_wire_get_u32(p + 9));
        break;
    case BT_EV_FIBER_NAME:
    case BT_EV_EXTERNAL_NAME:
    case BT_EV_EXTERNAL_THREAD_NAME:
        bt_enc_keyed(e, t, bt_wire_get_u64(p + 1), p + 11, bt_wire_get_u16(p + 9));
        break;
    case BT_EV_ACK_SERVER_QUERY_NOOP:
    case BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE:
        bt_enc_simple(e, t);
        break;
    case BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE:
        bt_enc_ack_source_code_not_available(e, bt_wire_get_u32(p + 1));
        break;
    default:
        /* not something the runtime emits (CPU topology, samples, context
         * switches...): carried verbatim, a sample with its callstack */
        if (t >= BT_EV_CALLSTACK_SAMPLE && t <= BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16)
            memcpy(bt_encoder_reserve(e, st->callstack_raw_size), st->callstack_raw,
                   st->callstack_raw_size);
        memcpy(bt_encoder_reserve(e, ev->size), p, ev->size);
        st->verbatim[t]++;
        break;
    }
}

/* The recording's file name of dir, which must be there. */
static uint8_t *read_file(const char *dir, const char *name, size_t *len)
{
    uint8_t *buf = bt_ts_read_file(dir, name, len);
    if (!buf)
        fail_msg("cannot read %s/%s", dir, name);
    return buf;
}

/* Re-encodes a whole recording; returns the staging state, whose verbatim
 * counts say what was not re-encoded. */
static struct staged *reencode_recording(const char *dir, size_t min_events)
{
    size_t len;
    uint8_t *rec = read_file(dir, "client-to-server.bin", &len);
    assert_int_equal(rec[0], BT_HANDSHAKE_WELCOME);
    size_t head = 1 + BT_WELCOME_SIZE;
    struct event_list upstream = {0}, ours = {0};
    decode_frames(rec + head, len - head, &upstream);
    assert_true(upstream.count > min_events);

    struct bt_ts_sink out = {0};
    struct bt_encoder e;
    assert_int_equal(bt_encoder_init(&e, bt_ts_sink_write, &out), 0);
    static struct staged st;
    memset(&st, 0, sizeof(st));
    for (size_t i = 0; i < upstream.count; i++)
        reencode(&e, &st, &upstream.v[i]);
    assert_int_equal(bt_encoder_flush(&e), 0);
    bt_encoder_free(&e);
    decode_frames(out.data, out.len, &ours);

    assert_int_equal(ours.count, upstream.count);
    for (size_t i = 0; i < upstream.count; i++) {
        const struct event *a = &upstream.v[i], *b = &ours.v[i];
        if (a->size != b->size || memcmp(a->raw, b->raw, a->size) != 0)
            fail_msg("event %zu: upstream %s (%zu bytes), ours %s (%zu bytes)", i,
                     bt_wire_event_name(a->raw[0]), a->size, bt_wire_event_name(b->raw[0]),
                     b->size);
    }
    list_free(&upstream);
    list_free(&ours);
    free(out.data);
    free(rec);
    return &st;
}

static void every_recorded_event_is_reencoded_byte_for_byte(void **state)
{
    (void)state;
    const struct staged *st = reencode_recording(session_dir, 60000);
    for (int t = 0; t < 256; t++)
        if (st->verbatim[t] && t != BT_EV_CPU_TOPOLOGY)
            fail_msg("%llu %s events were not re-encoded", (unsigned long long)st->verbatim[t],
                     bt_wire_event_name((uint8_t)t));
}

/* The kinds of system tracing (upstream's client sends them when run as
 * root), which the runtime does not emit yet. */
static int system_tracing_kind(int t)
{
    return (t >= BT_EV_CALLSTACK_SAMPLE && t <= BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16) ||
           t == BT_EV_CONTEXT_SWITCH || t == BT_EV_THREAD_WAKEUP || t == BT_EV_TID_TO_PID ||
           t == BT_EV_SYS_TIME_REPORT || t == BT_EV_SYS_POWER_REPORT || t == BT_EV_CPU_TOPOLOGY ||
           (t >= BT_EV_HW_SAMPLE_CPU_CYCLE && t <= BT_EV_HW_SAMPLE_BRANCH_MISS);
}

static void every_event_of_the_full_recording_is_reencoded_byte_for_byte(void **state)
{
    (void)state;
    const struct staged *st = reencode_recording(full_session_dir, 500000);
    uint64_t carried = 0;
    for (int t = 0; t < 256; t++) {
        if (st->verbatim[t] && !system_tracing_kind(t))
            fail_msg("%llu %s events were not re-encoded", (unsigned long long)st->verbatim[t],
                     bt_wire_event_name((uint8_t)t));
        carried += st->verbatim[t];
    }
    /* README: 1,765 samples, 5,200 context-switch samples, 8,436 context
     * switches, 4,404 wakeups, 61 TidToPid, 21 SysTimeReport, 2 CpuTopology */
    assert_int_equal(carried, 1765 + 5200 + 8436 + 4404 + 61 + 21 + 2);
}

/* The welcome message of the recording has the layout wire.h declares. */
static void the_recorded_welcome_matches_the_declared_offsets(void **state)
{
    (void)state;
    size_t len;
    uint8_t *rec = read_file(session_dir, "client-to-server.bin", &len);
    const uint8_t *w = rec + 1;
    double mul;
    uint64_t bits = bt_wire_get_u64(w + BT_WELCOME_OFF_TIMER_MUL);
    memcpy(&mul, &bits, 8);
    assert_true(mul > 0.1 && mul < 10.0);
    assert_true(bt_wire_get_u64(w + BT_WELCOME_OFF_INIT_END) >=
                bt_wire_get_u64(w + BT_WELCOME_OFF_INIT_BEGIN));
    assert_int_equal(w[BT_WELCOME_OFF_CPU_ARCH], BT_CPU_ARCH_X64);
    assert_string_equal((const char *)w + BT_WELCOME_OFF_PROGRAM_NAME, "peer-client");
    free(rec);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s SESSION_DIR FULL_SESSION_DIR\n", argv[0]);
        return 2;
    }
    session_dir = argv[1];
    full_session_dir = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_recorded_event_is_reencoded_byte_for_byte),
        cmocka_unit_test(every_event_of_the_full_recording_is_reencoded_byte_for_byte),
        cmocka_unit_test(the_recorded_welcome_matches_the_declared_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
