/* The runtime as a real Tracy client, over real sockets: each test starts a
 * traced program (bt_traced, or peer-client built against our TracyC.h) and
 * plays the server with the test server of tests/support, then checks what
 * arrived against what the program emitted, and the connection rules.
 * Usage: test_runtime_session TRACED PEER_CLIENT DEMO [EMULATOR...] */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <boardtrace/config.h>

#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"
#include "bt_test_server.h"

/* The test server speaks an older protocol (BT_TEST_PROTOCOL; see
 * bt_ts_handshake): what it cannot carry is expected converted or dropped. */
static int older_protocol(void)
{
    const char *p = getenv("BT_TEST_PROTOCOL");
    return p && strcmp(p, "82") != 0;
}

/* Whether the server's protocol has the feature (82's are all there). */
static int server_has(uint32_t feature)
{
    const char *name = getenv("BT_TEST_PROTOCOL");
    const struct bt_proto *p = name ? bt_proto_by_name(name) : NULL;
    return !p || bt_proto_has(p, feature);
}

static const char *traced_path;
static const char *peer_path;
static const char *demo_path;
static const char *cpp_path; /* NULL: no C++ compiler for the target */
static char **emulator;      /* NULL-terminated, may be empty */
static int emulator_count;

struct child {
    pid_t pid;
    int in;  /* its stdin (write end), -1 if not piped */
    int out; /* its stdout (read end) */
};

/* Where the next spawned child's stderr goes (NULL: inherited). */
static const char *child_stderr;

/* The child of the running test, killed by the teardown if a failed
 * assertion left it behind (a TRACY_NO_EXIT program would wait forever). */
static pid_t live_child;

/* Starts program with args; env is "NAME=value" entries added to ours. */
static struct child spawn(const char *program, const char *const *args, const char *const *env)
{
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    struct child c = {fork(), in[1], out[0]};
    assert_true(c.pid >= 0);
    if (c.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        if (child_stderr) {
            int fd = open(child_stderr, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0)
                dup2(fd, 2);
        }
        close(in[1]);
        close(out[0]);
        unsetenv("TRACY_NO_EXIT");
        unsetenv("TRACY_PORT");
        unsetenv("TRACY_ONLY_LOCALHOST");
        unsetenv("TRACY_ONLY_IPV4");
        unsetenv("BOARDTRACE_BUFFER_KB");
        setenv("TRACY_NO_BROADCAST", "1", 1);
        /* exact counts of what the API emits: no samples or switches (as
         * root they would come; test_systrace covers them) */
        setenv("TRACY_NO_SYS_TRACE", "1", 1);
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        char *argv[64];
        int n = 0;
        for (int i = 0; i < emulator_count; i++)
            argv[n++] = emulator[i];
        argv[n++] = (char *)program;
        for (size_t i = 0; args && args[i]; i++)
            argv[n++] = (char *)args[i];
        argv[n] = NULL;
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    live_child = c.pid;
    return c;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Exit status, or -1 if still running after timeout_ms. */
static int wait_exit(struct child *c, int timeout_ms)
{
    int64_t end = now_ms() + timeout_ms;
    for (;;) {
        int status;
        pid_t r = waitpid(c->pid, &status, WNOHANG);
        if (r == c->pid) {
            if (c->in >= 0)
                close(c->in);
            close(c->out);
            c->in = -1;
            live_child = 0;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        if (now_ms() > end)
            return -1;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

static int kill_leftover_child(void **state)
{
    (void)state;
    if (live_child > 0) {
        kill(live_child, SIGKILL);
        waitpid(live_child, NULL, 0);
        live_child = 0;
    }
    return 0;
}

/* A port nobody listens on right now (dual-stack wildcard). */
static uint16_t free_port(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof(a));
    a.sin6_family = AF_INET6;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin6_port);
}

static const char *port_env(uint16_t port)
{
    static char buf[4][32];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, 32, "TRACY_PORT=%u", port);
    return b;
}

/* Reads one line of the child's stdout (up to timeout_ms). */
static int read_line(struct child *c, char *buf, size_t size, int timeout_ms)
{
    size_t n = 0;
    while (n + 1 < size) {
        struct pollfd p = {c->out, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0)
            return -1;
        if (read(c->out, buf + n, 1) != 1)
            return -1;
        if (buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = 0;
    return 0;
}

/* A whole capture: connect, handshake, receive to the end. */
static void capture(struct bt_test_server *s, const char *addr, uint16_t port)
{
    assert_int_equal(bt_ts_connect(s, addr, port, 30000), 0);
    assert_int_equal(bt_ts_handshake(s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    int rc = bt_ts_run(s, 60000);
    if (rc != 0)
        fprintf(stderr, "test server: %s\n", s->error);
    assert_int_equal(rc, 0);
}

/* Starts program with args (TRACY_NO_EXIT=1, a free port, and extra_env
 * unless NULL) and captures it to the end into *s. */
static struct child traced_capture(const char *program, const char *const *args,
                                   const char *extra_env, struct bt_test_server *s)
{
    uint16_t port = free_port();
    const char *env[] = {"TRACY_NO_EXIT=1", port_env(port), extra_env, NULL};
    struct child c = spawn(program, args, env);
    capture(s, "127.0.0.1", port);
    return c;
}

static void features_arrive_complete_and_in_order(void **state)
{
    (void)state;
    const char *args[] = {"features", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, NULL, &s);

    /* welcome */
    assert_true(s.timer_mul > 0.0 && s.timer_mul < 100.0);
    assert_true((int64_t)bt_wire_get_u64(s.welcome + BT_WELCOME_OFF_INIT_END) >= s.init_begin);
    assert_int_equal(bt_wire_get_u64(s.welcome + BT_WELCOME_OFF_PID), (uint64_t)c.pid);
    assert_string_equal((const char *)s.welcome + BT_WELCOME_OFF_PROGRAM_NAME, "bt_traced");
#if defined(__x86_64__)
    assert_int_equal(s.welcome[BT_WELCOME_OFF_CPU_ARCH], BT_CPU_ARCH_X64);
#elif defined(__aarch64__)
    assert_int_equal(s.welcome[BT_WELCOME_OFF_CPU_ARCH], BT_CPU_ARCH_ARM64);
#else
    assert_int_equal(s.welcome[BT_WELCOME_OFF_CPU_ARCH], BT_CPU_ARCH_UNKNOWN);
#endif
    assert_non_null(strstr((const char *)s.welcome + BT_WELCOME_OFF_HOST_INFO, "Arch: "));

    /* zones and their decorations */
    assert_int_equal(bt_ts_zones_named(&s, "outer"), 1000);
    assert_int_equal(bt_ts_zones_named(&s, "inner"), 1000);
    assert_int_equal(bt_ts_zones_named(&s, "dyn_named"), 1000);
    assert_int_equal(bt_ts_zones_named(&s, "frame"), 50);
    assert_int_equal(s.zones_total, 3050);
    assert_int_equal(s.zone_values, 1000);
    assert_int_equal(s.zone_texts, 1000);
    assert_int_equal(s.zone_colors, 1000);
    assert_int_equal(s.zone_names, 1000);
    assert_true(bt_ts_saw_text(&s, "iter 499"));

    /* messages */
    assert_int_equal(s.messages, 17);
    assert_int_equal(s.messages_literal, 2);
    assert_int_equal(s.messages_colored, 6);
    assert_int_equal(s.app_infos, 1);
    assert_true(bt_ts_saw_text(&s, "features start"));
    assert_true(bt_ts_saw_text(&s, "colored 40"));
    assert_true(bt_ts_saw_text(&s, "bt_traced features"));

    /* plots and frames */
    assert_int_equal(bt_ts_plot_points(&s, "feature-int"), 1000);
    assert_int_equal(bt_ts_plot_points(&s, "feature-double"), 50);
    assert_int_equal(bt_ts_plot_points(&s, "feature-float"), 50);
    assert_int_equal(bt_ts_frame_marks(&s, NULL), 50);
    assert_int_equal(bt_ts_frame_marks(&s, "feature-named"), 50);
    assert_int_equal(bt_ts_frame_marks(&s, "feature-discontinuous"), 100);

    /* memory (mode 2 and up) */
#if BT_TRACING_MODE >= 2
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 1000);
    assert_int_equal(bt_ts_pool_frees(&s, NULL), 1000);
    assert_int_equal(bt_ts_pool_allocs(&s, "feature-pool"), 1000);
    assert_int_equal(bt_ts_pool_frees(&s, "feature-pool"), 1000);
#else
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 0);
#endif

    /* locks */
    assert_int_equal(s.lock_announces, 1);
    assert_int_equal(s.lock_waits, 50);
    assert_int_equal(s.lock_obtains, 50);
    assert_int_equal(s.lock_releases, 50);
    assert_int_equal(s.lock_names, 1);
    assert_true(bt_ts_saw_text(&s, "feature-lock"));

    /* threads: three, named as the program named them */
    int named = 0;
    for (size_t i = 0; i < s.threads_count; i++) {
        const char *n = bt_ts_thread_name(&s, s.threads[i].tid);
        assert_non_null(n);
        named += strcmp(n, "feature-main") == 0 || strcmp(n, "feature-worker-1") == 0 ||
                 strcmp(n, "feature-worker-2") == 0;
    }
    assert_int_equal(named, 3);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* Builds the name with the counts peer-client.c prints, per TRACING_MODE. */
static void peer_client_compiled_against_our_tracyc_arrives_complete(void **state)
{
    (void)state;
    const char *args[] = {"200", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(peer_path, args, NULL, &s);
    assert_int_equal(bt_ts_zones_named(&s, "outer"), 400);
    assert_int_equal(bt_ts_zones_named(&s, "inner"), 400);
    assert_int_equal(bt_ts_zones_named(&s, "dyn_named"), 400);
    assert_int_equal(bt_ts_zones_named(&s, "dyn_func"), 400);
    assert_int_equal(bt_ts_zones_named(&s, "with_callstack"), 40);
    assert_int_equal(bt_ts_zones_named(&s, "main_frame"), 100);
    assert_int_equal(s.messages, 22);
    assert_int_equal(s.messages_colored, 11);
    assert_int_equal(s.app_infos, 1);
    assert_int_equal(bt_ts_plot_points(&s, "peer-plot"), 100);
    assert_int_equal(bt_ts_frame_marks(&s, NULL), 100);
    assert_int_equal(bt_ts_frame_marks(&s, "peer-named-frame"), 100);
    assert_int_equal(bt_ts_frame_marks(&s, "peer-discontinuous"), 200);
#if BT_TRACING_MODE >= 2
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 440);
    assert_int_equal(bt_ts_pool_frees(&s, NULL), 440);
    assert_int_equal(bt_ts_pool_allocs(&s, "peer-pool"), 400);
    assert_int_equal(bt_ts_pool_frees(&s, "peer-pool"), 400);
#endif
    /* the explicit depths (40 zones, and from mode 2 on 80 memory events)
     * are honoured in every mode; mode 3 adds the plain memory forms' */
#if BT_TRACING_MODE >= 3
    assert_true(s.callstacks >= 120);
#elif BT_TRACING_MODE == 2
    assert_int_equal(s.callstacks, 120);
#else
    assert_int_equal(s.callstacks, 40);
#endif
    assert_true(s.callstack_frames_answered > 0);
    assert_int_equal(s.canonical_violations, 0);
    bt_ts_close(&s);
    char line[256];
    assert_int_equal(read_line(&c, line, sizeof(line), 10000), 0);
    assert_non_null(strstr(line, "ITER=200"));
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void every_tracy_c_api_macro_emits_its_event(void **state)
{
    (void)state;
    const char *args[] = {"tracyc", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, NULL, &s);
    assert_int_equal(s.zones_total, 14);
    assert_int_equal(bt_ts_zones_named(&s, "zone_n"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "zone_nc"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "zone_ns"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "zone_ncs"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "scenario_tracyc"), 4); /* unnamed: by function */
    assert_int_equal(bt_ts_zones_named(&s, "made"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "made_named"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "raw_zone"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "never"), 0);
    assert_int_equal(bt_ts_zones_named(&s, "around_fiber"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "fiber_outer"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "fiber_inner"), 1);
    assert_int_equal(s.zone_texts, 3);
    assert_int_equal(s.zone_names, 2);
    assert_true(bt_ts_saw_text(&s, "text 2"));
    assert_true(bt_ts_saw_text(&s, "renamed again"));
    assert_int_equal(s.zone_colors, 1);
    assert_int_equal(s.zone_values, 1);
    assert_int_equal(s.messages, 13);
    assert_int_equal(s.messages_literal, 6);
    assert_int_equal(s.messages_colored, 6);
    if (older_protocol()) {
        /* No severities before protocol 82: every message is info. */
        assert_int_equal(s.messages_by_severity[2], 13);
    } else {
        assert_int_equal(s.messages_by_severity[0], 1); /* trace */
        assert_int_equal(s.messages_by_severity[1], 1); /* debug */
        assert_int_equal(s.messages_by_severity[2], 8); /* info: the TracyCMessage* forms */
        assert_int_equal(s.messages_by_severity[3], 1);
        assert_int_equal(s.messages_by_severity[4], 1);
        assert_int_equal(s.messages_by_severity[5], 1);
    }
    assert_int_equal(s.app_infos, 1);
    assert_int_equal(bt_ts_plot_points(&s, "tracyc-plot"), 1);
    assert_int_equal(bt_ts_plot_points(&s, "tracyc-plot-f"), 1);
    assert_int_equal(bt_ts_plot_points(&s, "tracyc-plot-i"), 1);
    assert_int_equal(bt_ts_frame_marks(&s, NULL), 2);
    assert_int_equal(bt_ts_frame_marks(&s, "tracyc-frame"), 1);
    assert_int_equal(bt_ts_frame_marks(&s, "tracyc-span"), 2);
    assert_int_equal(s.frame_images, 1);
    /* a lockable and a shared lockable, whose exclusive use counts here too;
     * a successful try-lock is a wait and an obtain */
    assert_int_equal(s.lock_announces, 2);
    assert_int_equal(s.lock_waits, 3);
    assert_int_equal(s.lock_obtains, 3);
    assert_int_equal(s.lock_releases, 3);
    assert_int_equal(s.lock_names, 2);
    assert_int_equal(s.lock_shared_waits, 2);
    assert_int_equal(s.lock_shared_obtains, 2);
    assert_int_equal(s.lock_shared_releases, 2);
    /* two GPU contexts, one per-thread and one serial, four zones each */
    assert_int_equal(s.gpu_contexts, 2);
    assert_int_equal(s.gpu_context_names, 2);
    assert_true(bt_ts_saw_text(&s, "tracyc-gpu"));
    assert_true(bt_ts_saw_text(&s, "tracyc-gpu-serial"));
    assert_int_equal(s.gpu_calibrations, 2);
    assert_int_equal(s.gpu_time_syncs, server_has(BT_PROTO_GPU_TIME_SYNC) ? 2 : 0);
    assert_int_equal(s.gpu_zone_begins, 8);
    assert_int_equal(s.gpu_zone_begins_serial, 4);
    assert_int_equal(s.gpu_zone_begins_alloc, 4);
    assert_int_equal(s.gpu_zone_callstacks, 3); /* depth 0 is a plain begin */
    assert_int_equal(s.gpu_zone_ends, 8);
    assert_int_equal(s.gpu_times, 16);
    assert_int_equal(bt_ts_zones_named(&s, "gpu_zone"), 0); /* not a CPU zone */
    /* a fiber entered on two threads */
    assert_int_equal(s.fiber_enters, 2);
    assert_int_equal(s.fiber_leaves, 2);
    assert_int_equal(s.fiber_names, 1);
    assert_true(bt_ts_saw_fiber(&s, "tracyc-fiber"));
#if BT_TRACING_MODE >= 2
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 5);
    assert_int_equal(bt_ts_pool_frees(&s, NULL), 5);
    assert_int_equal(bt_ts_pool_allocs(&s, "tracyc-pool"), 5);
    assert_int_equal(bt_ts_pool_frees(&s, "tracyc-pool"), 4);
#else
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 1); /* the function, not the macros */
#endif
    assert_int_equal(bt_ts_pool_allocs(&s, "tracyc-raw"), 2);
    assert_int_equal(bt_ts_pool_frees(&s, "tracyc-raw"), 1);
    /* Explicit depths are honoured in every mode: 5 zones, 5 messages, 3 GPU
     * zones, and (memory macros on, from mode 2) 8 memory events and 2
     * discards. Mode 3 adds callstacks to the other 9 memory events and 2
     * discards; mode 4 to the 7 plain-form zones. */
    /* Before protocol 72 the two discards with a callstack are dropped, and
     * their callstacks with them. */
    int discard_callstacks = !server_has(BT_PROTO_MEM_DISCARD) && BT_TRACING_MODE >= 2 ? 2 : 0;
#if BT_TRACING_MODE >= 4
    assert_int_equal(s.callstacks, 41 - discard_callstacks);
#elif BT_TRACING_MODE == 3
    assert_int_equal(s.callstacks, 34 - discard_callstacks);
#elif BT_TRACING_MODE == 2
    assert_int_equal(s.callstacks, 23 - discard_callstacks);
#else
    assert_int_equal(s.callstacks, 13 - discard_callstacks);
#endif
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* A C++ program written for upstream's tracy/Tracy.hpp (bt_traced_cpp.cpp).
 * The server changes each parameter the program sets up, as a user in the
 * GUI would; the program's callback prints the change. */
static void every_tracy_cpp_macro_emits_its_event(void **state)
{
    (void)state;
    if (!cpp_path)
        skip();
    const char *args[] = {NULL};
    struct bt_test_server s;
    uint16_t port = free_port();
    const char *env[] = {"TRACY_NO_EXIT=1", port_env(port), NULL};
    struct child c = spawn(cpp_path, args, env);
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    s.change_params = 1;
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    int rc = bt_ts_run(&s, 60000);
    if (rc != 0)
        fprintf(stderr, "test server: %s\n", s.error);
    assert_int_equal(rc, 0);
    /* thread group hint: after the name of the thread named with one only
     * (none before protocol 69) */
    int hints = server_has(BT_PROTO_GROUP_HINT);
    assert_int_equal(s.thread_group_hints, hints ? 1 : 0);
    assert_int_equal(bt_ts_thread_hint(&s, "cpp-worker"), hints ? 3 : 0);
    assert_int_equal(bt_ts_thread_hint(&s, "cpp-main"), 0);
    if (older_protocol()) {
        /* Before 82 there are no sections: none arrive, with their texts,
         * and the runtime says once that they were dropped. */
        assert_int_equal(s.section_setups + s.section_enters + s.section_leaves, 0);
        assert_false(bt_ts_saw_text(&s, "cpp-section outer"));
        assert_true(bt_ts_saw_text_containing(&s, "SectionSetup events dropped: Tracy protocol"));
        assert_true(bt_ts_saw_text_containing(&s, "SectionEnter events dropped: Tracy protocol"));
    } else {
        /* sections: a category named, two entered and left, texts formatted */
        assert_int_equal(s.section_setups, 1);
        assert_int_equal(s.section_enters, 2);
        assert_int_equal(s.section_leaves, 2);
        assert_true(bt_ts_saw_text(&s, "cpp-category 1"));
        assert_true(bt_ts_saw_text(&s, "cpp-section outer"));
        assert_true(bt_ts_saw_text(&s, "cpp-section 2"));
    }
    /* a parameter set up, named, changed to 7 by the server */
    assert_int_equal(s.param_setups, 1);
    assert_true(bt_ts_saw_text(&s, "cpp-param"));
    char line[256];
    assert_int_equal(read_line(&c, line, sizeof(line), 30000), 0);
    assert_string_equal(line, "parameter 4 = 7 (cpp)");
    /* a source file that is nowhere on disk comes from the source callback */
    if (s.flags & BT_WELCOME_FLAG_CODE_TRANSFER) {
        assert_int_equal(s.source_virtual, 1);
        assert_true(bt_ts_saw_text(&s, "cpp virtual source\n"));
    }
    assert_int_equal(s.source_mismatches, 0);
    assert_int_equal(bt_ts_zones_named(&s, "cpp_virtual"), 1);
    assert_int_equal(s.zones_total, 24);
    assert_int_equal(bt_ts_zones_named(&s, "zones"), 10); /* unnamed: by function */
    assert_int_equal(bt_ts_zones_named(&s, "cpp_n"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "cpp_ncs"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "cpp_never"), 0);
    assert_int_equal(bt_ts_zones_named(&s, "cpp_transient_nc"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "cpp_fiber_zone"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "cpp_worker"), 1);
    assert_int_equal(s.zone_texts, 4);
    assert_int_equal(s.zone_names, 4);
    assert_true(bt_ts_saw_text(&s, "cpp_renamed_vf"));
    assert_int_equal(s.zone_colors, 2);
    assert_int_equal(s.zone_values, 2);
    assert_int_equal(s.messages, 10);
    assert_int_equal(s.messages_literal, 5);
    assert_int_equal(s.messages_colored, 4);
    assert_int_equal(s.messages_by_severity[2], older_protocol() ? 10 : 8);
    assert_int_equal(s.messages_by_severity[3], older_protocol() ? 0 : 1);
    assert_int_equal(s.messages_by_severity[4], older_protocol() ? 0 : 1);
    assert_int_equal(s.app_infos, 1);
    assert_int_equal(bt_ts_plot_points(&s, "cpp-plot"), 1);
    assert_int_equal(bt_ts_plot_points(&s, "cpp-plot-f"), 1);
    assert_int_equal(bt_ts_plot_points(&s, "cpp-plot-d"), 1);
    assert_int_equal(bt_ts_frame_marks(&s, NULL), 2);
    assert_int_equal(bt_ts_frame_marks(&s, "cpp-frame"), 1);
    assert_int_equal(bt_ts_frame_marks(&s, "cpp-span"), 2);
    assert_int_equal(s.frame_images, 1);
    assert_int_equal(s.lock_announces, 6);
    assert_int_equal(s.lock_waits, 4);
    assert_int_equal(s.lock_obtains, 4);
    assert_int_equal(s.lock_releases, 4);
    assert_int_equal(s.lock_names, 1);
    assert_int_equal(s.lock_shared_waits, 2);
    assert_int_equal(s.lock_shared_obtains, 2);
    assert_int_equal(s.lock_shared_releases, 2);
    assert_int_equal(s.fiber_enters, 2);
    assert_int_equal(s.fiber_leaves, 2);
    assert_true(bt_ts_saw_fiber(&s, "cpp-fiber"));
#if BT_TRACING_MODE >= 2
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 4);
    assert_int_equal(bt_ts_pool_frees(&s, NULL), 4);
    assert_int_equal(bt_ts_pool_allocs(&s, "cpp-pool"), 5);
    assert_int_equal(bt_ts_pool_frees(&s, "cpp-pool"), 4);
#else
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 0);
#endif
    /* explicit depths in every mode: 10 zones, 4 messages, and (memory on)
     * 8 memory events and 2 discards; mode 3 adds 9 + 2 plain memory ones,
     * mode 4 the 13 plain-form zones */
    int discard_callstacks = !server_has(BT_PROTO_MEM_DISCARD) && BT_TRACING_MODE >= 2 ? 2 : 0;
#if BT_TRACING_MODE >= 4
    assert_int_equal(s.callstacks, 48 - discard_callstacks);
#elif BT_TRACING_MODE == 3
    assert_int_equal(s.callstacks, 35 - discard_callstacks);
#elif BT_TRACING_MODE == 2
    assert_int_equal(s.callstacks, 24 - discard_callstacks);
#else
    assert_int_equal(s.callstacks, 14 - discard_callstacks);
#endif
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void every_zone_of_many_threads_arrives(void **state)
{
    (void)state;
    /* 8 x 1,000,000 everywhere: under qemu user mode it takes ~10 s. */
    const char *zones = "1000000";
    uint64_t expected = 8000000;
    const char *args[] = {"many", "8", zones, NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, NULL, &s);
    assert_int_equal(s.zones_total, expected);
    assert_int_equal(bt_ts_zones_named(&s, "many"), expected);
    size_t workers = 0;
    for (size_t i = 0; i < s.threads_count; i++)
        if (s.threads[i].zones) {
            assert_int_equal(s.threads[i].zones, expected / 8);
            workers++;
        }
    assert_int_equal(workers, 8);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* Value of "key=<n>" in a line of the demo's report. */
static unsigned long report_value(const char *line, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof(pattern), " %s=", key);
    const char *p = strstr(line, pattern);
    if (!p)
        fail_msg("'%s' not in the demo's report line: %s", key, line);
    return strtoul(p + strlen(pattern), NULL, 10);
}

static void the_demo_emits_exactly_what_it_reports(void **state)
{
    (void)state;
    const char *args[] = {"-f", "30", "-w", "3", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(demo_path, args, NULL, &s);
    char lines[6][512];
    for (int i = 0; i < 6; i++)
        assert_int_equal(read_line(&c, lines[i], sizeof(lines[i]), 30000), 0);
    const char *zones[] = {"embed", "layernorm", "matmul",    "softmax",
                           "gelu",  "add",       "inference", "schedule"};
    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
        assert_int_equal(bt_ts_zones_named(&s, zones[i]), report_value(lines[1], zones[i]));
    assert_int_equal(s.zones_total, report_value(lines[1], "total"));
    assert_int_equal(report_value(lines[1], "inference"), 30);
    unsigned long messages = strtoul(strstr(lines[2], ": ") + 2, NULL, 10);
    assert_int_equal(s.messages, messages);
    assert_int_equal(bt_ts_plot_points(&s, "ready_queue"), report_value(lines[3], "ready_queue"));
    assert_int_equal(bt_ts_plot_points(&s, "live_tensor_bytes"),
                     report_value(lines[3], "live_tensor_bytes"));
    assert_int_equal(bt_ts_plot_points(&s, "frame_ms"), report_value(lines[3], "frame_ms"));
    assert_int_equal(bt_ts_frame_marks(&s, NULL), report_value(lines[4], "default"));
    assert_int_equal(bt_ts_frame_marks(&s, "inference"), report_value(lines[4], "inference"));
    assert_int_equal(bt_ts_pool_allocs(&s, "tensors"), report_value(lines[5], "allocs"));
    assert_int_equal(bt_ts_pool_frees(&s, "tensors"), report_value(lines[5], "frees"));
#if BT_TRACING_MODE >= 2
    assert_true(report_value(lines[5], "allocs") > 0);
#endif
    assert_true(s.lock_obtains > 0 && s.lock_obtains == s.lock_releases);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void every_free_arrives_after_its_allocation_even_in_bursts(void **state)
{
    (void)state;
    const char *args[] = {"bursts", NULL};
    struct bt_test_server s;
    struct child c =
        traced_capture(traced_path, args, NULL, &s); /* fails on a free at its allocation's ns */
#if BT_TRACING_MODE >= 2
    assert_int_equal(bt_ts_pool_allocs(&s, NULL), 40000);
    assert_int_equal(bt_ts_pool_frees(&s, NULL), 40000);
#endif
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void texts_of_every_length_wrap_the_buffer_intact(void **state)
{
    (void)state;
    const char *args[] = {"texts", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, "BOARDTRACE_BUFFER_KB=64", &s);
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 30000), 0);
    unsigned long long hash = 0;
    assert_int_equal(sscanf(line, "hash %llu", &hash), 1);
    assert_int_equal(s.messages, 12000);
    assert_int_equal(bt_ts_zones_named(&s, "texts"), 12000);
    assert_int_equal(s.message_hash, (uint64_t)hash); /* every byte of every text */
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void nesting_deeper_than_the_buffer_still_arrives(void **state)
{
    (void)state;
    const char *args[] = {"deep", "6000", NULL}; /* 6000 pending ends > 64 KiB */
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, "BOARDTRACE_BUFFER_KB=64", &s);
    assert_int_equal(bt_ts_zones_named(&s, "deep"), 6000);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* A SIGALRM handler emits on the thread it interrupts, often in the middle
 * of that thread's own event: the program neither crashes nor sends a
 * broken stream (the test server takes every event), and each handler
 * event either arrives or is counted as dropped. */
static void events_from_a_signal_handler_arrive_or_are_counted(void **state)
{
    (void)state;
    const char *args[] = {"signals", "300000", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, "BOARDTRACE_BUFFER_KB=64", &s);
    char line[128];
    assert_int_equal(read_line(&c, line, sizeof(line), 60000), 0);
    long alarms = 0;
    unsigned long long dropped = 0;
    assert_int_equal(sscanf(line, "alarms %ld dropped %llu", &alarms, &dropped), 2);
    assert_true(alarms > 0);
    assert_int_equal(bt_ts_zones_named(&s, "main"), 300000);
    /* a zone and a message per alarm */
    assert_int_equal(bt_ts_zones_named(&s, "in-handler") + s.messages_literal + dropped,
                     2 * (uint64_t)alarms);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* A child forked by a traced program (TRACY_NO_EXIT=1, a capture
 * connected) has no worker: it runs untraced, so emitting more than its
 * buffer holds and exiting never waits; the parent's session is whole. */
static void a_forked_child_runs_untraced_and_never_blocks(void **state)
{
    (void)state;
    const char *args[] = {"fork", "100000", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, "BOARDTRACE_BUFFER_KB=64", &s);
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 60000), 0);
    assert_string_equal(line, "child 0");
    assert_int_equal(bt_ts_zones_named(&s, "before-fork"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "after-fork"), 1);
    assert_int_equal(bt_ts_zones_named(&s, "in-child"), 0);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* A thread that returns inside two zones, then exit() inside two more: the
 * program and the capture finish, and every zone arrives closed (the test
 * server refuses a session that ends with open zones). */
static void zones_open_at_thread_end_and_at_exit_arrive_closed(void **state)
{
    (void)state;
    const char *args[] = {"open-at-exit", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, NULL, &s);
    assert_int_equal(bt_ts_zones_named(&s, "thread-open"), 2);
    assert_int_equal(bt_ts_zones_named(&s, "open-at-exit"), 2);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void callstacks_are_canonical_and_every_frame_is_answered(void **state)
{
    (void)state;
    const char *args[] = {"callstacks", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, NULL, &s);
    assert_int_equal(bt_ts_zones_named(&s, "with_callstack"), 20);
    /* zone, alloc, free and message each ask for one, honoured in every mode */
    assert_int_equal(s.callstacks, 80);
    assert_int_equal(s.canonical_violations, 0);
    assert_true(s.callstack_frames_answered >= 3);
    assert_true(s.symbols_answered >= 1);
    assert_int_equal(s.callstack_frames_answered, s.frames_seen.count);
    assert_true(bt_ts_saw_text(&s, "callstack_leaf"));
    /* each starts at the caller of the API, never inside the runtime */
    assert_int_equal(bt_ts_callstacks_starting_in(&s, "callstack_leaf"), 80);
    assert_true(bt_ts_saw_text_ending(&s, "/bt_traced.c")); /* DWARF line table */
    assert_true(bt_ts_saw_text(&s, "callstack_middle"));
    assert_true(bt_ts_saw_text(&s, "main")); /* scenario_callstacks is inlined into it */
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* Code transfer: the test server asks for the code of every symbol the
 * frames name and for the file of every source location, as upstream's
 * server does; the runtime sends the code as it is in memory and the
 * program's own source file (compared byte for byte with the disk). */
static void code_transfer_sends_symbol_code_and_the_programs_source(void **state)
{
    (void)state;
    const char *args[] = {"callstacks", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, NULL, &s);
    assert_true(s.flags & BT_WELCOME_FLAG_CODE_TRANSFER);
    /* callstack_leaf, callstack_middle and main at least */
    if (s.symbol_code < 3)
        fail_msg("symbol code for %llu symbols (%llu not available)",
                 (unsigned long long)s.symbol_code, (unsigned long long)s.symbol_code_unavailable);
    assert_true(s.symbol_code_bytes > 0);
    /* bt_traced.c, named by its source locations */
    if (s.source_files < 1)
        fail_msg("%llu source files, %llu not available", (unsigned long long)s.source_files,
                 (unsigned long long)s.source_files_unavailable);
    assert_int_equal(s.source_mismatches, 0);
    assert_true(s.source_file_bytes > 1000);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);

    /* turned off for one run: not offered, so never asked */
    c = traced_capture(traced_path, args, "TRACY_NO_CODE_TRANSFER=1", &s);
    assert_false(s.flags & BT_WELCOME_FLAG_CODE_TRANSFER);
    assert_int_equal(s.symbol_code + s.symbol_code_unavailable, 0);
    assert_int_equal(s.source_files + s.source_files_unavailable, 0);
    assert_true(s.callstack_frames_answered >= 3);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void the_timer_is_calibrated_to_nanoseconds(void **state)
{
    (void)state;
    const char *args[] = {"sleep", NULL};
    struct bt_test_server s;
    struct child c = traced_capture(traced_path, args, NULL, &s);
    double ms = (double)s.longest_zone * s.timer_mul / 1e6;
    if (ms < 295.0 || ms > 450.0) /* a busy machine may oversleep, never undersleep */
        fail_msg("a 300 ms sleep measured %.2f ms (timerMul %g)", ms, s.timer_mul);
    assert_true(bt_wire_get_u64(s.welcome + BT_WELCOME_OFF_RESOLUTION) > 0);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void only_ipv4_listens_on_ipv4_alone(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"linger", NULL};
    const char *env[] = {"TRACY_ONLY_IPV4=1", port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 30000), 0);
    struct bt_test_server v6;
    assert_int_not_equal(bt_ts_connect(&v6, "::1", port, 300), 0);
    bt_ts_close(&v6);
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    bt_ts_close(&s);
    close(c.in);
    c.in = -1;
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void queries_about_addresses_it_never_sent_get_placeholders(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"features", NULL};
    const char *env[] = {"TRACY_NO_EXIT=1", port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    /* a rogue peer asking about arbitrary memory must not crash the program */
    assert_int_equal(bt_ts_ask(&s, BT_QUERY_STRING, 0x10), 0);
    assert_int_equal(bt_ts_ask(&s, BT_QUERY_SOURCE_LOCATION, 0xdead0000), 0);
    int rc = bt_ts_run(&s, 60000);
    if (rc != 0)
        fprintf(stderr, "test server: %s\n", s.error);
    assert_int_equal(rc, 0);
    assert_string_equal(bt_ts_string(&s, 0x10), "?");
    assert_int_equal(bt_ts_zones_named(&s, "outer"), 1000); /* the rest is unaffected */
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void a_wrong_protocol_version_gets_mismatch(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"linger", NULL};
    const char *env[] = {port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, 81), BT_HANDSHAKE_PROTOCOL_MISMATCH);
    bt_ts_close(&s);
    close(c.in);
    c.in = -1;
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* The whole of a small file, NUL-terminated ("" when unreadable). */
static char *read_text(const char *path)
{
    char *text = calloc(1, 4096);
    assert_non_null(text);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(text, 1, 4095, f);
        text[n] = '\0';
        fclose(f);
    }
    return text;
}

static void a_second_capture_gets_not_available(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"linger", NULL};
    const char *env[] = {port_env(port), NULL};
    char errpath[] = "/tmp/bt-session-stderr-XXXXXX";
    int errfd = mkstemp(errpath);
    assert_true(errfd >= 0);
    close(errfd);
    child_stderr = errpath;
    struct child c = spawn(traced_path, args, env);
    child_stderr = NULL;
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 30000), 0);
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    bt_ts_close(&s); /* the server goes away mid-session */
    struct bt_test_server again;
    assert_int_equal(bt_ts_connect(&again, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&again, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_NOT_AVAILABLE);
    bt_ts_close(&again);
    close(c.in);
    c.in = -1;
    assert_int_equal(wait_exit(&c, 30000), 0);
    /* The program said, once, that its tracing ended early. */
    char *text = read_text(errpath);
    unlink(errpath);
    const char *said = "boardtrace: tracing stopped: the capture closed the connection\n";
    if (!strstr(text, said))
        fprintf(stderr, "program's stderr: %s\n", text);
    assert_non_null(strstr(text, said));
    assert_null(strstr(strstr(text, said) + 1, said));
    free(text);
}

static void with_no_exit_the_program_waits_for_a_capture(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"idle", NULL};
    const char *env[] = {"TRACY_NO_EXIT=1", port_env(port), NULL};
    char errpath[] = "/tmp/bt-session-stderr-XXXXXX";
    int errfd = mkstemp(errpath);
    assert_true(errfd >= 0);
    close(errfd);
    child_stderr = errpath;
    struct child c = spawn(traced_path, args, env);
    child_stderr = NULL;
    assert_int_equal(wait_exit(&c, 1500), -1); /* main has returned; exit is held */
    struct bt_test_server s;
    capture(&s, "127.0.0.1", port);
    assert_true(s.terminate_seen);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
    /* It said, once, what it was waiting for. */
    char *text = read_text(errpath);
    unlink(errpath);
    char said[160];
    snprintf(said, sizeof said,
             " has finished and waits for a Tracy viewer or capture to take its data on port %u "
             "(TRACY_NO_EXIT=1)\n",
             (unsigned)port);
    if (!strstr(text, said))
        fprintf(stderr, "program's stderr: %s\n", text);
    assert_non_null(strstr(text, "boardtrace: "));
    assert_non_null(strstr(text, said));
    assert_null(strstr(strstr(text, said) + 1, said));
    free(text);
}

static void without_no_exit_an_unwatched_program_exits_at_once(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"idle", NULL};
    const char *env[] = {port_env(port), NULL};
    int64_t start = now_ms();
    struct child c = spawn(traced_path, args, env);
    assert_int_equal(wait_exit(&c, 20000), 0);
    /* process start under qemu dominates; the runtime itself adds < 50 ms */
    assert_true(now_ms() - start < (emulator_count ? 10000 : 1000));
}

static void only_localhost_answers_on_both_loopbacks_and_nothing_else(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"linger", NULL};
    const char *env[] = {"TRACY_ONLY_LOCALHOST=1", port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 30000), 0);

    /* a non-loopback address of this machine must not reach it */
    struct ifaddrs *ifs = NULL;
    getifaddrs(&ifs);
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct sockaddr_in a = *(struct sockaddr_in *)i->ifa_addr;
        if ((ntohl(a.sin_addr.s_addr) >> 24) == 127)
            continue;
        a.sin_port = htons(port);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        assert_int_not_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        close(fd);
    }
    freeifaddrs(ifs);

    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    bt_ts_close(&s);
    struct bt_test_server v6;
    if (bt_ts_connect(&v6, "::1", port, 2000) == 0) {
        assert_int_equal(bt_ts_handshake(&v6, BT_WIRE_PROTOCOL_VERSION),
                         BT_HANDSHAKE_NOT_AVAILABLE);
    } else {
        /* no IPv6 on this machine: then ::1 cannot exist either */
        int fd = socket(AF_INET6, SOCK_STREAM, 0);
        assert_true(fd < 0 || errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL ||
                    errno == ENETUNREACH);
        if (fd >= 0)
            close(fd);
    }
    bt_ts_close(&v6);
    close(c.in);
    c.in = -1;
    assert_int_equal(wait_exit(&c, 30000), 0);
}

/* The listening TCP port of a process, from /proc (inode of its sockets). */
static int listening_port_of(pid_t pid)
{
    char path[64];
    for (int attempt = 0; attempt < 300; attempt++) {
        unsigned long inodes[64];
        int n = 0;
        for (int fd = 0; fd < 256 && n < 64; fd++) {
            char link[64], target[64];
            snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, fd);
            ssize_t len = readlink(link, target, sizeof(target) - 1);
            if (len <= 0)
                continue;
            target[len] = 0;
            if (sscanf(target, "socket:[%lu]", &inodes[n]) == 1)
                n++;
        }
        const char *tables[] = {"tcp6", "tcp"};
        for (int t = 0; t < 2; t++) {
            snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, tables[t]);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            char row[512];
            while (fgets(row, sizeof(row), f)) {
                char local[128];
                unsigned st;
                unsigned long inode;
                if (sscanf(row, " %*d: %127s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) !=
                        3 ||
                    st != 0x0A)
                    continue;
                for (int i = 0; i < n; i++)
                    if (inodes[i] == inode) {
                        fclose(f);
                        return (int)strtol(strrchr(local, ':') + 1, NULL, 16);
                    }
            }
            fclose(f);
        }
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void a_busy_port_moves_the_program_to_the_next_one(void **state)
{
    (void)state;
    /* No TRACY_PORT (the runtime tries that port alone): the program starts
     * its search at 8086, the real default, whose neighbours may be busy on
     * a shared host. */
    /* The test holds 8086 itself: another test's program that holds it now
     * may let it go at any moment (one did, and this program then took
     * 8086), so wait until it is ours, within a generous bound. */
    int blocker = -1, own = 0;
    for (int waited_ms = 0; !own && waited_ms < 120000; waited_ms += 50) {
        if (blocker >= 0) {
            close(blocker);
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
        }
        blocker = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(blocker, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in6 a;
        memset(&a, 0, sizeof(a));
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(BT_WIRE_DEFAULT_PORT);
        own = bind(blocker, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(blocker, 1) == 0;
    }
    if (!own)
        fail_msg("port %d stayed busy for 120 s: the test cannot hold it", BT_WIRE_DEFAULT_PORT);
    const char *args[] = {"linger", NULL};
    struct child c = spawn(traced_path, args, NULL);
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 30000), 0);
    int got = listening_port_of(c.pid);
    if (got <= (int)BT_WIRE_DEFAULT_PORT)
        fprintf(stderr, "listening port of %d: %d (8086 held by the test)\n", (int)c.pid, got);
    assert_true(got > (int)BT_WIRE_DEFAULT_PORT);
    assert_true(got < (int)(BT_WIRE_DEFAULT_PORT + BT_WIRE_PORT_ATTEMPTS));
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", (uint16_t)got, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    assert_int_equal(bt_wire_get_u64(s.welcome + BT_WELCOME_OFF_PID), (uint64_t)c.pid);
    bt_ts_close(&s);
    close(c.in);
    c.in = -1;
    assert_int_equal(wait_exit(&c, 30000), 0);
    (void)own;
    close(blocker);
}

/* With TRACY_ONLY_LOCALHOST (what `boardtrace run` sets) the announcement
 * goes to loopback's broadcast address, never onto the board's network: the
 * receiver is bound to 127.255.255.255, so a datagram sent anywhere else
 * does not reach it. */
static int loopback_broadcast_receiver(void)
{
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(u, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(u, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(BT_WIRE_DEFAULT_PORT);
    a.sin_addr.s_addr = htonl(0x7fffffffu);
    if (bind(u, (struct sockaddr *)&a, sizeof(a)) != 0) {
        fprintf(stderr, "cannot bind 127.255.255.255:%d: %s\n", BT_WIRE_DEFAULT_PORT,
                strerror(errno));
        close(u);
        return -1; /* another program owns UDP 8086 without SO_REUSEPORT */
    }
    return u;
}

static void the_broadcast_of_a_localhost_program_stays_on_loopback(void **state)
{
    (void)state;
    int u = loopback_broadcast_receiver();
    if (u < 0)
        skip();
    uint16_t port = free_port();
    const char *args[] = {"linger", NULL};
    const char *env[] = {"TRACY_NO_BROADCAST=0", "TRACY_ONLY_LOCALHOST=1", port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    int found = 0;
    int64_t end = now_ms() + 10000;
    while (!found && now_ms() < end) {
        struct pollfd p = {u, POLLIN, 0};
        if (poll(&p, 1, 500) <= 0)
            continue;
        uint8_t msg[128];
        ssize_t n = recv(u, msg, sizeof(msg), 0);
        if (n < 21 || bt_wire_get_u64(msg + BT_BROADCAST_OFF_PID) != (uint64_t)c.pid)
            continue;
        assert_int_equal(bt_wire_get_u16(msg + BT_BROADCAST_OFF_VERSION), 3);
        assert_int_equal(bt_wire_get_u16(msg + BT_BROADCAST_OFF_PORT), port);
        assert_int_equal(bt_wire_get_u32(msg + BT_BROADCAST_OFF_PROTOCOL), 82);
        assert_string_equal((const char *)msg + BT_BROADCAST_OFF_NAME, "bt_traced");
        assert_int_equal((size_t)n, BT_BROADCAST_OFF_NAME + strlen("bt_traced") + 1);
        found = 1;
    }
    close(u);
    close(c.in);
    c.in = -1;
    assert_int_equal(wait_exit(&c, 30000), 0);
    assert_true(found);
}

/* TracySetProgramName (Tracy.hpp) renames the program in the discovery
 * broadcast, as upstream's does (the welcome keeps the process name):
 * bt_traced_cpp sets "cpp-program" and then waits for a capture, announcing
 * itself every 3 s. */
static void the_broadcast_announces_the_program_name_set(void **state)
{
    (void)state;
    if (!cpp_path)
        skip();
    int u = loopback_broadcast_receiver();
    if (u < 0)
        skip();
    uint16_t port = free_port();
    const char *args[] = {NULL};
    const char *env[] = {"TRACY_NO_EXIT=1", "TRACY_NO_BROADCAST=0", "TRACY_ONLY_LOCALHOST=1",
                         port_env(port), NULL};
    struct child c = spawn(cpp_path, args, env);
    int found = 0;
    int64_t end = now_ms() + 60000;
    while (!found && now_ms() < end) {
        struct pollfd p = {u, POLLIN, 0};
        if (poll(&p, 1, 500) <= 0)
            continue;
        uint8_t msg[128];
        ssize_t n = recv(u, msg, sizeof(msg) - 1, 0);
        if (n < BT_BROADCAST_OFF_NAME + 1 ||
            bt_wire_get_u64(msg + BT_BROADCAST_OFF_PID) != (uint64_t)c.pid)
            continue;
        msg[n] = 0;
        found = strcmp((const char *)msg + BT_BROADCAST_OFF_NAME, "cpp-program") == 0;
    }
    close(u);
    struct bt_test_server s;
    capture(&s, "127.0.0.1", port);
    assert_string_equal((const char *)s.welcome + BT_WELCOME_OFF_PROGRAM_NAME, "bt_traced_cpp");
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
    assert_true(found);
}

/* The TCP port a process listens on, from /proc (0 when none): the socket
 * inodes among its descriptors, looked up in /proc/net/tcp and tcp6. */
static unsigned listening_port(pid_t pid)
{
    char dir[64], link[96], target[64];
    unsigned long inodes[64];
    int n = 0;
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) && n < 64;) {
        snprintf(link, sizeof link, "%s/%.16s", dir, e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = 0;
        if (sscanf(target, "socket:[%lu]", &inodes[n]) == 1)
            n++;
    }
    closedir(d);
    const char *tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (int t = 0; t < 2; t++) {
        FILE *f = fopen(tables[t], "r");
        if (!f)
            continue;
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char local[64];
            unsigned st;
            unsigned long inode;
            if (sscanf(line, " %*u: %63s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) !=
                    3 ||
                st != 0x0A)
                continue;
            for (int i = 0; i < n; i++) {
                const char *colon = strrchr(local, ':');
                if (inodes[i] == inode && colon) {
                    fclose(f);
                    return (unsigned)strtoul(colon + 1, NULL, 16);
                }
            }
        }
        fclose(f);
    }
    return 0;
}

/* A value a variable does not take is said on stderr, once, and the default
 * is used, instead of a port or size read out of it some other way. */
static void bad_environment_values_are_refused_with_a_message(void **state)
{
    (void)state;
    static const struct {
        const char *env, *said;
    } cases[] = {
        {"TRACY_PORT=70000", "boardtrace: TRACY_PORT=70000 is not a port (1..65535)"},
        {"TRACY_PORT=-1", "boardtrace: TRACY_PORT=-1 is not a port (1..65535)"},
        {"TRACY_PORT=18931x", "boardtrace: TRACY_PORT=18931x is not a port (1..65535)"},
        {"TRACY_PORT=abc", "boardtrace: TRACY_PORT=abc is not a port"},
        {"TRACY_PORT=0", "boardtrace: TRACY_PORT=0 is not a port"},
        {"TRACY_PORT=65536", "boardtrace: TRACY_PORT=65536 is not a port"},
        {"BOARDTRACE_BUFFER_KB=-1", "boardtrace: BOARDTRACE_BUFFER_KB=-1 is not a size in KiB "
                                    "(64..1048576); using 1024"},
        {"BOARDTRACE_BUFFER_KB=12k", "boardtrace: BOARDTRACE_BUFFER_KB=12k is not a size in KiB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char errpath[] = "/tmp/bt-session-env-XXXXXX";
        int errfd = mkstemp(errpath);
        assert_true(errfd >= 0);
        close(errfd);
        const char *args[] = {"linger", NULL};
        const char *env[] = {cases[i].env, NULL};
        child_stderr = errpath;
        struct child c = spawn(traced_path, args, env);
        child_stderr = NULL;
        char line[64];
        assert_int_equal(read_line(&c, line, sizeof(line), 30000), 0);
        char text[1024] = "";
        unsigned port = 0;
        for (int tries = 0; tries < 100 && (!strstr(text, "\n") || port == 0); tries++) {
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
            FILE *f = fopen(errpath, "r");
            assert_non_null(f);
            size_t n = fread(text, 1, sizeof text - 1, f);
            fclose(f);
            text[n] = '\0';
            port = listening_port(c.pid);
        }
        unlink(errpath);
        if (!strstr(text, cases[i].said))
            fprintf(stderr, "%s: the program said: %s\n", cases[i].env, text);
        assert_non_null(strstr(text, cases[i].said));
        assert_null(strchr(strchr(text, '\n') + 1, '\n')); /* one line */
        /* Not a port read out of the bad value: the default range. */
        assert_in_range(port, BT_WIRE_DEFAULT_PORT, BT_WIRE_DEFAULT_PORT + 19);
        close(c.in);
        c.in = -1;
        assert_int_equal(wait_exit(&c, 30000), 0);
    }
}

/* CPU seconds (user + system) a process has used so far, from /proc. */
static double cpu_seconds(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    unsigned long utime = 0, stime = 0;
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* A capture that stops reading: the emitting thread, its buffer full,
 * sleeps until the worker frees room instead of spinning, and once the
 * capture reads again every zone arrives. */
static void a_thread_blocked_on_a_stalled_capture_does_not_spin(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"many", "1", "3000000", NULL};
    const char *env[] = {"TRACY_NO_EXIT=1", "BOARDTRACE_BUFFER_KB=64", port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    /* Not reading: the socket's buffers and the ring fill within a second or two. */
    struct timespec settle = {2, 0}, stall = {3, 0};
    nanosleep(&settle, NULL);
    double before = cpu_seconds(c.pid);
    nanosleep(&stall, NULL);
    double used = cpu_seconds(c.pid) - before;
    assert_true(before >= 0);
    fprintf(stderr, "stalled for 3 s: the program used %.3f CPU s\n", used);
    if (emulator_count > 0)
        fprintf(stderr, "(under an emulator: the CPU bound is not checked)\n");
    else
        assert_true(used < 0.15); /* 5%; spinning in 20 us sleeps used 18-45% */
    assert_int_equal(bt_ts_run(&s, 120000), 0);
    assert_int_equal(bt_ts_zones_named(&s, "many"), 3000000);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void unwatched_events_beyond_the_bound_are_dropped_and_counted(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"drop", "200000", "wait", NULL};
    const char *env[] = {"BOARDTRACE_BUFFER_KB=64", port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 60000), 0);
    unsigned long long dropped = 0;
    assert_int_equal(sscanf(line, "dropped %llu", &dropped), 1);
    assert_true(dropped > 100000); /* a 64 KiB ring holds a few thousand zones */
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    close(c.in); /* let it exit: it sends what it kept, then Terminate */
    c.in = -1;
    int rc = bt_ts_run(&s, 60000);
    if (rc != 0)
        fprintf(stderr, "test server: %s\n", s.error);
    assert_int_equal(rc, 0);
    /* every zone was either delivered, balanced, or counted as dropped */
    assert_int_equal(s.zones_total + dropped, 200000);
    assert_true(s.flags & BT_WELCOME_FLAG_IGNORE_MEM_FAULTS);
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

static void exited_threads_keep_bounded_memory_before_a_capture(void **state)
{
    (void)state;
    uint16_t port = free_port();
    const char *args[] = {"churn", "100", "wait", NULL};
    const char *env[] = {"BOARDTRACE_BUFFER_KB=64", port_env(port), NULL};
    struct child c = spawn(traced_path, args, env);
    char line[64];
    assert_int_equal(read_line(&c, line, sizeof(line), 60000), 0);
    unsigned long long dropped = 0;
    assert_int_equal(sscanf(line, "dropped %llu", &dropped), 1);
    /* 100 threads of 10 zones (20 records each): all but the 16 newest gone */
    assert_true(dropped >= 20 * (100 - 16) && dropped < 20 * 100);
    struct bt_test_server s;
    assert_int_equal(bt_ts_connect(&s, "127.0.0.1", port, 30000), 0);
    assert_int_equal(bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION), BT_HANDSHAKE_WELCOME);
    close(c.in);
    c.in = -1;
    int rc = bt_ts_run(&s, 60000);
    if (rc != 0)
        fprintf(stderr, "test server: %s\n", s.error);
    assert_int_equal(rc, 0);
    assert_int_equal(s.zones_total * 2 + dropped, 2000); /* kept or counted, never lost */
    bt_ts_close(&s);
    assert_int_equal(wait_exit(&c, 30000), 0);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s TRACED PEER_CLIENT DEMO TRACED_CPP|- [EMULATOR...]\n", argv[0]);
        return 2;
    }
    traced_path = argv[1];
    peer_path = argv[2];
    demo_path = argv[3];
    cpp_path = strcmp(argv[4], "-") == 0 ? NULL : argv[4];
    emulator = argv + 5;
    emulator_count = argc - 5;
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(features_arrive_complete_and_in_order, kill_leftover_child),
        cmocka_unit_test_teardown(peer_client_compiled_against_our_tracyc_arrives_complete,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(every_tracy_c_api_macro_emits_its_event, kill_leftover_child),
        cmocka_unit_test_teardown(every_tracy_cpp_macro_emits_its_event, kill_leftover_child),
        cmocka_unit_test_teardown(texts_of_every_length_wrap_the_buffer_intact,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(events_from_a_signal_handler_arrive_or_are_counted,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(a_forked_child_runs_untraced_and_never_blocks,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(zones_open_at_thread_end_and_at_exit_arrive_closed,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(nesting_deeper_than_the_buffer_still_arrives,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(every_zone_of_many_threads_arrives, kill_leftover_child),
        cmocka_unit_test_teardown(the_demo_emits_exactly_what_it_reports, kill_leftover_child),
        cmocka_unit_test_teardown(every_free_arrives_after_its_allocation_even_in_bursts,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(code_transfer_sends_symbol_code_and_the_programs_source,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(callstacks_are_canonical_and_every_frame_is_answered,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(the_timer_is_calibrated_to_nanoseconds, kill_leftover_child),
        cmocka_unit_test_teardown(only_ipv4_listens_on_ipv4_alone, kill_leftover_child),
        cmocka_unit_test_teardown(queries_about_addresses_it_never_sent_get_placeholders,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(a_wrong_protocol_version_gets_mismatch, kill_leftover_child),
        cmocka_unit_test_teardown(a_second_capture_gets_not_available, kill_leftover_child),
        cmocka_unit_test_teardown(with_no_exit_the_program_waits_for_a_capture,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(without_no_exit_an_unwatched_program_exits_at_once,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(only_localhost_answers_on_both_loopbacks_and_nothing_else,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(a_busy_port_moves_the_program_to_the_next_one,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(a_thread_blocked_on_a_stalled_capture_does_not_spin,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(bad_environment_values_are_refused_with_a_message,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(the_broadcast_of_a_localhost_program_stays_on_loopback,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(the_broadcast_announces_the_program_name_set,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(exited_threads_keep_bounded_memory_before_a_capture,
                                  kill_leftover_child),
        cmocka_unit_test_teardown(unwatched_events_beyond_the_bound_are_dropped_and_counted,
                                  kill_leftover_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
