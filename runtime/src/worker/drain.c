/* The worker's pass over the buffers: the serial queue in reservation
 * order, system tracing's queue and each thread's ring, their records
 * encoded for the capture (or dropped before one has come); the keys sent
 * are kept for the query answers (query.c). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "core/runtime.h"
#include "core/timer.h"
#include "dxt1.h"
#include "gpu_slots.h"
#include "session.h"
#include "symbols/callstack.h"
#include "systrace/systrace.h"

#define TAIL_PUBLISH_BYTES 65536u
/* Buffers of exited threads kept for a capture that has not come yet (when
 * events may be dropped, i.e. without TRACY_NO_EXIT): beyond this many, the
 * oldest go, so a program that keeps starting threads stays bounded. */
#define RETIRED_KEPT 16u

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
        bt_key_set_add(&s->srclocs, u0);
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
        bt_key_set_add(&s->strings, u0);
        bt_enc_message_literal(e, r->time, u0, meta, r->kind == BT_REC_LITERAL_COLOR, rgb,
                               r->a != 0);
        break;
    case BT_REC_APP_INFO:
        bt_enc_app_info(e, r->time, (const char *)payload, r->len);
        break;
    case BT_REC_PLOT:
        bt_key_set_add(&s->strings, u0);
        bt_enc_plot(e, (uint8_t)r->b, u0, r->time, u1);
        break;
    case BT_REC_PLOT_CONFIG:
        bt_key_set_add(&s->strings, u0);
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
        bt_key_set_add(&s->strings, u0);
        bt_enc_param_setup(e, r->b, u0, (uint8_t)u1, (int32_t)(uint32_t)(u1 >> 32));
        break;
    case BT_REC_CRASH:
        /* the callstack above is the crash's; Crash tells the capture not
         * to wait for the zones the crash left open */
        bt_key_set_add(&s->strings, u0);
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
                bt_key_set_add(&s->strings, slot->u.ev.a);
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
                bt_key_set_add(&s->srclocs, slot->u.ev.a);
        } else if (kind == BT_SLOT_GPU &&
                   (slot->u.ev.sub == BT_EV_GPU_ZONE_BEGIN_SERIAL ||
                    slot->u.ev.sub == BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL)) {
            bt_key_set_add(&s->srclocs, slot->u.ev.a);
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
            bt_key_set_add(&s->strings, slot->u.ev.c); /* pool or frame name */
        if (kind == BT_SLOT_LOCK_MARK)
            bt_key_set_add(&s->srclocs, slot->u.ev.b);
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
            bt_key_set_add(&s->srclocs, (uint64_t)(uintptr_t)l->loc);
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
size_t bt_drain(struct session *s, int discard)
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
void bt_drain_prune_retired(void)
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

/* The zones still open when the session ends (exit() inside a zone, or
 * threads still running inside theirs) end now, as a viewer expects every
 * zone to. A thread that switched fibers is left alone: its zones may have
 * been ended on another thread. */
void bt_drain_close_open_zones(struct session *s)
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
