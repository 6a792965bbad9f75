/* Records a Tracy session byte for byte, as input for the replay benchmark:
 * starts PROGRAM (traced; it waits for a capture) and CAPTURE, relays their
 * connection and writes what each side sent to OUT_DIR/client-to-server.bin
 * and OUT_DIR/server-to-client.bin, the layout of the recordings in
 * tests/data. A recording is made once: with OUT_DIR/complete present it
 * does nothing. System tracing is off, so the recording holds the program's
 * own events only. Everything stays on 127.0.0.1.
 * Usage: bench_record OUT_DIR CAPTURE PROGRAM [ARGS...] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int listen_any(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static int connect_retry(uint16_t port, int seconds)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < seconds * 50; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
            return fd;
        if (fd >= 0)
            close(fd);
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static pid_t spawn(char **argv, uint16_t port)
{
    pid_t pid = fork();
    if (pid == 0) {
        char text[8];
        snprintf(text, sizeof(text), "%u", port);
        setenv("TRACY_PORT", text, 1);
        setenv("TRACY_NO_EXIT", "1", 1);
        setenv("TRACY_NO_BROADCAST", "1", 1);
        setenv("TRACY_NO_SYS_TRACE", "1", 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Moves what is readable on `from` to `to` and the file; 0 at the end of
 * that direction, -1 on an error, 1 otherwise. */
static int relay(int from, int to, FILE *file)
{
    static char buf[1 << 16];
    ssize_t n = recv(from, buf, sizeof(buf), 0);
    if (n < 0)
        return errno == EINTR ? 1 : -1;
    if (n == 0) {
        shutdown(to, SHUT_WR);
        return 0;
    }
    if (fwrite(buf, 1, (size_t)n, file) != (size_t)n)
        return -1;
    for (ssize_t done = 0; done < n;) {
        ssize_t k = send(to, buf + done, (size_t)(n - done), MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        done += k;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s OUT_DIR CAPTURE PROGRAM [ARGS...]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    char path[4096];
    struct stat st;
    snprintf(path, sizeof(path), "%s/complete", dir);
    if (stat(path, &st) == 0) {
        printf("bench_record: %s holds a recording already\n", dir);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    char parent[4096];
    snprintf(parent, sizeof(parent), "%s", dir);
    for (char *slash = strchr(parent + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        mkdir(parent, 0700); /* each folder on the way; existing ones stay */
        *slash = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_record: cannot make %s: %s\n", dir, strerror(errno));
        return 1;
    }
    uint16_t program_port, capture_port;
    int probe = listen_any(&program_port); /* a free port for the program */
    if (probe < 0)
        return 1;
    close(probe);
    int lfd = listen_any(&capture_port);
    if (lfd < 0) {
        perror("bench_record: listen");
        return 1;
    }
    pid_t program = spawn(argv + 3, program_port);
    char file[4096], port_text[8];
    snprintf(file, sizeof(file), "%s/session.tracy", dir);
    snprintf(port_text, sizeof(port_text), "%u", capture_port);
    char *cap_argv[] = {argv[2], "-o", file, "-f", "-a", "127.0.0.1", "-p", port_text, NULL};
    pid_t capture = spawn(cap_argv, 0);
    /* the capture connects within a minute, unless it failed */
    int cfd = -1;
    for (int waited = 0; cfd < 0 && waited < 60; waited++) {
        struct pollfd lp = {lfd, POLLIN, 0};
        if (poll(&lp, 1, 1000) == 1)
            cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        else if (waitpid(capture, NULL, WNOHANG) == capture) {
            capture = -1;
            break;
        }
    }
    if (cfd < 0)
        fprintf(stderr, "bench_record: the capture did not connect\n");
    int pfd = cfd >= 0 ? connect_retry(program_port, 60) : -1;
    snprintf(path, sizeof(path), "%s/client-to-server.bin", dir);
    FILE *c2s = fopen(path, "wb");
    snprintf(path, sizeof(path), "%s/server-to-client.bin", dir);
    FILE *s2c = fopen(path, "wb");
    int rc = cfd >= 0 && pfd >= 0 && c2s && s2c ? 0 : 1;
    int up = 1, down = 1; /* capture -> program, program -> capture */
    while (rc == 0 && (up || down)) {
        struct pollfd p[2] = {{cfd, up ? POLLIN : 0, 0}, {pfd, down ? POLLIN : 0, 0}};
        if (poll(p, 2, 120000) <= 0) {
            fprintf(stderr, "bench_record: the session stalled\n");
            rc = 1;
            break;
        }
        int r;
        if (up && p[0].revents && (r = relay(cfd, pfd, s2c)) <= 0) {
            rc = r < 0;
            up = 0;
        }
        if (down && p[1].revents && (r = relay(pfd, cfd, c2s)) <= 0) {
            rc |= r < 0;
            down = 0;
        }
    }
    if ((c2s && fclose(c2s) != 0) || (s2c && fclose(s2c) != 0))
        rc = 1;
    if (cfd >= 0)
        close(cfd);
    if (pfd >= 0)
        close(pfd);
    int ps, cs;
    if (rc != 0)
        kill(program, SIGKILL);
    waitpid(program, &ps, 0);
    if (capture < 0)
        cs = 1 << 8; /* gone before connecting: a failure */
    else
        waitpid(capture, &cs, 0);
    if (rc != 0 || !WIFEXITED(ps) || WEXITSTATUS(ps) != 0 || !WIFEXITED(cs) ||
        WEXITSTATUS(cs) != 0) {
        fprintf(stderr, "bench_record: the recorded session failed\n");
        return 1;
    }
    snprintf(path, sizeof(path), "%s/complete", dir);
    FILE *done = fopen(path, "w");
    if (!done || fclose(done) != 0)
        return 1;
    printf("bench_record: recorded %s into %s\n", argv[3], dir);
    return 0;
}
