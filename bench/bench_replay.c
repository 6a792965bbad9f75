/* Capture benchmark on a recorded session: the replay client serves the
 * recording (tests/data/tracy-0.14.0-full: system tracing, GPU, code
 * transfer) as fast as the capture takes it, answering its queries; each
 * capture program given (boardtrace-capture, and upstream tracy-capture for
 * comparison) captures it into a file. Prints wall time, events/s (events
 * decoded by boardtrace-capture, the same stream for every capture) and
 * peak RSS. Usage: bench_replay REPLAY_CLIENT DATA_DIR OUT_DIR CAPTURE... */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s REPLAY_CLIENT DATA_DIR OUT_DIR CAPTURE...\n", argv[0]);
        return 2;
    }
    mkdir(argv[3], 0700);
    double events = 0;
    int failed = 0;
    for (int c = 4; c < argc; c++) {
        unsigned port;
        FILE *rout;
        pid_t rp = start_replay(argv[1], argv[2], &port, &rout);
        if (rp < 0) {
            fprintf(stderr, "bench_replay: cannot start %s\n", argv[1]);
            return 1;
        }
        char out[4096], ports[16], log[4200];
        snprintf(out, sizeof out, "%s/replay-%d.tracy", argv[3], c);
        snprintf(log, sizeof log, "%s/replay-%d.log", argv[3], c);
        snprintf(ports, sizeof ports, "%u", port);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        char *cargv[] = {argv[c], "-o", out, "-f", "-a", "127.0.0.1", "-p", ports, NULL};
        double t0 = now();
        pid_t cp;
        if (posix_spawn(&cp, argv[c], &fa, NULL, cargv, environ) != 0) {
            fprintf(stderr, "bench_replay: cannot start %s\n", argv[c]);
            return 1;
        }
        posix_spawn_file_actions_destroy(&fa);
        int st;
        struct rusage ru;
        wait4(cp, &st, 0, &ru);
        double wall = now() - t0;
        int rst;
        waitpid(rp, &rst, 0);
        fclose(rout);
        /* boardtrace-capture says how many events it decoded. */
        FILE *lf = fopen(log, "r");
        char line[1024];
        while (lf && fgets(line, sizeof line, lf)) {
            const char *e = strstr(line, " events,");
            const char *b = strstr(line, ": complete, ");
            if (e && b && c == 4)
                events = atof(b + 12);
        }
        if (lf)
            fclose(lf);
        struct stat sb;
        int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && stat(out, &sb) == 0;
        failed |= !ok;
        printf("%-60s %s wall %.2f s, %.0f events/s, peak RSS %.1f MiB, file %lld bytes\n", argv[c],
               ok ? "ok " : "FAILED", wall, wall > 0 ? events / wall : 0.0,
               (double)ru.ru_maxrss / 1024.0, ok ? (long long)sb.st_size : -1LL);
    }
    return failed;
}
