/* The system tracer's reading of tracepoint formats (runtime/src/systrace/tracepoint.c):
 * field offsets and sizes found by name in the kernel's format text, fields
 * read from raw records with their sign and size, and nothing read beyond a
 * record or from a field the format does not have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "systrace/tracepoint.h"

/* As a 64-bit kernel writes events/sched/sched_switch/format. */
static const char switch_format[] =
    "name: sched_switch\nID: 372\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

static const char *const fields[] = {"prev_pid", "prev_state", "next_pid", "next_comm",
                                     "target_cpu"};

static void fields_are_found_by_name(void **state)
{
    (void)state;
    struct bt_tracepoint tp;
    assert_int_equal(bt_tracepoint_parse(&tp, switch_format, fields, 5), 0);
    assert_int_equal(tp.offset[0], 24);
    assert_int_equal(tp.size[0], 4);
    assert_int_equal(tp.offset[1], 32);
    assert_int_equal(tp.size[1], 8);
    assert_int_equal(tp.offset[2], 56);
    assert_int_equal(tp.offset[3], 40); /* an array: its name without the bound */
    assert_int_equal(tp.size[3], 16);
    assert_int_equal(tp.size[4], 0); /* not in this format */
}

static void fields_are_read_with_their_size_and_sign(void **state)
{
    (void)state;
    struct bt_tracepoint tp;
    assert_int_equal(bt_tracepoint_parse(&tp, switch_format, fields, 5), 0);
    uint8_t raw[64];
    memset(raw, 0, sizeof raw);
    int32_t prev = 4242, next = -1;
    int64_t state64 = 0x402;
    memcpy(raw + 24, &prev, 4);
    memcpy(raw + 32, &state64, 8);
    memcpy(raw + 56, &next, 4);
    assert_int_equal(bt_tracepoint_int(&tp, 0, raw, sizeof raw), 4242);
    assert_int_equal(bt_tracepoint_int(&tp, 1, raw, sizeof raw), 0x402);
    assert_int_equal(bt_tracepoint_int(&tp, 2, raw, sizeof raw), -1);
    assert_int_equal(bt_tracepoint_int(&tp, 4, raw, sizeof raw), 0); /* absent */
    assert_int_equal(bt_tracepoint_int(&tp, 7, raw, sizeof raw), 0); /* no such index */
}

static void a_short_record_reads_nothing_beyond_its_end(void **state)
{
    (void)state;
    struct bt_tracepoint tp;
    assert_int_equal(bt_tracepoint_parse(&tp, switch_format, fields, 5), 0);
    uint8_t raw[64];
    memset(raw, 0x7f, sizeof raw);
    assert_int_equal(bt_tracepoint_int(&tp, 2, raw, 59), 0); /* next_pid ends at 60 */
    assert_int_not_equal(bt_tracepoint_int(&tp, 2, raw, 60), 0);
}

static void every_truncation_of_the_format_parses_safely(void **state)
{
    (void)state;
    char text[sizeof switch_format];
    for (size_t n = 0; n < sizeof switch_format; n++) {
        memcpy(text, switch_format, n);
        text[n] = 0;
        struct bt_tracepoint tp;
        assert_int_equal(bt_tracepoint_parse(&tp, text, fields, 5), 0);
        for (unsigned i = 0; i < 5; i++)
            assert_true(tp.size[i] == 0 || tp.offset[i] <= 56);
    }
    struct bt_tracepoint tp;
    assert_int_not_equal(bt_tracepoint_parse(&tp, switch_format, fields, BT_TRACEPOINT_FIELDS + 1),
                         0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fields_are_found_by_name),
        cmocka_unit_test(fields_are_read_with_their_size_and_sign),
        cmocka_unit_test(a_short_record_reads_nothing_beyond_its_end),
        cmocka_unit_test(every_truncation_of_the_format_parses_safely),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
