/* The runtime's worker thread: listens (and broadcasts) until a capture
 * connects, performs the handshake, then drains the per-thread rings and the
 * serial queue through the encoder and answers every server query in arrival
 * order. Implements the shutdown rules of TRACY_NO_EXIT (protocol notes 1.3). */
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
#include "callstack.h"
#include "code.h"
#include "encoder.h"
#include "frame_image.h"
#include "gpu.h"
#include "env.h"
#include "hooks.h"
#include "hostinfo.h"
#include "net.h"
#include "runtime.h"
#include "systrace.h"
#include "timer.h"

#define ACCEPT_POLL_MS       10
#define HANDSHAKE_TIMEOUT_MS 2000
#define BROADCAST_PERIOD_NS  3000000000ll
/* The timer's rate is measured to CALIBRATION_ERROR (relative), over at
 * most CALIBRATION_NS from the start. */
#define CALIBRATION_NS     200000000ll
#define CALIBRATION_ERROR  2e-6
#define FINAL_DRAIN_NS     2000000000ll
#define TAIL_PUBLISH_BYTES 65536u
#define NAP_MIN_NS         20000ll
#define NAP_MAX_NS         1000000ll
/* A pass that found less than this (or a quarter of a buffer, if smaller)
 * waits a millisecond for queries before the next one, instead of spinning
 * over rings that fill slowly. */
#define BATCH_BYTES 65536u
/* Buffers of exited threads kept for a capture that has not come yet (when
 * events may be dropped, i.e. without TRACY_NO_EXIT): beyond this many, the
 * oldest go, so a program that keeps starting threads stays bounded. */
#define RETIRED_KEPT 16u

/* Keys this session has sent, so that a query is answered by dereferencing
 * only what the program itself handed out: a peer asking about any other
 * address gets a placeholder instead of crashing the program. */
struct key_set {
    uint64_t *slots; /* 0 = empty (no key is 0) */
    size_t cap;
    size_t count;
    uint64_t last; /* most events repeat the previous key: skip the lookup */
};

struct session {
    int fd;
    struct key_set strings; /* addresses of NUL-terminated texts */
    struct key_set srclocs; /* addresses of struct bt_srcloc */
    struct bt_encoder enc;
    struct bt_code code;
    int64_t serial_last;
    int64_t serial_step; /* ticks that make at least 1 ns on the server */
    uint8_t queries[BT_QUERY_SIZE * 512];
    size_t queries_len;
    const struct bt_proto *proto;   /* the server's */
    uint8_t announced[BT_EV_COUNT]; /* kinds whose dropping was said */
    int stop;                       /* Terminate query, or the socket failed */
    int disconnect;                 /* Disconnect query: finish as if the program exited */
    int lost;                       /* reading failed: errno, or -1 when the capture closed */
    struct bt_thread **snapshot;
    size_t snapshot_cap;
};

static uint64_t key_hash(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return k ^ (k >> 29);
}

static int key_set_has(const struct key_set *k, uint64_t key)
{
    if (k->cap == 0 || key == 0)
        return 0;
    for (size_t i = key_hash(key) & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
        if (k->slots[i] == key)
            return 1;
        if (k->slots[i] == 0)
            return 0;
    }
}

static void key_set_add(struct key_set *k, uint64_t key)
{
    if (key == k->last || key == 0 || key_set_has(k, key)) {
        k->last = key;
        return;
    }
    if ((k->count + 1) * 2 > k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 1024;
        uint64_t *slots = calloc(cap, sizeof(uint64_t));
        if (!slots)
            return; /* the key then gets a placeholder answer */
        for (size_t i = 0; i < k->cap; i++) {
            if (!k->slots[i])
                continue;
            size_t j = key_hash(k->slots[i]) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = k->slots[i];
        }
        free(k->slots);
        k->slots = slots;
        k->cap = cap;
    }
    size_t i = key_hash(key) & (k->cap - 1);
    while (k->slots[i])
        i = (i + 1) & (k->cap - 1);
    k->slots[i] = key;
    k->count++;
    k->last = key;
}

static void key_set_free(struct key_set *k)
{
    free(k->slots);
    memset(k, 0, sizeof(*k));
}

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

/* The name of one of our threads, and its group hint if it was named with one
 * (group_hint may be NULL). */
static void thread_name(uint32_t tid, char *buf, size_t size, int32_t *group_hint)
{
    int found = 0;
    if (group_hint)
        *group_hint = 0;
    pthread_mutex_lock(&bt_rt.mutex);
    for (struct bt_thread_name *n = bt_rt.names; n; n = n->next)
        if (n->tid == tid) {
            snprintf(buf, size, "%s", n->name);
            if (group_hint)
                *group_hint = n->group_hint;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&bt_rt.mutex);
    if (found)
        return;
    if (tid == bt_rt.pid) {
        snprintf(buf, size, "Main thread");
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(buf, (int)size, f)) {
            buf[strcspn(buf, "\n")] = 0;
            found = buf[0] != 0;
        }
        fclose(f);
    }
    if (!found)
        snprintf(buf, size, "%u", tid);
}

static void answer_string(struct session *s, uint8_t type, uint64_t key)
{
    static const char unknown[] = "?";
    const char *text = key_set_has(&s->strings, key) ? (const char *)(uintptr_t)key : unknown;
    bt_enc_keyed(&s->enc, type, key, text, strlen(text));
}

/* A thread that context switches named: ours by the names we know, any
 * other by /proc, with its process. */
static void answer_external_name(struct session *s, uint32_t tid)
{
    char name[256], process[256];
    uint32_t pid;
    bt_systrace_external_name(tid, name, sizeof name, process, sizeof process, &pid);
    if (pid == bt_rt.pid) {
        thread_name(tid, name, sizeof name, NULL);
        bt_host_program_name(process, sizeof process);
    }
    if (pid)
        bt_enc_tid_to_pid(&s->enc, tid, pid);
    bt_enc_keyed(&s->enc, BT_EV_EXTERNAL_THREAD_NAME, tid, name, strlen(name));
    bt_enc_keyed(&s->enc, BT_EV_EXTERNAL_NAME, tid, process, strlen(process));
}

static void answer_query(struct session *s, const uint8_t *q)
{
    struct bt_encoder *e = &s->enc;
    uint64_t ptr = bt_wire_get_u64(q + BT_QUERY_OFF_PTR);
    char name[256];
    switch (bt_proto_query_up(s->proto, q[BT_QUERY_OFF_TYPE])) {
    case BT_QUERY_TERMINATE:
        s->stop = 1;
        break;
    case BT_QUERY_STRING:
        answer_string(s, BT_EV_STRING_DATA, ptr);
        break;
    case BT_QUERY_THREAD_STRING: {
        int32_t group_hint;
        thread_name((uint32_t)ptr, name, sizeof(name), &group_hint);
        bt_enc_keyed(e, BT_EV_THREAD_NAME, ptr, name, strlen(name));
        if (group_hint != 0)
            bt_enc_thread_group_hint(e, (uint32_t)ptr, group_hint);
        break;
    }
    case BT_QUERY_SOURCE_LOCATION: {
        /* keys are the addresses of static struct bt_srcloc objects; even an
         * unknown one gets an answer, as answers are matched in order */
        if (!key_set_has(&s->srclocs, ptr)) {
            bt_enc_source_location(e, 0, 0, 0, 0, 0);
            break;
        }
        const struct bt_srcloc *loc = (const struct bt_srcloc *)(uintptr_t)ptr;
        key_set_add(&s->strings, (uint64_t)(uintptr_t)loc->name);
        key_set_add(&s->strings, (uint64_t)(uintptr_t)loc->function);
        key_set_add(&s->strings, (uint64_t)(uintptr_t)loc->file);
        bt_code_offer_file(&s->code, loc->file);
        bt_enc_source_location(e, (uint64_t)(uintptr_t)loc->name,
                               (uint64_t)(uintptr_t)loc->function, (uint64_t)(uintptr_t)loc->file,
                               loc->line, loc->color);
        break;
    }
    case BT_QUERY_PLOT_NAME:
        answer_string(s, BT_EV_PLOT_NAME, ptr);
        break;
    case BT_QUERY_FRAME_NAME:
        answer_string(s, BT_EV_FRAME_NAME, ptr);
        break;
    case BT_QUERY_FIBER_NAME:
        answer_string(s, BT_EV_FIBER_NAME, ptr);
        break;
    case BT_QUERY_EXTERNAL_NAME:
        answer_external_name(s, (uint32_t)ptr);
        break;
    case BT_QUERY_DISCONNECT:
        s->disconnect = 1;
        break;
    case BT_QUERY_CALLSTACK_FRAME:
        bt_callstack_answer_frame(e, &s->code, ptr);
        break;
    case BT_QUERY_SYMBOL:
        bt_callstack_answer_symbol(e, &s->code, ptr);
        break;
    case BT_QUERY_SYMBOL_CODE:
        bt_code_symbol_code(&s->code, e, ptr, bt_wire_get_u32(q + BT_QUERY_OFF_EXTRA));
        break;
    case BT_QUERY_SOURCE_CODE:
        bt_code_source_code(&s->code, e, (uint32_t)ptr);
        break;
    case BT_QUERY_DATA_TRANSFER:
        bt_code_data_transfer(&s->code, e, ptr);
        break;
    case BT_QUERY_DATA_TRANSFER_PART:
        bt_code_data_part(&s->code, e, ptr, bt_wire_get_u32(q + BT_QUERY_OFF_EXTRA));
        break;
    case BT_QUERY_PARAMETER:
        bt_hooks_param_changed((uint32_t)(ptr >> 32), (int32_t)(uint32_t)ptr);
        bt_enc_simple(e, BT_EV_ACK_SERVER_QUERY_NOOP);
        break;
    default: /* anything newer: one counted no-op */
        bt_enc_simple(e, BT_EV_ACK_SERVER_QUERY_NOOP);
        break;
    }
}

/* Reads what queries have arrived (waiting up to timeout_ns, or until a
 * producer waiting for room rings the bell, or not at all if one waits
 * already and the last pass took something) and answers them in arrival
 * order, which keeps SourceLocation answers FIFO. */
static void session_queries(struct session *s, int64_t timeout_ns, int progress)
{
    struct pollfd p[2] = {{s->fd, POLLIN, 0}, {bt_rt.worker_bell, POLLIN, 0}};
    int ready;
    if (timeout_ns > 0 && bt_worker_nap_begin(progress)) {
        struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
        ready = ppoll(p, 2, &ts, NULL);
        bt_worker_nap_end(ready > 0 && (p[1].revents & POLLIN));
    } else {
        ready = poll(p, 1, 0);
    }
    if (ready <= 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    ssize_t got =
        recv(s->fd, s->queries + s->queries_len, sizeof(s->queries) - s->queries_len, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        /* A capture that closes with our data still unread in its socket
         * makes the kernel reset the connection instead of ending it. */
        s->lost = got == 0 || errno == ECONNRESET ? -1 : errno;
        s->stop = 1;
        return;
    }
    if (got < 0)
        return;
    s->queries_len += (size_t)got;
    size_t done = 0;
    while (s->queries_len - done >= BT_QUERY_SIZE && !s->stop) {
        answer_query(s, s->queries + done);
        done += BT_QUERY_SIZE;
    }
    memmove(s->queries, s->queries + done, s->queries_len - done);
    s->queries_len -= done;
}

static void encode_frames(struct bt_encoder *e, uint8_t binding, const uint8_t *raw, unsigned n)
{
    uint64_t frames[64];
    if (n > 64)
        n = 64;
    memcpy(frames, raw, 8u * n);
    for (unsigned i = 0; i < n; i++)
        frames[i] = bt_address_canonical(frames[i]);
    bt_enc_callstack(e, binding, 0, frames, n);
}

static void encode_record(struct session *s, const struct bt_rec *r, const uint8_t *frames)
{
    struct bt_encoder *e = &s->enc;
    const uint8_t *payload = frames + 8u * r->a;
    uint64_t u0 = 0, u1 = 0;
    if (r->len >= 8)
        memcpy(&u0, payload, 8);
    if (r->len >= 16)
        memcpy(&u1, payload + 8, 8);
    if (r->a)
        encode_frames(e, BT_EV_CALLSTACK, frames, r->a);
    uint8_t meta = (uint8_t)(r->b >> 24);
    uint32_t rgb = r->b & 0xFFFFFFu;
    switch (r->kind) {
    case BT_REC_ZONE_BEGIN:
        key_set_add(&s->srclocs, u0);
        bt_enc_zone_begin(e, r->time, u0, r->a != 0);
        break;
    case BT_REC_ZONE_BEGIN_DYN:
        bt_enc_zone_begin_alloc(e, r->time, 0, payload, r->len, r->a != 0);
        break;
    case BT_REC_ZONE_END:
        bt_enc_zone_end(e, r->time);
        break;
    case BT_REC_ZONE_TEXT:
    case BT_REC_ZONE_NAME:
        bt_enc_zone_text(e, r->kind == BT_REC_ZONE_NAME, (const char *)payload, r->len);
        break;
    case BT_REC_ZONE_COLOR:
        bt_enc_zone_color(e, r->b);
        break;
    case BT_REC_ZONE_VALUE:
        bt_enc_zone_value(e, u0);
        break;
    case BT_REC_MESSAGE:
    case BT_REC_MESSAGE_COLOR:
        bt_enc_message(e, r->time, (const char *)payload, r->len, meta,
                       r->kind == BT_REC_MESSAGE_COLOR, rgb, r->a != 0);
        break;
    case BT_REC_LITERAL:
    case BT_REC_LITERAL_COLOR:
        key_set_add(&s->strings, u0);
        bt_enc_message_literal(e, r->time, u0, meta, r->kind == BT_REC_LITERAL_COLOR, rgb,
                               r->a != 0);
        break;
    case BT_REC_APP_INFO:
        bt_enc_app_info(e, r->time, (const char *)payload, r->len);
        break;
    case BT_REC_PLOT:
        key_set_add(&s->strings, u0);
        bt_enc_plot(e, (uint8_t)r->b, u0, r->time, u1);
        break;
    case BT_REC_PLOT_CONFIG:
        key_set_add(&s->strings, u0);
        bt_enc_plot_config(e, u0, (uint8_t)r->b, (uint8_t)(r->b >> 8), (uint8_t)(r->b >> 16),
                           (uint32_t)u1);
        break;
    case BT_REC_SECTION_ENTER:
        bt_enc_section_enter(e, r->time, (uint32_t)u0, (uint16_t)r->b, (const char *)payload + 8,
                             r->len - 8u);
        break;
    case BT_REC_SECTION_LEAVE:
        bt_enc_section_leave(e, r->time, r->b);
        break;
    case BT_REC_SECTION_SETUP:
        bt_enc_section_setup(e, (uint16_t)r->b, (const char *)payload, r->len);
        break;
    case BT_REC_PARAM_SETUP:
        key_set_add(&s->strings, u0);
        bt_enc_param_setup(e, r->b, u0, (uint8_t)u1, (int32_t)(uint32_t)(u1 >> 32));
        break;
    case BT_REC_CRASH:
        /* the callstack above is the crash's; Crash tells the capture not
         * to wait for the zones the crash left open */
        key_set_add(&s->strings, u0);
        bt_enc_crash_report(e, r->time, u0);
        bt_enc_simple(e, BT_EV_CRASH);
        break;
    default:
        break;
    }
}

/* The bytes of the record at ring index idx, with `avail` bytes published
 * from there; 0 if its fields do not describe a record that fits (the
 * producer's own layout rules), so nothing is read beyond what was
 * published or beyond the ring. */
static size_t record_size(const struct bt_thread *t, size_t idx, uint64_t avail)
{
    size_t to_end = t->mask + 1 - idx;
    const uint8_t *p = t->data + idx;
    if (p[0] == BT_REC_PAD)
        return to_end <= avail ? to_end : 0;
    if (to_end < BT_REC_HEADER || avail < BT_REC_HEADER)
        return 0;
    struct bt_rec r;
    memcpy(&r, p, sizeof(r));
    size_t n = BT_REC_HEADER + 8u * r.a + BT_REC_ALIGN(r.len);
    if (r.kind >= BT_REC_KINDS || r.a > 62 || n > to_end || n > avail)
        return 0;
    return n;
}

/* Encodes (or, with discard, drops) what thread t has published; returns
 * the bytes taken from its ring. A record that does not hold together ends
 * the pass: what is left of the ring up to its head is dropped and counted,
 * never interpreted. */
static size_t drain_thread_to(struct session *s, struct bt_thread *t, uint64_t limit, int discard)
{
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    if ((int64_t)(limit - tail) <= 0)
        return 0;
    if (limit - tail < head - tail)
        head = limit;
    uint64_t first = tail;
    if (tail == head)
        return 0;
    if (discard) {
        atomic_store_explicit(&t->tail, head, memory_order_release);
        return (size_t)(head - tail);
    }
    bt_enc_thread_context(&s->enc, t->tid);
    uint64_t published = tail;
    while (tail != head) {
        size_t idx = tail & t->mask;
        const uint8_t *p = t->data + idx;
        size_t n = record_size(t, idx, head - tail);
        if (n == 0) {
            atomic_fetch_add_explicit(&bt_rt.dropped, 1, memory_order_relaxed);
            tail = head;
            break;
        }
        if (p[0] == BT_REC_PAD) {
            tail += n;
            continue;
        }
        struct bt_rec r;
        memcpy(&r, p, sizeof(r));
        encode_record(s, &r, p + BT_REC_HEADER);
        if (r.kind == BT_REC_ZONE_BEGIN || r.kind == BT_REC_ZONE_BEGIN_DYN)
            t->sent_open++;
        else if (r.kind == BT_REC_ZONE_END && t->sent_open > 0)
            t->sent_open--;
        tail += n;
        if (tail - published >= TAIL_PUBLISH_BYTES) {
            atomic_store_explicit(&t->tail, tail, memory_order_release);
            published = tail;
        }
    }
    atomic_store_explicit(&t->tail, tail, memory_order_release);
    return (size_t)(tail - first);
}

/* A fiber event of thread `tid` taken from the serial queue: unless it is
 * discarded, what that thread put in its ring before the event goes first
 * (the ring of an ended thread may be gone: then it was empty). */
static void fiber_event_taken(struct session *s, size_t n, uint32_t tid, uint64_t ring_pos,
                              int discard)
{
    for (size_t i = 0; i < n; i++)
        if (s->snapshot[i]->tid == tid) {
            if (!discard)
                drain_thread_to(s, s->snapshot[i], ring_pos, 0);
            s->snapshot[i]->fiber_sent++;
            return;
        }
}

/* A serial slot's copy (GPU names and locations, frame images), freed once
 * encoded or discarded. */
static void *slot_copy(const struct bt_slot *slot)
{
    switch (slot->u.ev.kind) {
    case BT_SLOT_FRAME_IMAGE:
        return (void *)(uintptr_t)slot->u.ev.a;
    case BT_SLOT_GPU:
        return bt_gpu_slot_copy(slot);
    default:
        return NULL;
    }
}

static void encode_frame_image(struct session *s, const struct bt_slot *slot)
{
    uint16_t w = (uint16_t)slot->u.ev.b, h = (uint16_t)(slot->u.ev.b >> 16);
    size_t len = bt_dxt1_size(w, h);
    uint8_t *dxt = malloc(len);
    if (!dxt)
        return;
    bt_dxt1_compress((const uint8_t *)(uintptr_t)slot->u.ev.a, w, h, dxt);
    bt_enc_frame_image(&s->enc, slot->u.ev.a, dxt, len, (uint32_t)slot->u.ev.c, w, h,
                       (int)(slot->u.ev.b >> 32) & 1);
    free(dxt);
}

/* Serial events in reservation order, up to `limit`; times are made strictly
 * increasing, by at least one nanosecond as the server converts them, so
 * per-pool alloc order and alloc-before-free hold there even when two threads
 * read the clock out of order or the clock is coarse (an alloc and its free
 * at the same nanosecond trip an assert in upstream's memory plot). */
static size_t drain_serial(struct session *s, uint64_t limit, size_t nthreads, int discard)
{
    struct bt_serial *q = &bt_rt.serial;
    struct bt_encoder *e = &s->enc;
    size_t did = 0;
    while (q->dequeue_pos < limit) {
        struct bt_slot *slot = bt_serial_peek(q);
        if (!slot)
            break;
        did += (1u + slot->u.ev.extra) * sizeof(struct bt_slot);
        uint8_t kind = slot->u.ev.kind;
        uint32_t thread = slot->u.ev.thread;
        int fiber = kind == BT_SLOT_FIBER_ENTER || kind == BT_SLOT_FIBER_LEAVE;
        if (fiber)
            fiber_event_taken(s, nthreads, thread, slot->u.ev.ring_pos, discard);
        if (discard) {
            free(slot_copy(slot));
            bt_serial_release(q, slot);
            continue;
        }
        if (fiber) {
            bt_enc_thread_context(e, thread);
            if (kind == BT_SLOT_FIBER_ENTER) {
                key_set_add(&s->strings, slot->u.ev.a);
                bt_enc_fiber_enter(e, slot->u.ev.time, slot->u.ev.a, thread, (int32_t)slot->u.ev.b);
            } else {
                bt_enc_fiber_leave(e, slot->u.ev.time, thread);
            }
            bt_serial_release(q, slot);
            continue;
        }
        /* GPU events of the per-thread kinds ride the thread's time chain */
        int per_thread = kind == BT_SLOT_GPU && bt_gpu_type_per_thread(slot->u.ev.sub);
        if (per_thread) {
            bt_enc_thread_context(e, thread);
            if (slot->u.ev.sub == BT_EV_GPU_ZONE_BEGIN ||
                slot->u.ev.sub == BT_EV_GPU_ZONE_BEGIN_CALLSTACK)
                key_set_add(&s->srclocs, slot->u.ev.a);
        } else if (kind == BT_SLOT_GPU &&
                   (slot->u.ev.sub == BT_EV_GPU_ZONE_BEGIN_SERIAL ||
                    slot->u.ev.sub == BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL)) {
            key_set_add(&s->srclocs, slot->u.ev.a);
        }
        int64_t t = slot->u.ev.time;
        if (t < s->serial_last + s->serial_step)
            t = s->serial_last + s->serial_step;
        s->serial_last = t;
        unsigned nframes = slot->u.ev.frames;
        if (nframes) {
            uint8_t raw[64 * 8];
            for (unsigned i = 0; i < slot->u.ev.extra; i++) {
                const struct bt_slot *x = &q->slots[(q->dequeue_pos + 1 + i) & q->mask];
                unsigned n = nframes - i * BT_SLOT_FRAMES;
                memcpy(raw + 8u * i * BT_SLOT_FRAMES, x->u.frame,
                       8u * (n < BT_SLOT_FRAMES ? n : BT_SLOT_FRAMES));
            }
            encode_frames(e, per_thread ? BT_EV_CALLSTACK : BT_EV_CALLSTACK_SERIAL, raw, nframes);
        }
        if (kind <= BT_SLOT_FRAME)
            key_set_add(&s->strings, slot->u.ev.c); /* pool or frame name */
        if (kind == BT_SLOT_LOCK_MARK)
            key_set_add(&s->srclocs, slot->u.ev.b);
        switch (kind) {
        case BT_SLOT_MEM_ALLOC:
            bt_enc_mem_alloc(e, t, thread, slot->u.ev.a, slot->u.ev.b, slot->u.ev.c, nframes != 0);
            break;
        case BT_SLOT_MEM_FREE:
            bt_enc_mem_free(e, t, thread, slot->u.ev.a, slot->u.ev.c, nframes != 0);
            break;
        case BT_SLOT_MEM_DISCARD:
            bt_enc_mem_discard(e, t, thread, slot->u.ev.c, nframes != 0);
            break;
        case BT_SLOT_FRAME:
            bt_enc_frame_mark(e, (uint8_t)slot->u.ev.a, t, slot->u.ev.c);
            break;
        case BT_SLOT_LOCK_WAIT:
            bt_enc_lock_wait(e, BT_EV_LOCK_WAIT, thread, (uint32_t)slot->u.ev.a, t);
            break;
        case BT_SLOT_LOCK_OBTAIN:
            bt_enc_lock_wait(e, BT_EV_LOCK_OBTAIN, thread, (uint32_t)slot->u.ev.a, t);
            break;
        case BT_SLOT_LOCK_RELEASE:
            bt_enc_lock_release(e, (uint32_t)slot->u.ev.a, t);
            break;
        case BT_SLOT_LOCK_MARK:
            bt_enc_lock_mark(e, thread, (uint32_t)slot->u.ev.a, slot->u.ev.b);
            break;
        case BT_SLOT_LOCK_TERMINATE:
            bt_enc_lock_terminate(e, (uint32_t)slot->u.ev.a, t);
            break;
        case BT_SLOT_LOCK_SHARED_WAIT:
            bt_enc_lock_wait(e, BT_EV_LOCK_SHARED_WAIT, thread, (uint32_t)slot->u.ev.a, t);
            break;
        case BT_SLOT_LOCK_SHARED_OBTAIN:
            bt_enc_lock_wait(e, BT_EV_LOCK_SHARED_OBTAIN, thread, (uint32_t)slot->u.ev.a, t);
            break;
        case BT_SLOT_LOCK_SHARED_RELEASE:
            bt_enc_lock_shared_release(e, (uint32_t)slot->u.ev.a, t, thread);
            break;
        case BT_SLOT_GPU:
            /* zone times of the per-thread kinds are the thread's own, not
             * the serial chain's forced-increasing ones */
            bt_gpu_encode(e, slot, per_thread ? slot->u.ev.time : t);
            break;
        case BT_SLOT_FRAME_IMAGE:
            encode_frame_image(s, slot);
            break;
        default:
            break;
        }
        free(slot_copy(slot));
        bt_serial_release(q, slot);
    }
    return did;
}

/* Locks announced (or renamed) since the last pass; under bt_rt.mutex. */
static void announce_locks(struct session *s)
{
    for (struct bt_lock *l = bt_rt.locks; l; l = l->next) {
        if (!l->announced) {
            key_set_add(&s->srclocs, (uint64_t)(uintptr_t)l->loc);
            bt_enc_lock_announce(&s->enc, l->id, l->announce_time, (uint64_t)(uintptr_t)l->loc,
                                 l->type);
            l->announced = 1;
        }
        if (l->name && !l->name_sent) {
            bt_enc_lock_name(&s->enc, l->id, l->name, strlen(l->name));
            l->name_sent = 1;
        }
    }
}

/* The list of rings, copied so encoding (and blocking sends) happen without
 * the mutex; rings of ended threads are freed once empty. */
static size_t snapshot_threads(struct session *s)
{
    size_t n = 0;
    pthread_mutex_lock(&bt_rt.mutex);
    struct bt_thread **link = &bt_rt.threads;
    while (*link) {
        struct bt_thread *t = *link;
        int retired = atomic_load_explicit(&t->retired, memory_order_acquire);
        if (retired && atomic_load_explicit(&t->head, memory_order_acquire) ==
                           atomic_load_explicit(&t->tail, memory_order_relaxed)) {
            *link = t->next;
            free(t->data);
            free(t);
            continue;
        }
        if (n == s->snapshot_cap) {
            size_t cap = s->snapshot_cap ? 2 * s->snapshot_cap : 64;
            struct bt_thread **grown = realloc(s->snapshot, cap * sizeof(*grown));
            if (!grown)
                break;
            s->snapshot = grown;
            s->snapshot_cap = cap;
        }
        s->snapshot[n++] = t;
        link = &t->next;
    }
    pthread_mutex_unlock(&bt_rt.mutex);
    return n;
}

/* One pass over everything; returns the bytes taken from the buffers. */
static size_t drain(struct session *s, int discard)
{
    /* Serial events reserved before this point belong to locks already in
     * the table, so their announcements go out first. */
    uint64_t limit = atomic_load_explicit(&bt_rt.serial.enqueue_pos, memory_order_acquire);
    if (!discard) {
        pthread_mutex_lock(&bt_rt.mutex);
        announce_locks(s);
        pthread_mutex_unlock(&bt_rt.mutex);
    }
    /* Serial events first: a fiber event sends its thread's ring up to
     * where it was emitted before itself; the rest of the rings follow. */
    size_t n = snapshot_threads(s);
    size_t did = drain_serial(s, limit, n, discard);
    did += bt_systrace_drain(&s->enc, discard);
    for (size_t i = 0; i < n; i++) {
        struct bt_thread *t = s->snapshot[i];
        /* head first: records seen there were written after the counts of
         * the fiber events before them. One of those not taken yet (beyond
         * the limit, or not yet committed): the ring waits for it, as its
         * records after the event must follow the event. */
        uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
        if (!discard &&
            atomic_load_explicit(&t->fiber_emitted, memory_order_acquire) != t->fiber_sent)
            continue;
        did += drain_thread_to(s, t, head, discard);
    }
    if (did)
        bt_space_signal();
    return did;
}

/* Records in a ring from tail to head, for the count of dropped events. */
static uint64_t ring_records(const struct bt_thread *t)
{
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    uint64_t n = 0;
    while (tail != head) {
        size_t idx = tail & t->mask;
        size_t bytes = record_size(t, idx, head - tail);
        if (bytes == 0)
            return n + 1;
        n += t->data[idx] != BT_REC_PAD;
        tail += bytes;
    }
    return n;
}

/* While no capture is connected and events may be dropped: frees the
 * buffers of exited threads beyond the RETIRED_KEPT most recent ones (the
 * list is newest first), counting their events as dropped. */
static void prune_retired(void)
{
    unsigned kept = 0;
    pthread_mutex_lock(&bt_rt.mutex);
    struct bt_thread **link = &bt_rt.threads;
    while (*link) {
        struct bt_thread *t = *link;
        if (!atomic_load_explicit(&t->retired, memory_order_acquire) || kept++ < RETIRED_KEPT) {
            link = &t->next;
            continue;
        }
        atomic_fetch_add_explicit(&bt_rt.dropped, ring_records(t), memory_order_relaxed);
        *link = t->next;
        free(t->data);
        free(t);
    }
    pthread_mutex_unlock(&bt_rt.mutex);
}

/* The timer's ns per tick for the welcome: 1 for clock_gettime's ticks,
 * else measured against the reference clock since the start, to within
 * CALIBRATION_ERROR: the two samples' uncertainty and a tick each, over
 * their span. A welcome that comes sooner waits for that span (a few ms
 * with a fine counter; CALIBRATION_NS at most, with a coarse one), and a
 * program that fills its buffer meanwhile waits with it. */
static double timer_multiplier(void)
{
    double known = bt_timer_known_multiplier();
    if (known > 0)
        return known;
    for (;;) {
        struct bt_timer_pair p = bt_timer_pair();
        int64_t span = p.ns - bt_rt.calib_ns;
        double mul = bt_timer_multiplier(bt_rt.calib_ticks, bt_rt.calib_ns, p.ticks, p.ns);
        double doubt = (double)(p.half_ns + bt_rt.calib_half_ns) + 2 * mul;
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

/* The zones still open when the session ends (exit() inside a zone, or
 * threads still running inside theirs) end now, as a viewer expects every
 * zone to. A thread that switched fibers is left alone: its zones may have
 * been ended on another thread. */
static void close_open_zones(struct session *s)
{
    size_t n = snapshot_threads(s);
    int64_t now = bt_timer_now();
    for (size_t i = 0; i < n; i++) {
        struct bt_thread *t = s->snapshot[i];
        if (!t->sent_open || t->fiber_sent)
            continue;
        bt_enc_thread_context(&s->enc, t->tid);
        for (; t->sent_open > 0; t->sent_open--)
            bt_enc_zone_end(&s->enc, now);
    }
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
    while (!s->stop && drain(s, 0) && now_ns() < deadline)
        session_queries(s, 0, 0);
    close_open_zones(s);
    bt_encoder_flush(&s->enc);
    announce_dropped(s); /* what the last frames dropped */
    bt_encoder_flush(&s->enc);
    bt_encoder_send_alone(&s->enc, BT_EV_TERMINATE);
    atomic_store(&bt_rt.state, BT_STATE_FINISHED);
    while (!s->stop && s->enc.error == 0) {
        session_queries(s, ACCEPT_POLL_MS * 1000000ll, 0);
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
    bt_code_init(&s->code, code_transfer, bt_host_exec_time());
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
        size_t did = drain(s, 0);
        if (!did)
            bt_encoder_flush(&s->enc);
        announce_dropped(s);
        size_t batch = bt_rt.ring_size / 4 < BATCH_BYTES ? bt_rt.ring_size / 4 : BATCH_BYTES;
        session_queries(s, did >= batch ? 0 : nap_ns(did, pass - last_pass), did > 0);
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
    bt_code_init(&s.code, 0, 0);
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
                prune_retired();
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
            drain(&s, 1);
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
    key_set_free(&s.strings);
    key_set_free(&s.srclocs);
    bt_code_free(&s.code);
    free(s.snapshot);
    atomic_store(&bt_rt.worker_alive, 0);
    return NULL;
}
