/* The runtime's worker thread: listens (and broadcasts) until a capture
 * connects, performs the handshake, then drains the per-thread rings and the
 * serial queue through the encoder (drain.c) and answers every server query
 * in arrival order (query.c). Implements the shutdown rules of TRACY_NO_EXIT
 * (protocol notes 1.3). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "boardtrace/config.h"
#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"
#include "core/env.h"
#include "core/runtime.h"
#include "core/timer.h"
#include "hostinfo.h"
#include "net/net.h"
#include "session.h"
#include "symbols/callstack.h"
#include "systrace/systrace.h"
#include "worker.h"

#define ACCEPT_POLL_MS       10
#define HANDSHAKE_TIMEOUT_MS 2000
#define BROADCAST_PERIOD_NS  3000000000ll
/* The timer's rate is measured to CALIBRATION_ERROR (relative), over at
 * most CALIBRATION_NS from the start. */
#define CALIBRATION_NS    200000000ll
#define CALIBRATION_ERROR 2e-6
#define FINAL_DRAIN_NS    2000000000ll
#define NAP_MIN_NS        20000ll
#define NAP_MAX_NS        1000000ll
/* A pass that found less than this (or a quarter of a buffer, if smaller)
 * waits a millisecond for queries before the next one, instead of spinning
 * over rings that fill slowly. */
#define BATCH_BYTES 65536u

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '1';
}

static int session_write(void *ctx, const void *data, size_t len)
{
    struct session *s = ctx;
    return bt_net_write_all(s->fd, data, len);
}

/* The timer's ns per tick for the welcome: 1 for clock_gettime's ticks,
 * else measured against the reference clock since the start, to within
 * CALIBRATION_ERROR: the two samples' uncertainty and the counter's
 * resolution each, over their span (measured: a user-mode emulator's ARM
 * counter steps once a microsecond, 62 ticks). A welcome that comes sooner
 * waits for that span (a few ms with a fine counter; CALIBRATION_NS at
 * most, with a coarse one), and a program that fills its buffer meanwhile
 * waits with it. */
static double timer_multiplier(void)
{
    double known = bt_timer_known_multiplier();
    if (known > 0)
        return known;
    double res_ticks = (double)bt_timer_resolution(1000);
    for (;;) {
        struct bt_timer_pair p = bt_timer_pair();
        int64_t span = p.ns - bt_rt.calib_ns;
        double mul = bt_timer_multiplier(bt_rt.calib_ticks, bt_rt.calib_ns, p.ticks, p.ns);
        double doubt = (double)(p.half_ns + bt_rt.calib_half_ns) + 2 * res_ticks * mul;
        if (span >= CALIBRATION_NS || (span > 0 && doubt <= CALIBRATION_ERROR * (double)span))
            return mul;
        int64_t want = (int64_t)(doubt / CALIBRATION_ERROR) - span;
        int64_t wait = want < CALIBRATION_NS - span ? want : CALIBRATION_NS - span;
        if (wait < 1000000)
            wait = 1000000;
        struct timespec ts = {(time_t)(wait / 1000000000), (long)(wait % 1000000000)};
        nanosleep(&ts, NULL);
    }
}

/* Fills the welcome message; returns the timer multiplier it announces. */
static double welcome_build(uint8_t *w, int code_transfer)
{
    memset(w, 0, BT_WELCOME_SIZE);
    double mul = timer_multiplier();
    uint64_t bits;
    memcpy(&bits, &mul, 8);
    bt_wire_put_u64(w + BT_WELCOME_OFF_TIMER_MUL, bits);
    bt_wire_put_u64(w + BT_WELCOME_OFF_INIT_BEGIN, (uint64_t)bt_rt.init_begin);
    bt_wire_put_u64(w + BT_WELCOME_OFF_INIT_END, (uint64_t)bt_rt.init_end);
    bt_wire_put_u64(w + BT_WELCOME_OFF_RESOLUTION, bt_timer_resolution(10000));
    bt_wire_put_u64(w + BT_WELCOME_OFF_EPOCH, bt_rt.epoch);
    bt_wire_put_u64(w + BT_WELCOME_OFF_EXEC_TIME, bt_host_exec_time());
    bt_wire_put_u64(w + BT_WELCOME_OFF_PID, bt_rt.pid);
    bt_wire_put_u64(w + BT_WELCOME_OFF_SAMPLING, bt_systrace_sampling_period_ns());
    /* Events dropped before the connection may leave frees without allocs. */
    if (bt_dropped_events() > 0)
        w[BT_WELCOME_OFF_FLAGS] |= BT_WELCOME_FLAG_IGNORE_MEM_FAULTS;
    if (code_transfer)
        w[BT_WELCOME_OFF_FLAGS] |= BT_WELCOME_FLAG_CODE_TRANSFER;
    w[BT_WELCOME_OFF_CPU_ARCH] = bt_host_cpu_arch();
    char vendor[12];
    uint32_t cpu_id;
    bt_host_cpu_id(vendor, &cpu_id);
    memcpy(w + BT_WELCOME_OFF_CPU_VENDOR, vendor, sizeof(vendor));
    bt_wire_put_u32(w + BT_WELCOME_OFF_CPU_ID, cpu_id);
    bt_host_program_name((char *)w + BT_WELCOME_OFF_PROGRAM_NAME, BT_WELCOME_PROGRAM_NAME_SIZE - 1);
    bt_host_info((char *)w + BT_WELCOME_OFF_HOST_INFO, BT_WELCOME_HOST_INFO_SIZE - 1);
    return mul;
}

/* The protocol a server's version names: every Tracy from 0.10 to 0.14.0,
 * and tenstorrent's fork of 0.10 for a 66 when the environment says so
 * (its greeting is upstream 66's). NULL for any other. */
static const struct bt_proto *server_protocol(uint32_t version)
{
    const char *flavor = getenv("BOARDTRACE_TRACY_FLAVOR");
    if (version == 66 && flavor && strcmp(flavor, "tt") == 0)
        return bt_proto_by_name("66-tt");
    return bt_proto_get(version);
}

/* Reads the shibboleth and the version; 0 when this is a Tracy server
 * speaking a protocol we speak (*proto), after answering `status`
 * otherwise. */
static int handshake(int fd, uint8_t refusal, const struct bt_proto **proto)
{
    uint8_t hello[BT_WIRE_SHIBBOLETH_SIZE + 4];
    if (bt_net_read_exact(fd, hello, BT_WIRE_SHIBBOLETH_SIZE, HANDSHAKE_TIMEOUT_MS) != 0 ||
        memcmp(hello, BT_WIRE_SHIBBOLETH, BT_WIRE_SHIBBOLETH_SIZE) != 0)
        return -EPROTO;
    if (bt_net_read_exact(fd, hello + BT_WIRE_SHIBBOLETH_SIZE, 4, HANDSHAKE_TIMEOUT_MS) != 0)
        return -EPROTO;
    uint8_t status = BT_HANDSHAKE_WELCOME;
    *proto = server_protocol(bt_wire_get_u32(hello + BT_WIRE_SHIBBOLETH_SIZE));
    if (!*proto)
        status = BT_HANDSHAKE_PROTOCOL_MISMATCH;
    else if (refusal)
        status = refusal;
    if (status != BT_HANDSHAKE_WELCOME) {
        bt_net_write_all(fd, &status, 1);
        return -EPROTO;
    }
    return 0;
}

static int64_t now_ns(void)
{
    return bt_timer_reference_ns();
}

/* The worker's nap after a pass that took `did` bytes gathered over
 * `interval` ns: until the rings would be a quarter full again at that rate
 * (at most NAP_MAX_NS, when idle; a producer that finds its ring full rings
 * the bell, which ends the nap at once). */
static int64_t nap_ns(size_t did, int64_t interval)
{
    if (!did || interval <= 0)
        return NAP_MAX_NS;
    double fill = (double)(bt_rt.ring_size / 4) * (double)interval / (double)did;
    if (fill < NAP_MIN_NS)
        return NAP_MIN_NS;
    return fill > NAP_MAX_NS ? NAP_MAX_NS : (int64_t)fill;
}

/* What the server's protocol cannot carry was dropped from the frames sent
 * (sections, GPU annotations, ...): say so once per kind, in a message of
 * the server's own, rather than leave the viewer to wonder. */
static void announce_dropped(struct session *s)
{
    if (!s->enc.dropped)
        return;
    for (unsigned t = 0; t < BT_EV_COUNT; t++) {
        if (!s->enc.dropped[t] || s->announced[t])
            continue;
        s->announced[t] = 1;
        char text[256];
        int len = snprintf(text, sizeof text,
                           "boardtrace: %s events dropped: Tracy protocol %s (%s) has none",
                           bt_wire_event_name(t), s->proto->name, s->proto->releases);
        bt_enc_thread_context(&s->enc, (uint32_t)bt_rt.pid); /* on the main thread */
        bt_enc_message(&s->enc, bt_timer_now(), text, (size_t)len,
                       BT_MSG_SOURCE_TRACY | BT_MSG_SEVERITY_WARNING << 4, 0, 0, 0);
    }
}

/* After the program's end (or a Disconnect query): send what is left, then
 * Terminate, then answer queries until the server says it is done. */
static void session_finish(struct session *s)
{
    int64_t deadline = now_ns() + FINAL_DRAIN_NS;
    while (!s->stop && bt_drain(s, 0) && now_ns() < deadline)
        bt_session_queries(s, 0, 0);
    bt_drain_close_open_zones(s);
    bt_encoder_flush(&s->enc);
    announce_dropped(s); /* what the last frames dropped */
    bt_encoder_flush(&s->enc);
    bt_encoder_send_alone(&s->enc, BT_EV_TERMINATE);
    atomic_store(&bt_rt.state, BT_STATE_FINISHED);
    while (!s->stop && s->enc.error == 0) {
        bt_session_queries(s, ACCEPT_POLL_MS * 1000000ll, 0);
        bt_encoder_flush(&s->enc);
    }
}

static void session_run(struct session *s, const struct bt_proto *proto)
{
    uint8_t welcome[BT_WELCOME_SIZE];
    uint8_t hello[1 + BT_WELCOME_SIZE + 8];
    hello[0] = BT_HANDSHAKE_WELCOME;
    /* Built without it (CODE_TRANSFER=OFF, or TRACY_NO_CODE_TRANSFER
     * defined for the runtime, as upstream), or turned off for this run
     * (TRACY_NO_CODE_TRANSFER=1 in the environment). */
#if !BT_CODE_TRANSFER || defined(TRACY_NO_CODE_TRANSFER)
    int code_transfer = 0;
#else
    int code_transfer = !env_flag("TRACY_NO_CODE_TRANSFER");
#endif
    bt_code_free(&s->code);
    bt_code_init(&s->code, code_transfer, bt_host_exec_time(), bt_callstack_debug_names_file);
    double mul = welcome_build(welcome, code_transfer);
    /* In the server's protocol's form (before 0.13, with a delay field:
     * our emit path has no queue delay to measure, 0). */
    bt_proto_welcome_down(proto, welcome, 0, hello + 1);
    if (bt_net_write_all(s->fd, hello, 1 + proto->welcome_size) != 0)
        return;
    bt_encoder_reset(&s->enc);
    if (bt_encoder_set_protocol(&s->enc, proto) != 0)
        return;
    s->proto = proto;
    memset(s->announced, 0, sizeof s->announced);
    bt_systrace_session_begin(&s->enc, bt_rt.pid, bt_timer_now());
    s->serial_step = mul > 0 && mul < 1.0 ? (int64_t)(1.0 / mul) + 1 : 1;
    s->serial_last = INT64_MIN / 2;
    s->queries_len = 0;
    s->stop = 0;
    s->disconnect = 0;
    s->lost = 0;
    atomic_store(&bt_rt.state, BT_STATE_CONNECTED);
    int64_t last_pass = now_ns();
    while (!s->stop && s->enc.error == 0) {
        if (atomic_load(&bt_rt.shutdown) || s->disconnect) {
            session_finish(s);
            return;
        }
        int64_t pass = now_ns();
        size_t did = bt_drain(s, 0);
        if (!did)
            bt_encoder_flush(&s->enc);
        announce_dropped(s);
        size_t batch = bt_rt.ring_size / 4 < BATCH_BYTES ? bt_rt.ring_size / 4 : BATCH_BYTES;
        bt_session_queries(s, did >= batch ? 0 : nap_ns(did, pass - last_pass), did > 0);
        last_pass = pass;
    }
}

/* A session that ended before the program did, other than by the capture's
 * Terminate, lost what the program emits from then on: say so, once, since
 * nobody else will (the capture, if it is alive, reports its side). */
static void report_lost_session(const struct session *s)
{
    if (atomic_load(&bt_rt.state) == BT_STATE_FINISHED)
        return;
    if (s->enc.error == -EPIPE || s->enc.error == -ECONNRESET)
        fprintf(stderr, "boardtrace: tracing stopped: the capture closed the connection\n");
    else if (s->enc.error)
        fprintf(stderr, "boardtrace: tracing stopped: sending to the capture failed: %s\n",
                s->enc.error == -EINVAL   ? "LZ4 could not compress a frame"
                : s->enc.error == -EPROTO ? "a frame did not convert to the server's protocol"
                                          : strerror(-s->enc.error));
    else if (s->lost > 0)
        fprintf(stderr, "boardtrace: tracing stopped: the connection to the capture failed: %s\n",
                strerror(s->lost));
    else if (s->lost < 0)
        fprintf(stderr, "boardtrace: tracing stopped: the capture closed the connection\n");
}

static void broadcast(int fd, int only_localhost, uint16_t port, int32_t active_time)
{
    uint8_t msg[BT_BROADCAST_SIZE];
    memset(msg, 0, sizeof(msg));
    bt_wire_put_u16(msg + BT_BROADCAST_OFF_VERSION, BT_WIRE_BROADCAST_VERSION);
    bt_wire_put_u16(msg + BT_BROADCAST_OFF_PORT, port);
    bt_wire_put_u32(msg + BT_BROADCAST_OFF_PROTOCOL, BT_WIRE_PROTOCOL_VERSION);
    bt_wire_put_u64(msg + BT_BROADCAST_OFF_PID, bt_rt.pid);
    bt_wire_put_u32(msg + BT_BROADCAST_OFF_ACTIVE_TIME, (uint32_t)active_time);
    char *name = (char *)msg + BT_BROADCAST_OFF_NAME;
    bt_host_broadcast_name(name, BT_BROADCAST_NAME_SIZE);
    bt_broadcast_send(fd, only_localhost, BT_WIRE_DEFAULT_PORT, msg,
                      BT_BROADCAST_OFF_NAME + strlen(name) + 1);
}

void *bt_worker_main(void *arg)
{
    (void)arg;
    bt_name_own_thread("boardtrace");
    struct session s;
    memset(&s, 0, sizeof(s));
    s.fd = -1;
    bt_code_init(&s.code, 0, 0, bt_callstack_debug_names_file);
    /* BOARDTRACE_TEST_UPSTREAM_NET=1: the network behaviour of upstream's
     * clients, which the tests cannot ship: [::1] alone under
     * TRACY_ONLY_LOCALHOST, and a broadcast that only a build option stops. */
    int upstream_net = env_flag("BOARDTRACE_TEST_UPSTREAM_NET");
    struct bt_listen_options o = {0, env_flag("TRACY_ONLY_LOCALHOST"), env_flag("TRACY_ONLY_IPV4"),
                                  upstream_net};
    o.port = (uint16_t)bt_env_number("TRACY_PORT", 1, 65535, 0, "a port",
                                     "the default, 8086 or the next free port up to 8105");
    struct bt_listener l;
    int rc = bt_encoder_init(&s.enc, session_write, &s);
    if (rc == 0)
        rc = bt_listener_open(&l, &o);
    if (rc != 0) {
        fprintf(stderr, "boardtrace: tracing disabled: cannot listen on port %u: %s\n",
                o.port ? o.port : BT_WIRE_DEFAULT_PORT, strerror(-rc));
        bt_encoder_free(&s.enc);
        atomic_store(&bt_rt.worker_alive, 0);
        return NULL;
    }
    int bfd = env_flag("TRACY_NO_BROADCAST") && !upstream_net ? -1 : bt_broadcast_open();
    int64_t last_broadcast = INT64_MIN / 2;
    /* A launcher whose capture is on its way (python3 -m boardtrace -o)
     * has nothing to be told. */
    int told_waiting = env_flag("BOARDTRACE_NO_WAIT_NOTICE");
    for (;;) {
        int state = atomic_load(&bt_rt.state);
        int shutdown = atomic_load(&bt_rt.shutdown);
        if (state == BT_STATE_WAITING) {
            if (shutdown && !bt_rt.no_exit) {
                if (bfd >= 0)
                    broadcast(bfd, o.only_localhost, l.port, -1);
                break;
            }
            /* A program that seems to hang at its end is the usual first
             * surprise of TRACY_NO_EXIT: say once what it waits for. */
            if (shutdown && !told_waiting) {
                char name[64];
                bt_host_program_name(name, sizeof name);
                fprintf(stderr,
                        "boardtrace: %s has finished and waits for a Tracy viewer or capture "
                        "to take its data on port %u (TRACY_NO_EXIT=1)\n",
                        name, (unsigned)l.port);
                told_waiting = 1;
            }
            if (!bt_rt.no_exit)
                bt_drain_prune_retired();
            int64_t now = now_ns();
            if (bfd >= 0 && now - last_broadcast >= BROADCAST_PERIOD_NS) {
                broadcast(bfd, o.only_localhost, l.port,
                          (int32_t)((uint64_t)time(NULL) - bt_rt.epoch));
                last_broadcast = now;
            }
            s.fd = bt_listener_accept(&l, ACCEPT_POLL_MS);
            if (s.fd < 0)
                continue;
            if (bfd >= 0)
                broadcast(bfd, o.only_localhost, l.port, -1);
            const struct bt_proto *proto;
            if (handshake(s.fd, 0, &proto) == 0) {
                session_run(&s, proto);
                report_lost_session(&s);
                atomic_store(&bt_rt.state, BT_STATE_FINISHED);
            } else {
                last_broadcast = INT64_MIN / 2;
            }
            close(s.fd);
            s.fd = -1;
        } else {
            bt_drain(&s, 1);
            if (shutdown)
                break;
            int fd = bt_listener_accept(&l, ACCEPT_POLL_MS);
            if (fd >= 0) {
                const struct bt_proto *proto;
                handshake(fd, BT_HANDSHAKE_NOT_AVAILABLE, &proto);
                close(fd);
            }
        }
    }
    if (bfd >= 0)
        close(bfd);
    bt_listener_close(&l);
    bt_encoder_free(&s.enc);
    bt_key_set_free(&s.strings);
    bt_key_set_free(&s.srclocs);
    bt_code_free(&s.code);
    free(s.snapshot);
    atomic_store(&bt_rt.worker_alive, 0);
    return NULL;
}
