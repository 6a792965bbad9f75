/* The wire tables agree with the protocol notes: event sizes, names and the
 * keyed/long-length classification the capture's parser relies on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "boardtrace/wire.h"

static void event_sizes_match_the_protocol_notes(void **state)
{
    (void)state;
    assert_int_equal(bt_wire_event_size[BT_EV_ZONE_BEGIN], 17);
    assert_int_equal(bt_wire_event_size[BT_EV_ZONE_BEGIN32], 13);
    assert_int_equal(bt_wire_event_size[BT_EV_ZONE_BEGIN16], 11);
    assert_int_equal(bt_wire_event_size[BT_EV_ZONE_END16], 3);
    assert_int_equal(bt_wire_event_size[BT_EV_MEM_ALLOC], 27);
    assert_int_equal(bt_wire_event_size[BT_EV_SOURCE_LOCATION], 32);
    assert_int_equal(bt_wire_event_size[BT_EV_MESSAGE_LITERAL_COLOR], 20);
    assert_int_equal(bt_wire_event_size[BT_EV_GPU_NEW_CONTEXT], 28);
    assert_int_equal(bt_wire_event_size[BT_EV_CONTEXT_SWITCH], 23);
    assert_int_equal(bt_wire_event_size[BT_EV_CALLSTACK_FRAME], 17);
    assert_int_equal(bt_wire_event_size[BT_EV_STRING_DATA], 9);
}

static void every_event_type_has_a_size_and_a_name(void **state)
{
    (void)state;
    for (unsigned t = 0; t < BT_EV_COUNT; t++) {
        assert_true(bt_wire_event_size[t] >= 1);
        assert_non_null(bt_wire_event_name(t));
    }
    assert_null(bt_wire_event_name(BT_EV_COUNT));
    assert_string_equal(bt_wire_event_name(BT_EV_TERMINATE), "Terminate");
    assert_string_equal(bt_wire_event_name(BT_EV_FIBER_NAME), "FiberName");
}

static void keyed_strings_are_119_to_131_with_three_long_lengths(void **state)
{
    (void)state;
    unsigned keyed = 0, long_len = 0;
    for (unsigned t = 0; t < BT_EV_COUNT; t++) {
        keyed += (unsigned)bt_wire_event_is_keyed(t);
        long_len += (unsigned)bt_wire_event_has_long_length(t);
    }
    assert_int_equal(keyed, 13);
    assert_int_equal(long_len, 3);
    assert_true(bt_wire_event_is_keyed(BT_EV_STRING_DATA));
    assert_false(bt_wire_event_is_keyed(BT_EV_SECOND_STRING_DATA8));
}

static void little_endian_helpers_round_trip_at_any_alignment(void **state)
{
    (void)state;
    uint8_t buf[17] = {0};
    bt_wire_put_u64(buf + 1, 0x0123456789abcdefull);
    assert_int_equal(buf[1], 0xef);
    assert_int_equal(buf[8], 0x01);
    assert_true(bt_wire_get_u64(buf + 1) == 0x0123456789abcdefull);
    bt_wire_put_u32(buf + 9, 0xdeadbeefu);
    assert_int_equal(bt_wire_get_u32(buf + 9), 0xdeadbeefu);
    bt_wire_put_u16(buf + 13, 0xbeefu);
    assert_int_equal(bt_wire_get_u16(buf + 13), 0xbeefu);
}

static void frame_bounds_match_upstream_receive_buffer(void **state)
{
    (void)state;
    assert_int_equal(BT_WIRE_FRAME_SIZE, 262144);
    assert_int_equal(BT_WIRE_LZ4_BOUND, 263188);
    assert_int_equal(BT_WELCOME_OFF_HOST_INFO + BT_WELCOME_HOST_INFO_SIZE, BT_WELCOME_SIZE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(event_sizes_match_the_protocol_notes),
        cmocka_unit_test(every_event_type_has_a_size_and_a_name),
        cmocka_unit_test(keyed_strings_are_119_to_131_with_three_long_lengths),
        cmocka_unit_test(little_endian_helpers_round_trip_at_any_alignment),
        cmocka_unit_test(frame_bounds_match_upstream_receive_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
