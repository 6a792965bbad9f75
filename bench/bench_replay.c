/* Capture ingest benchmark on recorded sessions: the replay client serves a
 * recording (its data compressed ahead, so it costs little beside the
 * capture) as fast as the capture takes it, answering the capture's queries
 * from the recording; each capture program given (boardtrace-capture first,
 * then upstream tracy-capture for comparison) captures it into a file. Runs
 * alternate between the captures; for each recording it prints every run and
 * the medians of wall time, events/s, events per CPU-second (the capture's
 * user + system time) and peak RSS, and the ratios of the first capture to
 * the second. Events are the ones boardtrace-capture reports decoding: the
 * same stream for every capture. Each is given end to end (until the capture
 * exits, its file written) and for the ingest alone: from the connection to
 * the capture's Terminate query, as the replay client times it, with the
 * capture's CPU time read at that moment (to 10 ms).
 * Usage: bench_replay REPLAY_CLIENT OUT_DIR RUNS DATA_DIR... -- CAPTURE... */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define RUNS_MAX     15
#define CAPTURES_MAX 4

struct result {
    double wall, cpu, rss_mib;
    double ingest_wall, ingest_cpu; /* up to the Terminate query */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds process pid has used so far, its exited threads included
 * (user + system time from /proc/PID/stat, in clock ticks: 10 ms at the
 * usual 100 Hz), or -1 when it cannot be read. */
static double process_cpu(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    /* Fields after the command name, which ends at the last ')': state is
     * field 3, utime 14, stime 15. */
    const char *p = strrchr(buf, ')');
    unsigned long long utime, stime;
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Starts the replay client; returns its pid and the port it listens on. */
static pid_t start_replay(const char *client, const char *data, unsigned *port, FILE **out)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    char *argv[] = {(char *)client, (char *)data, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, client, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0)
        return -1;
    *out = fdopen(fd[0], "r");
    char line[256];
    if (!*out || !fgets(line, sizeof line, *out) || sscanf(line, "listening on %u", port) != 1)
        return -1;
    return pid;
}

/* One capture of one recording; *events is set from boardtrace-capture's
 * report when `count` is set. Returns 0 when the capture succeeded. */
static int capture_once(const char *client, const char *data, const char *capture,
                        const char *out_dir, int index, int count, double *events,
                        struct result *res)
{
    unsigned port;
    FILE *rout;
    pid_t rp = start_replay(client, data, &port, &rout);
    if (rp < 0) {
        fprintf(stderr, "bench_replay: cannot start %s on %s\n", client, data);
        return -1;
    }
    char out[4096], ports[16], log[4200];
    snprintf(out, sizeof out, "%s/replay-%d.tracy", out_dir, index);
    snprintf(log, sizeof log, "%s/replay-%d.log", out_dir, index);
    snprintf(ports, sizeof ports, "%u", port);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    char *cargv[] = {(char *)capture, "-o", out, "-f", "-a", "127.0.0.1", "-p", ports, NULL};
    double t0 = now();
    pid_t cp;
    int spawned = posix_spawn(&cp, capture, &fa, NULL, cargv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (spawned != 0) {
        fprintf(stderr, "bench_replay: cannot start %s\n", capture);
        kill(rp, SIGKILL);
        waitpid(rp, NULL, 0);
        fclose(rout);
        return -1;
    }
    /* Until the capture exits, watch the client's output for its end of
     * the session (the capture's Terminate query) and read the capture's
     * CPU time then: what the ingest cost, before the file is written. */
    int pidfd = (int)syscall(SYS_pidfd_open, cp, 0);
    int client_fd = fileno(rout), client_open = 1;
    res->ingest_wall = res->ingest_cpu = -1;
    char cline[1024];
    size_t clen = 0;
    /* After the capture exits (a short session may end before the client's
     * line is read), the client's time is still read, to its end. */
    int capture_gone = 0;
    while (pidfd >= 0 && client_open && !(capture_gone && res->ingest_wall >= 0)) {
        struct pollfd pf[2] = {{.fd = pidfd, .events = POLLIN},
                               {.fd = client_fd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0)
            break;
        if (pf[1].revents) {
            ssize_t k = read(client_fd, cline + clen, sizeof cline - 1 - clen);
            if (k <= 0) {
                client_open = 0;
            } else {
                clen += (size_t)k;
                cline[clen] = 0;
                const char *in = strstr(cline, " events sent in ");
                if (in && strchr(in, ';') && res->ingest_wall < 0) {
                    if (!capture_gone)
                        res->ingest_cpu = process_cpu(cp);
                    res->ingest_wall = atof(in + 16);
                }
                if (clen == sizeof cline - 1)
                    clen = 0;
            }
        }
        if (pf[0].revents)
            capture_gone = 1;
    }
    if (pidfd >= 0)
        close(pidfd);
    int st;
    struct rusage ru;
    wait4(cp, &st, 0, &ru);
    res->wall = now() - t0;
    res->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
               ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
    res->rss_mib = (double)ru.ru_maxrss / 1024.0;
    /* A capture that ended before the client's line was read: its whole
     * run bounds the ingest's CPU. */
    if (res->ingest_cpu < 0 || res->ingest_cpu > res->cpu)
        res->ingest_cpu = res->cpu;
    if (res->ingest_wall < 0)
        res->ingest_wall = res->wall;
    int rst;
    waitpid(rp, &rst, 0);
    fclose(rout);
    FILE *lf = fopen(log, "r");
    char line[1024];
    while (count && lf && fgets(line, sizeof line, lf)) {
        const char *b = strstr(line, ": complete, ");
        if (b && strstr(line, " events,"))
            *events = atof(b + 12);
    }
    if (lf)
        fclose(lf);
    struct stat sb;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || stat(out, &sb) != 0) {
        fprintf(stderr, "bench_replay: %s failed on %s (log: %s)\n", capture, data, log);
        return -1;
    }
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const struct result *r, int runs, size_t field)
{
    double v[RUNS_MAX];
    for (int i = 0; i < runs; i++)
        memcpy(&v[i], (const char *)&r[i] + field, sizeof(double));
    qsort(v, (size_t)runs, sizeof(double), by_value);
    return v[runs / 2];
}

/* n / d into buf ("%*.*f"), or "n/a" when d is 0: a CPU time below the
 * clock tick /proc counts in. */
static const char *per(char *buf, size_t len, int width, int prec, double n, double d)
{
    if (d > 0 && n > 0)
        snprintf(buf, len, "%*.*f", width, prec, n / d);
    else
        snprintf(buf, len, "%*s", width, "n/a");
    return buf;
}

int main(int argc, char **argv)
{
    int sep = 0;
    for (int i = 4; i < argc && !sep; i++)
        if (!strcmp(argv[i], "--"))
            sep = i;
    if (argc < 6 || !sep || sep == 4 || sep + 1 >= argc) {
        fprintf(stderr, "usage: %s REPLAY_CLIENT OUT_DIR RUNS DATA_DIR... -- CAPTURE...\n",
                argv[0]);
        return 2;
    }
    const char *client = argv[1], *out_dir = argv[2];
    int runs = atoi(argv[3]);
    if (runs < 1 || runs > RUNS_MAX)
        runs = 3;
    char **captures = argv + sep + 1;
    int ncaptures = argc - sep - 1;
    if (ncaptures > CAPTURES_MAX)
        ncaptures = CAPTURES_MAX;
    mkdir(out_dir, 0700);
    int failed = 0;
    for (int d = 4; d < sep; d++) {
        const char *data = argv[d];
        struct result res[CAPTURES_MAX][RUNS_MAX];
        double events = 0;
        printf("%s: %d runs, alternating the captures\n", data, runs);
        for (int r = 0; r < runs && !failed; r++)
            for (int c = 0; c < ncaptures && !failed; c++) {
                failed = capture_once(client, data, captures[c], out_dir, c, c == 0, &events,
                                      &res[c][r]) != 0;
                if (!failed)
                    printf(
                        "  run %d %-50s wall %5.2f s, CPU %5.2f s (ingest %5.2f s, CPU %5.2f s), "
                        "peak RSS %6.1f MiB\n",
                        r + 1, captures[c], res[c][r].wall, res[c][r].cpu, res[c][r].ingest_wall,
                        res[c][r].ingest_cpu, res[c][r].rss_mib);
            }
        if (failed)
            break;
        double wall[CAPTURES_MAX], cpu[CAPTURES_MAX], iwall[CAPTURES_MAX], icpu[CAPTURES_MAX];
        printf("  %.0f events (as boardtrace-capture decodes them); medians, end to end | ingest "
               "alone:\n",
               events);
        for (int c = 0; c < ncaptures; c++) {
            wall[c] = median_of(res[c], runs, offsetof(struct result, wall));
            cpu[c] = median_of(res[c], runs, offsetof(struct result, cpu));
            iwall[c] = median_of(res[c], runs, offsetof(struct result, ingest_wall));
            icpu[c] = median_of(res[c], runs, offsetof(struct result, ingest_cpu));
            char a[32], b[32], e[32], f[32];
            printf("  %-50s %s events/s, %s per CPU-second | %s events/s, %s per CPU-second; peak "
                   "RSS %6.1f MiB\n",
                   captures[c], per(a, sizeof a, 11, 0, events, wall[c]),
                   per(b, sizeof b, 11, 0, events, cpu[c]),
                   per(e, sizeof e, 11, 0, events, iwall[c]),
                   per(f, sizeof f, 11, 0, events, icpu[c]),
                   median_of(res[c], runs, offsetof(struct result, rss_mib)));
        }
        char a[32], b[32], e[32], f[32];
        if (ncaptures > 1)
            printf("  ratio first / second capture: end to end: events/s x%s, events per "
                   "CPU-second x%s; ingest alone: events/s x%s, events per CPU-second x%s; "
                   "peak RSS x%.3f\n",
                   per(a, sizeof a, 0, 2, wall[1], wall[0]), per(b, sizeof b, 0, 2, cpu[1], cpu[0]),
                   per(e, sizeof e, 0, 2, iwall[1], iwall[0]),
                   per(f, sizeof f, 0, 2, icpu[1], icpu[0]),
                   median_of(res[0], runs, offsetof(struct result, rss_mib)) /
                       median_of(res[1], runs, offsetof(struct result, rss_mib)));
        else
            printf("  (no second capture to compare: configure with "
                   "-DBT_UPSTREAM_TRACY_CAPTURE=PATH)\n");
    }
    return failed;
}
