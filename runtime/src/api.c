/* The emitting side: the public bt_* calls. An event is a timer read and a
 * store into the calling thread's ring (or, for memory, locks and frames, into
 * the shared serial queue); no lock, syscall or allocation once a thread's
 * ring exists. What happens when a buffer is full is runtime/README.md's
 * memory policy: wait for the worker when a capture is (or will be) there,
 * else drop and count. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boardtrace/wire.h"
#include "runtime.h"
#include "timer.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))

static _Thread_local struct bt_thread *tls_thread TLS_IE;
static pthread_key_t thread_key;

/* Set while the thread is inside an emitting call: a signal handler that
 * emits on the thread it interrupted would otherwise write over the record
 * being written (and move the ring's head under it). Its events are dropped
 * and counted instead; a plain thread-local byte, as a handler runs on the
 * thread it interrupts, so the hot path stays free of atomics. */
static _Thread_local uint8_t tls_emitting TLS_IE;

/* In a forked child: no worker drains anything, so no thread traces. */
static int forked;

/* 0 = a signal handler interrupted an emitting call of this thread: drop
 * (and count) the event. Else the caller emits and then calls emit_leave. */
static inline int emit_enter(void)
{
    if (__builtin_expect(tls_emitting, 0)) {
        atomic_fetch_add_explicit(&bt_rt.dropped, 1, memory_order_relaxed);
        return 0;
    }
    tls_emitting = 1;
    atomic_signal_fence(memory_order_seq_cst);
    return 1;
}

static inline void emit_leave(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    tls_emitting = 0;
}

/* Largest payload one record may carry: a record must always fit a ring. */
static size_t payload_max(void)
{
    size_t quarter = bt_rt.ring_size / 4;
    return quarter < BT_TEXT_MAX ? quarter : BT_TEXT_MAX;
}

static inline __attribute__((always_inline)) void zone_end_at(struct bt_thread *t, int64_t now);

/* A thread's end (its key's destructor): the zones it left open end here,
 * as a viewer expects every zone to (unless it switched fibers: then its
 * count may stand for zones ended on other threads). */
static void thread_retire(void *arg)
{
    struct bt_thread *t = arg;
    if (t->open_zones && atomic_load_explicit(&t->fiber_emitted, memory_order_relaxed) == 0 &&
        emit_enter()) {
        int64_t now = bt_timer_now();
        while (t->open_zones)
            zone_end_at(t, now);
        emit_leave();
    }
    for (unsigned i = 0; i < BT_MADE_SLOTS; i++)
        free(t->made[i].data);
    memset(t->made, 0, sizeof(t->made));
    tls_thread = NULL;
    atomic_store_explicit(&t->retired, 1, memory_order_release);
}

int bt_api_init(void)
{
    return pthread_key_create(&thread_key, thread_retire);
}

void bt_api_after_fork_child(void)
{
    forked = 1;
    tls_thread = NULL;
    pthread_setspecific(thread_key, NULL);
}

static __attribute__((noinline)) struct bt_thread *thread_register(void)
{
    if (forked || bt_runtime_start() != 0)
        return NULL;
    size_t size = (sizeof(struct bt_thread) + 63) & ~(size_t)63;
    struct bt_thread *t = aligned_alloc(64, size);
    if (!t)
        return NULL;
    memset(t, 0, size);
    t->data = malloc(bt_rt.ring_size);
    if (!t->data) {
        free(t);
        return NULL;
    }
    /* touch every page now: a page fault inside an event costs ~1 us */
    memset(t->data, 0, bt_rt.ring_size);
    t->mask = bt_rt.ring_size - 1;
    t->tid = (uint32_t)syscall(SYS_gettid);
    pthread_mutex_lock(&bt_rt.mutex);
    t->next = bt_rt.threads;
    bt_rt.threads = t;
    pthread_mutex_unlock(&bt_rt.mutex);
    pthread_setspecific(thread_key, t);
    tls_thread = t;
    return t;
}

static inline struct bt_thread *thread_current(void)
{
    struct bt_thread *t = tls_thread;
    if (__builtin_expect(t != NULL, 1))
        return t;
    return thread_register();
}

/* A full buffer: 1 = retry (the worker will drain it), 0 = drop the event. */
static int buffer_full_wait(uint32_t seen)
{
    int state = atomic_load_explicit(&bt_rt.state, memory_order_acquire);
    int worker = atomic_load_explicit(&bt_rt.worker_alive, memory_order_acquire);
    if (!worker || state == BT_STATE_FINISHED || (state == BT_STATE_WAITING && !bt_rt.no_exit)) {
        atomic_fetch_add_explicit(&bt_rt.dropped, 1, memory_order_relaxed);
        return 0;
    }
    bt_space_wait(seen);
    return 1;
}

/* Room for `need` contiguous bytes, keeping `keep` bytes free for the ends of
 * open zones so that, when events are being dropped, a recorded begin still
 * gets its end. When waiting for the worker instead, the ends will find room
 * anyway and the reserve is not needed (deep nesting must not wait forever).
 * NULL = dropped. */
static inline uint8_t *ring_reserve(struct bt_thread *t, size_t need, size_t keep)
{
    size_t size = t->mask + 1;
    uint64_t pos = t->head_local;
    size_t idx = pos & t->mask;
    size_t to_end = size - idx;
    size_t total = need <= to_end ? need : to_end + need;
    while (pos + total + keep - t->tail_cache > size) {
        uint32_t seen = bt_space_seq();
        t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
        if (pos + total + keep - t->tail_cache <= size)
            break;
        if (!buffer_full_wait(seen))
            return NULL;
        keep = 0;
    }
    if (need > to_end) {
        t->data[idx] = BT_REC_PAD;
        t->head_local = pos + to_end;
        idx = 0;
    }
    return t->data + idx;
}

static inline void ring_commit(struct bt_thread *t, size_t n)
{
    t->head_local += n;
    atomic_store_explicit(&t->head, t->head_local, memory_order_release);
}

static inline size_t zone_keep(const struct bt_thread *t)
{
    return (size_t)t->open_zones * BT_REC_HEADER;
}

static inline void rec_header(uint8_t *p, uint8_t kind, uint8_t frames, uint16_t len, uint32_t b,
                              int64_t time)
{
    struct bt_rec r = {kind, frames, len, b, time};
    memcpy(p, &r, sizeof(r));
}

/* An explicit depth is honoured in every mode, as upstream does; the mode
 * only chooses what the plain forms ask for (runtime/README.md). */
static int clamp_depth(int depth)
{
    if (depth <= 0)
        return 0;
    return depth > 62 ? 62 : depth;
}

/* The return address into the program's code, taken in a public function:
 * a callstack starts there, whatever the runtime's own frames are. */
#define CALLER ((uintptr_t)__builtin_return_address(0))

/* A record with an optional callstack and a payload; returns 0 if dropped. */
static int emit_record(struct bt_thread *t, uint8_t kind, int depth, uint32_t b, const void *p1,
                       size_t n1, const void *p2, size_t n2, size_t keep, uintptr_t caller)
{
    uint64_t frames[64];
    depth = clamp_depth(depth);
    int nframes = depth > 0 ? bt_callstack_capture(frames, depth, caller) : 0;
    size_t payload = n1 + n2;
    size_t need = BT_REC_HEADER + 8u * (size_t)nframes + BT_REC_ALIGN(payload);
    uint8_t *p = ring_reserve(t, need, keep);
    if (!p)
        return 0;
    int64_t now = bt_timer_now();
    rec_header(p, kind, (uint8_t)nframes, (uint16_t)payload, b, now);
    uint8_t *q = p + BT_REC_HEADER;
    if (nframes) {
        memcpy(q, frames, 8u * (size_t)nframes);
        q += 8u * (size_t)nframes;
    }
    if (n1)
        memcpy(q, p1, n1);
    if (n2)
        memcpy(q + n1, p2, n2);
    ring_commit(t, need);
    return 1;
}

/* The calling thread for a zone begin; NULL = an inactive zone. */
static inline struct bt_thread *zone_thread(int active)
{
    return active ? thread_current() : NULL;
}

static inline bt_zone zone_begin_body(const struct bt_srcloc *loc, int depth, int active,
                                      uintptr_t caller)
{
    bt_zone z = {0};
    struct bt_thread *t = zone_thread(active);
    if (!t)
        return z;
    size_t keep = zone_keep(t) + BT_REC_HEADER;
    if (__builtin_expect(depth > 0, 0)) {
        uint64_t key = (uint64_t)(uintptr_t)loc;
        if (!emit_record(t, BT_REC_ZONE_BEGIN, depth, 0, &key, 8, NULL, 0, keep, caller))
            return z;
    } else {
        uint8_t *p = ring_reserve(t, BT_REC_HEADER + 8, keep);
        if (!p)
            return z;
        rec_header(p, BT_REC_ZONE_BEGIN, 0, 8, 0, bt_timer_now());
        memcpy(p + BT_REC_HEADER, &loc, sizeof(loc));
        ring_commit(t, BT_REC_HEADER + 8);
    }
    t->open_zones++;
    z.active = 1;
    return z;
}

static inline bt_zone zone_begin(const struct bt_srcloc *loc, int depth, int active,
                                 uintptr_t caller)
{
    bt_zone z = {0};
    if (!active || !emit_enter())
        return z;
    z = zone_begin_body(loc, depth, active, caller);
    emit_leave();
    return z;
}

bt_zone bt_zone_begin(const struct bt_srcloc *loc, int depth, int active)
{
    return zone_begin(loc, depth, active, CALLER);
}

bt_zone bt_zone_begin_at(const struct bt_srcloc *loc, int depth, int active, uintptr_t caller)
{
    return zone_begin(loc, depth, active, caller);
}

static inline __attribute__((always_inline)) void zone_end_at(struct bt_thread *t, int64_t now)
{
    t->open_zones--;
    uint8_t *p = ring_reserve(t, BT_REC_HEADER, zone_keep(t));
    if (!p)
        return;
    rec_header(p, BT_REC_ZONE_END, 0, 0, 0, now);
    ring_commit(t, BT_REC_HEADER);
}

void bt_zone_end(bt_zone zone)
{
    if (!zone.active)
        return;
    int64_t now = bt_timer_now();
    struct bt_thread *t = tls_thread;
    if (!t || !emit_enter())
        return;
    zone_end_at(t, now);
    emit_leave();
}

/* SourceLocationPayload: u32 color, u32 line, function NUL, file NUL, name. */
static size_t srcloc_payload_size(size_t file_len, size_t function_len, size_t name_len)
{
    return 8 + function_len + 1 + file_len + 1 + name_len;
}

static void srcloc_payload_fill(uint8_t *p, uint32_t line, const char *file, size_t file_len,
                                const char *function, size_t function_len, const char *name,
                                size_t name_len, uint32_t color)
{
    memcpy(p, &color, 4);
    memcpy(p + 4, &line, 4);
    p += 8;
    if (function_len)
        memcpy(p, function, function_len);
    p[function_len] = 0;
    p += function_len + 1;
    if (file_len)
        memcpy(p, file, file_len);
    p[file_len] = 0;
    p += file_len + 1;
    if (name_len)
        memcpy(p, name, name_len);
}

/* Keeps a runtime-built location within one record; names beyond that are
 * shortened (the protocol carries at most 64 KiB anyway). */
static void srcloc_fit(size_t *file_len, size_t *function_len, size_t *name_len)
{
    size_t third = (payload_max() - 10) / 3;
    if (*file_len > third)
        *file_len = third;
    if (*function_len > third)
        *function_len = third;
    if (*name_len > third)
        *name_len = third;
}

static bt_zone zone_begin_made(uint64_t handle, int depth, int active, uintptr_t caller)
{
    bt_zone z = {0};
    struct bt_thread *t = tls_thread;
    if (!active || !handle || !t || !emit_enter())
        return z;
    const struct bt_made_srcloc *m = (const struct bt_made_srcloc *)(uintptr_t)handle;
    if (emit_record(t, BT_REC_ZONE_BEGIN_DYN, depth, 0, m->data, m->len, NULL, 0,
                    zone_keep(t) + BT_REC_HEADER, caller)) {
        t->open_zones++;
        z.active = 1;
    }
    emit_leave();
    return z;
}

static bt_zone zone_begin_dynamic(uint32_t line, const char *file, size_t file_len,
                                  const char *function, size_t function_len, const char *name,
                                  size_t name_len, uint32_t color)
{
    bt_zone z = {0};
    struct bt_thread *t = thread_current();
    if (!t)
        return z;
    if (!name)
        name_len = 0;
    srcloc_fit(&file_len, &function_len, &name_len);
    size_t len = srcloc_payload_size(file_len, function_len, name_len);
    size_t need = BT_REC_HEADER + BT_REC_ALIGN(len);
    uint8_t *p = ring_reserve(t, need, zone_keep(t) + BT_REC_HEADER);
    if (!p)
        return z;
    srcloc_payload_fill(p + BT_REC_HEADER, line, file, file_len, function, function_len, name,
                        name_len, color);
    rec_header(p, BT_REC_ZONE_BEGIN_DYN, 0, (uint16_t)len, 0, bt_timer_now());
    ring_commit(t, need);
    t->open_zones++;
    z.active = 1;
    return z;
}

bt_zone bt_zone_begin_dynamic(uint32_t line, const char *file, size_t file_len,
                              const char *function, size_t function_len, const char *name,
                              size_t name_len, uint32_t color, int depth, int active)
{
    bt_zone z = {0};
    if (!active)
        return z;
    if (depth > 0) {
        /* callstack capture lives in emit_record; go through a made slot,
         * which fits the names itself */
        uint64_t h =
            bt_srcloc_make(line, file, file_len, function, function_len, name, name_len, color);
        return zone_begin_made(h, depth, active, CALLER);
    }
    if (!emit_enter())
        return z;
    z = zone_begin_dynamic(line, file, file_len, function, function_len, name, name_len, color);
    emit_leave();
    return z;
}

uint64_t bt_srcloc_make(uint32_t line, const char *file, size_t file_len, const char *function,
                        size_t function_len, const char *name, size_t name_len, uint32_t color)
{
    struct bt_thread *t = thread_current();
    if (!t)
        return 0;
    if (!name)
        name_len = 0;
    srcloc_fit(&file_len, &function_len, &name_len);
    size_t len = srcloc_payload_size(file_len, function_len, name_len);
    struct bt_made_srcloc *m = &t->made[t->made_next++ % BT_MADE_SLOTS];
    if (m->cap < len) {
        uint8_t *grown = realloc(m->data, len);
        if (!grown)
            return 0;
        m->data = grown;
        m->cap = len;
    }
    srcloc_payload_fill(m->data, line, file, file_len, function, function_len, name, name_len,
                        color);
    m->len = len;
    return (uint64_t)(uintptr_t)m;
}

bt_zone bt_zone_begin_made(uint64_t handle, int depth, int active)
{
    return zone_begin_made(handle, depth, active, CALLER);
}

bt_zone bt_zone_begin_made_at(uint64_t handle, int depth, int active, uintptr_t caller)
{
    return zone_begin_made(handle, depth, active, caller);
}

const uint8_t *bt_made_payload(uint64_t handle, size_t *len)
{
    const struct bt_made_srcloc *m = (const struct bt_made_srcloc *)(uintptr_t)handle;
    if (!m) {
        *len = 0;
        return NULL;
    }
    *len = m->len;
    return m->data;
}

static void zone_string(bt_zone zone, uint8_t kind, const char *text, size_t len)
{
    struct bt_thread *t = tls_thread;
    if (!zone.active || !t || !emit_enter())
        return;
    if (len > payload_max())
        len = payload_max();
    emit_record(t, kind, 0, 0, text, len, NULL, 0, zone_keep(t), CALLER);
    emit_leave();
}

void bt_zone_text(bt_zone zone, const char *text, size_t len)
{
    zone_string(zone, BT_REC_ZONE_TEXT, text, len);
}

void bt_zone_name(bt_zone zone, const char *text, size_t len)
{
    zone_string(zone, BT_REC_ZONE_NAME, text, len);
}

void bt_zone_color(bt_zone zone, uint32_t color)
{
    struct bt_thread *t = tls_thread;
    if (!zone.active || !t || !emit_enter())
        return;
    uint8_t *p = ring_reserve(t, BT_REC_HEADER, zone_keep(t));
    if (p) {
        rec_header(p, BT_REC_ZONE_COLOR, 0, 0, color & 0xFFFFFFu, 0);
        ring_commit(t, BT_REC_HEADER);
    }
    emit_leave();
}

void bt_zone_value(bt_zone zone, uint64_t value)
{
    struct bt_thread *t = tls_thread;
    if (!zone.active || !t || !emit_enter())
        return;
    uint8_t *p = ring_reserve(t, BT_REC_HEADER + 8, zone_keep(t));
    if (p) {
        rec_header(p, BT_REC_ZONE_VALUE, 0, 8, 0, 0);
        memcpy(p + BT_REC_HEADER, &value, 8);
        ring_commit(t, BT_REC_HEADER + 8);
    }
    emit_leave();
}

static uint32_t message_meta(enum bt_severity severity)
{
    unsigned s = (unsigned)severity;
    if (s > BT_SEVERITY_FATAL)
        s = BT_SEVERITY_FATAL;
    return (uint32_t)(BT_MSG_SOURCE_USER | (s << 4)) << 24;
}

/* A record of the calling thread outside any zone's state (messages, app
 * info, plot settings). */
static void emit_current(uint8_t kind, int depth, uint32_t b, const void *payload, size_t len,
                         uintptr_t caller)
{
    if (!emit_enter())
        return;
    struct bt_thread *t = thread_current();
    if (t)
        emit_record(t, kind, depth, b, payload, len, NULL, 0, zone_keep(t), caller);
    emit_leave();
}

void bt_message_at(const char *text, size_t len, uint32_t color, int colored,
                   enum bt_severity severity, int depth, uintptr_t caller)
{
    if (len > payload_max())
        len = payload_max();
    uint8_t kind = colored ? BT_REC_MESSAGE_COLOR : BT_REC_MESSAGE;
    uint32_t b = message_meta(severity) | (colored ? color & 0xFFFFFFu : 0);
    emit_current(kind, depth, b, text, len, caller);
}

void bt_message_literal_at(const char *text, uint32_t color, int colored, enum bt_severity severity,
                           int depth, uintptr_t caller)
{
    uint64_t address = (uint64_t)(uintptr_t)text;
    uint8_t kind = colored ? BT_REC_LITERAL_COLOR : BT_REC_LITERAL;
    uint32_t b = message_meta(severity) | (colored ? color & 0xFFFFFFu : 0);
    emit_current(kind, depth, b, &address, 8, caller);
}

void bt_message(const char *text, size_t len, enum bt_severity severity, int depth)
{
    bt_message_at(text, len, 0, 0, severity, depth, CALLER);
}

void bt_message_color(const char *text, size_t len, uint32_t color, enum bt_severity severity,
                      int depth)
{
    bt_message_at(text, len, color, 1, severity, depth, CALLER);
}

void bt_message_literal(const char *text, enum bt_severity severity, int depth)
{
    bt_message_literal_at(text, 0, 0, severity, depth, CALLER);
}

void bt_message_literal_color(const char *text, uint32_t color, enum bt_severity severity,
                              int depth)
{
    bt_message_literal_at(text, color, 1, severity, depth, CALLER);
}

void bt_app_info(const char *text, size_t len)
{
    if (len > payload_max())
        len = payload_max();
    emit_current(BT_REC_APP_INFO, 0, 0, text, len, CALLER);
}

static void plot(const char *name, uint8_t type, uint64_t bits)
{
    if (!emit_enter())
        return;
    struct bt_thread *t = thread_current();
    uint8_t *p = t ? ring_reserve(t, BT_REC_HEADER + 16, zone_keep(t)) : NULL;
    if (p) {
        uint64_t key = (uint64_t)(uintptr_t)name;
        rec_header(p, BT_REC_PLOT, 0, 16, type, bt_timer_now());
        memcpy(p + BT_REC_HEADER, &key, 8);
        memcpy(p + BT_REC_HEADER + 8, &bits, 8);
        ring_commit(t, BT_REC_HEADER + 16);
    }
    emit_leave();
}

void bt_plot_int(const char *name, int64_t value)
{
    plot(name, BT_EV_PLOT_DATA_INT, (uint64_t)value);
}

void bt_plot_float(const char *name, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, 4);
    plot(name, BT_EV_PLOT_DATA_FLOAT, bits);
}

void bt_plot_double(const char *name, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, 8);
    plot(name, BT_EV_PLOT_DATA_DOUBLE, bits);
}

void bt_plot_config(const char *name, enum bt_plot_format format, int step, int fill,
                    uint32_t color)
{
    uint64_t payload[2] = {(uint64_t)(uintptr_t)name, color};
    uint32_t b = (uint32_t)format | (uint32_t)(step ? 1 : 0) << 8 | (uint32_t)(fill ? 1 : 0) << 16;
    emit_current(BT_REC_PLOT_CONFIG, 0, b, payload, 16, CALLER);
}

/* Section ids: 0 stands for "not traced", so they start at 1. */
static _Atomic uint32_t section_next = 1;

uint32_t bt_section_enter(uint16_t category, const char *text, size_t len)
{
    struct bt_thread *t = thread_current();
    if (!t)
        return 0;
    if (len > payload_max() - 8)
        len = payload_max() - 8;
    uint32_t id = atomic_fetch_add_explicit(&section_next, 1, memory_order_relaxed);
    if (id == 0) /* after 2^32 sections */
        id = atomic_fetch_add_explicit(&section_next, 1, memory_order_relaxed);
    uint64_t id64 = id;
    if (!emit_record(t, BT_REC_SECTION_ENTER, 0, category, &id64, 8, text, len, zone_keep(t),
                     CALLER))
        return 0;
    return id;
}

void bt_section_leave(uint32_t id)
{
    struct bt_thread *t = thread_current();
    if (!t || id == 0)
        return;
    emit_record(t, BT_REC_SECTION_LEAVE, 0, id, NULL, 0, NULL, 0, zone_keep(t), CALLER);
}

void bt_section_setup(uint16_t category, const char *text, size_t len)
{
    struct bt_thread *t = thread_current();
    if (!t)
        return;
    if (len > payload_max())
        len = payload_max();
    emit_record(t, BT_REC_SECTION_SETUP, 0, category, text, len, NULL, 0, zone_keep(t), CALLER);
}

void bt_param_setup(uint32_t idx, const char *name, uint8_t type, int32_t value)
{
    struct bt_thread *t = thread_current();
    if (!t)
        return;
    uint64_t payload[2] = {(uint64_t)(uintptr_t)name, type | (uint64_t)(uint32_t)value << 32};
    emit_record(t, BT_REC_PARAM_SETUP, 0, idx, payload, 16, NULL, 0, zone_keep(t), CALLER);
}

int bt_thread_get_name(uint32_t tid, char *buf, size_t size)
{
    int found = 0;
    pthread_mutex_lock(&bt_rt.mutex);
    for (struct bt_thread_name *n = bt_rt.names; n && !found; n = n->next)
        if (n->tid == tid) {
            if (size)
                snprintf(buf, size, "%s", n->name);
            found = 1;
        }
    pthread_mutex_unlock(&bt_rt.mutex);
    return found;
}

void bt_thread_set_name(const char *name)
{
    bt_thread_set_name_hint(name, 0);
}

void bt_thread_set_name_hint(const char *name, int32_t group_hint)
{
    struct bt_thread *t = thread_current();
    if (!t || !name)
        return;
    char *copy = strdup(name);
    if (!copy)
        return;
    char os_name[16];
    strncpy(os_name, name, sizeof(os_name) - 1);
    os_name[sizeof(os_name) - 1] = 0;
    bt_name_own_thread(os_name);
    pthread_mutex_lock(&bt_rt.mutex);
    struct bt_thread_name *n = bt_rt.names;
    while (n && n->tid != t->tid)
        n = n->next;
    if (n) {
        free(n->name);
        n->name = copy;
        n->group_hint = group_hint;
    } else if ((n = malloc(sizeof(*n))) != NULL) {
        n->tid = t->tid;
        n->group_hint = group_hint;
        n->name = copy;
        n->next = bt_rt.names;
        bt_rt.names = n;
    } else {
        free(copy);
    }
    pthread_mutex_unlock(&bt_rt.mutex);
}

/* Serial queue, producer side (Vyukov's bounded queue, multi-slot claims). */
static struct bt_slot *serial_reserve(unsigned count, uint64_t *first)
{
    struct bt_serial *q = &bt_rt.serial;
    uint64_t pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
    for (;;) {
        uint64_t last = pos + count - 1;
        uint32_t seen = bt_space_seq();
        uint64_t seq = atomic_load_explicit(&q->slots[last & q->mask].seq, memory_order_acquire);
        int64_t diff = (int64_t)(seq - last);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->enqueue_pos, &pos, pos + count,
                                                      memory_order_relaxed, memory_order_relaxed))
                break;
        } else if (diff < 0) {
            if (!buffer_full_wait(seen))
                return NULL;
            pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
        } else {
            pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
        }
    }
    *first = pos;
    return &q->slots[pos & q->mask];
}

static int serial_emit_body(const struct bt_serial_ev *ev, int depth, uintptr_t caller)
{
    /* a thread's ring exists only once the runtime has started */
    struct bt_thread *t = thread_current();
    if (!t && (forked || bt_runtime_start() != 0))
        return 0;
    uint64_t frames[64];
    depth = clamp_depth(depth);
    int nframes = depth > 0 ? bt_callstack_capture(frames, depth, caller) : 0;
    unsigned extra = ((unsigned)nframes + BT_SLOT_FRAMES - 1) / BT_SLOT_FRAMES;
    /* counted before the slot and before any later record of the ring, so
     * the worker that sees those records sees the count (worker.c, drain) */
    int fiber = ev->kind == BT_SLOT_FIBER_ENTER || ev->kind == BT_SLOT_FIBER_LEAVE;
    if (fiber && t)
        atomic_fetch_add_explicit(&t->fiber_emitted, 1, memory_order_release);
    uint64_t pos;
    struct bt_slot *s = serial_reserve(1 + extra, &pos);
    if (!s) {
        if (fiber && t)
            atomic_fetch_sub_explicit(&t->fiber_emitted, 1, memory_order_release);
        return 0;
    }
    struct bt_serial *q = &bt_rt.serial;
    s->u.ev.kind = ev->kind;
    s->u.ev.sub = ev->sub;
    s->u.ev.frames = (uint8_t)nframes;
    s->u.ev.extra = (uint8_t)extra;
    s->u.ev.thread = t ? t->tid : 0;
    s->u.ev.time = bt_timer_now();
    s->u.ev.a = ev->a;
    s->u.ev.b = ev->b;
    s->u.ev.c = ev->c;
    s->u.ev.ring_pos = t ? t->head_local : 0;
    for (unsigned i = 0; i < extra; i++) {
        struct bt_slot *x = &q->slots[(pos + 1 + i) & q->mask];
        unsigned n = (unsigned)nframes - i * BT_SLOT_FRAMES;
        memcpy(x->u.frame, frames + i * BT_SLOT_FRAMES,
               8u * (n < BT_SLOT_FRAMES ? n : BT_SLOT_FRAMES));
        atomic_store_explicit(&x->seq, pos + 1 + i + 1, memory_order_release);
    }
    atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
    return 1;
}

/* Guarded as the ring's events are: a handler's serial event while its
 * thread holds an unpublished slot could wait for room the worker can only
 * make once that slot is published. */
int bt_serial_emit(const struct bt_serial_ev *ev, int depth, uintptr_t caller)
{
    if (!emit_enter())
        return 0;
    int sent = serial_emit_body(ev, depth, caller);
    emit_leave();
    return sent;
}

static int serial_emit(uint8_t kind, uint64_t a, uint64_t b, uint64_t c, int depth,
                       uintptr_t caller)
{
    struct bt_serial_ev ev = {kind, 0, a, b, c};
    return bt_serial_emit(&ev, depth, caller);
}

_Atomic uint32_t bt_frame_count;

void bt_frame_mark(const char *name)
{
    if (!name)
        atomic_fetch_add_explicit(&bt_frame_count, 1, memory_order_relaxed);
    serial_emit(BT_SLOT_FRAME, BT_EV_FRAME_MARK_MSG, 0, (uint64_t)(uintptr_t)name, 0, CALLER);
}

void bt_frame_mark_start(const char *name)
{
    serial_emit(BT_SLOT_FRAME, BT_EV_FRAME_MARK_MSG_START, 0, (uint64_t)(uintptr_t)name, 0, CALLER);
}

void bt_frame_mark_end(const char *name)
{
    serial_emit(BT_SLOT_FRAME, BT_EV_FRAME_MARK_MSG_END, 0, (uint64_t)(uintptr_t)name, 0, CALLER);
}

void bt_mem_alloc_at(const void *ptr, size_t size, const char *pool, int depth, uintptr_t caller)
{
    serial_emit(BT_SLOT_MEM_ALLOC, (uint64_t)(uintptr_t)ptr, size, (uint64_t)(uintptr_t)pool, depth,
                caller);
}

void bt_mem_free_at(const void *ptr, const char *pool, int depth, uintptr_t caller)
{
    serial_emit(BT_SLOT_MEM_FREE, (uint64_t)(uintptr_t)ptr, 0, (uint64_t)(uintptr_t)pool, depth,
                caller);
}

void bt_mem_discard_at(const char *pool, int depth, uintptr_t caller)
{
    if (pool)
        serial_emit(BT_SLOT_MEM_DISCARD, 0, 0, (uint64_t)(uintptr_t)pool, depth, caller);
}

void bt_mem_alloc(const void *ptr, size_t size, const char *pool, int depth)
{
    bt_mem_alloc_at(ptr, size, pool, depth, CALLER);
}

void bt_mem_free(const void *ptr, const char *pool, int depth)
{
    bt_mem_free_at(ptr, pool, depth, CALLER);
}

void bt_mem_discard(const char *pool, int depth)
{
    bt_mem_discard_at(pool, depth, CALLER);
}

int64_t bt_time_now(void)
{
    return bt_timer_now();
}

int bt_is_connected(void)
{
    return atomic_load_explicit(&bt_rt.state, memory_order_relaxed) == BT_STATE_CONNECTED;
}

uint64_t bt_dropped_events(void)
{
    return atomic_load_explicit(&bt_rt.dropped, memory_order_relaxed);
}

int bt_crash_record(const char *text, const uint64_t *frames, int nframes)
{
    struct bt_thread *t = tls_thread;
    if (!t || nframes < 0)
        return 0;
    nframes = clamp_depth(nframes);
    size_t need = BT_REC_HEADER + 8u * (size_t)nframes + 8u;
    size_t size = t->mask + 1, to_end = size - (t->head_local & t->mask);
    size_t total = need <= to_end ? need : to_end + need;
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
    if (t->head_local + total - tail > size)
        return 0;
    t->tail_cache = tail;
    uint8_t *p = ring_reserve(t, need, 0);
    uint64_t address = (uint64_t)(uintptr_t)text;
    rec_header(p, BT_REC_CRASH, (uint8_t)nframes, 8, 0, bt_timer_now());
    memcpy(p + BT_REC_HEADER, frames, 8u * (size_t)nframes);
    memcpy(p + BT_REC_HEADER + 8u * (size_t)nframes, &address, 8);
    ring_commit(t, need);
    return 1;
}
