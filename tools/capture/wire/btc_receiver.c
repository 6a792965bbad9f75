/* The capture's receiving thread (see btc_receiver.h). Frames are
 * decompressed one after another into a ring of RING_FRAMES frames, as
 * upstream's server does with three, so LZ4 matches reaching 64 KiB back
 * find earlier frames where they were put; the extra room lets the thread
 * run ahead of the decoder by several frames. It waits for room (bounded
 * memory, and the client is held back by TCP as before) when the decoder
 * is behind. */
#define _GNU_SOURCE
#include "btc_receiver.h"

#include <errno.h>
#include <lz4.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boardtrace/wire.h"
#include "btc_decode.h"
#include "btc_util.h"

#define RING_FRAMES 8u
#define QUEUE       64u
#define RX_CAP      (BT_WIRE_LZ4_BOUND + 4u + 64u * 1024u)

struct frame {
    size_t off, size, wire;
};

struct btc_receiver {
    int fd;
    struct btc_journal *journal;
    LZ4_streamDecode_t *lz4;
    uint8_t *ring;
    size_t ring_off;
    uint64_t frames, stream_off; /* the thread's count, for its messages */
    uint8_t *rx;
    size_t rx_len;
    int ready_fd; /* eventfd: frames or the end arrived */
    int quit_fd;  /* eventfd: stop reading */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t room;
    struct frame q[QUEUE];
    uint64_t head, tail; /* frames published; frames done with */
    int quit;
    int stop_reading; /* read nothing more; what was read is still handed on */
    int waiting;      /* the thread waits for room */
    enum btc_receiver_end end;
    char msg[512];
};

static void kick(int efd)
{
    uint64_t one = 1;
    ssize_t w = write(efd, &one, sizeof one);
    (void)w; /* a full counter still polls readable */
}

static void finish(struct btc_receiver *r, enum btc_receiver_end end, const char *msg)
{
    pthread_mutex_lock(&r->mu);
    r->end = end;
    snprintf(r->msg, sizeof r->msg, "%s", msg);
    pthread_mutex_unlock(&r->mu);
    kick(r->ready_fd);
}

/* With r->mu held: whether the next frame may go to ring_off (no frame the
 * decoder still has lies there) and the queue has a place. */
static int has_room(const struct btc_receiver *r)
{
    if (r->head - r->tail == QUEUE)
        return 0;
    for (uint64_t i = r->tail; i < r->head; i++) {
        const struct frame *f = &r->q[i % QUEUE];
        if (f->off < r->ring_off + BT_WIRE_FRAME_SIZE && r->ring_off < f->off + f->size)
            return 0;
    }
    return 1;
}

/* Decompresses one frame and publishes it: 1, 0 when asked to quit, -1 when
 * LZ4 refuses the block (the end is set). */
static int inflate_one(struct btc_receiver *r, const uint8_t *block, size_t n)
{
    pthread_mutex_lock(&r->mu);
    if (!has_room(r)) {
        pthread_mutex_unlock(&r->mu);
        kick(r->ready_fd); /* what is published so far, before waiting */
        pthread_mutex_lock(&r->mu);
        while (!r->quit && !has_room(r)) {
            r->waiting = 1;
            pthread_cond_wait(&r->room, &r->mu);
        }
        r->waiting = 0;
    }
    int quit = r->quit;
    pthread_mutex_unlock(&r->mu);
    if (quit)
        return 0;
    int sz =
        LZ4_decompress_safe_continue(r->lz4, (const char *)block, (char *)r->ring + r->ring_off,
                                     (int)n, (int)BT_WIRE_FRAME_SIZE);
    if (sz < 0) {
        char msg[512];
        btc_lz4_failure(r->frames, r->stream_off, n, msg, sizeof msg);
        finish(r, BTC_RX_BAD_STREAM, msg);
        return -1;
    }
    pthread_mutex_lock(&r->mu);
    r->q[r->head % QUEUE] = (struct frame){r->ring_off, (size_t)sz, n + 4};
    r->head++;
    pthread_mutex_unlock(&r->mu);
    r->frames++;
    r->stream_off += (uint64_t)sz;
    r->ring_off += (size_t)sz;
    if (r->ring_off > (RING_FRAMES - 1) * BT_WIRE_FRAME_SIZE)
        r->ring_off = 0;
    return 1;
}

static void *receive(void *arg)
{
    struct btc_receiver *r = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = r->fd, .events = POLLIN},
                              {.fd = r->quit_fd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            char msg[512];
            snprintf(msg, sizeof msg, "waiting on the connection failed: %s", strerror(errno));
            finish(r, BTC_RX_NET_ERROR, msg);
            return NULL;
        }
        if (p[1].revents) {
            /* Between two reads: every frame read so far was handed on. */
            pthread_mutex_lock(&r->mu);
            int stopped = r->stop_reading && !r->quit;
            pthread_mutex_unlock(&r->mu);
            if (stopped)
                finish(r, BTC_RX_STOPPED, "");
            return NULL;
        }
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t k = recv(r->fd, r->rx + r->rx_len, RX_CAP - r->rx_len, 0);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (k <= 0) {
            /* Bytes of a frame that never came whole cannot be decoded:
             * say so instead of dropping them unnoticed. */
            char msg[128] = "";
            if (r->rx_len)
                snprintf(msg, sizeof msg,
                         ", in the middle of a frame (its first %zu bytes came; they are "
                         "dropped)",
                         r->rx_len);
            finish(r, BTC_RX_CLOSED, msg);
            return NULL;
        }
        r->rx_len += (size_t)k;
        /* The whole frames, journaled in one write before any is decoded; a
         * size out of range ends them (reported after the frames before it). */
        size_t whole = 0;
        uint32_t bad = 0;
        int bad_size = 0;
        while (r->rx_len - whole >= 4) {
            uint32_t n = bt_wire_get_u32(r->rx + whole);
            if (n == 0 || n > BT_WIRE_LZ4_BOUND) {
                bad = n;
                bad_size = 1;
                break;
            }
            if (r->rx_len - whole - 4 < n)
                break;
            whole += 4 + n;
        }
        btc_journal_frames(r->journal, r->rx, whole);
        for (size_t pos = 0; pos < whole;) {
            uint32_t n = bt_wire_get_u32(r->rx + pos);
            if (inflate_one(r, r->rx + pos + 4, n) <= 0)
                return NULL;
            pos += 4 + n;
        }
        if (bad_size) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "stream offset %llu (frame %llu): frame size %u, expected 1..%u",
                     (unsigned long long)r->stream_off, (unsigned long long)r->frames, bad,
                     (unsigned)BT_WIRE_LZ4_BOUND);
            finish(r, BTC_RX_BAD_STREAM, msg);
            return NULL;
        }
        memmove(r->rx, r->rx + whole, r->rx_len - whole);
        r->rx_len -= whole;
        kick(r->ready_fd);
    }
}

static void free_receiver(struct btc_receiver *r)
{
    if (r->ready_fd >= 0)
        close(r->ready_fd);
    if (r->quit_fd >= 0)
        close(r->quit_fd);
    if (r->lz4)
        LZ4_freeStreamDecode(r->lz4);
    pthread_cond_destroy(&r->room);
    pthread_mutex_destroy(&r->mu);
    free(r->ring);
    free(r->rx);
    free(r);
}

struct btc_receiver *btc_receiver_start(int fd, struct btc_journal *journal, char *err,
                                        size_t errlen)
{
    struct btc_receiver *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory for the receiver");
        return NULL;
    }
    r->fd = fd;
    r->journal = journal;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->room, NULL);
    r->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    r->quit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    r->lz4 = LZ4_createStreamDecode();
    r->ring = malloc((size_t)RING_FRAMES * BT_WIRE_FRAME_SIZE + 1);
    r->rx = malloc(RX_CAP);
    if (r->ready_fd < 0 || r->quit_fd < 0 || !r->lz4 || !r->ring || !r->rx) {
        snprintf(err, errlen, "out of memory or descriptors for the receiver");
        free_receiver(r);
        return NULL;
    }
    LZ4_setStreamDecode(r->lz4, NULL, 0);
    int rc = btc_start_thread(&r->thread, receive, r);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the receiving thread: %s", strerror(rc));
        free_receiver(r);
        return NULL;
    }
    return r;
}

int btc_receiver_fd(const struct btc_receiver *r)
{
    return r->ready_fd;
}

int btc_receiver_next(struct btc_receiver *r, const uint8_t **events, size_t *size,
                      size_t *wire_bytes)
{
    for (int pass = 0; pass < 2; pass++) {
        pthread_mutex_lock(&r->mu);
        int ready = r->tail < r->head;
        struct frame f = ready ? r->q[r->tail % QUEUE] : (struct frame){0, 0, 0};
        pthread_mutex_unlock(&r->mu);
        if (ready) {
            *events = r->ring + f.off;
            *size = f.size;
            *wire_bytes = f.wire;
            return 1;
        }
        /* Nothing: clear the signal, then look once more, so a frame
         * published in between is seen now or signalled again. */
        uint64_t count;
        if (pass == 0 && read(r->ready_fd, &count, sizeof count) < 0 && errno != EAGAIN)
            break;
    }
    return 0;
}

void btc_receiver_done(struct btc_receiver *r)
{
    pthread_mutex_lock(&r->mu);
    r->tail++;
    /* A waiting thread is woken once half the queue is free (or the ring
     * is empty), not for every frame: a wake-up costs more than a frame. */
    if (r->waiting && (r->head - r->tail <= QUEUE / 2 || r->tail == r->head))
        pthread_cond_signal(&r->room);
    pthread_mutex_unlock(&r->mu);
}

enum btc_receiver_end btc_receiver_end(struct btc_receiver *r, const char **msg)
{
    pthread_mutex_lock(&r->mu);
    enum btc_receiver_end end = r->tail == r->head ? r->end : BTC_RX_RUNNING;
    pthread_mutex_unlock(&r->mu);
    *msg = r->msg;
    return end;
}

void btc_receiver_stop_reading(struct btc_receiver *r)
{
    pthread_mutex_lock(&r->mu);
    r->stop_reading = 1;
    pthread_mutex_unlock(&r->mu);
    kick(r->quit_fd);
}

void btc_receiver_stop(struct btc_receiver *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->quit = 1;
    pthread_cond_signal(&r->room);
    pthread_mutex_unlock(&r->mu);
    kick(r->quit_fd);
    pthread_join(r->thread, NULL);
    free_receiver(r);
}
