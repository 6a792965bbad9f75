/* Sockets of the runtime: the listening socket(s) a capture connects to,
 * the UDP discovery broadcast, and exact reads/writes with timeouts. */
#ifndef BT_NET_H
#define BT_NET_H

#include <stddef.h>
#include <stdint.h>

struct bt_listener {
    int fds[2]; /* two with TRACY_ONLY_LOCALHOST: [::1] and 127.0.0.1 */
    int count;
    uint16_t port;
};

struct bt_listen_options {
    uint16_t port;      /* 0: try 8086, 8087, ... (BT_WIRE_PORT_ATTEMPTS ports) */
    int only_localhost; /* loopback only, IPv4 and IPv6 */
    int only_ipv4;
    int upstream_loopback; /* only_localhost as upstream's client: [::1] alone,
                            * 127.0.0.1 where there is no IPv6 (tests) */
};

/* Returns 0, or -errno of the last bind failure. */
int bt_listener_open(struct bt_listener *l, const struct bt_listen_options *o);
/* A connected socket (blocking, TCP_NODELAY), -EAGAIN after timeout_ms. */
int bt_listener_accept(struct bt_listener *l, int timeout_ms);
void bt_listener_close(struct bt_listener *l);

/* 127.255.255.255: where a TRACY_ONLY_LOCALHOST program broadcasts. */
#define BT_LOOPBACK_BROADCAST 0x7fffffffu

/* UDP socket with SO_BROADCAST, or -errno. */
int bt_broadcast_open(void);
/* Sends to 255.255.255.255, or to 127.255.255.255 when only_localhost. */
void bt_broadcast_send(int fd, int only_localhost, uint16_t port, const void *msg, size_t len);

/* Reads exactly n bytes within timeout_ms (each wait); 0, -ETIMEDOUT, -EPIPE. */
int bt_net_read_exact(int fd, void *buf, size_t n, int timeout_ms);
/* Writes all n bytes; 0 or -errno (-EPIPE when the peer is gone). */
int bt_net_write_all(int fd, const void *buf, size_t n);

#endif
