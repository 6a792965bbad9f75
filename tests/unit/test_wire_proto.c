/* The protocol tables of Tracy 0.10 ... 0.14.0 (runtime/wire/wire_proto.c)
 * against the numbers read off each release's TracyQueue.hpp and
 * TracyProtocol.hpp (tools/tracy-versions.md §1-§2), and the conversion of
 * every changed layout, byte for byte, both ways. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "boardtrace/wire_proto.h"

/* Per protocol (newest first, as bt_proto_numbers): how many QueueType
 * values, and where a few landmarks are numbered. */
static const struct {
    uint32_t number;
    unsigned types, terminate, string_data, fiber_name, crash, gpu_zone_begin, cpu_topology;
    unsigned context_switch_size, welcome;
} expected[] = {
    {82, 132, 73, 119, 131, 78, 45, 111, 23, 1170}, {76, 117, 60, 104, 116, 65, 35, 98, 23, 1170},
    {74, 115, 59, 102, 114, 64, 35, 97, 23, 1178},  {72, 115, 59, 102, 114, 64, 35, 97, 20, 1178},
    {69, 113, 57, 100, 112, 62, 33, 95, 20, 1178},  {66, 112, 57, 99, 111, 62, 33, 95, 20, 1178},
    {64, 111, 57, 98, 110, 61, 33, 94, 20, 1178},
};

static void every_protocol_numbers_its_events_as_its_release_does(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const struct bt_proto *p = bt_proto_get(expected[i].number);
        assert_non_null(p);
        assert_int_equal(bt_proto_numbers[i], expected[i].number);
        assert_int_equal(p->type_count, expected[i].types);
        assert_int_equal(p->from_canon[BT_EV_TERMINATE], expected[i].terminate);
        assert_int_equal(p->from_canon[BT_EV_STRING_DATA], expected[i].string_data);
        assert_int_equal(p->from_canon[BT_EV_FIBER_NAME], expected[i].fiber_name);
        assert_int_equal(p->from_canon[BT_EV_CRASH], expected[i].crash);
        assert_int_equal(p->from_canon[BT_EV_GPU_ZONE_BEGIN], expected[i].gpu_zone_begin);
        assert_int_equal(p->from_canon[BT_EV_CPU_TOPOLOGY], expected[i].cpu_topology);
        assert_int_equal(p->size[p->from_canon[BT_EV_CONTEXT_SWITCH]],
                         expected[i].context_switch_size);
        assert_int_equal(p->welcome_size, expected[i].welcome);
        for (unsigned w = 0; w < p->type_count; w++) {
            assert_int_equal(p->from_canon[p->to_canon[w]], w);
            assert_true(p->size[w] >= 1);
        }
        assert_int_equal(p->size[p->type_count], 0);
        assert_int_equal(p->to_canon[p->type_count], BT_PROTO_NONE);
    }
    assert_null(bt_proto_get(65));
    assert_null(bt_proto_get(83));
    assert_null(bt_proto_get(63));
}

static void sizes_that_changed_between_releases(void **state)
{
    (void)state;
    const struct bt_proto *p64 = bt_proto_get(64), *p69 = bt_proto_get(69), *p76 = bt_proto_get(76),
                          *tt = bt_proto_by_name("66-tt");
    assert_int_equal(p64->size[p64->from_canon[BT_EV_MESSAGE]], 9);
    assert_int_equal(p76->size[p76->from_canon[BT_EV_MESSAGE_COLOR]], 12);
    assert_int_equal(p64->size[p64->from_canon[BT_EV_FIBER_ENTER]], 21);
    assert_int_equal(p69->size[p69->from_canon[BT_EV_FIBER_ENTER]], 25);
    assert_int_equal(p64->size[p64->from_canon[BT_EV_CPU_TOPOLOGY]], 13);
    assert_int_equal(p69->size[p69->from_canon[BT_EV_THREAD_WAKEUP]], 13);
    assert_int_equal(p64->from_canon[BT_EV_GPU_TIME_SYNC], BT_PROTO_NONE);
    assert_int_equal(p69->from_canon[BT_EV_MEM_DISCARD], BT_PROTO_NONE);
    assert_int_equal(p76->from_canon[BT_EV_ZONE_END16], BT_PROTO_NONE);
    assert_int_equal(p76->from_canon[BT_EV_GPU_ZONE_ANNOTATION], 103);
    /* The tenstorrent fork: upstream 66's numbering, GPU contexts one byte
     * wider. */
    assert_non_null(tt);
    assert_int_equal(tt->number, 66);
    assert_int_equal(tt->size[33], 25);
    assert_int_equal(tt->size[35], 17);
    assert_int_equal(tt->size[48], 13);
    assert_int_equal(tt->size[49], 3);
    assert_int_equal(tt->size[60], 27);
    assert_int_equal(tt->size[61], 19);
    assert_int_equal(tt->size[79], 29);
    assert_null(bt_proto_by_name("70"));
}

static void queries_of_0_10_are_numbered_its_way(void **state)
{
    (void)state;
    const struct bt_proto *p64 = bt_proto_get(64), *p66 = bt_proto_get(66);
    assert_int_equal(bt_proto_query_down(p64, BT_QUERY_EXTERNAL_NAME), 10);
    assert_int_equal(bt_proto_query_down(p64, BT_QUERY_DISCONNECT), 8);
    assert_int_equal(bt_proto_query_down(p64, BT_QUERY_CALLSTACK_FRAME), 9);
    assert_int_equal(bt_proto_query_down(p64, BT_QUERY_SYMBOL), 11);
    assert_int_equal(bt_proto_query_up(p64, 10), BT_QUERY_EXTERNAL_NAME);
    assert_int_equal(bt_proto_query_down(p66, BT_QUERY_EXTERNAL_NAME), 8);
    assert_int_equal(bt_proto_query_up(p66, 16), BT_PROTO_NONE);
}

/* One event both ways: old bytes up must give canon, canon down must give
 * old (where the conversion loses nothing). */
static void both_ways(const struct bt_proto *p, const uint8_t *old, size_t old_n,
                      const uint8_t *canon, size_t canon_n)
{
    uint8_t out[BT_PROTO_EVENT_MAX];
    assert_int_equal(p->size[old[0]], old_n);
    assert_int_equal(bt_proto_up(p, old, out), (int)canon_n);
    assert_memory_equal(out, canon, canon_n);
    assert_int_equal(bt_proto_down(p, canon, out), old_n);
    assert_memory_equal(out, old, old_n);
}

static void zone_times_become_compact_forms_and_back(void **state)
{
    (void)state;
    const struct bt_proto *p = bt_proto_get(72);
    /* ZoneBegin (15 in 72): delta 1000 fits 16 bits. */
    uint8_t old[17] = {15}, canon[17] = {BT_EV_ZONE_BEGIN16};
    bt_wire_put_u64(old + 1, 1000);
    bt_wire_put_u64(old + 9, 0x1122334455667788ull);
    bt_wire_put_u16(canon + 1, 1000);
    bt_wire_put_u64(canon + 3, 0x1122334455667788ull);
    both_ways(p, old, 17, canon, 11);
    /* 100,000 needs the 32-bit form (stored less 65536). */
    bt_wire_put_u64(old + 1, 100000);
    canon[0] = BT_EV_ZONE_BEGIN32;
    bt_wire_put_u32(canon + 1, 100000 - 65536);
    bt_wire_put_u64(canon + 5, 0x1122334455667788ull);
    both_ways(p, old, 17, canon, 13);
    /* A large delta: the wide form, biased; a negative one: as it is. */
    uint8_t end[9] = {17}, cend[9] = {BT_EV_ZONE_END};
    bt_wire_put_u64(end + 1, 5000000000ull);
    bt_wire_put_u64(cend + 1, (uint64_t)(5000000000ll - BT_WIRE_OFF32));
    both_ways(p, end, 9, cend, 9);
    bt_wire_put_u64(end + 1, (uint64_t)-7ll);
    bt_wire_put_u64(cend + 1, (uint64_t)-7ll);
    both_ways(p, end, 9, cend, 9);
}

static void samples_swap_thread_and_time(void **state)
{
    (void)state;
    const struct bt_proto *p = bt_proto_get(64);
    uint8_t old[13] = {13}, canon[7] = {BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16};
    bt_wire_put_u64(old + 1, 42);
    bt_wire_put_u32(old + 9, 0xabcdef);
    bt_wire_put_u32(canon + 1, 0xabcdef);
    bt_wire_put_u16(canon + 5, 42);
    both_ways(p, old, 13, canon, 7);
}

static void messages_gain_metadata_and_tagged_literals(void **state)
{
    (void)state;
    const struct bt_proto *p = bt_proto_get(76);
    uint8_t old[12] = {3}, canon[13] = {BT_EV_MESSAGE_COLOR};
    bt_wire_put_u64(old + 1, 99);
    old[9] = 1, old[10] = 2, old[11] = 3;
    memcpy(canon, old, 12);
    canon[0] = BT_EV_MESSAGE_COLOR;
    canon[12] = 0x20; /* User, Info */
    both_ways(p, old, 12, canon, 13);
    uint8_t lit[20] = {79}, clit[20] = {BT_EV_MESSAGE_LITERAL_COLOR};
    bt_wire_put_u64(lit + 1, 5);
    lit[9] = 9, lit[10] = 8, lit[11] = 7;
    bt_wire_put_u64(lit + 12, 0x7fff12345678ull);
    memcpy(clit + 1, lit + 1, 11);
    bt_wire_put_u64(clit + 12, (0x7fff12345678ull << 8) | 0x20);
    both_ways(p, lit, 20, clit, 20);
}

static void shorter_layouts_gain_zeroes_and_lose_them_again(void **state)
{
    (void)state;
    const struct bt_proto *p = bt_proto_get(66);
    uint8_t topo[13] = {95}, ctopo[17] = {BT_EV_CPU_TOPOLOGY};
    bt_wire_put_u32(topo + 1, 1);
    bt_wire_put_u32(topo + 5, 2);
    bt_wire_put_u32(topo + 9, 3);
    bt_wire_put_u32(ctopo + 1, 1);
    bt_wire_put_u32(ctopo + 9, 2);
    bt_wire_put_u32(ctopo + 13, 3);
    both_ways(p, topo, 13, ctopo, 17);
    uint8_t sw[20] = {46}, csw[23] = {BT_EV_CONTEXT_SWITCH};
    for (unsigned i = 1; i < 20; i++)
        sw[i] = csw[i] = (uint8_t)i;
    both_ways(p, sw, 20, csw, 23);
}

static void what_an_old_protocol_cannot_carry_is_refused_down(void **state)
{
    (void)state;
    uint8_t in[BT_PROTO_EVENT_MAX] = {0}, out[BT_PROTO_EVENT_MAX];
    in[0] = BT_EV_SECTION_ENTER;
    assert_int_equal(bt_proto_down(bt_proto_get(76), in, out), 0);
    in[0] = BT_EV_GPU_ZONE_ANNOTATION;
    assert_int_equal(bt_proto_down(bt_proto_get(74), in, out), 0);
    in[0] = BT_EV_MEM_DISCARD;
    assert_int_equal(bt_proto_down(bt_proto_get(69), in, out), 0);
    in[0] = BT_EV_THREAD_GROUP_HINT;
    assert_int_equal(bt_proto_down(bt_proto_get(66), in, out), 0);
    in[0] = BT_EV_GPU_TIME_SYNC;
    assert_int_equal(bt_proto_down(bt_proto_get(64), in, out), 0);
    /* A type number past an old protocol's last is not an event of it. */
    uint8_t bad[BT_PROTO_EVENT_MAX] = {111};
    assert_int_equal(bt_proto_up(bt_proto_get(64), bad, out), 0);
    /* A trigger parameter is a boolean to a GUI that has no triggers. */
    uint8_t param[18] = {BT_EV_PARAM_SETUP};
    param[13] = 2;
    assert_int_equal(bt_proto_down(bt_proto_get(76), param, out), 18);
    assert_int_equal(out[13], 1);
}

static void tt_gpu_contexts_are_sixteen_bits(void **state)
{
    (void)state;
    const struct bt_proto *tt = bt_proto_by_name("66-tt");
    uint8_t old[25] = {33}, canon[24] = {BT_EV_GPU_ZONE_BEGIN};
    bt_wire_put_u64(old + 1, 77);
    bt_wire_put_u32(old + 9, 5);
    bt_wire_put_u16(old + 13, 3);
    bt_wire_put_u16(old + 15, 200);
    bt_wire_put_u64(old + 17, 0xfeed);
    memcpy(canon + 1, old + 1, 14);
    canon[15] = 200;
    bt_wire_put_u64(canon + 16, 0xfeed);
    both_ways(tt, old, 25, canon, 24);
    /* Context 256 and up has no canonical form. */
    bt_wire_put_u16(old + 15, 300);
    uint8_t out[BT_PROTO_EVENT_MAX];
    assert_int_equal(bt_proto_up(tt, old, out), -1);
}

static void the_welcome_loses_and_regains_its_delay(void **state)
{
    (void)state;
    uint8_t old[1178], canon[1170], back[1178];
    for (unsigned i = 0; i < sizeof old; i++)
        old[i] = (uint8_t)(i * 7);
    uint64_t delay;
    bt_proto_welcome_up(bt_proto_get(74), old, canon, &delay);
    assert_int_equal(delay, bt_wire_get_u64(old + 24));
    assert_memory_equal(canon, old, 24);
    assert_memory_equal(canon + 24, old + 32, 1170 - 24);
    bt_proto_welcome_down(bt_proto_get(74), canon, delay, back);
    assert_memory_equal(back, old, sizeof old);
    bt_proto_welcome_up(bt_proto_get(76), old, canon, &delay);
    assert_int_equal(delay, 0);
    assert_memory_equal(canon, old, 1170);
}

/* A frame's worth both ways: strings change their length form, a section
 * an older protocol lacks goes with the string it would have consumed. */
static void runs_of_events_convert_and_drop_whole(void **state)
{
    (void)state;
    uint8_t canon[1024], old[4096], back[2048];
    size_t n = 0;
    canon[n++] = BT_EV_SINGLE_STRING_DATA8; /* "hi", then a message taking it */
    canon[n++] = 2;
    canon[n++] = 'h';
    canon[n++] = 'i';
    canon[n++] = BT_EV_MESSAGE;
    bt_wire_put_u64(canon + n, 10);
    n += 8;
    canon[n++] = 0x20;
    canon[n++] = BT_EV_SINGLE_STRING_DATA8; /* "sec", then a section taking it */
    canon[n++] = 3;
    memcpy(canon + n, "sec", 3);
    n += 3;
    size_t section_at = n - 5;
    canon[n++] = BT_EV_SECTION_ENTER;
    memset(canon + n, 0, 14);
    n += 14;
    size_t section_end = n;
    canon[n++] = BT_EV_SINGLE_STRING_DATA; /* 300 bytes: the biased u16 form */
    bt_wire_put_u16(canon + n, 300 - 256);
    n += 2;
    memset(canon + n, 'x', 300);
    n += 300;
    canon[n++] = BT_EV_ZONE_TEXT;
    canon[n++] = BT_EV_ZONE_END16;
    bt_wire_put_u16(canon + n, 7);
    n += 2;
    canon[n++] = BT_EV_STRING_DATA; /* keyed: renumbered, else as is */
    bt_wire_put_u64(canon + n, 0x1234);
    n += 8;
    bt_wire_put_u16(canon + n, 1);
    n += 2;
    canon[n++] = 'k';

    const struct bt_proto *p = bt_proto_get(76);
    uint32_t dropped[BT_EV_COUNT] = {0};
    size_t on = bt_proto_down_events(p, canon, n, old, sizeof old, dropped);
    assert_int_not_equal(on, (size_t)-1);
    assert_int_equal(dropped[BT_EV_SECTION_ENTER], 1);
    assert_int_equal(old[0], 99); /* SingleStringData in 76, plain length */
    assert_int_equal(bt_wire_get_u16(old + 1), 2);
    struct bt_proto_fault fault;
    size_t bn = bt_proto_up_events(p, old, on, back, sizeof back, &fault);
    assert_int_not_equal(bn, (size_t)-1);
    /* Back: the same events, minus the section and its string. */
    assert_int_equal(bn, n - (section_end - section_at));
    assert_memory_equal(back, canon, section_at);
    assert_memory_equal(back + section_at, canon + section_end, n - section_end);

    /* A 0.14 event in a 72 stream is refused, where it is. */
    uint8_t bad[] = {BT_EV_ZONE_TEXT, 120};
    assert_int_equal(
        bt_proto_up_events(bt_proto_get(72), bad, sizeof bad, back, sizeof back, &fault),
        (size_t)-1);
    assert_int_equal(fault.offset, 1);
    assert_int_equal(fault.type, 120);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_protocol_numbers_its_events_as_its_release_does),
        cmocka_unit_test(sizes_that_changed_between_releases),
        cmocka_unit_test(queries_of_0_10_are_numbered_its_way),
        cmocka_unit_test(zone_times_become_compact_forms_and_back),
        cmocka_unit_test(samples_swap_thread_and_time),
        cmocka_unit_test(messages_gain_metadata_and_tagged_literals),
        cmocka_unit_test(shorter_layouts_gain_zeroes_and_lose_them_again),
        cmocka_unit_test(what_an_old_protocol_cannot_carry_is_refused_down),
        cmocka_unit_test(tt_gpu_contexts_are_sixteen_bits),
        cmocka_unit_test(the_welcome_loses_and_regains_its_delay),
        cmocka_unit_test(runs_of_events_convert_and_drop_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
