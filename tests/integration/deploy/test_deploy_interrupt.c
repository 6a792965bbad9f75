/* Ctrl-C in each phase of `boardtrace run` against the emulated board: a
 * child boardtrace is interrupted once the phase is reached (an event: a
 * line it printed, a file on the board), and must leave within a generous
 * bound with exit 130, saying what was kept. A proxy between boardtrace and
 * the board holds the connection silent where a phase must not end by
 * itself before the signal (a stalled upload or pull). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <dirent.h>
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

/* How long boardtrace may take to leave after the signal: generous for a
 * busy machine, far below the stall timeout the runs are given (300 s). */
enum { LEAVE_BOUND_S = 40 };

/* Waits for pid to exit, at most bound_s; its wait status, or -1 (then
 * killed) when it did not. */
static int wait_exit(pid_t pid, int bound_s)
{
    int st = 0;
    time_t start = time(NULL);
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (time(NULL) - start > bound_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        usleep(50000);
    }
    return st;
}

/* Size of the file NAME in the one run folder under dir, -1 if none yet. */
static long long uploaded_size(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    long long size = -1;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "boardtrace.", 11) != 0)
            continue;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s/%s", dir, e->d_name, name);
        size = file_size(path);
    }
    if (d)
        closedir(d);
    return size;
}

/* Checks how boardtrace left after the signal; on a mismatch its output
 * is shown first. */
static char *check_left(int st, const char *log, int want)
{
    char *text = read_file(log, NULL);
    if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != want)
        fprintf(stderr, "boardtrace said:\n%s\n", text ? text : "(nothing)");
    assert_true(st >= 0); /* left within the bound */
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), want);
    return text;
}

/* Ctrl-C while the program is being sent ends the upload at once, even one
 * that stands still: nothing ran, and nothing is left on the board. */
static void ctrl_c_during_the_upload_stops_it_and_leaves_nothing(void **state)
{
    (void)state;
    char big[600], remote[600], out[600], log[600], kh[600], target[128];
    snprintf(big, sizeof big, "%s/big_program", work);
    snprintf(remote, sizeof remote, "%s/upload-runs", work);
    snprintf(out, sizeof out, "%s/upload.tracy", work);
    snprintf(log, sizeof log, "%s/upload.log", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    /* The program with 32 MiB more after its end (kept with --no-strip). */
    size_t len = 0;
    char *elf = read_file(program, &len);
    assert_int_equal(write_file(big, elf, len), 0);
    free(elf);
    assert_int_equal(truncate(big, (off_t)len + (32 << 20)), 0);
    struct stall_proxy p = {.up_budget = 4 << 20, .down_budget = -1};
    assert_int_equal(stall_proxy_start(&p, board.port, board.known_hosts, board.target, work, kh,
                                       sizeof kh, target, sizeof target),
                     0);
    const char *argv[] = {boardtrace,
                          "run",
                          "--host",
                          target,
                          "-i",
                          board.key,
                          "--known-hosts",
                          kh,
                          "--remote-dir",
                          remote,
                          "--stall-timeout",
                          "300",
                          "--no-strip",
                          "--capture",
                          capture,
                          "-o",
                          out,
                          big,
                          NULL};
    pid_t pid = spawn_logged((char *const *)argv, log);
    time_t start = time(NULL);
    while (uploaded_size(remote, "big_program") <= 0 && time(NULL) - start < 120)
        usleep(50000);
    assert_true(uploaded_size(remote, "big_program") > 0);
    kill(pid, SIGINT);
    int st = wait_exit(pid, LEAVE_BOUND_S);
    stall_proxy_stop(&p);
    char *text = check_left(st, log, 130);
    assert_non_null(strstr(text, "interrupted during the upload"));
    assert_null(strstr(text, "program is tracing"));
    assert_int_equal(count_run_dirs(remote), 0);
    free(text);
}

/* Ctrl-C while the program starts (before it opens its tracing port): the
 * board stops it and the capture at once, and says nothing was captured. */
static void ctrl_c_while_the_program_starts_stops_it_at_once(void **state)
{
    (void)state;
    char remote[600], out[600], log[600];
    snprintf(remote, sizeof remote, "%s/start-runs", work);
    snprintf(out, sizeof out, "%s/start.tracy", work);
    snprintf(log, sizeof log, "%s/start.log", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    const char *argv[20] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    int n = 8;
    const char *rest[] = {"--remote-dir",
                          remote,
                          "--ready-timeout",
                          "250",
                          "--capture",
                          capture,
                          "-o",
                          out,
                          "--env",
                          "BT_TEST_WAIT_BEFORE_LISTEN=200",
                          program,
                          NULL};
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
        argv[n++] = rest[i];
    pid_t pid = spawn_logged((char *const *)argv, log);
    /* The supervisor prints the program's first lines as it starts. */
    assert_true(wait_for_text(log, "fake-program: a line on stderr", 120, 50000));
    kill(pid, SIGINT);
    int st = wait_exit(pid, LEAVE_BOUND_S);
    char *text = check_left(st, log, 130);
    assert_non_null(strstr(text, "before it opened its tracing port: nothing was captured"));
    assert_int_equal(count_run_dirs(remote), 0);
    free(text);
}

/* Ctrl-C once the program has ended, while the capture saves: the board
 * asks the capture to finish now (SIGINT) instead of giving it its 2
 * minutes, and the trace is still pulled. */
static void ctrl_c_while_the_capture_saves_finishes_it_at_once(void **state)
{
    (void)state;
    char slow[600], out[600], log[600];
    snprintf(slow, sizeof slow, "%s/capture-slow-save", work);
    snprintf(out, sizeof out, "%s/saving.tracy", work);
    snprintf(log, sizeof log, "%s/saving.log", work);
    size_t len = 0;
    char *elf = read_file(capture, &len);
    assert_int_equal(write_file(slow, elf, len), 0);
    free(elf);
    const char *argv[20] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    int n = 8;
    const char *rest[] = {"--capture", slow, "-o", out, program, NULL};
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
        argv[n++] = rest[i];
    pid_t pid = spawn_logged((char *const *)argv, log);
    /* The program has ended and the capture said it saves. */
    assert_true(wait_for_text(log, "fake-program: exiting with 0", 120, 50000));
    assert_true(wait_for_text(log, "saving slowly", 120, 50000));
    kill(pid, SIGINT);
    int st = wait_exit(pid, LEAVE_BOUND_S);
    char *text = check_left(st, log, 0);
    assert_non_null(strstr(text, "asking the capture on the board to finish its trace now"));
    assert_int_equal(file_size(out), 9902);
    free(text);
}

/* Ctrl-C during the pull ends it at once, even one that stands still: the
 * part received and the board's folder stay, with the fetch command. */
static void ctrl_c_during_the_pull_keeps_the_part_and_the_folder(void **state)
{
    (void)state;
    char remote[600], out[600], part[640], log[600], kh[600], target[128];
    snprintf(remote, sizeof remote, "%s/pull-runs", work);
    snprintf(out, sizeof out, "%s/pull.tracy", work);
    snprintf(part, sizeof part, "%s.part", out);
    snprintf(log, sizeof log, "%s/pull.log", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    struct stall_proxy p = {.up_budget = -1, .down_budget = -1};
    assert_int_equal(stall_proxy_start(&p, board.port, board.known_hosts, board.target, work, kh,
                                       sizeof kh, target, sizeof target),
                     0);
    const char *argv[] = {boardtrace,
                          "run",
                          "--host",
                          target,
                          "-i",
                          board.key,
                          "--known-hosts",
                          kh,
                          "--remote-dir",
                          remote,
                          "--stall-timeout",
                          "300",
                          "--capture",
                          capture,
                          "-o",
                          out,
                          "--env",
                          "BT_TEST_EVENTS=400000",
                          program,
                          NULL};
    pid_t pid = spawn_logged((char *const *)argv, log);
    /* The trace (about 5 MB) is written; from here on, what the board sends
     * stands still after 1 MiB, which only the pull can take. */
    assert_true(wait_for_text(log, "fake-program: sent 400000 events", 120, 20000));
    p.down_budget = 1 << 20;
    time_t start = time(NULL);
    while (file_size(part) <= 0 && time(NULL) - start < 120)
        usleep(50000);
    assert_true(file_size(part) > 0);
    kill(pid, SIGINT);
    int st = wait_exit(pid, LEAVE_BOUND_S);
    stall_proxy_stop(&p);
    char *text = check_left(st, log, 130);
    assert_non_null(strstr(text, "kept in"));
    assert_non_null(strstr(text, "boardtrace fetch"));
    assert_true(file_size(part) > 0);
    assert_int_equal(count_run_dirs(remote), 1);
    free(text);
}

/* live: Ctrl-C once while the program waits for a viewer stops it on the
 * board, as in run, and live ends as asked. */
static void ctrl_c_stops_a_live_program_gently(void **state)
{
    (void)state;
    char log[600];
    snprintf(log, sizeof log, "%s/live.log", work);
    const char *argv[20] = {boardtrace, "live"};
    board_args(&board, argv + 2);
    int n = 8;
    const char *rest[] = {"-L", "0", program, NULL};
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
        argv[n++] = rest[i];
    pid_t pid = spawn_logged((char *const *)argv, log);
    assert_true(wait_for_text(log, "live: connect the Tracy GUI", 120, 50000));
    kill(pid, SIGINT);
    int st = wait_exit(pid, LEAVE_BOUND_S);
    char *text = check_left(st, log, 0);
    assert_non_null(strstr(text, "stopping the program on the board"));
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
        cmocka_unit_test(ctrl_c_during_the_upload_stops_it_and_leaves_nothing),
        cmocka_unit_test(ctrl_c_while_the_program_starts_stops_it_at_once),
        cmocka_unit_test(ctrl_c_while_the_capture_saves_finishes_it_at_once),
        cmocka_unit_test(ctrl_c_during_the_pull_keeps_the_part_and_the_folder),
        cmocka_unit_test(ctrl_c_stops_a_live_program_gently),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
