/* Listening, accepting and broadcasting as upstream Tracy's client does,
 * except that TRACY_ONLY_LOCALHOST listens on both loopback addresses so
 * that 127.0.0.1 and ::1 both reach the program (upstream's, on ::1 alone,
 * is kept for the tests that stand in for its clients). */
#define _GNU_SOURCE
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boardtrace/wire.h"

static int listen_on(int family, int loopback, uint16_t port, int *fd_out)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (family == AF_INET6) {
        /* wildcard: dual stack; loopback: ::1 only, 127.0.0.1 has its own socket */
        int v6only = loopback ? one : zero;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
        struct sockaddr_in6 a;
        memset(&a, 0, sizeof(a));
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(port);
        a.sin6_addr = loopback ? in6addr_loopback : in6addr_any;
        rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    } else {
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(loopback ? INADDR_LOOPBACK : INADDR_ANY);
        rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    }
    if (rc != 0 || listen(fd, 4) != 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

/* All sockets of one attempt on `port`; on failure none stays open. */
static int listen_port(struct bt_listener *l, const struct bt_listen_options *o, uint16_t port)
{
    l->count = 0;
    int rc;
    if (!o->only_ipv4) {
        rc = listen_on(AF_INET6, o->only_localhost, port, &l->fds[l->count]);
        if (rc == 0)
            l->count++;
        else if (rc != -EAFNOSUPPORT && rc != -EADDRNOTAVAIL)
            return rc;
        if (rc == 0 && (!o->only_localhost || o->upstream_loopback))
            return 0; /* dual stack covers IPv4 too, or [::1] alone as upstream */
    }
    rc = listen_on(AF_INET, o->only_localhost, port, &l->fds[l->count]);
    if (rc != 0) {
        bt_listener_close(l);
        return rc;
    }
    l->count++;
    return 0;
}

int bt_listener_open(struct bt_listener *l, const struct bt_listen_options *o)
{
    memset(l, 0, sizeof(*l));
    unsigned attempts = o->port ? 1 : BT_WIRE_PORT_ATTEMPTS;
    uint16_t first = o->port ? o->port : BT_WIRE_DEFAULT_PORT;
    int rc = -EADDRINUSE;
    for (unsigned i = 0; i < attempts; i++) {
        rc = listen_port(l, o, (uint16_t)(first + i));
        if (rc == 0) {
            l->port = (uint16_t)(first + i);
            return 0;
        }
    }
    return rc;
}

int bt_listener_accept(struct bt_listener *l, int timeout_ms)
{
    struct pollfd p[2];
    for (int i = 0; i < l->count; i++) {
        p[i].fd = l->fds[i];
        p[i].events = POLLIN;
        p[i].revents = 0;
    }
    if (poll(p, (nfds_t)l->count, timeout_ms) <= 0)
        return -EAGAIN;
    for (int i = 0; i < l->count; i++) {
        if (!(p[i].revents & POLLIN))
            continue;
        int fd = accept4(l->fds[i], NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return fd;
    }
    return -EAGAIN;
}

void bt_listener_close(struct bt_listener *l)
{
    for (int i = 0; i < l->count; i++)
        close(l->fds[i]);
    l->count = 0;
}

int bt_broadcast_open(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one));
    return fd;
}

void bt_broadcast_send(int fd, int only_localhost, uint16_t port, const void *msg, size_t len)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    /* A program that keeps its port to this machine announces itself only
     * there too: loopback's broadcast address never leaves it. */
    a.sin_addr.s_addr = htonl(only_localhost ? BT_LOOPBACK_BROADCAST : INADDR_BROADCAST);
    /* Best effort, like upstream: a board without a route simply is not found. */
    (void)sendto(fd, msg, len, MSG_NOSIGNAL, (struct sockaddr *)&a, sizeof(a));
}

int bt_net_read_exact(int fd, void *buf, size_t n, int timeout_ms)
{
    uint8_t *p = buf;
    while (n > 0) {
        struct pollfd pf = {fd, POLLIN, 0};
        int rc = poll(&pf, 1, timeout_ms);
        if (rc == 0)
            return -ETIMEDOUT;
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        ssize_t got = recv(fd, p, n, 0);
        if (got == 0)
            return -EPIPE;
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -errno;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

int bt_net_write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t put = send(fd, p, n, MSG_NOSIGNAL);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += put;
        n -= (size_t)put;
    }
    return 0;
}
