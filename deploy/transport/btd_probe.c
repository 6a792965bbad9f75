/* What answers on a port when SSH could not connect there: a server that
 * speaks first with something other than an SSH banner (a web server, a
 * board's serial console bridge) is named as such instead of leaving the
 * user with libssh's "connection reset". */
#define _GNU_SOURCE
#include "btd_probe.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Connects within the deadline; the socket or -1. */
static int connect_by(const struct addrinfo *ai, long long deadline)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int left = (int)(deadline - now_ms());
        int err = 0;
        socklen_t len = sizeof err;
        if (left > 0 && poll(&p, 1, left) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
            return fd;
    }
    close(fd);
    return -1;
}

int btd_probe_not_ssh(const char *host, int port, int timeout_ms, char *said, size_t saidlen)
{
    said[0] = '\0';
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *list;
    if (getaddrinfo(host, service, &hints, &list) != 0)
        return 0;
    long long deadline = now_ms() + timeout_ms;
    int fd = -1;
    for (const struct addrinfo *ai = list; ai && fd < 0; ai = ai->ai_next)
        fd = connect_by(ai, deadline);
    freeaddrinfo(list);
    if (fd < 0)
        return 0;
    /* An SSH server speaks first: "SSH-2.0-...", perhaps after other lines
     * (RFC 4253, 4.2). Wait for the first line, or the server's close. */
    char got[256];
    size_t n = 0;
    while (n < sizeof got - 1 && !memchr(got, '\n', n)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&p, 1, left) != 1)
            break;
        ssize_t k = recv(fd, got + n, sizeof got - 1 - n, 0);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    if (n == 0 || (n >= 4 && memcmp(got, "SSH-", 4) == 0))
        return 0;
    for (const char *l = got; l < got + n; l++)
        if (*l == '\n' && (size_t)(l + 1 - got) + 4 <= n && memcmp(l + 1, "SSH-", 4) == 0)
            return 0;
    /* The first line, printable: a server's bytes never reach the terminal
     * raw. */
    size_t o = 0;
    for (size_t i = 0; i < n && got[i] != '\n' && got[i] != '\r' && o + 5 < saidlen; i++) {
        unsigned char ch = (unsigned char)got[i];
        if (ch >= 0x20 && ch < 0x7f)
            said[o++] = (char)ch;
        else
            o += (size_t)snprintf(said + o, saidlen - o, "\\x%02x", ch);
    }
    said[o] = '\0';
    return 1;
}
