/* The runtime's encoder and callstack helpers on their own: compact time
 * forms at their boundaries, staged string forms, frames that stay under
 * 256 KiB with no event straddling them across a long chained LZ4 stream,
 * address canonicalization, and the frame-record walk of the target's ABI. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <boardtrace/config.h>

#include "boardtrace/wire.h"
#include "bt_test_server.h"
#include "symbols/callstack.h"
#include "encode/encoder.h"

struct seen {
    uint8_t type[64];
    int64_t time[64];
    size_t size[64];
    size_t count;
    uint64_t total;
};

static void on_event(void *ctx, const uint8_t *ev, size_t size, int64_t time)
{
    struct seen *s = ctx;
    if (s->count < 64) {
        s->type[s->count] = ev[0];
        s->time[s->count] = time;
        s->size[s->count] = size;
        s->count++;
    }
    s->total++;
}

static void decode(const struct bt_ts_sink *out, struct seen *seen)
{
    struct bt_ts_decoder d;
    assert_int_equal(bt_ts_decoder_init(&d, on_event, seen), 0);
    size_t off = 0;
    while (off < out->len) {
        uint32_t n = bt_wire_get_u32(out->data + off);
        off += 4;
        if (bt_ts_decoder_frame(&d, out->data + off, n) != 0)
            fail_msg("%s", d.error);
        off += n;
    }
    bt_ts_decoder_free(&d);
}

static void zone_times_pick_the_compact_form_at_each_boundary(void **state)
{
    (void)state;
    struct bt_ts_sink out = {0};
    struct bt_encoder e;
    assert_int_equal(bt_encoder_init(&e, bt_ts_sink_write, &out), 0);
    bt_enc_thread_context(&e, 7);
    const int64_t times[] = {0,
                             65535,
                             65535 + 65536,
                             65535 + 65536 + (BT_WIRE_OFF32 - 1),
                             65535 + 65536 + (BT_WIRE_OFF32 - 1) + BT_WIRE_OFF32,
                             1000};
    for (size_t i = 0; i < 6; i++)
        bt_enc_zone_begin(&e, times[i], 0x1234, 0);
    bt_encoder_flush(&e);
    bt_encoder_free(&e);
    struct seen seen = {0};
    decode(&out, &seen);
    assert_int_equal(seen.count, 7);
    const uint8_t forms[] = {BT_EV_ZONE_BEGIN16, BT_EV_ZONE_BEGIN16, BT_EV_ZONE_BEGIN32,
                             BT_EV_ZONE_BEGIN32, BT_EV_ZONE_BEGIN,   BT_EV_ZONE_BEGIN};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(seen.type[i + 1], forms[i]);
        assert_int_equal(seen.time[i + 1], times[i]);
    }
    free(out.data);
}

static void a_thread_switch_resets_the_thread_reference(void **state)
{
    (void)state;
    struct bt_ts_sink out = {0};
    struct bt_encoder e;
    assert_int_equal(bt_encoder_init(&e, bt_ts_sink_write, &out), 0);
    bt_enc_thread_context(&e, 1);
    bt_enc_zone_begin(&e, 5000000000ll, 1, 0);
    bt_enc_thread_context(&e, 1); /* same thread: nothing sent */
    bt_enc_thread_context(&e, 2);
    bt_enc_zone_begin(&e, 5000000100ll, 1, 0); /* wide again: the reference is 0 */
    bt_enc_mem_alloc(&e, 70000, 2, 0x1000, 16, 0, 0);
    bt_enc_mem_free(&e, 70010, 2, 0x1000, 0, 0); /* serial chain is separate */
    bt_encoder_flush(&e);
    bt_encoder_free(&e);
    struct seen seen = {0};
    decode(&out, &seen);
    assert_int_equal(seen.count, 6);
    assert_int_equal(seen.type[2], BT_EV_THREAD_CONTEXT);
    assert_int_equal(seen.type[3], BT_EV_ZONE_BEGIN);
    assert_int_equal(seen.time[3], 5000000100ll);
    assert_int_equal(seen.time[4], 70000);
    assert_int_equal(seen.time[5], 70010);
    free(out.data);
}

static void staged_strings_use_the_short_and_long_forms(void **state)
{
    (void)state;
    static char text[300];
    memset(text, 'x', sizeof(text));
    struct bt_ts_sink out = {0};
    struct bt_encoder e;
    assert_int_equal(bt_encoder_init(&e, bt_ts_sink_write, &out), 0);
    bt_enc_staged_string(&e, 0, text, 255);
    bt_enc_staged_string(&e, 1, text, 256);
    bt_enc_staged_string(&e, 0, text, 300);
    /* the protocol notes' example: 300 bytes -> 70 2C 00 */
    const uint8_t *raw = e.ring + e.start;
    assert_int_equal(raw[0], BT_EV_SINGLE_STRING_DATA8);
    assert_int_equal(raw[1], 255);
    raw += 2 + 255;
    assert_int_equal(raw[0], BT_EV_SECOND_STRING_DATA);
    assert_int_equal(bt_wire_get_u16(raw + 1), 0);
    raw += 3 + 256;
    assert_int_equal(raw[0], 0x70);
    assert_int_equal(raw[1], 0x2C);
    assert_int_equal(raw[2], 0x00);
    bt_encoder_free(&e);
    free(out.data);
}

static void long_streams_stay_in_frames_without_straddling(void **state)
{
    (void)state;
    static char text[5000];
    memset(text, 'y', sizeof(text));
    struct bt_ts_sink out = {0};
    struct bt_encoder e;
    assert_int_equal(bt_encoder_init(&e, bt_ts_sink_write, &out), 0);
    bt_enc_thread_context(&e, 3);
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        bt_enc_zone_begin(&e, 10 * i, 0x1000, 0);
        bt_enc_zone_text(&e, 0, text, (size_t)(i % 5000));
        bt_enc_zone_end(&e, 10 * i + 5);
    }
    assert_int_equal(bt_encoder_flush(&e), 0);
    bt_encoder_free(&e);
    assert_true(out.writes > 100); /* ~50 MB raw: many frames, chained LZ4 */
    struct seen seen = {0};
    decode(&out, &seen); /* fails on a straddling event or a bad block */
    assert_int_equal(seen.total, 1 + 4ull * n);
    free(out.data);
}

static void addresses_are_made_safe_for_pointer_packing(void **state)
{
    (void)state;
    assert_int_equal(bt_address_canonical(0x00007fff12345678ull), 0x00007fff12345678ull);
    assert_int_equal(bt_address_canonical(0xffffffff81000000ull), 0xffffffff81000000ull);
#if BT_NO_POINTER_COMPRESSION
    assert_int_equal(bt_address_canonical(0x1000000000401000ull), 0x1000000000401000ull);
#else
    /* a top-byte tag is removed; what remains packs without an assert */
    assert_int_equal(bt_address_canonical(0x2a007fff12345678ull), 0x00007fff12345678ull);
    assert_int_equal(bt_address_canonical(0x1000000000401000ull), 0x0000000000401000ull);
    uint64_t a = bt_address_canonical(0x8000000000401000ull);
    assert_int_equal((a & 0x3000000000000000ull) << 2, a & 0xC000000000000000ull);
#endif
}

/* A fake stack with three frame records in the target's layout. */
static void the_frame_walk_follows_this_targets_frame_records(void **state)
{
    (void)state;
    uintptr_t stack[64];
    memset(stack, 0, sizeof(stack));
    uintptr_t lo = (uintptr_t)stack, hi = (uintptr_t)(stack + 64);
    const uintptr_t ra[3] = {0x401100, 0x401200, 0x401300};
    uintptr_t fp[3] = {(uintptr_t)&stack[10], (uintptr_t)&stack[20], (uintptr_t)&stack[30]};
    for (int i = 0; i < 3; i++) {
        uintptr_t *f = (uintptr_t *)fp[i];
        uintptr_t prev = i < 2 ? fp[i + 1] : 0;
#if defined(__riscv)
        f[-1] = ra[i]; /* return address at fp-8 */
        f[-2] = prev;  /* previous fp at fp-16 */
#else
        f[0] = prev; /* previous fp at fp */
        f[1] = ra[i];
#endif
    }
    uint64_t frames[8];
    int n = bt_callstack_walk_frames(fp[0], lo, hi, frames, 8);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(frames[i], ra[i]);
    assert_int_equal(bt_callstack_walk_frames(fp[0], lo, hi, frames, 2), 2);
    /* a frame pointer outside the stack ends the walk */
    assert_int_equal(bt_callstack_walk_frames(hi + 64, lo, hi, frames, 8), 0);
}

/* A real chain of frames (this file is built with frame pointers): the walk
 * from the innermost one must return into its callers, in order. */
static __attribute__((noipa)) int fp_leaf(uint64_t *frames)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0 ||
        pthread_attr_getstack(&attr, &addr, &size) != 0)
        return -1;
    pthread_attr_destroy(&attr);
    int n = bt_callstack_walk_frames((uintptr_t)__builtin_frame_address(0), (uintptr_t)addr,
                                     (uintptr_t)addr + size, frames, 4);
    __asm__ volatile("" ::: "memory");
    return n;
}

static __attribute__((noipa)) int fp_middle(uint64_t *frames)
{
    int n = fp_leaf(frames);
    __asm__ volatile("" ::: "memory");
    return n;
}

static __attribute__((noipa)) int fp_outer(uint64_t *frames)
{
    int n = fp_middle(frames);
    __asm__ volatile("" ::: "memory");
    return n;
}

static int inside(uint64_t address, void *function)
{
    uint64_t start = (uint64_t)(uintptr_t)function;
    return address > start && address < start + 256;
}

static void the_frame_walk_returns_into_each_caller_of_a_real_chain(void **state)
{
    (void)state;
    uint64_t frames[4];
    int n = fp_outer(frames);
    assert_true(n >= 2);
    assert_true(inside(frames[0], (void *)fp_middle));
    assert_true(inside(frames[1], (void *)fp_outer));
}

static const int capture_here_line = __LINE__ + 1;
static __attribute__((noipa)) int capture_here(uint64_t *frames)
{
    int n = bt_callstack_capture(frames, 4, 0);
    __asm__ volatile("" ::: "memory"); /* a call, not a tail jump: keep this frame */
    return n;
}

static void a_captured_callstack_starts_at_the_caller(void **state)
{
    (void)state;
    uint64_t frames[4];
    int n = capture_here(frames);
    assert_true(n >= 2);
    /* frame 0 is inside capture_here, frame 1 inside this test */
    assert_true(frames[0] > (uint64_t)(uintptr_t)capture_here);
    assert_true(frames[0] < (uint64_t)(uintptr_t)capture_here + 256);
}

struct frame_answer {
    char strings[3][512]; /* image, function, file */
    int next;
    uint32_t line;
    uint64_t sym_addr;
};

static void on_answer(void *ctx, const uint8_t *ev, size_t size, int64_t time)
{
    (void)time;
    struct frame_answer *a = ctx;
    size_t head = ev[0] == BT_EV_SINGLE_STRING_DATA8 || ev[0] == BT_EV_SECOND_STRING_DATA8 ? 2 : 3;
    if (ev[0] >= BT_EV_SINGLE_STRING_DATA && ev[0] <= BT_EV_SECOND_STRING_DATA8 && a->next < 3) {
        snprintf(a->strings[a->next++], sizeof(a->strings[0]), "%.*s", (int)(size - head),
                 (const char *)ev + head);
    } else if (ev[0] == BT_EV_CALLSTACK_FRAME) {
        a->line = bt_wire_get_u32(ev + 1);
        a->sym_addr = bt_wire_get_u64(ev + 5);
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* This test program is built with -g: its own frames resolve to function,
 * file and line through the ELF symbol table and the DWARF line table. */
static void a_frame_answer_names_function_file_and_line(void **state)
{
    (void)state;
    struct bt_ts_sink out = {0};
    struct bt_encoder e;
    assert_int_equal(bt_encoder_init(&e, bt_ts_sink_write, &out), 0);
    uint64_t frames[4];
    assert_true(capture_here(frames) >= 1);
    struct bt_code code;
    bt_code_init(&code, 0, 0, bt_callstack_debug_names_file);
    bt_callstack_answer_frame(&e, &code, frames[0]);
    bt_code_free(&code);
    bt_encoder_flush(&e);
    bt_encoder_free(&e);
    struct frame_answer a;
    memset(&a, 0, sizeof(a));
    struct bt_ts_decoder d;
    assert_int_equal(bt_ts_decoder_init(&d, on_answer, &a), 0);
    assert_int_equal(bt_ts_decoder_frame(&d, out.data + 4, bt_wire_get_u32(out.data)), 0);
    bt_ts_decoder_free(&d);
    assert_string_equal(a.strings[0], "test_runtime_encoder");
    assert_string_equal(a.strings[1], "capture_here");
    assert_true(ends_with(a.strings[2], "test_runtime_encoder.c"));
    /* the call inside capture_here is on the line after its opening brace */
    if (a.line != (uint32_t)capture_here_line + 2)
        fail_msg("line %u, expected %d", a.line, capture_here_line + 2);
    assert_int_equal(a.sym_addr, (uint64_t)(uintptr_t)capture_here);
    free(out.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zone_times_pick_the_compact_form_at_each_boundary),
        cmocka_unit_test(a_thread_switch_resets_the_thread_reference),
        cmocka_unit_test(staged_strings_use_the_short_and_long_forms),
        cmocka_unit_test(long_streams_stay_in_frames_without_straddling),
        cmocka_unit_test(addresses_are_made_safe_for_pointer_packing),
        cmocka_unit_test(the_frame_walk_follows_this_targets_frame_records),
        cmocka_unit_test(the_frame_walk_returns_into_each_caller_of_a_real_chain),
        cmocka_unit_test(a_captured_callstack_starts_at_the_caller),
        cmocka_unit_test(a_frame_answer_names_function_file_and_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
