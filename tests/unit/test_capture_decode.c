/* The capture's stream decoder: event sizes, the four time references and
 * their compact forms, staged and keyed strings, dictionary-chained LZ4
 * frames, and errors that name the stream offset and the event type. */
#include <lz4.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "btc_decode.h"

struct seen {
    int n;
    uint8_t type[64];
    int64_t time[64];
    char str[64][300];
    uint64_t key[64];
};

static int record(void *ctx, const struct btc_event *ev, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct seen *s = ctx;
    if (s->n == 64)
        return 0; /* keeps the first 64 */
    s->type[s->n] = ev->type;
    s->time[s->n] = ev->has_time ? ev->time : -999;
    if (ev->str1)
        memcpy(s->str[s->n], ev->str1, ev->str1_len < 299 ? ev->str1_len : 299);
    if (ev->data)
        memcpy(s->str[s->n], ev->data, ev->data_len < 299 ? ev->data_len : 299);
    s->key[s->n] = ev->key;
    s->n++;
    return 0;
}

static struct btc_decoder dec;
static struct seen seen;
static char err[512];

static int setup(void **state)
{
    (void)state;
    struct btc_welcome w = {.timer_mul = 2.0, .init_begin = 100};
    memset(&seen, 0, sizeof seen);
    err[0] = 0;
    return btc_decoder_init(&dec, &w);
}

static int teardown(void **state)
{
    (void)state;
    btc_decoder_free(&dec);
    return 0;
}

static size_t put_thread(uint8_t *p, uint32_t tid)
{
    p[0] = BT_EV_THREAD_CONTEXT;
    bt_wire_put_u32(p + 1, tid);
    return 5;
}

static int decode(const uint8_t *buf, size_t n)
{
    return btc_decoder_events(&dec, buf, n, record, &seen, err, sizeof err);
}

static void compact_zone_times_follow_the_thread_reference(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = put_thread(b, 7);
    b[n] = BT_EV_ZONE_BEGIN16; /* short: d = 1000 */
    bt_wire_put_u16(b + n + 1, 1000);
    bt_wire_put_u64(b + n + 3, 0x55);
    n += 11;
    b[n] = BT_EV_ZONE_BEGIN32; /* mid: d = 5 + 65536 */
    bt_wire_put_u32(b + n + 1, 5);
    bt_wire_put_u64(b + n + 5, 0x55);
    n += 13;
    b[n] = BT_EV_ZONE_END; /* wide, positive: d = 7 + OFF32 */
    bt_wire_put_u64(b + n + 1, 7);
    n += 9;
    b[n] = BT_EV_ZONE_END; /* wide, negative: d = -3 */
    bt_wire_put_u64(b + n + 1, (uint64_t)-3);
    n += 9;
    assert_int_equal(decode(b, n), 0);
    assert_int_equal(seen.n, 5);
    int64_t t1 = 1000, t2 = t1 + 5 + BT_WIRE_OFF16, t3 = t2 + 7 + BT_WIRE_OFF32, t4 = t3 - 3;
    assert_int_equal(seen.time[1], (t1 - 100) * 2);
    assert_int_equal(seen.time[2], (t2 - 100) * 2);
    assert_int_equal(seen.time[3], (t3 - 100) * 2);
    assert_int_equal(seen.time[4], (t4 - 100) * 2);
}

static void thread_context_resets_the_thread_reference_only(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = 0;
    b[n] = BT_EV_MEM_FREE; /* serial: time 500 */
    bt_wire_put_u64(b + n + 1, 500);
    bt_wire_put_u32(b + n + 9, 1);
    bt_wire_put_u64(b + n + 13, 0);
    n += 21;
    b[n] = BT_EV_ZONE_BEGIN16; /* thread: time 300 */
    bt_wire_put_u16(b + n + 1, 300);
    bt_wire_put_u64(b + n + 3, 1);
    n += 11;
    n += put_thread(b + n, 2);
    b[n] = BT_EV_ZONE_BEGIN16; /* after the reset: time 10, not 310 */
    bt_wire_put_u16(b + n + 1, 10);
    bt_wire_put_u64(b + n + 3, 1);
    n += 11;
    b[n] = BT_EV_MEM_FREE; /* serial chain continues: 500 + 20 */
    bt_wire_put_u64(b + n + 1, 20);
    bt_wire_put_u32(b + n + 9, 1);
    bt_wire_put_u64(b + n + 13, 0);
    n += 21;
    assert_int_equal(decode(b, n), 0);
    assert_int_equal(seen.time[0], (500 - 100) * 2);
    assert_int_equal(seen.time[1], (300 - 100) * 2);
    assert_int_equal(seen.time[3], (10 - 100) * 2);
    assert_int_equal(seen.time[4], (520 - 100) * 2);
}

static void staged_strings_go_to_the_event_that_consumes_them(void **state)
{
    (void)state;
    uint8_t b[512];
    size_t n = 0;
    b[n++] = BT_EV_SINGLE_STRING_DATA8;
    b[n++] = 5;
    memcpy(b + n, "hello", 5);
    n += 5;
    b[n] = BT_EV_MESSAGE;
    bt_wire_put_u64(b + n + 1, 1000);
    b[n + 9] = 0x20;
    n += 10;
    b[n++] = BT_EV_SINGLE_STRING_DATA; /* long form: u16 is len - 256 */
    bt_wire_put_u16(b + n, 300 - 256);
    n += 2;
    memset(b + n, 'x', 300);
    n += 300;
    b[n++] = BT_EV_ZONE_TEXT;
    assert_int_equal(decode(b, n), 0);
    assert_int_equal(seen.n, 2); /* staged strings are not events of their own */
    assert_int_equal(seen.type[0], BT_EV_MESSAGE);
    assert_string_equal(seen.str[0], "hello");
    assert_int_equal(seen.type[1], BT_EV_ZONE_TEXT);
    assert_int_equal(strlen(seen.str[1]), 299); /* recorder keeps 299 of 300 */
}

static void keyed_strings_carry_key_and_bytes(void **state)
{
    (void)state;
    uint8_t b[64];
    b[0] = BT_EV_THREAD_NAME;
    bt_wire_put_u64(b + 1, 1234);
    bt_wire_put_u16(b + 9, 4);
    memcpy(b + 11, "main", 4);
    assert_int_equal(decode(b, 15), 0);
    assert_int_equal(seen.key[0], 1234);
    assert_string_equal(seen.str[0], "main");
}

static void unknown_type_names_offset_and_type(void **state)
{
    (void)state;
    uint8_t b[16];
    size_t n = put_thread(b, 1);
    b[n++] = 200;
    assert_int_equal(decode(b, n), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "stream offset 5"));
    assert_non_null(strstr(err, "(200)"));
    assert_non_null(strstr(err, "unknown event type"));
}

static void event_cut_at_frame_end_is_an_error(void **state)
{
    (void)state;
    uint8_t b[16] = {BT_EV_ZONE_BEGIN, 1, 2, 3};
    assert_int_equal(decode(b, 4), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "ZoneBegin (19)"));
    assert_non_null(strstr(err, "needs 17 bytes, only 4 left"));
}

static void second_staged_string_before_use_is_an_error(void **state)
{
    (void)state;
    uint8_t b[16] = {BT_EV_SINGLE_STRING_DATA8, 1, 'a', BT_EV_SINGLE_STRING_DATA8, 1, 'b'};
    assert_int_equal(decode(b, 6), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "stream offset 3"));
    assert_non_null(strstr(err, "not consumed"));
}

static void consumer_without_staged_string_is_an_error(void **state)
{
    (void)state;
    uint8_t b[16] = {BT_EV_ZONE_NAME};
    assert_int_equal(decode(b, 1), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "ZoneName (1)"));
    assert_non_null(strstr(err, "expected a staged string"));
}

/* Two frames from one LZ4 stream: the second refers back into the first,
 * as upstream's client compresses, and decodes through the ring. */
static void dictionary_chained_frames_decode(void **state)
{
    (void)state;
    static uint8_t ring[2][4096];
    uint8_t out[2][8192];
    int clen[2];
    LZ4_stream_t *enc = LZ4_createStream();
    for (int f = 0; f < 2; f++) {
        uint8_t *p = ring[f];
        size_t n = 0;
        for (int i = 0; i < 100; i++) {
            p[n++] = BT_EV_STRING_DATA;
            bt_wire_put_u64(p + n, 42);
            bt_wire_put_u16(p + n + 8, 24);
            memcpy(p + n + 10, "the same text every time", 24);
            n += 34;
        }
        clen[f] = LZ4_compress_fast_continue(enc, (const char *)p, (char *)out[f], (int)n,
                                             (int)sizeof out[f], 1);
        assert_true(clen[f] > 0);
    }
    LZ4_freeStream(enc);
    assert_true(clen[1] < clen[0]); /* the second frame used the first as dictionary */
    for (int f = 0; f < 2; f++) {
        memset(&seen, 0, sizeof seen);
        assert_int_equal(
            btc_decoder_frame(&dec, out[f], (size_t)clen[f], record, &seen, err, sizeof err), 0);
        assert_int_equal(seen.type[63], BT_EV_STRING_DATA);
        assert_string_equal(seen.str[63], "the same text every time");
    }
    assert_int_equal(dec.frames, 2);
    assert_int_equal(dec.events, 200);
}

static void corrupt_frame_names_the_frame(void **state)
{
    (void)state;
    uint8_t junk[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    assert_int_equal(btc_decoder_frame(&dec, junk, sizeof junk, record, &seen, err, sizeof err),
                     BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "frame 0 at stream offset 0"));
    assert_non_null(strstr(err, "does not decompress"));
}

static void welcome_fields_are_read_at_their_offsets(void **state)
{
    (void)state;
    uint8_t w[BT_WELCOME_SIZE] = {0};
    double mul = 0.5;
    memcpy(w + BT_WELCOME_OFF_TIMER_MUL, &mul, 8);
    bt_wire_put_u64(w + BT_WELCOME_OFF_INIT_BEGIN, 77);
    bt_wire_put_u64(w + BT_WELCOME_OFF_PID, 4321);
    w[BT_WELCOME_OFF_FLAGS] = BT_WELCOME_FLAG_ON_DEMAND;
    memcpy(w + BT_WELCOME_OFF_PROGRAM_NAME, "prog", 4);
    struct btc_welcome out;
    assert_int_equal(btc_welcome_parse(w, sizeof w, &out), 0);
    assert_true(out.timer_mul == 0.5);
    assert_int_equal(out.init_begin, 77);
    assert_int_equal(out.pid, 4321);
    assert_int_equal(out.flags, BT_WELCOME_FLAG_ON_DEMAND);
    assert_string_equal(out.program, "prog");
    memset(w, 0, 8); /* timer multiplier 0 */
    assert_int_equal(btc_welcome_parse(w, sizeof w, &out), BTC_ERR_PROTOCOL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(compact_zone_times_follow_the_thread_reference, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(thread_context_resets_the_thread_reference_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(staged_strings_go_to_the_event_that_consumes_them, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(keyed_strings_carry_key_and_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_type_names_offset_and_type, setup, teardown),
        cmocka_unit_test_setup_teardown(event_cut_at_frame_end_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(second_staged_string_before_use_is_an_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(consumer_without_staged_string_is_an_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(dictionary_chained_frames_decode, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupt_frame_names_the_frame, setup, teardown),
        cmocka_unit_test(welcome_fields_are_read_at_their_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
