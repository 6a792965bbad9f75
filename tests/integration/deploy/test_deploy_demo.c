/* End to end with the real parts, on the emulated riscv64 board: the
 * cross-built boardtrace-demo traced by the cross-built boardtrace-capture
 * (found by the default search, as `boardtrace run` without --capture), and
 * the pulled trace read by the host's boardtrace-report. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <boardtrace/config.h>

#include "deploy_support.h"

/* argv: boardtrace board.sh board-dir boardtrace-demo boardtrace-report */
static const char *demo, *report;

static void the_demo_is_traced_on_the_board_and_its_zones_reported(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/demo.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    const char *argv[16] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    argv[8] = "-o";
    argv[9] = out;
    argv[10] = demo;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    assert_status(&r, 0);
    const char *events = strstr(r.out, "  events    ");
    assert_non_null(events);
    assert_true(atoll(events + 12) > 1000);
    assert_non_null(strstr(r.out, "  capture   complete\n"));
    assert_true(file_size(out) > 1000);
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"end\": \"complete\""));
    assert_non_null(strstr(json, "/cross/riscv64/tools/capture/boardtrace-capture"));
    /* The program's own build, from its boardtrace ELF note. */
    char want[64];
    snprintf(want, sizeof want, "\"tracing_mode\": %d", BT_TRACING_MODE);
    assert_non_null(strstr(json, "\"boardtrace_version\": \"" BT_VERSION_STRING "\""));
    assert_non_null(strstr(json, want));
    free(json);
    result_free(&r);

    const char *stats[] = {report, "stats", out, NULL};
    assert_int_equal(run_command((char *const *)stats, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "matmul"));
    result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s BOARDTRACE BOARD_SH BOARD_DIR DEMO REPORT\n", argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    demo = argv[4];
    report = argv[5];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_demo_is_traced_on_the_board_and_its_zones_reported),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
