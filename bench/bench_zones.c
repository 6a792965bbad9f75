/* Zone cost benchmark (ctest label "bench"): runs bench_zone_loop with a
 * capture connected and draining (the test server of tests/support), checks
 * that every zone arrived, then runs the same loop with tracing compiled out,
 * and prints ns per zone (begin + end) for both.
 * Usage: bench_zones TRACED_LOOP COMPILED_OUT_LOOP ZONES [EMULATOR...] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bt_test_server.h"
#include "boardtrace/wire.h"

static char **emulator;
static int emulator_count;

/* Starts program with one argument; its stdout comes back on *out. */
static pid_t spawn(const char *program, const char *arg, uint16_t port, int *out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        char port_text[16];
        snprintf(port_text, sizeof(port_text), "%u", port);
        setenv("TRACY_PORT", port_text, 1);
        setenv("TRACY_NO_EXIT", "1", 1);
        setenv("TRACY_NO_BROADCAST", "1", 1);
        char *argv[32];
        int n = 0;
        for (int i = 0; i < emulator_count && n < 29; i++)
            argv[n++] = emulator[i];
        argv[n++] = (char *)program;
        argv[n++] = (char *)arg;
        argv[n] = NULL;
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    *out = fds[0];
    return pid;
}

static uint16_t free_port(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof(a));
    a.sin6_family = AF_INET6;
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return 0;
    close(fd);
    return ntohs(a.sin6_port);
}

struct cost {
    double wall; /* ns per zone */
    double cpu;  /* ns per zone of the emitting thread's CPU time */
};

/* Runs one loop program; returns 0 with its costs, or -1. */
static int run(const char *program, const char *zones, int capture, uint64_t *received,
               struct cost *c)
{
    uint16_t port = free_port();
    int out;
    pid_t pid = spawn(program, zones, port, &out);
    if (pid < 0 || port == 0)
        return -1;
    if (capture) {
        struct bt_test_server s;
        if (bt_ts_connect(&s, "127.0.0.1", port, 30000) != 0 ||
            bt_ts_handshake(&s, BT_WIRE_PROTOCOL_VERSION) != BT_HANDSHAKE_WELCOME ||
            bt_ts_run(&s, 120000) != 0) {
            fprintf(stderr, "bench_zones: capture failed: %s\n", s.error);
            kill(pid, SIGKILL);
        }
        *received = s.zones_total;
        bt_ts_close(&s);
    }
    char line[256] = "";
    FILE *f = fdopen(out, "r");
    if (!f || !fgets(line, sizeof(line), f))
        line[0] = 0;
    if (f)
        fclose(f);
    int status;
    waitpid(pid, &status, 0);
    const char *w = strstr(line, " ns_per_zone=");
    const char *u = strstr(line, " cpu_ns_per_zone=");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !w || !u)
        return -1;
    c->wall = strtod(w + strlen(" ns_per_zone="), NULL);
    c->cpu = strtod(u + strlen(" cpu_ns_per_zone="), NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TRACED_LOOP COMPILED_OUT_LOOP ZONES [EMULATOR...]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    emulator = argv + 4;
    emulator_count = argc - 4;
    uint64_t zones = strtoull(argv[3], NULL, 10);
    uint64_t received = 0;
    struct cost traced, off;
    if (run(argv[1], argv[3], 1, &received, &traced) != 0 ||
        run(argv[2], argv[3], 0, NULL, &off) != 0 || received != zones) {
        fprintf(stderr, "bench_zones: run failed (%llu of %llu zones received)\n",
                (unsigned long long)received, (unsigned long long)zones);
        return 1;
    }
    printf("zone begin+end, %llu zones, one thread%s (wall / emitting thread's CPU):\n",
           (unsigned long long)zones, emulator_count ? ", under emulation" : "");
    printf("  capture connected and draining: %8.2f / %8.2f ns per zone (all received)\n",
           traced.wall, traced.cpu);
    printf("  tracing compiled out:           %8.2f / %8.2f ns per zone\n", off.wall, off.cpu);
    return 0;
}
