/* `boardtrace run` waits for nothing forever: against the emulated board, a
 * run whose board side never finishes after the program ended, or whose
 * board goes silent, is given up within a bound, its folder kept for fetch. */
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
#include "stall_proxy.h"

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

/* The board goes silent mid-run and takes connections without answering:
 * 30 s of silence, then about a minute of connecting again (the connection
 * attempts included), and run gives up. */
static void a_board_that_goes_silent_is_given_up_after_about_a_minute(void **state)
{
    (void)state;
    char remote[600], out[600], log[600], kh[600], target[128];
    snprintf(remote, sizeof remote, "%s/silent-runs", work);
    snprintf(out, sizeof out, "%s/silent.tracy", work);
    snprintf(log, sizeof log, "%s/silent.log", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    struct stall_proxy p = {.up_budget = -1, .down_budget = -1};
    assert_int_equal(stall_proxy_start(&p, board.port, board.known_hosts, board.target, work, kh,
                                       sizeof kh, target, sizeof target),
                     0);
    const char *argv[] = {boardtrace,     "run",     "--host",        target,
                          "-i",           board.key, "--known-hosts", kh,
                          "--remote-dir", remote,    "--capture",     capture,
                          "-o",           out,       "--env",         "BT_TEST_LINGER=400",
                          program,        NULL};
    pid_t pid = spawn_logged((char *const *)argv, log);
    assert_true(wait_for_text(log, "fake-program: sent 1000 events", 120, 50000));
    p.blackhole = 1;
    p.up_budget = 0;
    p.down_budget = 0;
    time_t silent = time(NULL);
    int st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0 && time(NULL) - silent < 300)
        usleep(100000);
    long took = (long)(time(NULL) - silent);
    if (time(NULL) - silent >= 300) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    stall_proxy_stop(&p);
    char *text = read_file(log, NULL);
    fprintf(stderr, "run gave up %ld s after the board went silent\n", took);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 9 || took > 140)
        fprintf(stderr, "boardtrace said:\n%s\n", text);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 9);
    /* 30 s of silence and 60 s of trying, with room for a busy machine. */
    assert_true(took <= 140);
    assert_non_null(strstr(text, "again within 60 s"));
    assert_non_null(strstr(text, "boardtrace fetch"));
    free(text);
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
        cmocka_unit_test(a_board_that_goes_silent_is_given_up_after_about_a_minute),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
