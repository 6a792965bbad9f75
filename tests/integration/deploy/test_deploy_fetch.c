/* `boardtrace fetch` resumes: a proxy between boardtrace and the emulated
 * board cuts the connection partway through a pull; the part received stays,
 * and the next fetch continues from it and verifies the whole file. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "deploy_support.h"

enum { TRACE_SIZE = 24 << 20, CUT_AFTER = 6 << 20 };

/* argv: boardtrace board.sh board-dir fake_program fake_capture */
static const char *program, *capture;

struct proxy {
    int listen_fd;
    int port;
    int board_port;
    long long limit; /* bytes board -> client before cutting both ways */
    long long passed;
    bool stall;         /* at the limit, hold the connection silent instead */
    atomic_int release; /* set by the test to end a stall */
    atomic_int cut_now; /* set by the test to cut at once */
    long long up_limit; /* bytes client -> board before cutting, 0 none */
    long long up_passed;
    bool reaccept; /* after the cut, relay the next connections whole */
};

static void *proxy_main(void *arg)
{
    struct proxy *p = arg;
again:;
    int client = accept(p->listen_fd, NULL, NULL);
    int up = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->board_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (client < 0 || connect(up, (struct sockaddr *)&a, sizeof a) != 0)
        return NULL;
    struct pollfd fds[2] = {{.fd = client, .events = POLLIN}, {.fd = up, .events = POLLIN}};
    char buf[16384];
    while (p->passed < p->limit && !p->cut_now && (!p->up_limit || p->up_passed < p->up_limit)) {
        int ready = poll(fds, 2, 5); /* a cut asked for comes within 5 ms */
        if (ready < 0)
            break;
        if (ready == 0)
            continue;
        if (fds[0].revents) {
            ssize_t n = read(client, buf, sizeof buf);
            if (n <= 0 || write(up, buf, (size_t)n) != n)
                break;
            p->up_passed += n;
        }
        if (fds[1].revents) {
            ssize_t n = read(up, buf, sizeof buf);
            if (n <= 0 || write(client, buf, (size_t)n) != n)
                break;
            p->passed += n;
        }
    }
    while (p->stall && !p->release)
        usleep(50000);
    /* The cut: both sides see the connection reset. */
    struct linger hard = {1, 0};
    setsockopt(client, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    close(client);
    close(up);
    if (p->reaccept) {
        p->limit = 1LL << 40;
        p->up_limit = 0;
        p->cut_now = 0;
        p->reaccept = false;
        goto again;
    }
    return NULL;
}

/* A run folder on the board holding a random trace, as an interrupted run
 * leaves it. Returns the remote trace path in out. */
static void leave_trace_on_board(char *out, size_t outlen, char **data)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/tmp/boardtrace.fetch%d", board.rootfs, getpid());
    mkdir(dir, 0700);
    snprintf(out, outlen, "%s/trace.tracy", dir);
    *data = malloc(TRACE_SIZE);
    int fd = open("/dev/urandom", O_RDONLY);
    for (size_t got = 0; got < TRACE_SIZE;) {
        ssize_t n = read(fd, *data + got, TRACE_SIZE - got);
        assert_true(n > 0);
        got += (size_t)n;
    }
    close(fd);
    assert_int_equal(write_file(out, *data, TRACE_SIZE), 0);
}

/* A proxy to the board on a free port, and a known_hosts that knows the
 * board under the proxy's address too. */
static void start_proxy(struct proxy *p, pthread_t *thread, char *kh, size_t khlen, char *target,
                        size_t targetlen)
{
    p->board_port = board.port;
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    assert_int_equal(bind(p->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(p->listen_fd, 1), 0);
    getsockname(p->listen_fd, (struct sockaddr *)&a, &alen);
    p->port = ntohs(a.sin_port);
    pthread_create(thread, NULL, proxy_main, p);
    char *known = read_file(board.known_hosts, NULL);
    char *key = strchr(known, ' ');
    char text[2000];
    int n = snprintf(text, sizeof text, "%s[127.0.0.1]:%d%s", known, p->port, key);
    snprintf(kh, khlen, "%s/known_hosts.%d", work, p->port);
    assert_int_equal(write_file(kh, text, (size_t)n), 0);
    free(known);
    snprintf(target, targetlen, "%.*s:%d", (int)(strchr(board.target, ':') - board.target),
             board.target, p->port);
}

static void fetch_resumes_after_the_connection_is_cut(void **state)
{
    (void)state;
    char remote[1300], local[600], part[640], kh[600], target[128];
    char *data;
    leave_trace_on_board(remote, sizeof remote, &data);
    snprintf(local, sizeof local, "%s/fetched.tracy", work);
    snprintf(part, sizeof part, "%s.part", local);
    struct proxy p = {.limit = CUT_AFTER};
    pthread_t thread;
    start_proxy(&p, &thread, kh, sizeof kh, target, sizeof target);

    const char *cut[] = {boardtrace,      "fetch", "--host", target, "-i",   board.key,
                         "--known-hosts", kh,      "-o",     local,  remote, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)cut, work, 120, &r), 0);
    pthread_join(thread, NULL);
    close(p.listen_fd);
    fprintf(stderr, "cut fetch: exit %d, %lld bytes through the proxy, %lld kept\n", r.status,
            p.passed, file_size(part));
    assert_status(&r, 11);
    assert_non_null(strstr(r.err, "kept in"));
    assert_int_equal(file_size(local), -1);
    long long kept = file_size(part);
    assert_true(kept > 0 && kept < TRACE_SIZE);
    result_free(&r);

    const char *resume[] = {boardtrace, "fetch",   "--host",        board.target,
                            "-i",       board.key, "--known-hosts", board.known_hosts,
                            "-o",       local,     remote,          NULL};
    assert_int_equal(run_command((char *const *)resume, work, 120, &r), 0);
    assert_status(&r, 0);
    char expect[800];
    snprintf(expect, sizeof expect, "resuming %s at byte %lld", part, kept);
    assert_non_null(strstr(r.err, expect));
    assert_non_null(strstr(r.out, "SHA-256"));
    size_t len;
    char *got = read_file(local, &len);
    assert_int_equal(len, TRACE_SIZE);
    assert_memory_equal(got, data, TRACE_SIZE);
    assert_int_equal(file_size(part), -1);
    free(got);
    free(data);
    result_free(&r);
}

/* A connection that stays open but carries nothing more: the transfer gives
 * up after --stall-timeout instead of waiting forever. The timeout leaves the
 * board room to start sending under load (its checksum of the same file runs
 * beside the transfer), so the stall is the proxy's, after some data. */
static void a_stalled_pull_gives_up_after_the_stall_timeout(void **state)
{
    (void)state;
    char remote[1300], local[600], part[640], kh[600], target[128];
    char *data;
    leave_trace_on_board(remote, sizeof remote, &data);
    snprintf(local, sizeof local, "%s/stalled.tracy", work);
    snprintf(part, sizeof part, "%s.part", local);
    struct proxy p = {.limit = CUT_AFTER, .stall = true};
    pthread_t thread;
    start_proxy(&p, &thread, kh, sizeof kh, target, sizeof target);
    const char *argv[] = {boardtrace,      "fetch", "--host",          target, "-i", board.key,
                          "--known-hosts", kh,      "--stall-timeout", "5",    "-o", local,
                          remote,          NULL};
    time_t start = time(NULL);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    time_t took = time(NULL) - start;
    p.release = 1;
    pthread_join(thread, NULL);
    close(p.listen_fd);
    assert_status(&r, 11);
    assert_non_null(strstr(r.err, "nothing moved for 5 s"));
    assert_true(took < 30);
    assert_true(file_size(part) > 0);
    free(data);
    result_free(&r);
}

/* Runs the fake program (with env) on the board through a proxy, in a new
 * remote folder WORK/folder, and cuts the connection once the program has
 * sent its events; returns boardtrace's wait status. out and log are
 * WORK/name.tracy and WORK/name.log. */
static int cut_run(const char *folder, const char *name, const char *env, char *remote_dir,
                   char *out, char *log)
{
    char kh[600], target[128];
    snprintf(remote_dir, 600, "%s/%s", work, folder);
    snprintf(out, 600, "%s/%s.tracy", work, name);
    snprintf(log, 600, "%s/%s.log", work, name);
    assert_int_equal(mkdir(remote_dir, 0700), 0);
    struct proxy p = {.limit = 1LL << 40};
    pthread_t thread;
    start_proxy(&p, &thread, kh, sizeof kh, target, sizeof target);
    const char *run_argv[] = {
        boardtrace,      "run",   "--host",      target, "-i",           board.key,
        "--known-hosts", kh,      "--reconnect", "0",    "--remote-dir", remote_dir,
        "--capture",     capture, "-o",          out,    "--env",        env,
        program,         NULL};
    pid_t pid = spawn_logged((char *const *)run_argv, log);
    assert_true(wait_for_text(log, "fake-program: sent 1000 events", 60, 50000));
    p.cut_now = 1;
    int st = 0;
    waitpid(pid, &st, 0);
    pthread_join(thread, NULL);
    close(p.listen_fd);
    return st;
}

/* The connection drops while the program runs: the board carries on, the
 * capture writes its trace, and fetch (no path: the newest run) gets it. */
static void a_run_cut_off_mid_way_leaves_a_trace_fetch_gets(void **state)
{
    (void)state;
    char remote_dir[600], out[600], log[600];
    int st = cut_run("runs", "cut-run", "BT_TEST_LINGER=3", remote_dir, out, log);
    char *text = read_file(log, NULL);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 9)
        fprintf(stderr, "%s\n", text);
    assert_int_equal(WEXITSTATUS(st), 9);
    assert_non_null(strstr(text, "boardtrace fetch --host"));
    assert_int_equal(file_size(out), -1);
    free(text);

    /* The program lingers 3 s, then the capture's trace is complete. */
    sleep(5);
    const char *argv[] = {boardtrace,
                          "fetch",
                          "--host",
                          board.target,
                          "-i",
                          board.key,
                          "--known-hosts",
                          board.known_hosts,
                          "--remote-dir",
                          remote_dir,
                          "-o",
                          out,
                          NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    assert_int_equal(file_size(out), 9902);
    result_free(&r);
}

/* The capture cannot write its trace (the board's disk is full) and says
 * what it received is in its journal: run keeps the folder with the journal
 * and prints the fetch --recover command, which, pasted as it is, rebuilds
 * the trace on the board and pulls it. */
static void a_capture_that_kept_its_journal_leaves_the_folder_for_fetch_recover(void **state)
{
    (void)state;
    char remote_dir[600], out[600];
    snprintf(remote_dir, sizeof remote_dir, "%s/journal-runs", work);
    snprintf(out, sizeof out, "%s/journal.tracy", work);
    assert_int_equal(mkdir(remote_dir, 0700), 0);
    const char *argv[] = {boardtrace,     "run",      "--host",        board.target,
                          "-i",           board.key,  "--known-hosts", board.known_hosts,
                          "--remote-dir", remote_dir, "--capture",     capture,
                          "-o",           out,        "--env",         "BT_TEST_DISK_FULL=1",
                          program,        NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 180, &r), 0);
    assert_status(&r, 10);
    assert_non_null(strstr(r.err, "what was received is in trace.tracy.journal"));
    assert_int_equal(count_run_dirs(remote_dir), 1);
    assert_int_equal(file_size(out), -1);
    const char *hint = strstr(r.err, "rebuild and get the trace with:\n  ");
    assert_non_null(hint);
    hint = strchr(hint, '\n') + 3;
    char command[3000];
    snprintf(command, sizeof command, "%.*s", (int)strcspn(hint, "\n"), hint);
    assert_non_null(strstr(command, "boardtrace fetch --recover "));
    result_free(&r);

    /* The command as printed, with this build's boardtrace first on PATH. */
    char path[1400], bindir[1024];
    snprintf(bindir, sizeof bindir, "%s", boardtrace);
    *strrchr(bindir, '/') = '\0';
    snprintf(path, sizeof path, "%s:%s", bindir, getenv("PATH"));
    setenv("PATH", path, 1);
    const char *sh[] = {"/bin/sh", "-c", command, NULL};
    assert_int_equal(run_command((char *const *)sh, work, 120, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, "rebuilt"));
    size_t len = 0;
    char *trace = read_file(out, &len);
    assert_non_null(trace);
    assert_true(strncmp(trace, "BTFAKE 1000 disk-full\nevent 0\n", 30) == 0);
    assert_non_null(strstr(trace, "\nevent 999\n"));
    free(trace);
    assert_int_equal(count_run_dirs(remote_dir), 0);
    result_free(&r);
}

/* As above, but the capture said its journal was cut short too: run does not
 * claim the journal holds what the capture received. */
static void a_journal_the_capture_said_was_cut_short_is_not_said_to_be_whole(void **state)
{
    (void)state;
    char remote_dir[600], out[600];
    snprintf(remote_dir, sizeof remote_dir, "%s/journal-cut-runs", work);
    snprintf(out, sizeof out, "%s/journal-cut.tracy", work);
    assert_int_equal(mkdir(remote_dir, 0700), 0);
    const char *argv[] = {boardtrace,     "run",      "--host",        board.target,
                          "-i",           board.key,  "--known-hosts", board.known_hosts,
                          "--remote-dir", remote_dir, "--capture",     capture,
                          "-o",           out,        "--env",         "BT_TEST_DISK_FULL=cut",
                          program,        NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 180, &r), 0);
    assert_status(&r, 10);
    assert_said(&r, "holds only what it received before writing the journal failed");
    assert_null(strstr(r.err, "journal, which holds what it received"));
    assert_int_equal(count_run_dirs(remote_dir), 1);
    result_free(&r);
}

/* The connection is cut in the middle of the upload: nothing runs on the
 * board yet, so run connects again and removes the folder with the partial
 * upload instead of leaving it there for good. */
static void a_connection_cut_mid_upload_leaves_no_folder_on_the_board(void **state)
{
    (void)state;
    char remote_dir[600], out[600], kh[600], target[128];
    snprintf(remote_dir, sizeof remote_dir, "%s/cut-upload", work);
    snprintf(out, sizeof out, "%s/cut-upload.tracy", work);
    assert_int_equal(mkdir(remote_dir, 0700), 0);
    /* Well into the program's upload: the handshake and the probe send a
     * few KiB; the program sends over 100 KiB. */
    assert_true(file_size(program) > 150 * 1024);
    struct proxy p = {.limit = 1LL << 40, .up_limit = 90 * 1024, .reaccept = true};
    pthread_t thread;
    start_proxy(&p, &thread, kh, sizeof kh, target, sizeof target);
    const char *argv[] = {boardtrace,      "run",        "--host",
                          target,          "-i",         board.key,
                          "--known-hosts", kh,           "--remote-dir",
                          remote_dir,      "--no-strip", "--capture",
                          capture,         "-o",         out,
                          program,         NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 180, &r), 0);
    assert_status(&r, 8);
    assert_non_null(strstr(r.err, "upload of"));
    assert_int_equal(count_run_dirs(remote_dir), 0);
    assert_non_null(strstr(r.err, "removed the partial folder"));
    assert_int_equal(file_size(out), -1);
    result_free(&r);
    shutdown(p.listen_fd, SHUT_RDWR);
    close(p.listen_fd);
    pthread_join(thread, NULL);
}

/* The connection is cut during the preflight, once the probe has made the
 * run's folder on the board and before its answer (with the folder's name)
 * is back: run connects again, finds the folder by the tag in its name and
 * removes it. Twice, so no cut leaves a folder behind. */
static void a_connection_cut_during_the_preflight_leaves_no_folder_on_the_board(void **state)
{
    (void)state;
    char remote_dir[600], out[600], kh[600], target[128], log[600];
    snprintf(remote_dir, sizeof remote_dir, "%s/cut-preflight", work);
    snprintf(out, sizeof out, "%s/cut-preflight.tracy", work);
    snprintf(log, sizeof log, "%s/cut-preflight.log", work);
    assert_int_equal(mkdir(remote_dir, 0700), 0);
    for (int cut = 0; cut < 2; cut++) {
        struct proxy p = {.limit = 1LL << 40, .reaccept = true};
        pthread_t thread;
        start_proxy(&p, &thread, kh, sizeof kh, target, sizeof target);
        const char *argv[] = {boardtrace,      "run",        "--host",
                              target,          "-i",         board.key,
                              "--known-hosts", kh,           "--remote-dir",
                              remote_dir,      "--no-strip", "--capture",
                              capture,         "-o",         out,
                              program,         NULL};
        pid_t pid = spawn_logged((char *const *)argv, log);
        /* The folder is there as soon as mktemp made it: the probe goes on
         * (df, the exec test, ...) for many processes more. */
        bool made = false;
        for (int i = 0; i < 600000 && !made; i++) {
            made = count_run_dirs(remote_dir) > 0;
            if (!made)
                usleep(100);
        }
        assert_true(made);
        p.cut_now = 1;
        int st = 0;
        waitpid(pid, &st, 0);
        char *text = read_file(log, NULL);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 7 || count_run_dirs(remote_dir) != 0)
            fprintf(stderr, "%s\n", text);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 7);
        assert_non_null(strstr(text, "preflight on"));
        assert_non_null(strstr(text, "removed the preflight's folder"));
        free(text);
        assert_int_equal(count_run_dirs(remote_dir), 0);
        shutdown(p.listen_fd, SHUT_RDWR);
        close(p.listen_fd);
        pthread_join(thread, NULL);
    }
}

/* Processes whose working folder is dir (the board's side of a run: its
 * supervisor, program and capture). */
static int processes_in(const char *dir)
{
    int n = 0;
    DIR *proc = opendir("/proc");
    for (struct dirent *e; proc && (e = readdir(proc));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char link[300], cwd[1200];
        snprintf(link, sizeof link, "/proc/%s/cwd", e->d_name);
        ssize_t k = readlink(link, cwd, sizeof cwd - 1);
        if (k <= 0)
            continue;
        cwd[k] = 0;
        n += strcmp(cwd, dir) == 0;
    }
    if (proc)
        closedir(proc);
    return n;
}

/* The connection drops while a program that would run (and stay connected
 * to its capture) for 10 minutes runs, with no -s, and boardtrace does not
 * reconnect: the run goes on on the board; status shows it running; fetch
 * refuses it until --stop (found as the newest run or named by its folder), which stops the
 * program, lets the capture finish its trace, pulls it and removes the folder. */
static void a_run_whose_host_went_away_goes_on_until_fetch_stops_it(void **state)
{
    (void)state;
    char remote_dir[600], out[600], log[600];
    cut_run("lost-runs", "lost-run", "BT_TEST_HOLD=600", remote_dir, out, log);

    char run_dir[1200] = "";
    DIR *d = opendir(remote_dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "boardtrace.", 11) == 0)
            snprintf(run_dir, sizeof run_dir, "%s/%s", remote_dir, e->d_name);
    closedir(d);
    assert_true(run_dir[0]);
    sleep(6); /* past a heartbeat: nothing on the board noticed */
    assert_true(processes_in(run_dir) > 0);

    const char *status[] = {
        boardtrace,      "status",          "--host",       board.target, "-i", board.key,
        "--known-hosts", board.known_hosts, "--remote-dir", remote_dir,   NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)status, work, 60, &r), 0);
    assert_status(&r, 0);
    const char *row = strstr(r.out, run_dir);
    assert_non_null(row);
    assert_non_null(strstr(row, " running "));
    /* The columns stay aligned with a folder path longer than the default
     * column: the state stands under STATE. */
    assert_true(strlen(run_dir) > 36);
    const char *head = strstr(r.out, "RUN FOLDER");
    assert_non_null(head);
    assert_int_equal(strstr(head, "STATE") - head, strstr(row, "running") - row);
    result_free(&r);

    const char *argv[] = {boardtrace,
                          "fetch",
                          "--host",
                          board.target,
                          "-i",
                          board.key,
                          "--known-hosts",
                          board.known_hosts,
                          "--remote-dir",
                          remote_dir,
                          "-o",
                          out,
                          NULL,
                          NULL};
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 11);
    assert_non_null(strstr(r.err, "is still going on"));
    assert_non_null(strstr(r.err, "--stop"));
    result_free(&r);
    assert_true(processes_in(run_dir) > 0);

    /* Named by its folder, it is refused the same way: nothing is stopped
     * without --stop. */
    argv[12] = run_dir;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 11);
    assert_non_null(strstr(r.err, "is still going on"));
    assert_non_null(strstr(r.err, "--stop"));
    result_free(&r);
    assert_true(processes_in(run_dir) > 0);

    argv[12] = "--stop";
    assert_int_equal(run_command((char *const *)argv, work, 240, &r), 0);
    assert_status(&r, 0);
    assert_int_equal(processes_in(run_dir), 0);
    assert_int_equal(file_size(out), 9902);
    struct stat st;
    assert_int_equal(stat(run_dir, &st), -1); /* removed once the trace was verified */
    result_free(&r);
}

static void fetch_without_a_path_takes_the_newest_run(void **state)
{
    (void)state;
    char remote[1300], local[600];
    char *data;
    leave_trace_on_board(remote, sizeof remote, &data);
    snprintf(local, sizeof local, "%s/newest.tracy", work);
    const char *argv[] = {boardtrace, "fetch",         "--host",          board.target, "-i",
                          board.key,  "--known-hosts", board.known_hosts, "-o",         local,
                          NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, remote));
    assert_int_equal(file_size(local), TRACE_SIZE);
    free(data);
    result_free(&r);
}

/* Whether text holds a byte a terminal would act on: C0 but newlines,
 * DEL, or any byte of 0x80..0x9f (C1 raw, or inside UTF-8: none of the text
 * these tests expect has non-ASCII letters). */
static bool has_terminal_controls(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p < 0x20 && *p != '\n') || (*p >= 0x7f && *p <= 0x9f))
            return true;
    return false;
}

/* A finished run's folder in remote_dir named name, holding a small trace
 * and program.name saying program. */
static void leave_finished_run(const char *remote_dir, const char *name, const char *program_name,
                               char *dir, size_t dirlen)
{
    char path[1300];
    snprintf(dir, dirlen, "%s/%s", remote_dir, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/trace.tracy", dir);
    assert_int_equal(write_file(path, "a trace\n", 8), 0);
    snprintf(path, sizeof path, "%s/finished", dir);
    assert_int_equal(write_file(path, "", 0), 0);
    snprintf(path, sizeof path, "%s/program.name", dir);
    assert_int_equal(write_file(path, program_name, strlen(program_name)), 0);
}

/* Names a hostile board chose to drive the terminal: a clear screen, a
 * window title and the 8-bit CSI 0x9b, in a run folder's name and in its
 * program's. status and fetch show them as \xNN, on stdout and stderr
 * alike. (Busybox's ls shows such a folder as '?'s, so status lists only
 * the program's name here; the folder is fetched by its name.) */
static void a_hostile_folder_name_reaches_the_terminal_escaped(void **state)
{
    (void)state;
    char remote_dir[600], dir[1200], path[1300], cwd[700];
    snprintf(remote_dir, sizeof remote_dir, "%s/hostile", work);
    assert_int_equal(mkdir(remote_dir, 0700), 0);
    leave_finished_run(remote_dir, "boardtrace.plain",
                       "prog\x9b"
                       "2J\x1b]0;owned\x07\n",
                       dir, sizeof dir);
    snprintf(cwd, sizeof cwd, "%s/hostile-here", work);
    assert_int_equal(mkdir(cwd, 0700), 0);

    const char *status[] = {
        boardtrace,      "status",          "--host",       board.target, "-i", board.key,
        "--known-hosts", board.known_hosts, "--remote-dir", remote_dir,   NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)status, cwd, 60, &r), 0);
    assert_status(&r, 0);
    if (has_terminal_controls(r.out) || !strstr(r.out, " prog\\x9b2J\\x1b]0;owned\\x07\n"))
        result_print(&r);
    assert_false(has_terminal_controls(r.out));
    assert_non_null(strstr(r.out, " prog\\x9b2J\\x1b]0;owned\\x07\n"));
    result_free(&r);

    leave_finished_run(remote_dir,
                       "boardtrace.\x1b[2J\x1b]0;owned\x07\x9b"
                       "1m",
                       "prog\n", dir, sizeof dir);
    const char *fetch[] = {boardtrace, "fetch",         "--host",          board.target, "-i",
                           board.key,  "--known-hosts", board.known_hosts, dir,          NULL};
    assert_int_equal(run_command((char *const *)fetch, cwd, 60, &r), 0);
    assert_status(&r, 0);
    if (has_terminal_controls(r.out) || has_terminal_controls(r.err))
        result_print(&r);
    assert_false(has_terminal_controls(r.out));
    assert_false(has_terminal_controls(r.err));
    assert_non_null(strstr(r.out, "boardtrace.\\x1b[2J\\x1b]0;owned\\x07\\x9b1m/trace.tracy"));
    result_free(&r);
    snprintf(path, sizeof path, "%s/trace.tracy", cwd);
    assert_int_equal(file_size(path), 8);
}

/* fetch -o FILE treats FILE as run does: an existing one is the user's and
 * is refused (exit 2, nothing fetched, FILE as it was) unless -f. */
static void fetch_refuses_an_existing_output_without_force(void **state)
{
    (void)state;
    char remote[1300], local[600];
    char *data;
    leave_trace_on_board(remote, sizeof remote, &data);
    snprintf(local, sizeof local, "%s/kept.tracy", work);
    assert_int_equal(write_file(local, "mine", 4), 0);
    const char *argv[] = {
        boardtrace,        "fetch", "--host", board.target, "-i", board.key, "--known-hosts",
        board.known_hosts, "-o",    local,    remote,       NULL, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 2);
    assert_said(&r, "-f");
    assert_int_equal(file_size(local), 4);
    result_free(&r);
    argv[10] = "-f";
    argv[11] = remote;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    assert_int_equal(file_size(local), TRACE_SIZE);
    free(data);
    result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s BOARDTRACE BOARD_SH BOARD_DIR PROGRAM CAPTURE\n", argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    program = argv[4];
    capture = argv[5];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fetch_resumes_after_the_connection_is_cut),
        cmocka_unit_test(a_stalled_pull_gives_up_after_the_stall_timeout),
        cmocka_unit_test(a_run_cut_off_mid_way_leaves_a_trace_fetch_gets),
        cmocka_unit_test(fetch_without_a_path_takes_the_newest_run),
        cmocka_unit_test(a_hostile_folder_name_reaches_the_terminal_escaped),
        cmocka_unit_test(fetch_refuses_an_existing_output_without_force),
        cmocka_unit_test(a_capture_that_kept_its_journal_leaves_the_folder_for_fetch_recover),
        cmocka_unit_test(a_journal_the_capture_said_was_cut_short_is_not_said_to_be_whole),
        cmocka_unit_test(a_connection_cut_mid_upload_leaves_no_folder_on_the_board),
        cmocka_unit_test(a_connection_cut_during_the_preflight_leaves_no_folder_on_the_board),
        cmocka_unit_test(a_run_whose_host_went_away_goes_on_until_fetch_stops_it),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
