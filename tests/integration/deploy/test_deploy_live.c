/* `boardtrace live` against the emulated board: a capture on the host
 * connects to the forwarded local port and receives the events the program
 * on the board serves, through the same SSH connection. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "deploy_support.h"

/* argv: boardtrace board.sh board-dir fake_program host_capture */
static const char *program, *host_capture;

/* live with env (NULL: none): a capture on the host receives the fake
 * program's 1000 events through the forward, and live exits 0. */
static void live_serves_a_host_capture(const char *env)
{
    char out_path[600], err_path[600], trace[600];
    /* Files of their own: a later run must not read an earlier one's port. */
    const char *tag = env ? "live-env" : "live";
    snprintf(out_path, sizeof out_path, "%s/%s.out", work, tag);
    snprintf(err_path, sizeof err_path, "%s/%s.err", work, tag);
    snprintf(trace, sizeof trace, "%s/%s.tracy", work, tag);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        if (env)
            execl(boardtrace, boardtrace, "live", "--host", board.target, "-i", board.key,
                  "--known-hosts", board.known_hosts, "-L", "0", "--env", env, program,
                  (char *)NULL);
        else
            execl(boardtrace, boardtrace, "live", "--host", board.target, "-i", board.key,
                  "--known-hosts", board.known_hosts, "-L", "0", program, (char *)NULL);
        _exit(127);
    }
    /* Wait for the address line. */
    int port = 0;
    for (time_t end = time(NULL) + 90; time(NULL) < end && !port;) {
        char *text = read_file(out_path, NULL);
        const char *at = text ? strstr(text, "connect the Tracy GUI to 127.0.0.1:") : NULL;
        if (at)
            port = atoi(at + strlen("connect the Tracy GUI to 127.0.0.1:"));
        free(text);
        if (!port)
            usleep(100000);
    }
    if (!port) {
        kill(pid, SIGKILL);
        char *err = read_file(err_path, NULL);
        fprintf(stderr, "no address line; stderr:\n%s\n", err ? err : "");
        free(err);
    }
    assert_true(port > 0);
    /* A GUI may connect whenever; the program waits for it as long as it
     * likes (longer than the 10 s a run gives it after its capture). */
    sleep(12);
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", port);
    const char *argv[] = {host_capture, "-o", trace, "-a", "127.0.0.1", "-p", port_s, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "Events: 1000\n"));
    result_free(&r);

    /* The program exits once served; live follows it. */
    int st = 0;
    for (time_t end = time(NULL) + 60; time(NULL) < end;) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        usleep(100000);
    }
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    char *text = read_file(trace, NULL);
    assert_non_null(text);
    assert_true(strncmp(text, "BTFAKE 1000\nevent 0\n", 20) == 0);
    assert_non_null(strstr(text, "\nevent 999\n"));
    free(text);
    char *err = read_file(err_path, NULL);
    assert_non_null(strstr(err, "GUI connected"));
    if (env)
        assert_non_null(strstr(err, "forwarding to the board's [::1]:"));
    free(err);
}

static void a_host_capture_receives_the_boards_events_through_the_forward(void **state)
{
    (void)state;
    live_serves_a_host_capture(NULL);
}

/* Upstream's clients under TRACY_ONLY_LOCALHOST listen on [::1] alone: the
 * forward reaches them there. */
static void the_forward_reaches_a_program_on_ipv6_loopback_alone(void **state)
{
    (void)state;
    live_serves_a_host_capture("BT_TEST_IPV6_LOOPBACK=1");
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s BOARDTRACE BOARD_SH BOARD_DIR PROGRAM HOST_CAPTURE\n", argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    program = argv[4];
    host_capture = argv[5];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_host_capture_receives_the_boards_events_through_the_forward),
        cmocka_unit_test(the_forward_reaches_a_program_on_ipv6_loopback_alone),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
