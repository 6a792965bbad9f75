/* boardtrace-capture as a program: the exit codes of upstream tracy-capture
 * for the same failures, SIGINT stopping cleanly, and a client killed with
 * SIGKILL mid-capture leaving a loadable file with every event received. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "boardtrace/wire.h"
#include "btc_journal.h"
#include "btc_tracy.h"

extern char **environ;

static const char *data_dir, *capture_bin, *replay_bin, *demo_bin, *cpp_bin;
static char **emulator; /* NULL-terminated prefix for target programs */
static int nemulator;
static char tmpdir[] = "/tmp/bt-cli-XXXXXX";

struct proc {
    pid_t pid;
    FILE *out; /* the child's stdout */
};

/* When set, the next start() sends the child's stderr to this file. */
static const char *child_stderr;

/* Starts prog (through the emulator when cross compiling) with args. */
static struct proc start(const char *prog, const char *const *args)
{
    char *argv[64];
    int n = 0;
    for (int i = 0; i < nemulator; i++)
        argv[n++] = emulator[i];
    argv[n++] = (char *)prog;
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    if (child_stderr)
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, child_stderr,
                                         O_WRONLY | O_CREAT | O_TRUNC, 0600);
    struct proc p = {0};
    assert_int_equal(posix_spawnp(&p.pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    p.out = fdopen(fds[0], "r");
    return p;
}

/* finish(), but a child still running after `seconds` is killed and -1
 * returned, so a hang fails the test instead of stalling the suite. */
static int finish_within(struct proc *p, int seconds)
{
    for (int i = 0; i < seconds * 10; i++) {
        int st;
        pid_t w = waitpid(p->pid, &st, WNOHANG);
        if (w == p->pid) {
            if (p->out)
                fclose(p->out);
            p->out = NULL;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    if (p->out)
        fclose(p->out);
    p->out = NULL;
    return -1;
}

/* The whole of a small file, NUL-terminated, in buf. */
static void slurp(const char *path, char *buf, size_t n)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = 0;
    fclose(f);
}

static int finish(struct proc *p)
{
    int st;
    while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (p->out)
        fclose(p->out);
    p->out = NULL;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A replay client; returns its port. */
static unsigned start_replay3(struct proc *p, const char *extra1, const char *extra2,
                              const char *extra3)
{
    const char *args[] = {data_dir, extra1, extra2, extra3, NULL};
    *p = start(replay_bin, args);
    /* Line by line: a scanf "\n" would wait for the next line to start. */
    char line[128] = "";
    unsigned port = 0;
    assert_non_null(fgets(line, sizeof line, p->out));
    assert_int_equal(sscanf(line, "listening on %u", &port), 1);
    return port;
}

static unsigned start_replay(struct proc *p, const char *extra1, const char *extra2)
{
    return start_replay3(p, extra1, extra2, NULL);
}

static void path_in_tmp(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

/* A whole session: a replay client, and a capture into path with the extra
 * options; both must exit 0. Returns the capture's summary line in line. */
static void capture_a_replay(const char *path, const char *extra1, const char *extra2, char *line,
                             size_t n)
{
    struct proc r;
    char port[16];
    snprintf(port, sizeof port, "%u", start_replay(&r, NULL, NULL));
    const char *args[10] = {"-o", path, "-p", port, "--connect-timeout", "20"};
    int k = 6;
    if (extra1)
        args[k++] = extra1;
    if (extra2)
        args[k++] = extra2;
    args[k] = NULL;
    struct proc cap = start(capture_bin, args);
    assert_non_null(fgets(line, (int)n, cap.out));
    assert_int_equal(finish(&cap), 0);
    assert_int_equal(finish(&r), 0);
}

static void existing_output_without_f_exits_4(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "exists.tracy");
    FILE *f = fopen(path, "w");
    fputs("keep", f);
    fclose(f);
    const char *args[] = {"-o", path, "-p", "1", NULL};
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 4);
    f = fopen(path, "r");
    char buf[8] = "";
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "keep");
}

static uint64_t zones_in(const char *path, uint64_t *unended);

static int entries_in_tmp(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* -f replaces a trace only with a complete new one: a capture that gets no
 * client keeps the old file; one that succeeds replaces it and leaves no
 * temporary file beside it. */
static void overwrite_keeps_the_old_file_until_the_new_one_is_complete(void **state)
{
    (void)state;
    char path[4200], line[512] = "";
    path_in_tmp(path, sizeof path, "previous.tracy");
    FILE *f = fopen(path, "w");
    fputs("an earlier trace", f);
    fclose(f);
    int entries = entries_in_tmp();
    const char *none[] = {"-o", path, "-f", "-p", "9", "--connect-timeout", "1", NULL};
    struct proc p = start(capture_bin, none);
    assert_int_equal(finish(&p), 6);
    f = fopen(path, "r");
    char buf[32] = "";
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "an earlier trace");
    assert_int_equal(entries_in_tmp(), entries);

    capture_a_replay(path, "-f", NULL, line, sizeof line);
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), 8300);
    assert_int_equal(entries_in_tmp(), entries);
}

static void unwritable_output_exits_5(void **state)
{
    (void)state;
    const char *args[] = {"-o", "/nonexistent-dir/x.tracy", NULL};
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 5);
}

/* -m takes upstream's range, 1..999 percent of physical memory. */
static void memory_limit_out_of_range_exits_1(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "limit.tracy");
    const char *bad[] = {"0", "1000", "-5", "ten", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *args[] = {"-o", path, "-m", bad[i], "-p", "9", "--connect-timeout", "1", NULL};
        struct proc p = start(capture_bin, args);
        assert_int_equal(finish(&p), 1);
    }
    assert_int_equal(access(path, F_OK), -1);
}

/* Every number is decimal, whole where it counts (a port, a percentage),
 * finite and in range: "-p nan" once meant port 0, "-s nan" and
 * "--connect-timeout nan" no limit at all, "-p 80.5" and "-p 0x50" port 80.
 * Each is a usage error (exit 1) naming the option, before any connection. */
static void numbers_are_decimal_finite_and_in_range(void **state)
{
    (void)state;
    char path[4200], errpath[4200], err[1024];
    path_in_tmp(path, sizeof path, "numbers.tracy");
    path_in_tmp(errpath, sizeof errpath, "numbers.err");
    static const char *const everywhere[] = {"nan",  "NaN", "inf", "-inf", " 5", "5 ", "+5",   "-1",
                                             "0x50", "1e2", "",    "5s",   ".5", "5.", "1.2.3"};
    static const char *const whole_only[] = {"80.5", "50.0"};
    static const char *const options[] = {"-p", "-m", "-s", "--connect-timeout"};
    child_stderr = errpath;
    for (size_t o = 0; o < sizeof options / sizeof *options; o++) {
        bool whole = o < 2;
        size_t n = sizeof everywhere / sizeof *everywhere + (whole ? 2 : 0);
        for (size_t i = 0; i < n; i++) {
            const char *bad = i < sizeof everywhere / sizeof *everywhere
                                  ? everywhere[i]
                                  : whole_only[i - sizeof everywhere / sizeof *everywhere];
            const char *args[12] = {"-o", path, options[o], bad};
            int k = 4;
            if (strcmp(options[o], "-p") != 0) {
                args[k++] = "-p";
                args[k++] = "9";
            }
            if (strcmp(options[o], "--connect-timeout") != 0) {
                args[k++] = "--connect-timeout";
                args[k++] = "1";
            }
            struct proc p = start(capture_bin, args);
            int rc = finish_within(&p, 60);
            slurp(errpath, err, sizeof err);
            if (rc != 1)
                fprintf(stderr, "%s '%s': exit %d: %s\n", options[o], bad, rc, err);
            assert_int_equal(rc, 1);
            assert_non_null(strstr(err, options[o]));
        }
    }
    child_stderr = NULL;
    /* Fractions of a second stay what they are. */
    const char *args[] = {"-o", path, "-p", "9", "-s", "2.5", "--connect-timeout", "0.5", NULL};
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish_within(&p, 60), 6);
    assert_int_equal(access(path, F_OK), -1);
}

static void missing_output_option_exits_1(void **state)
{
    (void)state;
    const char *args[] = {"-a", "127.0.0.1", NULL};
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 1);
}

static void no_client_within_connect_timeout_exits_6(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "none.tracy");
    /* A port nobody listens on: bind one, keep it closed. */
    const char *args[] = {"-o", path, "-p", "9", "--connect-timeout", "1", NULL};
    time_t t0 = time(NULL);
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 6);
    assert_true(time(NULL) - t0 < 30);
    assert_int_equal(access(path, F_OK), -1);
}

/* A client listening where the capture does not look (upstream's under
 * TRACY_ONLY_LOCALHOST is on [::1] alone) is named when the capture gives
 * up on 127.0.0.1: the address, the port, and what listens on it. */
static void giving_up_names_what_listens_on_the_port(void **state)
{
    (void)state;
    int l = socket(AF_INET6, SOCK_STREAM, 0);
    assert_true(l >= 0);
    int one = 1;
    setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    socklen_t al = sizeof a;
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
    char port[16], path[4200], errpath[4300], said[2048] = "", want[64];
    snprintf(port, sizeof port, "%u", (unsigned)ntohs(a.sin6_port));
    path_in_tmp(path, sizeof path, "elsewhere.tracy");
    path_in_tmp(errpath, sizeof errpath, "elsewhere.err");
    const char *args[] = {"-o", path, "-a", "127.0.0.1", "-p", port, "--connect-timeout",
                          "1",  NULL};
    child_stderr = errpath;
    struct proc p = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish(&p), 6);
    close(l);
    slurp(errpath, said, sizeof said);
    unlink(errpath);
    snprintf(want, sizeof want, "on 127.0.0.1 port %s within 1 s", port);
    assert_non_null(strstr(said, want));
    snprintf(want, sizeof want, "listening on the port: [::1]:%s", port);
    assert_non_null(strstr(said, want));
}

/* A name that does not resolve ends the capture with the reason, without
 * waiting out the connect timeout. (The statically linked board build takes
 * numeric addresses and localhost only, so this runs that branch there.) The
 * name is no valid host name, so the resolver refuses it without asking a
 * name server: no test sends a packet off this machine. */
static void an_unresolvable_address_exits_6_at_once(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "unresolved.tracy");
    const char *args[] = {"-o", path, "-a", "no such board", "--connect-timeout", "120", NULL};
    time_t t0 = time(NULL);
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 6);
    assert_true(time(NULL) - t0 < 60);
    assert_int_equal(access(path, F_OK), -1);
}

/* localhost works in every build. */
static void localhost_is_understood(void **state)
{
    (void)state;
    char path[4200], line[512] = "";
    path_in_tmp(path, sizeof path, "localhost.tracy");
    capture_a_replay(path, "-a", "localhost", line, sizeof line);
    assert_non_null(strstr(line, "8300 zones"));
}

static void client_already_served_exits_2(void **state)
{
    (void)state;
    struct proc r;
    char port[16], path[4200];
    snprintf(port, sizeof port, "%u", start_replay(&r, "--handshake-status", "3"));
    path_in_tmp(path, sizeof path, "busy.tracy");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 2);
    finish(&r);
}

static void protocol_mismatch_exits_1(void **state)
{
    (void)state;
    struct proc r;
    char port[16], path[4200];
    snprintf(port, sizeof port, "%u", start_replay(&r, "--handshake-status", "2"));
    path_in_tmp(path, sizeof path, "mismatch.tracy");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 1);
    finish(&r);
}

static uint64_t zones_in(const char *path, uint64_t *unended)
{
    struct btc_trace t;
    char err[512];
    int rc = btc_tracy_read(path, &t, NULL, NULL, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", path, err);
    assert_int_equal(rc, 0);
    uint64_t z = t.zones;
    *unended = t.zones_unended;
    btc_trace_free(&t);
    return z;
}

/* A client of protocol 72 (the Tracy IREE pins) is found by offering the
 * protocols in turn; its file is in its own release's layout (0.11.2, what
 * its GUI opens) unless --file-version says otherwise; the summary names
 * its protocol. */
static void an_older_client_gets_its_own_releases_file(void **state)
{
    (void)state;
    static const struct {
        const char *protocol, *file_version, *env_version;
        uint32_t expect;
    } cases[] = {{"72", NULL, NULL, BTC_FILE_VERSION(0, 11, 2)},
                 {"64", NULL, NULL, BTC_FILE_VERSION(0, 10, 0)},
                 {"76", "0.14.0", NULL, BTC_FILE_VERSION(0, 14, 0)},
                 /* the user's release, set once in the environment */
                 {"76", NULL, "0.11.2", BTC_FILE_VERSION(0, 11, 2)},
                 {"72", "0.14.0", "0.11.2", BTC_FILE_VERSION(0, 14, 0)}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].env_version)
            setenv("BOARDTRACE_FILE_VERSION", cases[i].env_version, 1);
        else
            unsetenv("BOARDTRACE_FILE_VERSION");
        struct proc r;
        char port[16], path[4200], line[512] = "", name[64];
        snprintf(port, sizeof port, "%u", start_replay(&r, "--protocol", cases[i].protocol));
        snprintf(name, sizeof name, "protocol-%s-%zu.tracy", cases[i].protocol, i);
        path_in_tmp(path, sizeof path, name);
        const char *args[] = {"-o",
                              path,
                              "-p",
                              port,
                              "--connect-timeout",
                              "20",
                              cases[i].file_version ? "--file-version" : NULL,
                              cases[i].file_version,
                              NULL};
        struct proc cap = start(capture_bin, args);
        assert_non_null(fgets(line, sizeof line, cap.out));
        assert_int_equal(finish(&cap), 0);
        assert_int_equal(finish(&r), 0);
        char said[64];
        snprintf(said, sizeof said, "client Tracy protocol %s (", cases[i].protocol);
        assert_non_null(strstr(line, said));
        assert_non_null(strstr(line, "8300 zones"));
        struct btc_trace t;
        char err[512];
        assert_int_equal(btc_tracy_read(path, &t, NULL, NULL, err, sizeof err), 0);
        assert_int_equal(t.version, cases[i].expect);
        assert_int_equal(t.zones, 8300);
        btc_trace_free(&t);
    }
    unsetenv("BOARDTRACE_FILE_VERSION");
}

/* A client that claims protocol 72 and sends 0.14.0's events: a clear
 * error naming the protocol it claimed (exit 7), and what came before is
 * in the file. */
static void a_client_sending_another_protocols_events_is_named(void **state)
{
    (void)state;
    struct proc r;
    char port[16], path[4200], errpath[4300], said[2048] = "";
    snprintf(port, sizeof port, "%u", start_replay3(&r, "--protocol", "72", "--unconverted"));
    path_in_tmp(path, sizeof path, "mislabelled.tracy");
    path_in_tmp(errpath, sizeof errpath, "mislabelled.err");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errpath;
    struct proc p = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish(&p), 7);
    finish(&r);
    slurp(errpath, said, sizeof said);
    unlink(errpath);
    assert_non_null(strstr(said, "the client said it speaks Tracy protocol 72 (0.11.2"));
    struct btc_trace t;
    char err[512];
    assert_int_equal(btc_tracy_read(path, &t, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(t.version, BTC_FILE_VERSION(0, 11, 2));
    btc_trace_free(&t);
}

/* A client that refuses every protocol boardtrace offers is told apart
 * from one that refuses only the newest: exit 1, naming the versions. */
static void a_client_of_no_known_protocol_is_named_as_such(void **state)
{
    (void)state;
    struct proc r;
    char port[16], path[4200];
    snprintf(port, sizeof port, "%u", start_replay(&r, "--handshake-status", "2"));
    path_in_tmp(path, sizeof path, "unknown-protocol.tracy");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    char errpath[4300], said[1024] = "";
    path_in_tmp(errpath, sizeof errpath, "unknown-protocol.err");
    child_stderr = errpath;
    struct proc p = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish(&p), 1);
    assert_int_equal(finish(&r), 0);
    slurp(errpath, said, sizeof said);
    unlink(errpath);
    assert_non_null(strstr(said, "refused every Tracy protocol"));
    assert_non_null(strstr(said, "72 (0.11.2"));
    assert_non_null(strstr(said, "64 (0.10.0)"));
    /* It names what it offered: 66-tt is offered only when asked for. */
    assert_null(strstr(said, "66-tt"));
    assert_int_equal(access(path, F_OK), -1);
}

/* Waits until the capture has received `frame_bytes` of frames: its
 * journal holds every frame as it came, after its magic and the welcome.
 * 0 when it does not within two minutes (on any machine: a failure), or
 * ends first (it journals frames as they come, before decoding them, so
 * one that ends on them has them all: the test's assertions then say). */
static int wait_received(const struct proc *cap, const char *journal,
                         unsigned long long frame_bytes)
{
    off_t want = (off_t)(BTC_JOURNAL_MAGIC_SIZE + BT_WELCOME_SIZE + frame_bytes);
    for (int i = 0; i < 120 * 100; i++) {
        struct stat st;
        if (stat(journal, &st) == 0 && st.st_size >= want)
            return 1;
        siginfo_t info = {0};
        if (waitid(P_PID, (id_t)cap->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == cap->pid)
            return 1;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "the capture's journal %s did not reach %lld bytes in two minutes\n", journal,
            (long long)want);
    return 0;
}

/* Starts a capture against a replay paused after `events` data events and
 * waits until the replay says it paused and the capture got everything. */
static void paused_session(struct proc *r, struct proc *cap, const char *path, long events,
                           uint64_t *zone_begins, const char *replay_flag, const char *cap_opt,
                           const char *cap_val)
{
    char port[16], ev[32];
    snprintf(ev, sizeof ev, "%ld", events);
    snprintf(port, sizeof port, "%u", start_replay3(r, "--pause-after", ev, replay_flag));
    const char *args[] = {"-o", path,    "-f",    "-p", port, "--connect-timeout",
                          "20", cap_opt, cap_val, NULL};
    *cap = start(capture_bin, args);
    unsigned long long sent = 0, zb = 0, bytes = 0;
    char line[128] = "";
    assert_non_null(fgets(line, sizeof line, r->out));
    assert_int_equal(sscanf(line, "paused after %llu events, %llu zone begins, %llu frame bytes",
                            &sent, &zb, &bytes),
                     3);
    *zone_begins = zb;
    char journal[4300];
    snprintf(journal, sizeof journal, "%s.journal", path);
    assert_true(wait_received(cap, journal, bytes));
}

static void client_killed_with_sigkill_leaves_a_loadable_file(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "killed.tracy");
    struct proc r, cap;
    uint64_t zone_begins;
    paused_session(&r, &cap, path, 20000, &zone_begins, NULL, NULL, NULL);
    assert_true(zone_begins > 1000);
    kill(r.pid, SIGKILL);
    assert_int_equal(finish(&r), 128 + SIGKILL);
    assert_int_equal(finish(&cap), 0);
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), zone_begins);
}

/* 64 MiB of strings (and a thread, plot, frame, fiber and external thread
 * and process name) the capture
 * never asked for, before the recorded session: they are dropped, counted
 * in one message, the capture's memory stays far below them, and the trace
 * is the session's, complete. */
static void strings_nobody_asked_for_are_dropped_and_counted(void **state)
{
    (void)state;
    char path[4200], errfile[4200], err[4096], port[16], line[512];
    path_in_tmp(path, sizeof path, "unsolicited.tracy");
    path_in_tmp(errfile, sizeof errfile, "unsolicited.err");
    struct proc r;
    snprintf(port, sizeof port, "%u", start_replay(&r, "--unsolicited-mib", "64"));
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    assert_non_null(fgets(line, sizeof line, cap.out));
    fclose(cap.out);
    cap.out = NULL;
    int st;
    struct rusage ru;
    while (wait4(cap.pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(finish(&r), 0);
    assert_non_null(strstr(line, "complete, "));
    slurp(errfile, err, sizeof err);
    /* 64 MiB in 4000-byte texts, and the six names. */
    assert_non_null(strstr(err, "boardtrace-capture: dropped 16784 strings (64.0 MiB) the client "
                                "sent without being asked for them\n"));
    assert_null(strstr(strstr(err, "dropped") + 1, "dropped"));
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), 8300);
    assert_int_equal(unended, 0);
    if (nemulator == 0) {
        fprintf(stderr, "capture with 64 MiB of unasked strings: peak RSS %ld KiB\n", ru.ru_maxrss);
        assert_true(ru.ru_maxrss < 40 * 1024);
    }
}

/* The client's connection ends inside a frame: the capture says how much
 * of it came and was dropped, and keeps everything before it. */
static void a_client_closing_inside_a_frame_is_reported(void **state)
{
    (void)state;
    char path[4200], errfile[4200], err[4096];
    path_in_tmp(path, sizeof path, "cut-frame.tracy");
    path_in_tmp(errfile, sizeof errfile, "cut-frame.err");
    struct proc r, cap;
    uint64_t zone_begins;
    child_stderr = errfile;
    paused_session(&r, &cap, path, 20000, &zone_begins, "--cut-frame", NULL, NULL);
    child_stderr = NULL;
    assert_true(zone_begins > 1000);
    assert_int_equal(finish(&cap), 0);
    assert_int_equal(finish(&r), 0);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, "the client closed the connection before it sent Terminate, in "
                                "the middle of a frame (its first 14 bytes came; they are "
                                "dropped)"));
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), zone_begins);
}

static void sigint_stops_the_capture_and_writes_the_file(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "interrupted.tracy");
    struct proc r, cap;
    uint64_t zone_begins;
    paused_session(&r, &cap, path, 20000, &zone_begins, NULL, NULL, NULL);
    assert_true(zone_begins > 1000);
    kill(cap.pid, SIGINT);
    assert_int_equal(finish(&cap), 0);
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), zone_begins);
    kill(r.pid, SIGKILL);
    finish(&r);
}

/* The capture process itself killed with SIGKILL: no trace file, but the
 * journal it kept rebuilds one with every event it had received. */
static void killed_capture_is_recovered_from_its_journal(void **state)
{
    (void)state;
    char path[4200], journal[4300], rebuilt[4200];
    path_in_tmp(path, sizeof path, "capture-killed.tracy");
    path_in_tmp(rebuilt, sizeof rebuilt, "rebuilt.tracy");
    snprintf(journal, sizeof journal, "%s.journal", path);
    struct proc r, cap;
    uint64_t zone_begins;
    paused_session(&r, &cap, path, 20000, &zone_begins, NULL, NULL, NULL);
    assert_true(zone_begins > 1000);
    kill(cap.pid, SIGKILL);
    assert_int_equal(finish(&cap), 128 + SIGKILL);
    kill(r.pid, SIGKILL);
    finish(&r);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access(journal, F_OK), 0);
    const char *args[] = {"--recover", journal, "-o", rebuilt, NULL};
    struct proc rec = start(capture_bin, args);
    assert_int_equal(finish(&rec), 0);
    uint64_t unended;
    assert_int_equal(zones_in(rebuilt, &unended), zone_begins);
}

static void recovering_a_file_that_is_no_journal_exits_1(void **state)
{
    (void)state;
    char rebuilt[4200];
    path_in_tmp(rebuilt, sizeof rebuilt, "not-rebuilt.tracy");
    const char *args[] = {"--recover", data_dir, "-o", rebuilt, NULL};
    struct proc rec = start(capture_bin, args);
    assert_int_equal(finish(&rec), 1);
    assert_int_equal(access(rebuilt, F_OK), -1);
}

static void malformed_input_exits_7_and_keeps_what_came_before(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "corrupt.tracy");
    struct proc r, cap;
    uint64_t zone_begins;
    paused_session(&r, &cap, path, 20000, &zone_begins, "--corrupt", NULL, NULL);
    assert_true(zone_begins > 1000);
    assert_int_equal(finish(&cap), 7);
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), zone_begins);
    kill(r.pid, SIGKILL);
    finish(&r);
}

/* A frame header out of range after whole frames: the frames before it
 * (journaled and decoded together with it in one receive) are all kept,
 * and the message names the size. */
static void a_bad_frame_size_exits_7_and_keeps_what_came_before(void **state)
{
    (void)state;
    char path[4200], errfile[4200], err[4096];
    path_in_tmp(path, sizeof path, "bad-frame.tracy");
    path_in_tmp(errfile, sizeof errfile, "bad-frame.err");
    struct proc r;
    char port[16];
    snprintf(port, sizeof port, "%u", start_replay3(&r, "--pause-after", "20000", "--bad-frame"));
    const char *args[] = {"-o", path, "-f", "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    unsigned long long sent = 0, zb = 0;
    char line[128] = "";
    assert_non_null(fgets(line, sizeof line, r.out));
    assert_int_equal(sscanf(line, "paused after %llu events, %llu zone begins", &sent, &zb), 2);
    assert_true(zb > 1000);
    assert_int_equal(finish_within(&cap, 30), 7);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, "frame size 0, expected 1.."));
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), zb);
    kill(r.pid, SIGKILL);
    finish(&r);
}

static void time_limit_stops_the_capture_and_writes_the_file(void **state)
{
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "timed.tracy");
    struct proc r, cap;
    uint64_t zone_begins;
    time_t t0 = time(NULL);
    paused_session(&r, &cap, path, 20000, &zone_begins, NULL, "-s", "3");
    assert_true(zone_begins > 1000);
    assert_int_equal(finish(&cap), 0);
    assert_true(time(NULL) - t0 < 20);
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), zone_begins);
    kill(r.pid, SIGKILL);
    finish(&r);
}

/* At its time limit the capture sends Terminate and lets the client close
 * first: a client still sending (slow to read its queries, as one under
 * emulation is) must not have its connection reset, which it would take
 * for a capture that died. */
static void time_limit_lets_a_client_still_sending_close_first(void **state)
{
    (void)state;
    char path[4200], line[256] = "";
    path_in_tmp(path, sizeof path, "timed-slow.tracy");
    struct proc r, cap;
    uint64_t zone_begins;
    paused_session(&r, &cap, path, 20000, &zone_begins, "--slow-terminate", "-s", "3");
    assert_int_equal(finish(&cap), 0);
    while (fgets(line, sizeof line, r.out) && !strstr(line, "obeyed the Terminate"))
        ;
    assert_non_null(strstr(line, "obeyed the Terminate after 1500 ms of sending more"));
    assert_int_equal(finish(&r), 0);
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), zone_begins);
}

static void complete_session_exits_0_with_a_summary(void **state)
{
    (void)state;
    char path[4200], line[512] = "";
    path_in_tmp(path, sizeof path, "complete.tracy");
    capture_a_replay(path, NULL, NULL, line, sizeof line);
    assert_non_null(strstr(line, "complete, "));
    assert_non_null(strstr(line, "8300 zones"));
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), 8300);
    assert_int_equal(unended, 0);
    char journal[4300];
    snprintf(journal, sizeof journal, "%s.journal", path);
    assert_int_equal(access(journal, F_OK), -1); /* removed once the file is written */
}

/* --compression lz4: the container says LZ4 (byte 4 of its header is 0),
 * and the file reads back whole; another value is refused. */
static void compression_lz4_writes_an_lz4_file(void **state)
{
    (void)state;
    char path[4200], line[512] = "";
    path_in_tmp(path, sizeof path, "lz4.tracy");
    capture_a_replay(path, "--compression", "lz4", line, sizeof line);
    assert_non_null(strstr(line, "complete, "));
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t head[6];
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    assert_memory_equal(head, "tr\xfdP", 4);
    assert_int_equal(head[4], 0);
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), 8300);
    assert_int_equal(unended, 0);
    const char *args[] = {"-o", path, "-f", "--compression", "gzip", NULL};
    struct proc p = start(capture_bin, args);
    assert_int_equal(finish(&p), 1);
}

/* In a private network namespace whose only ephemeral ports are 40000 and
 * 40001, a capture started before its client tries 127.0.0.1:40000 from
 * source port 40000 too, and TCP connects that attempt to itself. The capture
 * must not take that for its client: it retries, and the client that then
 * listens on 40000 gets captured. Runs in a child (the namespace and the port
 * range are its own); needs root, else skipped. */
static int late_client_in_private_network(void)
{
    if (unshare(CLONE_NEWNET) != 0)
        return 77;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
        return 78;
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
        return 78;
    close(s);
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "w");
    if (!f || fprintf(f, "40000 40001\n") < 0 || fclose(f) != 0)
        return 78;
    char path[4200];
    path_in_tmp(path, sizeof path, "late.tracy");
    const char *args[] = {"-o", path, "-p", "40000", "--connect-timeout", "30", NULL};
    struct proc cap = start(capture_bin, args);
    sleep(2); /* the capture is retrying by now */
    const char *rargs[] = {data_dir, "--port", "40000", NULL};
    struct proc r = start(replay_bin, rargs);
    char line[128] = "";
    if (!fgets(line, sizeof line, r.out) || strcmp(line, "listening on 40000\n") != 0) {
        fprintf(stderr, "replay client: %s", line);
        kill(cap.pid, SIGKILL);
        return 1;
    }
    int cs = finish(&cap), rs = finish(&r);
    if (cs != 0 || rs != 0) {
        fprintf(stderr, "capture exit %d, client exit %d\n", cs, rs);
        return 1;
    }
    uint64_t unended;
    return zones_in(path, &unended) == 8300 ? 0 : 1;
}

static void capture_never_takes_its_own_connection_for_the_client(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(late_client_in_private_network());
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77 || WEXITSTATUS(st) == 78)
        skip(); /* no network namespaces here (not root) */
    assert_int_equal(WEXITSTATUS(st), 0);
}

static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static int count_zones(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    const struct btc_read_srcloc *s = btc_trace_srcloc(t, z->srcloc);
    if (s && !strcmp(btc_trace_string(t, s->name), "schedule") && z->end > z->start)
        (*(uint64_t *)ctx)++;
    return 0;
}

/* The runtime's demo, run as a board would run it (TRACY_NO_EXIT=1), is
 * captured to the end: one "schedule" zone per frame, every zone ended.
 * DEMO is "-" in a build whose runtime has tracing compiled out. */
static void captures_the_boardtrace_demo(void **state)
{
    (void)state;
    if (strcmp(demo_bin, "-") == 0)
        skip();
    char path[4200], port[16];
    path_in_tmp(path, sizeof path, "demo.tracy");
    snprintf(port, sizeof port, "%u", free_port());
    setenv("TRACY_NO_EXIT", "1", 1);
    setenv("TRACY_PORT", port, 1);
    setenv("TRACY_NO_BROADCAST", "1", 1); /* no packet leaves this machine */
    const char *dargs[] = {"-f", "40", NULL};
    struct proc demo = start(demo_bin, dargs);
    unsetenv("TRACY_NO_EXIT");
    unsetenv("TRACY_PORT");
    unsetenv("TRACY_NO_BROADCAST");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "60", NULL};
    struct proc cap = start(capture_bin, args);
    assert_int_equal(finish(&cap), 0);
    assert_int_equal(finish(&demo), 0);
    struct btc_trace t;
    char err[512];
    uint64_t schedule = 0;
    assert_int_equal(btc_tracy_read(path, &t, count_zones, &schedule, err, sizeof err), 0);
    assert_int_equal(schedule, 40);
    assert_true(t.zones > 40);
    assert_int_equal(t.zones_unended, 0);
    btc_trace_free(&t);
}

static int no_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)ctx;
    (void)t;
    (void)z;
    return 0;
}

/* A program that names a thread with a group hint (Tracy.hpp's
 * tracy::SetThreadNameWithHint; bt_traced_cpp's worker, hint 3) is captured
 * with the hint in that thread's record of the file, where the GUI reads it;
 * a thread named without one has hint 0. Its sections (one in category 0,
 * one in category 1, which it names) are in the file's section tables, with
 * an entry for each category used. CPP is "-" without a C++ compiler
 * or with tracing compiled out. */
static void thread_group_hints_and_sections_are_kept_in_the_file(void **state)
{
    (void)state;
    if (strcmp(cpp_bin, "-") == 0)
        skip();
    char path[4200], port[16];
    path_in_tmp(path, sizeof path, "cpp.tracy");
    snprintf(port, sizeof port, "%u", free_port());
    setenv("TRACY_NO_EXIT", "1", 1);
    setenv("TRACY_PORT", port, 1);
    setenv("TRACY_NO_BROADCAST", "1", 1); /* no packet leaves this machine */
    const char *pargs[] = {NULL};
    struct proc prog = start(cpp_bin, pargs);
    unsetenv("TRACY_NO_EXIT");
    unsetenv("TRACY_PORT");
    unsetenv("TRACY_NO_BROADCAST");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "60", NULL};
    struct proc cap = start(capture_bin, args);
    assert_int_equal(finish(&cap), 0);
    assert_int_equal(finish(&prog), 0);
    struct btc_trace t;
    char err[512];
    assert_int_equal(btc_tracy_read(path, &t, no_zone, NULL, err, sizeof err), 0);
    int worker = 0, main_thread = 0;
    for (size_t i = 0; i < t.threads.len; i++) {
        const struct btc_read_thread *th = btc_vec_at(&t.threads, i);
        const char *name = btc_trace_string(&t, th->name);
        if (strcmp(name, "cpp-worker") == 0) {
            assert_int_equal(th->group_hint, 3);
            worker++;
        } else if (strcmp(name, "cpp-main") == 0) {
            assert_int_equal(th->group_hint, 0);
            main_thread++;
        }
    }
    assert_int_equal(worker, 1);
    assert_int_equal(main_thread, 1);
    assert_int_equal(t.sections, 2);
    assert_int_equal(t.section_categories, 2);
    btc_trace_free(&t);
}

/* A spool folder that fills up mid-capture (a 128 KiB tmpfs, root only):
 * the capture ends saying why, keeps its journal, and --recover rebuilds a
 * loadable trace from it once the spools have room. */
static void a_full_spool_folder_keeps_the_journal_and_says_why(void **state)
{
    (void)state;
    char spool[4200], path[4200], journal[4300], rebuilt[4200], errfile[4200], err[2048];
    path_in_tmp(spool, sizeof spool, "small-spool");
    path_in_tmp(path, sizeof path, "spool-full.tracy");
    path_in_tmp(rebuilt, sizeof rebuilt, "spool-full-rebuilt.tracy");
    path_in_tmp(errfile, sizeof errfile, "spool-full.err");
    snprintf(journal, sizeof journal, "%s.journal", path);
    assert_int_equal(mkdir(spool, 0700), 0);
    if (mount("tmpfs", spool, "tmpfs", 0, "size=128k") != 0) {
        rmdir(spool);
        skip(); /* mounting needs root */
    }
    struct proc r;
    char port[16];
    snprintf(port, sizeof port, "%u", start_replay(&r, NULL, NULL));
    const char *args[] = {"-o", path, "-p", port, "--spool-dir", spool, "--connect-timeout",
                          "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    int status = finish_within(&cap, 60);
    kill(r.pid, SIGKILL);
    finish(&r);
    umount2(spool, MNT_DETACH);
    rmdir(spool);
    assert_int_equal(status, 8);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, "No space left on device"));
    assert_non_null(strstr(err, "--recover"));
    assert_int_equal(access(path, F_OK), -1);
    const char *rargs[] = {"--recover", journal, "-o", rebuilt, NULL};
    struct proc rec = start(capture_bin, rargs);
    assert_int_equal(finish(&rec), 0);
    uint64_t unended;
    assert_true(zones_in(rebuilt, &unended) > 0);
}

/* An output folder that fills up mid-capture (a 64 KiB tmpfs, root only):
 * the journal beside the output stops short of the session, and the trace
 * cannot be written either. The capture says the journal holds only part
 * and why, never that what was received is in it. */
static void a_journal_cut_short_is_not_said_to_hold_what_was_received(void **state)
{
    (void)state;
    char dir[4200], path[4300], errfile[4200], err[2048];
    path_in_tmp(dir, sizeof dir, "small-output");
    snprintf(path, sizeof path, "%s/cut.tracy", dir);
    path_in_tmp(errfile, sizeof errfile, "journal-cut.err");
    assert_int_equal(mkdir(dir, 0700), 0);
    if (mount("tmpfs", dir, "tmpfs", 0, "size=64k") != 0) {
        rmdir(dir);
        skip(); /* mounting needs root */
    }
    struct proc r;
    char port[16];
    snprintf(port, sizeof port, "%u", start_replay(&r, NULL, NULL));
    const char *args[] = {"-o", path, "-p", port, "--spool-dir", tmpdir, "--connect-timeout",
                          "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    int status = finish_within(&cap, 60);
    kill(r.pid, SIGKILL);
    finish(&r);
    umount2(dir, MNT_DETACH);
    rmdir(dir);
    slurp(errfile, err, sizeof err);
    if (status != 8)
        fprintf(stderr, "%s", err);
    assert_int_equal(status, 8);
    assert_non_null(strstr(err, "writing the journal"));
    assert_non_null(strstr(err, "No space left on device"));
    assert_non_null(strstr(err, "only what was received before"));
    assert_null(strstr(err, "what was received is in"));
}

/* --spool-dir naming a folder that is not there ends at once, before any
 * connection, instead of capturing into nowhere. */
static void a_missing_spool_dir_exits_1_at_once(void **state)
{
    (void)state;
    struct proc r;
    char port[16], path[4200], spool[4200], errfile[4200], err[1024];
    snprintf(port, sizeof port, "%u", start_replay(&r, NULL, NULL));
    path_in_tmp(path, sizeof path, "nospool.tracy");
    path_in_tmp(spool, sizeof spool, "no-such-folder");
    path_in_tmp(errfile, sizeof errfile, "nospool.err");
    const char *args[] = {"-o", path, "-p", port, "--spool-dir", spool, "--connect-timeout",
                          "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish_within(&cap, 20), 1);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, "--spool-dir"));
    assert_non_null(strstr(err, "No such file or directory"));
    assert_int_equal(access(path, F_OK), -1);
    kill(r.pid, SIGKILL);
    finish(&r);
}

/* A journal a killed capture left is the only copy of its session: a new
 * capture to the same file refuses without -f, and with -f moves it aside
 * (named on stderr) instead of overwriting it. */
static void an_earlier_journal_is_never_overwritten(void **state)
{
    (void)state;
    char path[4200], journal[4300], aside[4400], errfile[4200], err[2048], got[64];
    path_in_tmp(path, sizeof path, "journaled.tracy");
    snprintf(journal, sizeof journal, "%s.journal", path);
    snprintf(aside, sizeof aside, "%s.1", journal);
    path_in_tmp(errfile, sizeof errfile, "journaled.err");
    FILE *f = fopen(journal, "w");
    assert_non_null(f);
    fputs("the earlier session", f);
    fclose(f);

    struct proc r;
    char port[16];
    snprintf(port, sizeof port, "%u", start_replay(&r, NULL, NULL));
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish_within(&cap, 20), 4);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, "--recover"));
    slurp(journal, got, sizeof got);
    assert_string_equal(got, "the earlier session");

    const char *fargs[] = {"-o", path, "-f", "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errfile;
    cap = start(capture_bin, fargs);
    child_stderr = NULL;
    assert_int_equal(finish_within(&cap, 60), 0);
    assert_int_equal(finish(&r), 0);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, aside));
    slurp(aside, got, sizeof got);
    assert_string_equal(got, "the earlier session");
    uint64_t unended;
    assert_int_equal(zones_in(path, &unended), 8300);
}

/* A listener on 127.0.0.1 that accepts the capture and then does what
 * `serve` says; returns its port. */
struct fake_client {
    int listen_fd;
    pthread_t thread;
    int mode; /* 0 silent after accepting, 1 a malformed welcome, 2 a welcome dribbled */
};

static void *fake_client_serve(void *arg)
{
    struct fake_client *fc = arg;
    int fd = accept(fc->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    if (fc->mode == 1) {
        uint8_t hello[12];
        size_t got = 0;
        while (got < sizeof hello) {
            ssize_t k = recv(fd, hello + got, sizeof hello - got, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        /* Status "welcome", then a welcome whose timer multiplier is 0. */
        static uint8_t welcome[1 + 1170];
        welcome[0] = 1;
        (void)!send(fd, welcome, sizeof welcome, MSG_NOSIGNAL);
    }
    if (fc->mode == 2) {
        uint8_t hello[12];
        size_t got = 0;
        while (got < sizeof hello) {
            ssize_t k = recv(fd, hello + got, sizeof hello - got, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        /* Status "welcome", then the welcome one byte every half second,
         * until the capture hangs up. */
        uint8_t byte = 1;
        while (send(fd, &byte, 1, MSG_NOSIGNAL) == 1) {
            byte = 0;
            usleep(500000);
        }
    }
    char sink[64];
    while (recv(fd, sink, sizeof sink, 0) > 0)
        ;
    close(fd);
    return NULL;
}

static unsigned fake_client_start(struct fake_client *fc, int mode)
{
    fc->mode = mode;
    fc->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(fc->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fc->listen_fd, 1), 0);
    assert_int_equal(getsockname(fc->listen_fd, (struct sockaddr *)&a, &al), 0);
    assert_int_equal(pthread_create(&fc->thread, NULL, fake_client_serve, fc), 0);
    return ntohs(a.sin_port);
}

static void fake_client_stop(struct fake_client *fc)
{
    shutdown(fc->listen_fd, SHUT_RDWR);
    pthread_join(fc->thread, NULL);
    close(fc->listen_fd);
}

/* A client that accepts and then says nothing: SIGINT ends the capture at
 * once, not after the handshake's timeout. */
static void sigint_during_a_stalled_handshake_ends_the_capture(void **state)
{
    (void)state;
    struct fake_client fc;
    char port[16], path[4200];
    snprintf(port, sizeof port, "%u", fake_client_start(&fc, 0));
    path_in_tmp(path, sizeof path, "stalled-int.tracy");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    struct proc cap = start(capture_bin, args);
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    time_t t0 = time(NULL);
    kill(cap.pid, SIGINT);
    assert_int_equal(finish_within(&cap, 8), 0);
    assert_true(time(NULL) - t0 <= 5);
    fake_client_stop(&fc);
}

/* -s counts during the handshake too. */
static void the_time_limit_ends_a_stalled_handshake(void **state)
{
    (void)state;
    struct fake_client fc;
    char port[16], path[4200];
    snprintf(port, sizeof port, "%u", fake_client_start(&fc, 0));
    path_in_tmp(path, sizeof path, "stalled-s.tracy");
    const char *args[] = {"-o", path, "-p", port, "-s", "1", "--connect-timeout", "20", NULL};
    time_t t0 = time(NULL);
    struct proc cap = start(capture_bin, args);
    assert_int_equal(finish_within(&cap, 8), 0);
    assert_true(time(NULL) - t0 <= 6);
    fake_client_stop(&fc);
}

/* Left alone, a stalled handshake ends after its timeout with a message
 * that says the client stopped answering (it did not close anything). */
static void a_stalled_handshake_says_the_client_stopped_answering(void **state)
{
    (void)state;
    struct fake_client fc;
    char port[16], path[4200], errfile[4200], err[1024];
    snprintf(port, sizeof port, "%u", fake_client_start(&fc, 0));
    path_in_tmp(path, sizeof path, "stalled.tracy");
    path_in_tmp(errfile, sizeof errfile, "stalled.err");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish_within(&cap, 40), 3);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, "the client stopped answering during the handshake"));
    fake_client_stop(&fc);
}

/* A client that keeps sending, one byte every half second, is not told it
 * went silent: the handshake's deadline is a total one, and the message
 * says so with the bytes that came. */
static void a_dribbled_handshake_says_it_did_not_complete_in_time(void **state)
{
    (void)state;
    struct fake_client fc;
    char port[16], path[4200], errfile[4200], err[1024];
    snprintf(port, sizeof port, "%u", fake_client_start(&fc, 2));
    path_in_tmp(path, sizeof path, "dribbled.tracy");
    path_in_tmp(errfile, sizeof errfile, "dribbled.err");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish_within(&cap, 40), 3);
    slurp(errfile, err, sizeof err);
    if (!strstr(err, "did not complete the handshake in time (inside the welcome message:"))
        fprintf(stderr, "%s\n", err);
    assert_non_null(
        strstr(err, "did not complete the handshake in time (inside the welcome message:"));
    assert_null(strstr(err, "nothing for"));
    fake_client_stop(&fc);
}

/* A welcome that cannot be a Tracy client's is malformed data (7), not a
 * network failure (6). */
static void a_malformed_welcome_exits_7(void **state)
{
    (void)state;
    struct fake_client fc;
    char port[16], path[4200], errfile[4200], err[1024];
    snprintf(port, sizeof port, "%u", fake_client_start(&fc, 1));
    path_in_tmp(path, sizeof path, "badwelcome.tracy");
    path_in_tmp(errfile, sizeof errfile, "badwelcome.err");
    const char *args[] = {"-o", path, "-p", port, "--connect-timeout", "20", NULL};
    child_stderr = errfile;
    struct proc cap = start(capture_bin, args);
    child_stderr = NULL;
    assert_int_equal(finish_within(&cap, 30), 7);
    slurp(errfile, err, sizeof err);
    assert_non_null(strstr(err, "malformed welcome"));
    fake_client_stop(&fc);
}

/* A FIFO (or a device) as output: its journal goes to the spool folder,
 * never beside it as OUT.journal. */
static void the_journal_of_a_fifo_output_goes_to_the_spool_folder(void **state)
{
    (void)state;
    char fifo[4200], journal[4300], spool[4200];
    path_in_tmp(fifo, sizeof fifo, "out.fifo");
    snprintf(journal, sizeof journal, "%s.journal", fifo);
    path_in_tmp(spool, sizeof spool, "fifo-spool");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(spool, 0700), 0);
    fflush(NULL);
    pid_t reader = fork();
    assert_true(reader >= 0);
    if (reader == 0) {
        int fd = open(fifo, O_RDONLY);
        char buf[65536];
        long total = 0;
        ssize_t k;
        while ((k = read(fd, buf, sizeof buf)) > 0)
            total += k;
        _exit(total > 0 ? 0 : 1);
    }
    struct proc r, cap;
    uint64_t zone_begins;
    {
        char port[16], ev[32];
        snprintf(ev, sizeof ev, "%d", 20000);
        snprintf(port, sizeof port, "%u", start_replay3(&r, "--pause-after", ev, NULL));
        const char *args[] = {
            "-o", fifo, "-f", "-p", port, "--spool-dir", spool, "--connect-timeout", "20", NULL};
        cap = start(capture_bin, args);
        unsigned long long sent = 0, zb = 0;
        char line[128] = "";
        assert_non_null(fgets(line, sizeof line, r.out));
        assert_int_equal(sscanf(line, "paused after %llu events, %llu zone begins", &sent, &zb), 2);
        zone_begins = zb;
    }
    assert_true(zone_begins > 1000);
    assert_int_equal(access(journal, F_OK), -1);
    DIR *d = opendir(spool);
    assert_non_null(d);
    int journals = 0;
    for (struct dirent *e; (e = readdir(d));)
        journals += strstr(e->d_name, ".journal") != NULL;
    closedir(d);
    assert_int_equal(journals, 1);
    kill(cap.pid, SIGINT);
    assert_int_equal(finish_within(&cap, 60), 0);
    int st;
    assert_int_equal(waitpid(reader, &st, 0), reader);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(access(journal, F_OK), -1);
    kill(r.pid, SIGKILL);
    finish(&r);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s DATA_DIR CAPTURE REPLAY DEMO|- CPP|- [EMULATOR...]\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    capture_bin = argv[2];
    replay_bin = argv[3];
    demo_bin = argv[4];
    cpp_bin = argv[5];
    emulator = argv + 6;
    nemulator = argc - 6;
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_output_option_exits_1),
        cmocka_unit_test(memory_limit_out_of_range_exits_1),
        cmocka_unit_test(numbers_are_decimal_finite_and_in_range),
        cmocka_unit_test(existing_output_without_f_exits_4),
        cmocka_unit_test(unwritable_output_exits_5),
        cmocka_unit_test(overwrite_keeps_the_old_file_until_the_new_one_is_complete),
        cmocka_unit_test(no_client_within_connect_timeout_exits_6),
        cmocka_unit_test(giving_up_names_what_listens_on_the_port),
        cmocka_unit_test(an_unresolvable_address_exits_6_at_once),
        cmocka_unit_test(localhost_is_understood),
        cmocka_unit_test(client_already_served_exits_2),
        cmocka_unit_test(protocol_mismatch_exits_1),
        cmocka_unit_test(an_older_client_gets_its_own_releases_file),
        cmocka_unit_test(a_client_of_no_known_protocol_is_named_as_such),
        cmocka_unit_test(a_client_sending_another_protocols_events_is_named),
        cmocka_unit_test(complete_session_exits_0_with_a_summary),
        cmocka_unit_test(compression_lz4_writes_an_lz4_file),
        cmocka_unit_test(thread_group_hints_and_sections_are_kept_in_the_file),
        cmocka_unit_test(client_killed_with_sigkill_leaves_a_loadable_file),
        cmocka_unit_test(sigint_stops_the_capture_and_writes_the_file),
        cmocka_unit_test(killed_capture_is_recovered_from_its_journal),
        cmocka_unit_test(recovering_a_file_that_is_no_journal_exits_1),
        cmocka_unit_test(malformed_input_exits_7_and_keeps_what_came_before),
        cmocka_unit_test(a_bad_frame_size_exits_7_and_keeps_what_came_before),
        cmocka_unit_test(a_client_closing_inside_a_frame_is_reported),
        cmocka_unit_test(strings_nobody_asked_for_are_dropped_and_counted),
        cmocka_unit_test(time_limit_stops_the_capture_and_writes_the_file),
        cmocka_unit_test(time_limit_lets_a_client_still_sending_close_first),
        cmocka_unit_test(captures_the_boardtrace_demo),
        cmocka_unit_test(capture_never_takes_its_own_connection_for_the_client),
        cmocka_unit_test(a_missing_spool_dir_exits_1_at_once),
        cmocka_unit_test(a_full_spool_folder_keeps_the_journal_and_says_why),
        cmocka_unit_test(a_journal_cut_short_is_not_said_to_hold_what_was_received),
        cmocka_unit_test(an_earlier_journal_is_never_overwritten),
        cmocka_unit_test(sigint_during_a_stalled_handshake_ends_the_capture),
        cmocka_unit_test(the_time_limit_ends_a_stalled_handshake),
        cmocka_unit_test(a_stalled_handshake_says_the_client_stopped_answering),
        cmocka_unit_test(a_dribbled_handshake_says_it_did_not_complete_in_time),
        cmocka_unit_test(a_malformed_welcome_exits_7),
        cmocka_unit_test(the_journal_of_a_fifo_output_goes_to_the_spool_folder),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (!getenv("BT_KEEP_TEST_FILES")) {
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmpdir);
    } else {
        fprintf(stderr, "files kept in %s\n", tmpdir);
    }
    return failed;
}
