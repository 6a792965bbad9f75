/* Helpers for the deploy integration tests: the emulated board's settings
 * (from tools/board/board.sh env), running `boardtrace` as a child with its
 * output captured, and small file utilities. */
#ifndef DEPLOY_SUPPORT_H
#define DEPLOY_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct board {
    char target[256]; /* user@127.0.0.1:port */
    int port;
    char key[1024];
    char known_hosts[1024];
    char rootfs[1024];
    char dir[1024];
};

struct result {
    int status; /* exit status, or 128 + signal */
    char *out;  /* stdout, NUL-terminated */
    char *err;  /* stderr */
};

/* What every deploy test program has: the boardtrace binary, board.sh and
 * the board's state folder (set by main from argv), the board they describe,
 * and a private work folder. */
extern const char *boardtrace, *board_sh, *board_dir;
extern struct board board;
extern char work[512];
/* cmocka group setup: loads board and makes work; -1 if either fails. */
int deploy_group_setup(void **state);
/* cmocka group teardown: removes work (kept when BT_KEEP_TEST_FILES is set). */
int deploy_group_teardown(void **state);

/* Reads BOARD_* from `board.sh --dir DIR env`. Returns 0 or -1. */
int board_load(const char *script, const char *dir, struct board *b);

/* Runs argv (NULL-terminated) with a time limit, in cwd (NULL: current). */
int run_command(char *const argv[], const char *cwd, int timeout_s, struct result *r);
void result_free(struct result *r);
/* Checks r's exit status; on a mismatch the command's output is printed
 * first, so a failure in CI says what the command said. */
#define assert_status(r, want)                 \
    do {                                       \
        if ((r)->status != (want))             \
            result_print(r);                   \
        assert_int_equal((r)->status, (want)); \
    } while (0)
void result_print(const struct result *r);
/* Checks that r's stderr says text; on a miss the command's output is
 * printed first. */
#define assert_said(r, text)                       \
    do {                                           \
        if (!strstr((r)->err, (text)))             \
            result_print(r);                       \
        assert_non_null(strstr((r)->err, (text))); \
    } while (0)

/* Starts argv (NULL-terminated) as a child with stdout and stderr both
 * written to log; returns its pid without waiting. */
pid_t spawn_logged(char *const argv[], const char *log);
/* Polls path every poll_us until it contains text; false after timeout_s. */
bool wait_for_text(const char *path, const char *text, int timeout_s, unsigned poll_us);

/* Cuts the SSH connection of process client to the board at port as a
 * network failure would: kills the sshd processes on the board's side of
 * that connection (found through /proc/net/tcp and their open sockets),
 * leaving the board's other connections alone. Returns how many it killed. */
int kill_ssh_server_side(pid_t client, int port);

/* Writes the --host/-i/--known-hosts options for b into argv[0..5]. */
void board_args(const struct board *b, const char **argv);

char *read_file(const char *path, size_t *len);
int write_file(const char *path, const void *data, size_t len);
long long file_size(const char *path);
/* Number of entries named boardtrace.* in dir. */
int count_run_dirs(const char *dir);
/* A fresh private temporary folder for one test. */
void make_temp_dir(char *out, size_t outlen);

#endif
