/* System tracing overhead benchmark (ctest label "bench"): runs
 * bench_sys_work (two threads of fixed arithmetic) with a capture draining
 * (the strict test server), with system tracing off and with CPU sampling
 * at several rates, three times each, and prints the median wall time of the
 * work, its ratio to the run without system tracing, the samples and
 * switches received, and the share of the work's wall time the runtime's
 * reader thread spent on a CPU. Needs root on a real kernel for context
 * switches (without, the figures are those of sampling alone).
 * Usage: bench_systrace WORK_PROGRAM [ITERATIONS] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boardtrace/wire.h"
#include "bt_test_server.h"

#define RUNS 3

struct mode {
    const char *label;
    const char *env; /* NAME=VALUE, or NULL */
};

static const struct mode modes[] = {
    {"system tracing off", "TRACY_NO_SYS_TRACE=1"},
    {"sampling at 1 kHz", "TRACY_SAMPLING_HZ=1000"},
    {"default (10 kHz)", NULL},
    {"sampling at 40 kHz", "TRACY_SAMPLING_HZ=40000"},
};

struct result {
    long long work_ns, cpu_ns, reader_ns, worker_ns;
    unsigned long long samples, switches;
};

static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return 0;
    close(fd);
    return ntohs(a.sin_port);
}

static int run(const char *program, const char *iterations, const struct mode *m, struct result *r)
{
    uint16_t port = free_port();
    int fds[2];
    if (port == 0 || pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        char port_text[16];
        snprintf(port_text, sizeof port_text, "%u", port);
        setenv("TRACY_PORT", port_text, 1);
        setenv("TRACY_NO_EXIT", "1", 1);
        setenv("TRACY_NO_BROADCAST", "1", 1);
        setenv("TRACY_ONLY_LOCALHOST", "1", 1);
        if (m->env)
            putenv((char *)m->env);
        execl(program, program, iterations, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    struct bt_test_server s;
    int ok = bt_ts_connect(&s, "127.0.0.1", port, 30000) == 0 &&
             bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION) == BT_HANDSHAKE_WELCOME &&
             bt_ts_run(&s, 120000) == 0;
    if (!ok) {
        fprintf(stderr, "bench_systrace: capture failed: %s\n", s.error);
        kill(pid, SIGKILL);
    }
    r->samples = s.sys.samples;
    r->switches = s.sys.context_switches;
    bt_ts_close(&s);
    char line[256] = "";
    FILE *f = fdopen(fds[0], "r");
    if (!f || !fgets(line, sizeof line, f))
        line[0] = 0;
    if (f)
        fclose(f);
    int status;
    waitpid(pid, &status, 0);
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(line, "work_ns=%lld cpu_ns=%lld reader_ns=%lld worker_ns=%lld", &r->work_ns,
               &r->cpu_ns, &r->reader_ns, &r->worker_ns) != 4)
        return -1;
    return 0;
}

static int by_work(const void *a, const void *b)
{
    const struct result *x = a, *y = b;
    return (x->work_ns > y->work_ns) - (x->work_ns < y->work_ns);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s WORK_PROGRAM [ITERATIONS]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    const char *iterations = argc > 2 ? argv[2] : "400000000";
    size_t nmodes = sizeof modes / sizeof modes[0];
    struct result median[sizeof modes / sizeof modes[0]];
    /* rounds over the modes, so a slow spell of the machine hits them all */
    struct result all[sizeof modes / sizeof modes[0]][RUNS];
    for (int k = 0; k < RUNS; k++)
        for (size_t i = 0; i < nmodes; i++)
            if (run(argv[1], iterations, &modes[i], &all[i][k]) != 0) {
                fprintf(stderr, "bench_systrace: the run \"%s\" failed\n", modes[i].label);
                return 1;
            }
    for (size_t i = 0; i < nmodes; i++) {
        qsort(all[i], RUNS, sizeof all[i][0], by_work);
        median[i] = all[i][RUNS / 2];
    }
    printf("system tracing overhead: two threads x %s iterations, %ld CPUs, median of %d "
           "runs\n",
           iterations, sysconf(_SC_NPROCESSORS_ONLN), RUNS);
    printf("  %-20s %8s %6s %8s %8s %8s %8s %8s\n", "", "wall ms", "ratio", "CPU ms", "samples",
           "switches", "reader", "worker");
    for (size_t i = 0; i < nmodes; i++) {
        const struct result *r = &median[i];
        printf("  %-20s %8.1f %6.3f %8.1f %8llu %8llu %7.2f%% %7.2f%%\n", modes[i].label,
               (double)r->work_ns / 1e6, (double)r->work_ns / (double)median[0].work_ns,
               (double)r->cpu_ns / 1e6, r->samples, r->switches,
               100.0 * (double)r->reader_ns / (double)r->work_ns,
               100.0 * (double)r->worker_ns / (double)r->work_ns);
    }
    printf("  (CPU ms: the whole process; reader and worker: the runtime's system tracer\n"
           "  and sending threads, on a CPU for that share of the work's wall time)\n");
    return 0;
}
