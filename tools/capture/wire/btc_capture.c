/* A capture session: TCP connect with retries, the handshake of protocol
 * notes section 2, then a poll loop that takes the frames the receiver
 * (btc_receiver.c) read and decompressed, feeds the decoder and model, and
 * writes queries within the budget, so neither side can block the other
 * (notes 5.4). */
#define _GNU_SOURCE
#include "btc_capture.h"

#include "btc_file_versions.h"
#include "btc_format.h"
#include "btc_listeners.h"
#include "btc_receiver.h"
#include "btc_tracy_prewrite.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HANDSHAKE_TIMEOUT_MS 10000
#define POLL_MS              100
#define MAX_QUERY_BUDGET     8192
#define RESERVED_QUERIES     4 /* upstream keeps room for a Terminate packet */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t btc_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    unsigned long long size, rss;
    int n = fscanf(f, "%llu %llu", &size, &rss);
    fclose(f);
    return n == 2 ? rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

uint64_t btc_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static int stop_requested(const struct btc_capture_opts *o)
{
    return o->stop && *o->stop;
}

/* TCP lets a connection to a port nobody listens on meet itself when the
 * kernel picks that same port as the source (a "self-connect"): the capture
 * would then wait on its own socket and keep the program from listening. */
static bool connected_to_itself(int fd)
{
    struct sockaddr_storage local, peer;
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (getsockname(fd, (struct sockaddr *)&local, &ll) != 0 ||
        getpeername(fd, (struct sockaddr *)&peer, &pl) != 0)
        return false;
    if (local.ss_family != peer.ss_family)
        return false;
    if (local.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)&local, *b = (const void *)&peer;
        return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
    }
    if (local.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)&local, *b = (const void *)&peer;
        return a->sin6_port == b->sin6_port &&
               memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
    }
    return false;
}

enum { MAX_ADDRS = 8 };

struct addr_list {
    struct sockaddr_storage a[MAX_ADDRS];
    socklen_t len[MAX_ADDRS];
    int n;
};

static void add_addr(struct addr_list *l, const void *sa, socklen_t len)
{
    if (l->n < MAX_ADDRS) {
        memcpy(&l->a[l->n], sa, len);
        l->len[l->n++] = len;
    }
}

/* The addresses of host. "localhost" is both loopback addresses, never a
 * name lookup: upstream's clients under TRACY_ONLY_LOCALHOST listen on
 * [::1] alone, ours on both, and the capture reaches either. A statically
 * linked build (the capture that runs on a board) takes numeric addresses
 * besides: glibc's resolver would need the board to have the very shared
 * libraries it was built with. */
static int resolve(struct btc_capture *c, const char *host, unsigned port, struct addr_list *l)
{
    l->n = 0;
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    if (strcmp(host, "localhost") == 0) {
        v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        v6.sin6_addr = in6addr_loopback;
        add_addr(l, &v4, sizeof v4);
        add_addr(l, &v6, sizeof v6);
        return 0;
    }
    if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
        add_addr(l, &v4, sizeof v4);
        return 0;
    }
    if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
        add_addr(l, &v6, sizeof v6);
        return 0;
    }
#ifdef BTC_NUMERIC_HOSTS_ONLY
    snprintf(c->err, sizeof c->err,
             "cannot resolve %s: this statically linked capture takes a numeric address "
             "(such as 127.0.0.1 or ::1) or localhost",
             host);
    return BTC_ERR_NET;
#else
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(host, service, &hints, &res);
    if (gai != 0) {
        snprintf(c->err, sizeof c->err, "cannot resolve %s: %s", host, gai_strerror(gai));
        return BTC_ERR_NET;
    }
    for (struct addrinfo *a = res; a; a = a->ai_next)
        add_addr(l, a->ai_addr, a->ai_addrlen);
    freeaddrinfo(res);
    return 0;
#endif
}

/* Whether host names this machine: then what listens on the port is worth
 * naming when no client was found. */
static bool host_is_loopback(const char *host)
{
    struct in6_addr a6;
    return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 ||
           (inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6));
}

/* One non-blocking connect attempt to every address; 1 connected, 0 refused. */
static int try_connect(struct btc_capture *c, const struct btc_capture_opts *o, double deadline)
{
    struct addr_list addrs;
    int rc0 = resolve(c, o->host, o->port, &addrs);
    if (rc0 < 0)
        return rc0;
    int ok = 0;
    for (int i = 0; i < addrs.n && !ok; i++) {
        const struct sockaddr *a = (const struct sockaddr *)&addrs.a[i];
        int fd = socket(a->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        int rc = connect(fd, a, addrs.len[i]);
        if (rc < 0 && errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            double left = deadline > 0 ? deadline - now_s() : 1.0;
            int ms = left > 1.0 ? 1000 : left > 0 ? (int)(left * 1000) : 0;
            if (poll(&p, 1, ms) == 1) {
                int e = 0;
                socklen_t l = sizeof e;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
                rc = e ? -1 : 0;
            }
        }
        if (rc == 0 && connected_to_itself(fd)) {
            /* Nobody listens yet: reset (no TIME_WAIT left holding the
             * port the client is about to listen on) and retry. */
            struct linger reset = {.l_onoff = 1, .l_linger = 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
            rc = -1;
        }
        if (rc == 0) {
            c->fd = fd;
            ok = 1;
        } else {
            close(fd);
        }
    }
    return ok;
}

/* Exact I/O on the non-blocking socket during the handshake: gives up when
 * the N bytes have not all moved within HANDSHAKE_TIMEOUT_MS (BTC_ERR_TIMEOUT;
 * a total deadline, so a client that dribbles cannot hold the capture
 * either), when the client closes (BTC_ERR_NET), or on a stop request or the
 * -s limit (BTC_ERR_STOPPED). *moved says how many bytes did move. */
static int io_exact(const struct btc_capture_opts *o, int fd, void *buf, size_t n, int writing,
                    double stop_at, size_t *moved)
{
    uint8_t *p = buf;
    *moved = 0;
    double deadline = now_s() + HANDSHAKE_TIMEOUT_MS / 1000.0;
    while (n) {
        ssize_t k = writing ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            *moved += (size_t)k;
            continue;
        }
        if (k == 0)
            return BTC_ERR_NET;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return BTC_ERR_NET;
        double now = now_s();
        if (stop_requested(o) || (stop_at > 0 && now >= stop_at))
            return BTC_ERR_STOPPED;
        if (now >= deadline)
            return BTC_ERR_TIMEOUT;
        struct pollfd pf = {.fd = fd, .events = writing ? POLLOUT : POLLIN};
        poll(&pf, 1, POLL_MS);
    }
    return BTC_OK;
}

/* Why a handshake read or write failed, for c->err; the return value. */
static int handshake_failed(struct btc_capture *c, int rc, const char *where, size_t moved,
                            size_t want)
{
    c->handshake = BT_HANDSHAKE_DROPPED;
    if (rc == BTC_ERR_STOPPED)
        snprintf(c->err, sizeof c->err, "stopped during the handshake, before any data");
    else if (rc == BTC_ERR_TIMEOUT && moved == 0)
        snprintf(c->err, sizeof c->err,
                 "the client stopped answering during the handshake (%s; nothing for %d s)", where,
                 HANDSHAKE_TIMEOUT_MS / 1000);
    else if (rc == BTC_ERR_TIMEOUT)
        snprintf(c->err, sizeof c->err,
                 "the client did not complete the handshake in time (%s: %zu of %zu bytes came "
                 "within %d s)",
                 where, moved, want, HANDSHAKE_TIMEOUT_MS / 1000);
    else
        snprintf(c->err, sizeof c->err,
                 "the client closed the connection during the handshake (%s)", where);
    return rc == BTC_ERR_STOPPED ? BTC_ERR_STOPPED : BTC_ERR_HANDSHAKE;
}

static int handshake(struct btc_capture *c, const struct btc_capture_opts *o,
                     const struct bt_proto *p)
{
    double stop_at = o->stop_after_s > 0 ? now_s() + o->stop_after_s : 0;
    uint8_t hello[BT_WIRE_SHIBBOLETH_SIZE + 4];
    memcpy(hello, BT_WIRE_SHIBBOLETH, BT_WIRE_SHIBBOLETH_SIZE);
    bt_wire_put_u32(hello + BT_WIRE_SHIBBOLETH_SIZE, p->number);
    uint8_t status;
    size_t moved;
    int rc = io_exact(o, c->fd, hello, sizeof hello, 1, stop_at, &moved);
    if (rc < 0)
        return handshake_failed(c, rc, "sending the greeting", moved, sizeof hello);
    rc = io_exact(o, c->fd, &status, 1, 0, stop_at, &moved);
    if (rc < 0)
        return handshake_failed(c, rc, "waiting for its status", moved, 1);
    c->handshake = status;
    if (status != BT_HANDSHAKE_WELCOME) {
        snprintf(
            c->err, sizeof c->err, "the client answered the handshake with status %u (%s)", status,
            status == BT_HANDSHAKE_PROTOCOL_MISMATCH ? "incompatible protocol version"
            : status == BT_HANDSHAKE_NOT_AVAILABLE   ? "another server already captured this client"
                                                     : "unexpected status");
        return BTC_ERR_HANDSHAKE;
    }
    /* The welcome in the client's form, kept (and journalled) in 0.14.0's. */
    uint8_t raw[BT_WELCOME_SIZE + 8];
    rc = io_exact(o, c->fd, raw, p->welcome_size, 0, stop_at, &moved);
    if (rc < 0)
        return handshake_failed(c, rc, "inside the welcome message", moved, p->welcome_size);
    uint8_t wbuf[BT_WELCOME_SIZE + BT_ON_DEMAND_SIZE];
    uint64_t delay;
    bt_proto_welcome_up(p, raw, wbuf, &delay);
    if (btc_welcome_parse(wbuf, BT_WELCOME_SIZE, &c->welcome) < 0) {
        snprintf(c->err, sizeof c->err,
                 "malformed welcome message: the timer multiplier is not a positive number");
        return BTC_ERR_PROTOCOL;
    }
    c->welcome.delay = delay;
    c->proto = p;
    if (c->welcome.flags & BT_WELCOME_FLAG_ON_DEMAND) {
        uint8_t *od = wbuf + BT_WELCOME_SIZE;
        rc = io_exact(o, c->fd, od, BT_ON_DEMAND_SIZE, 0, stop_at, &moved);
        if (rc < 0)
            return handshake_failed(c, rc, "inside the on-demand payload", moved,
                                    BT_ON_DEMAND_SIZE);
        c->welcome.on_demand_frames = bt_wire_get_u64(od);
        c->welcome.on_demand_time = (int64_t)bt_wire_get_u64(od + 8);
    }
    if (o->journal) {
        size_t wl = BT_WELCOME_SIZE +
                    ((c->welcome.flags & BT_WELCOME_FLAG_ON_DEMAND) ? BT_ON_DEMAND_SIZE : 0);
        rc = btc_journal_open(&c->journal, o->journal, p, wbuf, wl, c->err, sizeof c->err);
        if (rc < 0)
            return rc;
    }
    return BTC_OK;
}

static int connect_client(struct btc_capture *c, const struct btc_capture_opts *o)
{
    double start = now_s();
    double deadline = o->connect_timeout_s > 0 ? start + o->connect_timeout_s : 0;
    for (;;) {
        if (stop_requested(o)) {
            snprintf(c->err, sizeof c->err, "stopped before a client was found");
            return BTC_ERR_STOPPED;
        }
        int rc = try_connect(c, o, deadline);
        if (rc < 0)
            return rc;
        if (rc == 1)
            break;
        if (deadline > 0 && now_s() >= deadline) {
            char found[256] = "";
            if (host_is_loopback(o->host))
                btc_listeners_describe(o->port, found, sizeof found);
            snprintf(
                c->err, sizeof c->err,
                "no client accepted a connection on %s port %u within %g s%s%s",
                strcmp(o->host, "localhost") == 0 ? "localhost (127.0.0.1 and [::1])" : o->host,
                o->port, o->connect_timeout_s, found[0] ? "; listening on the port: " : "", found);
            return BTC_ERR_TIMEOUT;
        }
        struct timespec ts = {0, POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return 0;
}

/* Connects and greets with one protocol after another, newest first: a
 * client of another protocol answers "mismatch", closes, and waits for the
 * next connection, as upstream's client does. */
static int connect_and_handshake(struct btc_capture *c, const struct btc_capture_opts *o)
{
    size_t count = o->protocol ? 1 : BT_PROTO_UPSTREAM_COUNT;
    char offered[320] = ""; /* what the client refused, for the message */
    for (size_t i = 0; i < count; i++) {
        const struct bt_proto *p = o->protocol ? o->protocol : bt_proto_get(bt_proto_numbers[i]);
        size_t used = strlen(offered);
        snprintf(offered + used, sizeof offered - used, "%s%s (%s)", i ? "; " : "", p->name,
                 p->releases);
        int rc = connect_client(c, o);
        if (rc < 0)
            return rc;
        rc = handshake(c, o, p);
        if (rc != BTC_ERR_HANDSHAKE || c->handshake != BT_HANDSHAKE_PROTOCOL_MISMATCH)
            return rc;
        close(c->fd);
        c->fd = -1;
    }
    if (o->protocol)
        snprintf(c->err, sizeof c->err,
                 "the client does not speak Tracy protocol %s (%s); boardtrace speaks %s",
                 o->protocol->name, o->protocol->releases, bt_proto_supported());
    else
        snprintf(c->err, sizeof c->err,
                 "the client refused every Tracy protocol offered, in turn: %s; it was built "
                 "with a Tracy outside 0.10 ... 0.14.0",
                 offered);
    return BTC_ERR_HANDSHAKE;
}

struct txbuf {
    uint8_t *p;
    size_t len, cap;
};

static int tx_flush(struct btc_capture *c, struct txbuf *tx)
{
    size_t done = 0;
    while (done < tx->len) {
        ssize_t k = send(c->fd, tx->p + done, tx->len - done, MSG_NOSIGNAL);
        if (k > 0) {
            done += (size_t)k;
            continue;
        }
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (k < 0 && errno == EINTR)
            continue;
        return BTC_ERR_NET;
    }
    memmove(tx->p, tx->p + done, tx->len - done);
    tx->len -= done;
    return BTC_OK;
}

static int tx_queries(struct btc_capture *c, struct txbuf *tx)
{
    for (;;) {
        if (tx->cap - tx->len < 64 * BT_QUERY_SIZE) {
            size_t cap = tx->cap * 2 + 64 * BT_QUERY_SIZE;
            uint8_t *p = realloc(tx->p, cap);
            if (!p)
                return BTC_ERR_NOMEM;
            tx->p = p;
            tx->cap = cap;
        }
        size_t n = btc_model_take_queries(&c->model, tx->p + tx->len, 64);
        for (size_t i = 0; i < n; i++) /* 0.10 numbers three queries its own way */
            tx->p[tx->len + i * BT_QUERY_SIZE] =
                bt_proto_query_down(c->proto, tx->p[tx->len + i * BT_QUERY_SIZE]);
        tx->len += n * BT_QUERY_SIZE;
        c->stats.queries_sent += n;
        if (n < 64)
            return BTC_OK;
    }
}

/* Sends all of buf within timeout_ms, also after a stop request. */
static void send_all(int fd, const uint8_t *buf, size_t n, int timeout_ms)
{
    double deadline = now_s() + timeout_ms / 1000.0;
    while (n) {
        ssize_t k = send(fd, buf, n, MSG_NOSIGNAL);
        if (k > 0) {
            buf += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return;
        int left = (int)((deadline - now_s()) * 1000);
        if (left <= 0)
            return;
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        poll(&pf, 1, left);
    }
}

/* How long a client has, after our Terminate, to read it and close. */
#define TERMINATE_CLOSE_MS 5000

static void send_terminate(struct btc_capture *c, struct txbuf *tx)
{
    /* Queued queries go first, then the Terminate that bypasses the budget. */
    uint8_t q[BT_QUERY_SIZE] = {BT_QUERY_TERMINATE};
    if (tx->len)
        send_all(c->fd, tx->p, tx->len, 1000);
    send_all(c->fd, q, sizeof q, 1000);
    tx->len = 0;
    /* Then the client closes. Closing first, with its data still unread
     * here, would reset the connection: a client still sending would take
     * that for a capture that died (and say so) before it reads the
     * Terminate. What it sends meanwhile is past the end and not kept. */
    double deadline = now_s() + TERMINATE_CLOSE_MS / 1000.0;
    uint8_t sink[16384];
    for (;;) {
        int left = (int)((deadline - now_s()) * 1000);
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (left <= 0 || (poll(&pf, 1, left) < 0 && errno != EINTR))
            return;
        ssize_t k = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return;
    }
}

static void report(struct btc_capture *c, const struct btc_capture_opts *o, double t0)
{
    c->stats.elapsed_s = now_s() - t0;
    c->stats.stream_bytes = c->dec.stream_off;
    c->stats.wire_bytes = c->dec.compressed_bytes;
    c->stats.events = c->dec.events;
    c->stats.zones = c->model.zone_count;
    c->stats.rss_bytes = btc_rss_bytes();
    const struct btc_model *m = &c->model;
    c->stats.spool_bytes = btc_timeline_bytes(&m->zones) + btc_spool_bytes(&m->extras) +
                           btc_spool_bytes(&m->msgs) + btc_spool_bytes(&m->plot_points) +
                           btc_spool_bytes(&m->frames) + btc_spool_bytes(&m->mem) +
                           btc_spool_bytes(&m->lock_events);
    if (o->progress)
        o->progress(o->progress_ctx, &c->stats);
}

/* Frames the loop decodes before it looks at the clock, the stop request
 * and the queries again. */
#define FRAMES_PER_TURN 16
/* How long a stopped capture may go on decoding what it had received. */
#define DRAIN_BOUND_S 60

/* A capture stopped by a signal, -s or -m: the receiver reads no more, and
 * every frame it had read (journalled, perhaps not yet decompressed) is
 * decoded, within DRAIN_BOUND_S; past it, what is left is counted and stays
 * in the journal. */
static void drain_received(struct btc_capture *c, struct btc_receiver *rx)
{
    btc_receiver_stop_reading(rx);
    double deadline = now_s() + DRAIN_BOUND_S;
    for (;;) {
        const uint8_t *events;
        size_t size, wire;
        while (now_s() < deadline && btc_receiver_next(rx, &events, &size, &wire) == 1) {
            int frc = btc_decoder_inflated_frame(&c->dec, events, size, wire, btc_model_event,
                                                 &c->model, c->err, sizeof c->err);
            btc_receiver_done(rx);
            if (frc < 0) {
                c->end = BTC_END_STREAM_ERROR;
                return;
            }
        }
        const char *why;
        if (btc_receiver_end(rx, &why) != BTC_RX_RUNNING)
            return;
        if (now_s() >= deadline) {
            c->drain_cut = 1;
            while (btc_receiver_next(rx, &events, &size, &wire) == 1) {
                c->undecoded_frames++;
                btc_receiver_done(rx);
            }
            return;
        }
        struct pollfd p = {.fd = btc_receiver_fd(rx), .events = POLLIN};
        poll(&p, 1, POLL_MS);
    }
}

static int receive_loop(struct btc_capture *c, const struct btc_capture_opts *o)
{
    struct txbuf tx = {0};
    struct btc_receiver *rx = btc_receiver_start(c->fd, &c->journal, c->err, sizeof c->err);
    if (!rx)
        return BTC_ERR_NOMEM;
    double t0 = now_s(), last_report = 0;
    int rc = BTC_OK, more = 0;
    for (;;) {
        double now = now_s();
        if (now - last_report >= POLL_MS / 1000.0) {
            report(c, o, t0);
            last_report = now;
            if (o->memory_limit && c->stats.rss_bytes > o->memory_limit) {
                c->end = BTC_END_MEMORY_LIMIT;
                break;
            }
        }
        if (stop_requested(o)) {
            c->end = BTC_END_STOPPED;
            break;
        }
        if (o->stop_after_s > 0 && now - t0 >= o->stop_after_s) {
            c->end = BTC_END_TIME_LIMIT;
            break;
        }
        /* The receiver reads the socket; this thread only writes queries. */
        struct pollfd p[2] = {{.fd = btc_receiver_fd(rx), .events = POLLIN},
                              {.fd = c->fd, .events = POLLOUT}};
        int pr = poll(p, tx.len ? 2 : 1, more ? 0 : POLL_MS);
        if (pr < 0 && errno != EINTR) {
            /* Ends like a lost client, so what was received is still
             * written and the summary does not read "complete". */
            c->end = BTC_END_DISCONNECTED;
            snprintf(c->err, sizeof c->err, "waiting on the connection failed: %s",
                     strerror(errno));
            rc = BTC_ERR_NET;
            break;
        }
        if (tx.len && p[1].revents & POLLOUT && tx_flush(c, &tx) < 0) {
            c->end = BTC_END_DISCONNECTED;
            break;
        }
        /* Decode the frames that came, in order, then queue the queries
         * each caused. */
        const uint8_t *events;
        size_t size, wire;
        int stream_error = 0, n = 0;
        more = 0;
        while (btc_receiver_next(rx, &events, &size, &wire) == 1) {
            int frc = btc_decoder_inflated_frame(&c->dec, events, size, wire, btc_model_event,
                                                 &c->model, c->err, sizeof c->err);
            btc_receiver_done(rx);
            if (frc < 0) {
                stream_error = 1;
                break;
            }
            if (tx_queries(c, &tx) < 0) {
                rc = BTC_ERR_NOMEM;
                break;
            }
            if (++n == FRAMES_PER_TURN) {
                more = 1;
                break;
            }
        }
        if (rc < 0)
            break;
        if (stream_error) {
            c->end = BTC_END_STREAM_ERROR;
            break;
        }
        if (tx.len && tx_flush(c, &tx) < 0) {
            c->end = BTC_END_DISCONNECTED;
            break;
        }
        if (btc_model_complete(&c->model, &c->dec)) {
            c->end = BTC_END_COMPLETE;
            break;
        }
        const char *why;
        enum btc_receiver_end end = more ? BTC_RX_RUNNING : btc_receiver_end(rx, &why);
        if (end == BTC_RX_CLOSED) {
            c->end = BTC_END_DISCONNECTED;
            snprintf(c->err, sizeof c->err, "the client closed the connection%s%s",
                     c->model.terminated ? " after Terminate, before every query was answered"
                                         : " before it sent Terminate",
                     why);
            break;
        }
        if (end == BTC_RX_NET_ERROR) {
            c->end = BTC_END_DISCONNECTED;
            snprintf(c->err, sizeof c->err, "%s", why);
            rc = BTC_ERR_NET;
            break;
        }
        if (end == BTC_RX_BAD_STREAM) {
            c->end = BTC_END_STREAM_ERROR;
            snprintf(c->err, sizeof c->err, "%s", why);
            break;
        }
    }
    /* Asked to stop: what came is decoded; no more is read. After an error
     * what the receiver had not handed on yet stays unread, as it would in
     * the socket. */
    if (rc == BTC_OK && (c->end == BTC_END_STOPPED || c->end == BTC_END_TIME_LIMIT ||
                         c->end == BTC_END_MEMORY_LIMIT))
        drain_received(c, rx);
    btc_receiver_stop(rx);
    if (c->end != BTC_END_DISCONNECTED)
        send_terminate(c, &tx);
    report(c, o, t0);
    free(tx.p);
    return rc;
}

int btc_capture_run(struct btc_capture *c, const struct btc_capture_opts *o)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->journal.fd = -1;
    int rc = connect_and_handshake(c, o);
    if (rc < 0)
        return rc;
    rc = btc_decoder_init(&c->dec, &c->welcome);
    if (rc == BTC_OK)
        rc = btc_decoder_set_protocol(&c->dec, c->proto);
    if (rc < 0) {
        snprintf(c->err, sizeof c->err, "out of memory for the stream decoder");
        return rc;
    }
    c->dec.zones = btc_model_zone_fast(&c->model);
    rc = btc_model_init(&c->model, &c->welcome, o->spool_dir, c->err, sizeof c->err);
    if (rc < 0) {
        /* Nothing was received yet: nothing to write, so stop here. */
        btc_model_free(&c->model);
        btc_decoder_free(&c->dec);
        close(c->fd);
        c->fd = -1;
        btc_journal_close(&c->journal);
        if (o->journal)
            unlink(o->journal);
        return rc;
    }
    c->have_model = 1;
    uint32_t version =
        o->prewrite_version ? o->prewrite_version : btc_file_version_for_protocol(c->proto->number);
    /* On one CPU the head start would only take the program's time while
     * it is measured: the file is then compressed once it has ended. */
    if (o->prewrite && version >= BTC_GATE_CONTAINER && btc_usable_cpus() > 1)
        c->model.prewrite = btc_prewrite_start(&c->model.zones, o->spool_dir, o->prewrite_lz4);
    int sndbuf = 0;
    socklen_t l = sizeof sndbuf;
    if (getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &l) == 0 && sndbuf > 0) {
        int64_t budget = sndbuf / (int)BT_QUERY_SIZE;
        if (budget > MAX_QUERY_BUDGET)
            budget = MAX_QUERY_BUDGET;
        btc_model_set_budget(&c->model, budget - RESERVED_QUERIES);
    }
    rc = receive_loop(c, o);
    close(c->fd);
    c->fd = -1;
    btc_journal_close(&c->journal);
    return rc;
}

void btc_capture_free(struct btc_capture *c)
{
    if (c->fd >= 0)
        close(c->fd);
    btc_journal_close(&c->journal);
    if (c->have_model) {
        btc_prewrite_free(c->model.prewrite, &c->model.zones);
        c->model.prewrite = NULL;
        btc_model_free(&c->model);
        btc_decoder_free(&c->dec);
    }
    c->have_model = 0;
}
