/* Test double for a tracy-capture compatible capture (-o FILE -a ADDR -p PORT
 * -f -s SECONDS -m PERCENT): connects, retrying like tracy-capture, stores every byte in
 * FILE and prints statistics in tracy-capture's "Key: value" style. Named
 * with "never-ends" in its file name, it leaves behind, as it exits, a
 * process that holds its output open for four minutes: the board's side of
 * the run then never sees the capture's output end. Named with "slow-save",
 * it takes 100 s to save after the client is gone, unless SIGINT asks it
 * to finish now (as tracy-capture saves at once on SIGINT). A stream whose
 * first line ends in "disk-full" is kept in FILE.journal instead, with
 * boardtrace-capture's exit status 8 and message for a file it could not
 * write (with "journal-cut" before it: and a journal cut short); --recover JOURNAL -o FILE [-f]
 * then makes FILE of it, as boardtrace-capture does. Named with "hostile", it ends with
 * boardtrace-capture's closing line carrying terminal escapes where a
 * client's words (its Tracy release) or a path would be. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int recover(const char *journal, const char *out)
{
    FILE *in = fopen(journal, "rb"), *f = in ? fopen(out, "wb") : NULL;
    if (!f) {
        perror(in ? out : journal);
        return 1;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, f);
    fclose(in);
    if (fclose(f) != 0)
        return 8;
    unlink(journal);
    printf("%s: recovered from %s\n", out, journal);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "--recover") == 0 && strcmp(argv[3], "-o") == 0)
        return recover(argv[2], argv[4]);
    const char *out = NULL, *addr = "127.0.0.1";
    int port = 8086, seconds = 0, opt;
    int memory = 0;
    const char *file_version = NULL;
    static const struct option longs[] = {{"file-version", required_argument, NULL, 'V'},
                                          {"connect-timeout", required_argument, NULL, 'T'},
                                          {NULL, 0, NULL, 0}};
    while ((opt = getopt_long(argc, argv, "o:a:p:fs:m:", longs, NULL)) != -1) {
        switch (opt) {
        case 'V':
            file_version = optarg;
            break;
        case 'T': /* its own 60 s bound serves */
            break;
        case 'o':
            out = optarg;
            break;
        case 'a': /* "localhost": its IPv4 address serves the fake program */
            addr = strcmp(optarg, "localhost") == 0 ? "127.0.0.1" : optarg;
            break;
        case 'p':
            port = atoi(optarg);
            break;
        case 'f':
            break;
        case 's':
            seconds = atoi(optarg);
            break;
        case 'm':
            memory = atoi(optarg);
            break;
        default:
            fprintf(stderr,
                    "usage: fake_capture -o FILE [-a ADDR] [-p PORT] [-f] [-s SEC] [-m PCT]\n");
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "fake_capture: -o FILE is required\n");
        return 2;
    }
    /* What -m it was given, for the tests to see. */
    if (memory > 0)
        printf("Memory limit: %d%%\n", memory);
    else
        printf("Memory limit: none\n");
    if (file_version) /* what --file-version it was given */
        printf("File version: %s\n", file_version);
    printf("Connecting to %s:%d...\n", addr, port);
    fflush(stdout);
    int fd = -1;
    double start = now();
    while (now() - start < 60) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
        inet_pton(AF_INET, addr, &a.sin_addr);
        struct sockaddr_in self;
        socklen_t sl = sizeof self;
        /* A connection that met itself (source port == PORT) is no server. */
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
            getsockname(fd, (struct sockaddr *)&self, &sl) == 0 &&
            !(self.sin_port == a.sin_port && self.sin_addr.s_addr == a.sin_addr.s_addr))
            break;
        close(fd);
        fd = -1;
        usleep(50000);
    }
    if (fd < 0) {
        fprintf(stderr, "fake_capture: no connection to %s:%d within 60 s\n", addr, port);
        return 1;
    }
    FILE *f = fopen(out, "wb");
    if (!f) {
        perror(out);
        return 1;
    }
    char buf[65536];
    ssize_t n;
    long long bytes = 0, events = 0;
    double first = now();
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        fwrite(buf, 1, (size_t)n, f);
        bytes += n;
        for (ssize_t i = 0; i < n; i++)
            events += buf[i] == '\n';
        if (seconds && now() - first > seconds)
            break;
    }
    if (strstr(argv[0], "slow-save")) {
        signal(SIGINT, on_int);
        printf("saving slowly\n");
        fflush(stdout);
        for (double end = now() + 100; !interrupted && now() < end;)
            usleep(20000);
    }
    fclose(f);
    char head[64] = "";
    FILE *h = fopen(out, "rb");
    if (h) {
        if (!fgets(head, sizeof head, h))
            head[0] = '\0';
        fclose(h);
    }
    if (strstr(head, " disk-full\n")) {
        char journal[4200];
        snprintf(journal, sizeof journal, "%s.journal", out);
        rename(out, journal);
        if (strstr(head, " journal-cut "))
            fprintf(stderr,
                    "boardtrace-capture: writing the journal %s failed (No space left on "
                    "device); it was stopped, and holds only what came before\n"
                    "boardtrace-capture: cannot write %s: No space left on device\n"
                    "boardtrace-capture: only what was received before writing the journal "
                    "failed is in %s; once the problem is fixed, boardtrace-capture --recover "
                    "%s -o %s rebuilds that part\n",
                    journal, out, journal, journal, out);
        else
            fprintf(stderr,
                    "boardtrace-capture: cannot write %s: No space left on device\n"
                    "boardtrace-capture: what was received is in %s; once the problem is "
                    "fixed: boardtrace-capture --recover %s -o %s\n",
                    out, journal, journal, out);
        return 8;
    }
    if (strstr(argv[0], "hostile")) {
        printf("%s: complete\x1b[2J\x9b"
               "31m, %lld events, 3 zones, 2 frames, span 0.50 s, "
               "captured in 1.25 s, received 1 KiB, wrote 1 KiB, memory 1 MiB, client Tracy "
               "protocol 72 (\x1b]0;owned\x07\xc2\x9b"
               "2J)\n",
               out, events > 0 ? events - 1 : 0);
        fflush(stdout);
        return 0;
    }
    printf("\rreceiving... %lld bytes\n", bytes);
    printf("Events: %lld\n", events > 0 ? events - 1 : 0);
    printf("Time span: %.2f ms\n", (now() - first) * 1000);
    printf("Trace size: %lld bytes\n", bytes);
    fflush(stdout);
    if (strstr(argv[0], "never-ends") && fork() == 0) {
        setsid();
        sleep(240);
    }
    return 0;
}
