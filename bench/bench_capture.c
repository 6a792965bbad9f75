/* Capture throughput benchmark: a synthetic Tracy client streams N zones
 * (ZoneBegin16/ZoneEnd16 pairs on one thread, one source location) as fast
 * as the capture takes them; each capture program given on the command line
 * (boardtrace-capture, and upstream tracy-capture for comparison) captures
 * it into a file. Prints events/s, wall time and peak RSS, and the ratios. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boardtrace/wire.h"

extern char **environ;

#define PAIR_BYTES   (11u + 3u) /* ZoneBegin16 + ZoneEnd16 */
#define TEXT_BYTES   12u
#define TEXTED_BYTES (11u + 2u + TEXT_BYTES + 1u + 3u) /* + SingleStringData8 + ZoneText */
#define SRCLOC_KEY   0x1000u
#define NAME_KEY     0x2000u
#define FUNCTION_KEY 0x3000u
#define FILE_KEY     0x4000u
#define THREAD_ID    4242u

struct client {
    int listen_fd;
    unsigned port;
    uint64_t zones;
    int texts; /* each zone gets a text of its own ("z0000000042") */
    int rc;
    char err[256];
};

static int send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static size_t keyed(uint8_t *p, uint8_t type, uint64_t key, const char *s)
{
    size_t n = strlen(s);
    p[0] = type;
    bt_wire_put_u64(p + 1, key);
    bt_wire_put_u16(p + 9, (uint16_t)n);
    memcpy(p + 11, s, n);
    return 11 + n;
}

/* Answers the queries that arrived; returns -1 on a closed socket, 1 when
 * the capture sent Terminate. */
static int answer(int fd, uint8_t *q, size_t *qlen, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, wait_ms) != 1)
        return 0;
    ssize_t k = recv(fd, q + *qlen, 4096 - *qlen, 0);
    if (k <= 0)
        return -1;
    *qlen += (size_t)k;
    uint8_t out[4096], raw[4096];
    size_t n = 0;
    size_t pos = 0;
    for (; *qlen - pos >= BT_QUERY_SIZE; pos += BT_QUERY_SIZE) {
        uint8_t type = q[pos];
        uint64_t key = bt_wire_get_u64(q + pos + 1);
        if (type == BT_QUERY_TERMINATE)
            return 1;
        if (type == BT_QUERY_SOURCE_LOCATION) {
            raw[n] = BT_EV_SOURCE_LOCATION;
            bt_wire_put_u64(raw + n + 1, NAME_KEY);
            bt_wire_put_u64(raw + n + 9, FUNCTION_KEY);
            bt_wire_put_u64(raw + n + 17, FILE_KEY);
            bt_wire_put_u32(raw + n + 25, 42);
            raw[n + 29] = raw[n + 30] = raw[n + 31] = 0;
            n += 32;
        } else if (type == BT_QUERY_STRING) {
            n += keyed(raw + n, BT_EV_STRING_DATA, key,
                       key == NAME_KEY       ? "bench_zone"
                       : key == FUNCTION_KEY ? "bench_loop"
                                             : "bench_capture.c");
        } else if (type == BT_QUERY_THREAD_STRING) {
            n += keyed(raw + n, BT_EV_THREAD_NAME, key, "bench-thread");
        }
    }
    memmove(q, q + pos, *qlen - pos);
    *qlen -= pos;
    if (n) {
        int c = LZ4_compress_default((char *)raw, (char *)out + 4, (int)n, sizeof out - 4);
        bt_wire_put_u32(out, (uint32_t)c);
        if (send_all(fd, out, 4 + (size_t)c) < 0)
            return -1;
    }
    return 0;
}

/* n zones numbered from first into raw, compressed into frame (u32 size +
 * LZ4 block); returns the compressed size. */
static int fill_frame(uint8_t *raw, uint8_t *frame, size_t n, uint64_t first, int texts)
{
    uint8_t *p = raw;
    for (size_t i = 0; i < n; i++) {
        p[0] = BT_EV_ZONE_BEGIN16;
        bt_wire_put_u16(p + 1, 100);
        bt_wire_put_u64(p + 3, SRCLOC_KEY);
        p += 11;
        if (texts) {
            char text[TEXT_BYTES + 1];
            snprintf(text, sizeof text, "z%010llu", (unsigned long long)(first + i));
            p[0] = BT_EV_SINGLE_STRING_DATA8;
            p[1] = TEXT_BYTES - 1;
            memcpy(p + 2, text, TEXT_BYTES - 1);
            p[1 + TEXT_BYTES] = BT_EV_ZONE_TEXT;
            p += TEXT_BYTES + 2;
        }
        p[0] = BT_EV_ZONE_END16;
        bt_wire_put_u16(p + 1, 50);
        p += 3;
    }
    int clen = LZ4_compress_default((char *)raw, (char *)frame + 4, (int)(p - raw),
                                    (int)BT_WIRE_LZ4_BOUND);
    bt_wire_put_u32(frame, (uint32_t)clen);
    return clen;
}

static void *serve(void *arg)
{
    struct client *c = arg;
    c->rc = -1;
    int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    uint8_t hello[12];
    if (fd < 0 || recv(fd, hello, sizeof hello, MSG_WAITALL) != sizeof hello) {
        snprintf(c->err, sizeof c->err, "no handshake");
        return NULL;
    }
    uint8_t welcome[1 + BT_WELCOME_SIZE] = {BT_HANDSHAKE_WELCOME};
    double mul = 1.0;
    memcpy(welcome + 1 + BT_WELCOME_OFF_TIMER_MUL, &mul, 8);
    bt_wire_put_u64(welcome + 1 + BT_WELCOME_OFF_INIT_BEGIN, 0);
    bt_wire_put_u64(welcome + 1 + BT_WELCOME_OFF_INIT_END, 10);
    bt_wire_put_u64(welcome + 1 + BT_WELCOME_OFF_RESOLUTION, 1);
    bt_wire_put_u64(welcome + 1 + BT_WELCOME_OFF_EPOCH, (uint64_t)time(NULL));
    bt_wire_put_u64(welcome + 1 + BT_WELCOME_OFF_PID, (uint64_t)getpid());
    strcpy((char *)welcome + 1 + BT_WELCOME_OFF_PROGRAM_NAME, "bench-synthetic");
    send_all(fd, welcome, sizeof welcome);

    /* Without texts, one frame of pairs is compressed once and sent again
     * and again: the THR reference keeps running across frames, so time only
     * moves forward. With texts every frame is built anew. */
    size_t per = c->texts ? TEXTED_BYTES : PAIR_BYTES;
    size_t pairs = BT_WIRE_FRAME_SIZE / per;
    uint8_t *raw = malloc(BT_WIRE_FRAME_SIZE), *frame = malloc(4 + BT_WIRE_LZ4_BOUND);
    int clen = fill_frame(raw, frame, pairs, 0, c->texts);
    uint8_t first[5 + 4 + 64], q[4096];
    size_t qlen = 0;
    uint8_t ctx[5] = {BT_EV_THREAD_CONTEXT};
    bt_wire_put_u32(ctx + 1, THREAD_ID);
    int fl = LZ4_compress_default((char *)ctx, (char *)first + 4, 5, 64);
    bt_wire_put_u32(first, (uint32_t)fl);
    send_all(fd, first, 4 + (size_t)fl);

    uint64_t sent = 0;
    int st = 0;
    while (sent < c->zones && st >= 0) {
        uint64_t k = c->zones - sent < pairs ? c->zones - sent : pairs;
        if (c->texts || k < pairs)
            clen = fill_frame(raw, frame, (size_t)k, sent, c->texts);
        if (send_all(fd, frame, 4 + (size_t)clen) < 0)
            st = -1;
        sent += k;
        if (st >= 0)
            st = answer(fd, q, &qlen, 0);
    }
    uint8_t term[4 + 16], t = BT_EV_TERMINATE;
    int tl = LZ4_compress_default((char *)&t, (char *)term + 4, 1, 16);
    bt_wire_put_u32(term, (uint32_t)tl);
    if (st >= 0 && send_all(fd, term, 4 + (size_t)tl) == 0) {
        for (int i = 0; i < 6000 && st == 0; i++)
            st = answer(fd, q, &qlen, 100);
    }
    c->rc = st == 1 ? 0 : -1;
    if (c->rc < 0)
        snprintf(c->err, sizeof c->err, "the capture did not finish with Terminate");
    close(fd);
    free(raw);
    free(frame);
    return NULL;
}

struct result {
    double seconds;
    double cpu_seconds; /* user + system time of the capture process */
    long max_rss_kb;
    int status;
    off_t file_bytes;
};

static int run_capture(const char *prog, const char *out, uint64_t zones, int texts,
                       struct result *r)
{
    struct client c = {.zones = zones, .texts = texts};
    c.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(c.listen_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(c.listen_fd, 1) < 0 ||
        getsockname(c.listen_fd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    char port[16];
    snprintf(port, sizeof port, "%u", ntohs(a.sin_port));
    pthread_t th;
    pthread_create(&th, NULL, serve, &c);
    unlink(out);
    char *argv[] = {(char *)prog, "-o", (char *)out, "-f", "-a", "127.0.0.1", "-p", port, NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid, prog, &fa, NULL, argv, environ) != 0) {
        fprintf(stderr, "cannot start %s\n", prog);
        return -1;
    }
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(th, NULL);
    close(c.listen_fd);
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    r->max_rss_kb = ru.ru_maxrss;
    r->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    struct stat sb;
    r->file_bytes = stat(out, &sb) == 0 ? sb.st_size : -1;
    if (c.rc < 0)
        fprintf(stderr, "%s: %s\n", prog, c.err);
    return c.rc < 0 || r->status != 0 || r->file_bytes <= 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: %s ZONES[:texts] OUT_DIR CAPTURE [UPSTREAM_TRACY_CAPTURE]\n"
                "  ZONES:texts gives every zone a text of its own (11 bytes)\n",
                argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    char *rest;
    uint64_t zones = strtoull(argv[1], &rest, 10);
    int texts = !strcmp(rest, ":texts");
    const char *dir = argv[2];
    mkdir(dir, 0755);
    struct result res[2];
    const char *names[2] = {"boardtrace-capture", "tracy-capture (upstream)"};
    int n = argc > 4 ? 2 : 1, failed = 0;
    printf("capture of a synthetic stream of %llu zones (%llu events, one thread, one source "
           "location%s)\n",
           (unsigned long long)zones, (unsigned long long)zones * (texts ? 3 : 2),
           texts ? ", a text of its own per zone" : "");
    printf("%-26s %8s %8s %14s %16s %12s %10s\n", "capture", "wall s", "CPU s", "events/s",
           "events/CPU-s", "peak RSS", "file");
    for (int i = 0; i < n; i++) {
        char out[4096];
        snprintf(out, sizeof out, "%s/bench-%d.tracy", dir, i);
        if (run_capture(argv[3 + i], out, zones, texts, &res[i]) < 0) {
            fprintf(stderr, "%s failed (exit %d)\n", argv[3 + i], res[i].status);
            failed = 1;
            continue;
        }
        printf("%-26s %8.2f %8.2f %14.0f %16.0f %8.1f MiB %6.1f MiB\n", names[i], res[i].seconds,
               res[i].cpu_seconds, (double)zones * (texts ? 3 : 2) / res[i].seconds,
               (double)zones * (texts ? 3 : 2) / res[i].cpu_seconds, res[i].max_rss_kb / 1024.0,
               (double)res[i].file_bytes / (1024.0 * 1024.0));
        if (!getenv("BENCH_KEEP_FILES"))
            unlink(out);
    }
    if (n == 2 && !failed)
        printf("ratio boardtrace/upstream: events/s x%.2f (wall), events/CPU-s x%.2f, "
               "peak RSS x%.3f\n",
               res[1].seconds / res[0].seconds, res[1].cpu_seconds / res[0].cpu_seconds,
               (double)res[0].max_rss_kb / (double)res[1].max_rss_kb);
    return failed;
}
