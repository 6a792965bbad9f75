/* Zone cost benchmark (ctest label "bench"): runs bench_zone_loop with
 * boardtrace-capture connected and draining it into a file, as a user runs
 * them, and checks that every zone arrived; alternates with the same loop
 * built against upstream Tracy's client (outside this repository) when one
 * is given, taken by the same capture; then runs the loop with tracing
 * compiled out. Prints ns per zone (begin + end) for each run: wall, the
 * emitting thread's CPU, the whole program's CPU (its worker's too) and the
 * capture's; then medians and ratios.
 * Usage: bench_zones CAPTURE OUT_DIR TRACED_LOOP COMPILED_OUT_LOOP ZONES[:RUNS]
 *        [--upstream LOOP] [EMULATOR...] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUNS_MAX 15

static char **emulator;
static int emulator_count;

/* Starts argv (after the emulator, if any) with its stdout and stderr on
 * *out and the loop's environment (port, wait for the capture, no
 * broadcast). */
static pid_t spawn(char *const *args, uint16_t port, int *out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        char port_text[16];
        snprintf(port_text, sizeof(port_text), "%u", port);
        setenv("TRACY_PORT", port_text, 1);
        setenv("TRACY_NO_EXIT", "1", 1);
        setenv("TRACY_NO_BROADCAST", "1", 1);
        char *argv[32];
        int n = 0;
        for (int i = 0; i < emulator_count && n < 20; i++)
            argv[n++] = emulator[i];
        for (int i = 0; args[i] && n < 31; i++)
            argv[n++] = args[i];
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
    double wall;    /* ns per zone */
    double cpu;     /* ns per zone of the emitting thread's CPU time */
    double program; /* ns per zone of the whole program's CPU (its worker too) */
    double capture; /* ns per zone of the capture's CPU (writing the file too) */
};

static double cpu_ns(const struct rusage *u)
{
    return ((double)u->ru_utime.tv_sec + (double)u->ru_stime.tv_sec) * 1e9 +
           ((double)u->ru_utime.tv_usec + (double)u->ru_stime.tv_usec) * 1e3;
}

/* Everything a child wrote, NUL-terminated (at most size - 1 bytes). */
static void read_all(int fd, char *text, size_t size)
{
    size_t len = 0;
    ssize_t k;
    while ((k = read(fd, text + len, size - 1 - len)) > 0)
        len += (size_t)k;
    text[len] = 0;
    close(fd);
}

/* Runs one loop program, with the capture (NULL: none) taking its zones
 * into a file in out_dir; returns 0 with its costs, or -1. */
static int run(const char *program, const char *zones, const char *capture, const char *out_dir,
               uint64_t *received, struct cost *c)
{
    uint16_t port = free_port();
    if (port == 0)
        return -1;
    char *loop_args[] = {(char *)program, (char *)zones, NULL};
    int out, cap_out = -1;
    pid_t pid = spawn(loop_args, port, &out);
    if (pid < 0)
        return -1;
    pid_t cap = -1;
    char file[4096], ports[8], log[4096] = "";
    if (capture) {
        snprintf(file, sizeof(file), "%s/zones.tracy", out_dir);
        snprintf(ports, sizeof(ports), "%u", port);
        char *cap_args[] = {(char *)capture, "-o", file,  "-f", "-a",
                            "127.0.0.1",     "-p", ports, NULL};
        cap = spawn(cap_args, port, &cap_out);
        if (cap < 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
    }
    struct rusage child, cap_usage;
    memset(&cap_usage, 0, sizeof(cap_usage));
    if (capture) {
        /* the capture first: one that fails leaves the loop waiting for a
         * capture (TRACY_NO_EXIT), so it is stopped then */
        read_all(cap_out, log, sizeof(log));
        int cap_status;
        wait4(cap, &cap_status, 0, &cap_usage);
        /* "FILE: complete, N events, Z zones, ..." */
        const char *z = strstr(log, " events, ");
        *received = z && strstr(log, ": complete, ") ? strtoull(z + 9, NULL, 10) : 0;
        if (!WIFEXITED(cap_status) || WEXITSTATUS(cap_status) != 0) {
            fprintf(stderr, "bench_zones: the capture failed:\n%s", log);
            kill(pid, SIGKILL);
        }
    }
    char line[4096];
    read_all(out, line, sizeof(line));
    int status;
    wait4(pid, &status, 0, &child);
    const char *w = strstr(line, " ns_per_zone=");
    const char *u = strstr(line, " cpu_ns_per_zone=");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !w || !u) {
        fprintf(stderr, "bench_zones: %s failed:\n%s", program, line);
        return -1;
    }
    c->wall = strtod(w + strlen(" ns_per_zone="), NULL);
    c->cpu = strtod(u + strlen(" cpu_ns_per_zone="), NULL);
    double n = strtod(zones, NULL);
    c->program = cpu_ns(&child) / n;
    c->capture = cpu_ns(&cap_usage) / n;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of each figure over runs (taken figure by figure). */
static struct cost median(const struct cost *c, int runs)
{
    double v[4][RUNS_MAX];
    for (int i = 0; i < runs; i++) {
        v[0][i] = c[i].wall;
        v[1][i] = c[i].cpu;
        v[2][i] = c[i].program;
        v[3][i] = c[i].capture;
    }
    for (int k = 0; k < 4; k++)
        qsort(v[k], (size_t)runs, sizeof(double), by_value);
    return (struct cost){v[0][runs / 2], v[1][runs / 2], v[2][runs / 2], v[3][runs / 2]};
}

static void print_cost(const char *what, const struct cost *c)
{
    printf("  %-34s wall %7.2f  thread CPU %7.2f  program CPU %7.2f  capture CPU %7.2f\n", what,
           c->wall, c->cpu, c->program, c->capture);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr,
                "usage: %s CAPTURE OUT_DIR TRACED_LOOP COMPILED_OUT_LOOP ZONES[:RUNS] "
                "[--upstream LOOP] [EMULATOR...]\n",
                argv[0]);
        return 2;
    }
    const char *capture = argv[1], *out_dir = argv[2];
    argv += 2;
    argc -= 2;
    mkdir(out_dir, 0700);
    signal(SIGPIPE, SIG_IGN);
    /* Zone cost is the instrumentation's: system tracing (sampling when run
     * as root) is benched by bench_systrace, and left off here for both. */
    setenv("TRACY_NO_SYS_TRACE", "1", 1);
    char zones_text[32];
    snprintf(zones_text, sizeof(zones_text), "%s", argv[3]);
    char *colon = strchr(zones_text, ':');
    int runs = colon ? atoi(colon + 1) : 3;
    if (colon)
        *colon = 0;
    if (runs < 1 || runs > RUNS_MAX)
        runs = 3;
    const char *upstream = NULL;
    int first = 4;
    if (argc > 5 && !strcmp(argv[4], "--upstream")) {
        upstream = argv[5][0] ? argv[5] : NULL; /* "" = not built */
        first = 6;
    }
    emulator = argv + first;
    emulator_count = argc - first;
    uint64_t zones = strtoull(zones_text, NULL, 10);
    struct cost ours[RUNS_MAX], theirs[RUNS_MAX], off;
    printf("zone begin+end, %llu zones, one thread%s, system tracing off; ns per zone, "
           "median of %d (wall; the emitting thread's CPU; the whole program's CPU; the "
           "capture's CPU):\n",
           (unsigned long long)zones, emulator_count ? ", under emulation" : "", runs);
    for (int r = 0; r < runs; r++) {
        /* alternated, so that both see the same machine */
        for (int u = 0; u < (upstream ? 2 : 1); u++) {
            uint64_t received = 0;
            struct cost *c = u ? &theirs[r] : &ours[r];
            if (run(u ? upstream : argv[1], zones_text, capture, out_dir, &received, c) != 0 ||
                received != zones) {
                fprintf(stderr, "bench_zones: %s run failed (%llu of %llu zones received)\n",
                        u ? "upstream's" : "our", (unsigned long long)received,
                        (unsigned long long)zones);
                return 1;
            }
            printf("  run %d, %-9s wall %7.2f  thread CPU %7.2f  program CPU %7.2f  capture CPU "
                   "%7.2f\n",
                   r + 1, u ? "upstream" : "ours", c->wall, c->cpu, c->program, c->capture);
        }
    }
    if (run(argv[2], zones_text, NULL, NULL, NULL, &off) != 0) {
        fprintf(stderr, "bench_zones: the compiled-out run failed\n");
        return 1;
    }
    struct cost m = median(ours, runs);
    print_cost("boardtrace, capture draining", &m);
    if (upstream) {
        struct cost mu = median(theirs, runs);
        print_cost("upstream v0.14.0, capture draining", &mu);
        printf("  ratio boardtrace / upstream:       wall %7.3f  thread CPU %7.3f  program CPU "
               "%7.3f  capture CPU %7.3f\n",
               m.wall / mu.wall, m.cpu / mu.cpu, m.program / mu.program, m.capture / mu.capture);
    } else {
        printf("  (no upstream loop to compare: configure with -DBT_UPSTREAM_ZONE_LOOP=PATH)\n");
    }
    off.program = off.capture = 0;
    print_cost("tracing compiled out", &off);
    return 0;
}
