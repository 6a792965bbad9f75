/* `boardtrace run` waits for nothing forever: against the emulated board, a
 * run whose board side never finishes after the program ended is given up
 * within a bound, its folder kept for fetch. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "deploy_support.h"

/* argv: boardtrace board.sh board-dir fake_program fake_capture */
static const char *program, *capture;

/* A capture that leaves a process holding its output open as it exits: the
 * supervisor's reader of that output never ends, so the board never says
 * the run finished. run gives up 160 s after the program ended (the
 * capture's 2 minutes to save, its signals and a margin). */
static void a_run_whose_board_never_finishes_is_given_up_after_the_program_ended(void **state)
{
    (void)state;
    char stuck[600], remote[600], out[600];
    snprintf(stuck, sizeof stuck, "%s/capture-never-ends", work);
    snprintf(remote, sizeof remote, "%s/stuck-runs", work);
    snprintf(out, sizeof out, "%s/stuck.tracy", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    size_t len = 0;
    char *elf = read_file(capture, &len);
    assert_int_equal(write_file(stuck, elf, len), 0);
    free(elf);
    const char *argv[20] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    int n = 8;
    const char *rest[] = {"--remote-dir", remote, "--capture", stuck, "-o", out, program, NULL};
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
        argv[n++] = rest[i];
    struct result r;
    time_t start = time(NULL);
    assert_int_equal(run_command((char *const *)argv, work, 330, &r), 0);
    fprintf(stderr, "run gave up after %ld s\n", (long)(time(NULL) - start));
    assert_status(&r, 10);
    assert_non_null(strstr(r.err, "did not finish within 160 s after the program ended"));
    assert_non_null(strstr(r.err, "boardtrace fetch"));
    assert_int_equal(count_run_dirs(remote), 1);
    result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s BOARDTRACE BOARD_SH BOARD_DIR FAKE_PROGRAM FAKE_CAPTURE\n",
                argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    program = argv[4];
    capture = argv[5];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_whose_board_never_finishes_is_given_up_after_the_program_ended),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
