/* The test server: decoder of the client-to-server stream written from the
 * protocol notes (sections 3-5), plus the bookkeeping of a real server (which
 * keys it has asked about, FIFO source locations, pending answers), strict
 * about every rule upstream enforces with an assert or a fatal failure. */
#define _GNU_SOURCE
#include "bt_test_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>

#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"
#include "bt_test_server_sys.h"

#define FRAME BT_WIRE_FRAME_SIZE

/* ---- small map: u64 -> u64, open addressing ---- */

static uint64_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static int map_grow(struct bt_ts_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct bt_ts_map n = {calloc(cap, 8), calloc(cap, 8), calloc(cap, 1), cap, 0};
    if (!n.keys || !n.values || !n.used)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            *bt_ts_map_get(&n, m->keys[i], 1) = m->values[i];
    free(m->keys);
    free(m->values);
    free(m->used);
    *m = n;
    return 0;
}

uint64_t *bt_ts_map_get(struct bt_ts_map *m, uint64_t key, int create)
{
    if (create && (m->count + 1) * 2 > m->cap && map_grow(m) != 0)
        return NULL;
    if (m->cap == 0)
        return NULL;
    size_t i = hash64(key) & (m->cap - 1);
    while (m->used[i]) {
        if (m->keys[i] == key)
            return &m->values[i];
        i = (i + 1) & (m->cap - 1);
    }
    if (!create)
        return NULL;
    m->used[i] = 1;
    m->keys[i] = key;
    m->values[i] = 0;
    m->count++;
    return &m->values[i];
}

uint64_t bt_ts_map_value(const struct bt_ts_map *m, uint64_t key)
{
    uint64_t *v = bt_ts_map_get((struct bt_ts_map *)m, key, 0);
    return v ? *v : 0;
}

void bt_ts_map_free(struct bt_ts_map *m)
{
    free(m->keys);
    free(m->values);
    free(m->used);
    memset(m, 0, sizeof(*m));
}

uint64_t bt_ts_text_hash(const char *text, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)text[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- decoder ---- */

int bt_ts_decoder_init(struct bt_ts_decoder *d, bt_ts_event_fn on_event, void *ctx)
{
    memset(d, 0, sizeof(*d));
    d->lz4 = LZ4_createStreamDecode();
    d->ring = malloc(3 * FRAME + 1);
    d->on_event = on_event;
    d->ctx = ctx;
    return d->lz4 && d->ring ? 0 : -1;
}

void bt_ts_decoder_free(struct bt_ts_decoder *d)
{
    if (d->lz4)
        LZ4_freeStreamDecode(d->lz4);
    free(d->ring);
    free(d->conv);
    memset(d, 0, sizeof(*d));
}

static int64_t compact(const uint8_t *p, unsigned form)
{
    if (form == 2)
        return bt_wire_get_u16(p);
    if (form == 1)
        return (int64_t)bt_wire_get_u32(p) + BT_WIRE_OFF16;
    int64_t v = (int64_t)bt_wire_get_u64(p);
    return v >= 0 ? v + BT_WIRE_OFF32 : v;
}

/* Size of the event at p (at most `avail` bytes), or 0 if it is truncated. */
static size_t event_size(const uint8_t *p, size_t avail)
{
    unsigned t = p[0];
    size_t need;
    if (t == BT_EV_SINGLE_STRING_DATA || t == BT_EV_SECOND_STRING_DATA) {
        if (avail < 3)
            return 0;
        need = 3 + (size_t)bt_wire_get_u16(p + 1) + 256;
    } else if (t == BT_EV_SINGLE_STRING_DATA8 || t == BT_EV_SECOND_STRING_DATA8) {
        if (avail < 2)
            return 0;
        need = 2 + (size_t)p[1];
    } else if (bt_wire_event_is_keyed(t)) {
        int wide = bt_wire_event_has_long_length(t);
        if (avail < (wide ? 13u : 11u))
            return 0;
        need = wide ? 13 + (size_t)bt_wire_get_u32(p + 9) : 11 + (size_t)bt_wire_get_u16(p + 9);
    } else {
        need = bt_wire_event_size[t];
    }
    return need <= avail ? need : 0;
}

/* Absolute time of a time-carrying event, maintaining the references. */
static int64_t event_time(struct bt_ts_decoder *d, const uint8_t *p)
{
    unsigned t = p[0];
    switch (t) {
    case BT_EV_THREAD_CONTEXT:
        d->thread = bt_wire_get_u32(p + 1);
        d->ref_thread = 0;
        return 0;
    case BT_EV_ZONE_BEGIN:
    case BT_EV_ZONE_BEGIN32:
    case BT_EV_ZONE_BEGIN16:
        return d->ref_thread += compact(p + 1, t - BT_EV_ZONE_BEGIN);
    case BT_EV_ZONE_BEGIN_CALLSTACK:
    case BT_EV_ZONE_BEGIN_CALLSTACK32:
    case BT_EV_ZONE_BEGIN_CALLSTACK16:
        return d->ref_thread += compact(p + 1, t - BT_EV_ZONE_BEGIN_CALLSTACK);
    case BT_EV_ZONE_END:
    case BT_EV_ZONE_END32:
    case BT_EV_ZONE_END16:
        return d->ref_thread += compact(p + 1, t - BT_EV_ZONE_END);
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
        return d->ref_thread += (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_PLOT_DATA_INT:
    case BT_EV_PLOT_DATA_FLOAT:
    case BT_EV_PLOT_DATA_DOUBLE:
        return d->ref_thread += (int64_t)bt_wire_get_u64(p + 9);
    case BT_EV_MEM_ALLOC:
    case BT_EV_MEM_ALLOC_NAMED:
    case BT_EV_MEM_FREE:
    case BT_EV_MEM_FREE_NAMED:
    case BT_EV_MEM_ALLOC_CALLSTACK:
    case BT_EV_MEM_ALLOC_CALLSTACK_NAMED:
    case BT_EV_MEM_FREE_CALLSTACK:
    case BT_EV_MEM_FREE_CALLSTACK_NAMED:
    case BT_EV_MEM_DISCARD:
    case BT_EV_MEM_DISCARD_CALLSTACK:
        return d->ref_serial += (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_LOCK_WAIT:
    case BT_EV_LOCK_OBTAIN:
    case BT_EV_LOCK_SHARED_WAIT:
    case BT_EV_LOCK_SHARED_OBTAIN:
        return d->ref_serial += (int64_t)bt_wire_get_u64(p + 9);
    case BT_EV_LOCK_RELEASE:
    case BT_EV_LOCK_SHARED_RELEASE:
        return d->ref_serial += (int64_t)bt_wire_get_u64(p + 5);
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_CALLSTACK:
    case BT_EV_MESSAGE_COLOR_CALLSTACK:
    case BT_EV_MESSAGE_APP_INFO:
    case BT_EV_MESSAGE_LITERAL:
    case BT_EV_MESSAGE_LITERAL_COLOR:
    case BT_EV_MESSAGE_LITERAL_CALLSTACK:
    case BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK:
    case BT_EV_FRAME_MARK_MSG:
    case BT_EV_FRAME_MARK_MSG_START:
    case BT_EV_FRAME_MARK_MSG_END:
        return (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_LOCK_ANNOUNCE:
    case BT_EV_LOCK_TERMINATE:
        return (int64_t)bt_wire_get_u64(p + 5);
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_END:
    case BT_EV_FIBER_ENTER:
    case BT_EV_FIBER_LEAVE:
    case BT_EV_SECTION_ENTER:
    case BT_EV_SECTION_LEAVE:
        return d->ref_thread += (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_END_SERIAL:
        return d->ref_serial += (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_GPU_TIME:
        return d->ref_gpu += (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_GPU_NEW_CONTEXT:
        return (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_CONTEXT_SWITCH:
    case BT_EV_THREAD_WAKEUP:
        return d->ref_ctx += (int64_t)bt_wire_get_u64(p + 1);
    case BT_EV_CALLSTACK_SAMPLE:
    case BT_EV_CALLSTACK_SAMPLE32:
    case BT_EV_CALLSTACK_SAMPLE16:
        return d->ref_ctx += compact(p + 5, t - BT_EV_CALLSTACK_SAMPLE);
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH32:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16:
        return d->ref_ctx += compact(p + 5, t - BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH);
    default:
        return 0;
    }
}

int bt_ts_decoder_frame(struct bt_ts_decoder *d, const uint8_t *block, size_t len)
{
    int n = LZ4_decompress_safe_continue(d->lz4, (const char *)block, (char *)d->ring + d->ring_off,
                                         (int)len, FRAME);
    if (n < 0) {
        snprintf(d->error, sizeof(d->error), "LZ4 block of %zu bytes does not decode", len);
        return -1;
    }
    const uint8_t *p = d->ring + d->ring_off;
    size_t left = (size_t)n;
    if (d->proto) {
        /* An older protocol's frame: only its events, in its layouts. */
        size_t cap = (size_t)n + (size_t)n / 2 + BT_PROTO_EVENT_MAX;
        uint8_t *conv = realloc(d->conv, cap);
        if (!conv) {
            snprintf(d->error, sizeof(d->error), "out of memory");
            return -1;
        }
        d->conv = conv;
        struct bt_proto_fault f;
        size_t k = bt_proto_up_events(d->proto, p, left, conv, cap, &f);
        if (k == (size_t)-1) {
            snprintf(d->error, sizeof(d->error), "protocol %s: byte %zu, event type %u: %s",
                     d->proto->name, f.offset, f.type, f.what);
            return -1;
        }
        p = conv;
        left = k;
    }
    while (left > 0) {
        if (p[0] >= BT_EV_COUNT) {
            snprintf(d->error, sizeof(d->error), "event type %u is not a protocol 82 type", p[0]);
            return -1;
        }
        size_t size = event_size(p, left);
        if (size == 0) {
            snprintf(d->error, sizeof(d->error), "%s straddles the frame end (%zu bytes left)",
                     bt_wire_event_name(p[0]), left);
            return -1;
        }
        int64_t time = event_time(d, p);
        d->on_event(d->ctx, p, size, time);
        p += size;
        left -= size;
    }
    d->ring_off += (size_t)n;
    if (d->ring_off > 2 * FRAME)
        d->ring_off = 0;
    return 0;
}

/* ---- server ---- */

static void query_extra(struct bt_test_server *s, uint8_t type, uint64_t ptr, uint32_t extra)
{
    if (s->out_len + BT_QUERY_SIZE > sizeof(s->out)) {
        bt_ts_fail(s, "more than %zu queries in one frame", sizeof(s->out) / BT_QUERY_SIZE);
        return;
    }
    uint8_t *q = s->out + s->out_len;
    q[0] = s->dec.proto ? bt_proto_query_down(s->dec.proto, type) : type;
    bt_wire_put_u64(q + 1, ptr);
    bt_wire_put_u32(q + 9, extra);
    s->out_len += BT_QUERY_SIZE;
}

static void query(struct bt_test_server *s, uint8_t type, uint64_t ptr)
{
    query_extra(s, type, ptr, 0);
}

void bt_ts_query(struct bt_test_server *s, uint8_t type, uint64_t ptr)
{
    query(s, type, ptr);
}

void bt_ts_fail(struct bt_test_server *s, const char *fmt, ...)
{
    if (s->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof(s->error), fmt, ap);
    va_end(ap);
}

static int code_transfer(const struct bt_test_server *s)
{
    return (s->flags & BT_WELCOME_FLAG_CODE_TRANSFER) &&
           bt_wire_get_u64(s->welcome + BT_WELCOME_OFF_EXEC_TIME) != 0;
}

/* Asks for a source file as upstream's server does: the name in a
 * DataTransfer and 12-byte parts, then SourceCode with a fresh id. */
static void ask_source(struct bt_test_server *s, const char *name, uint64_t text_index)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    uint64_t *asked = bt_ts_map_get(&s->source_names, h | 1, 1);
    if (*asked)
        return;
    *asked = 1;
    size_t n = strlen(name) + 1;
    query(s, BT_QUERY_DATA_TRANSFER, n);
    s->pending_other++;
    for (size_t off = 0; off < n; off += 12) {
        uint8_t part[12] = {0};
        memcpy(part, name + off, n - off < 12 ? n - off : 12);
        query_extra(s, BT_QUERY_DATA_TRANSFER_PART, bt_wire_get_u64(part),
                    bt_wire_get_u32(part + 8));
        s->pending_other++;
    }
    uint32_t id = ++s->next_source_id;
    *bt_ts_map_get(&s->sources_asked, id, 1) = text_index;
    query(s, BT_QUERY_SOURCE_CODE, id);
    s->pending_other++;
}

static uint64_t keep_text(struct bt_test_server *s, const char *text, size_t len);

/* A SourceCode answer: the bytes must be the file's on this machine (one
 * that is not here came from the program's source callback). */
static void source_arrived(struct bt_test_server *s, uint32_t id, const uint8_t *data, size_t len)
{
    uint64_t *v = bt_ts_map_get(&s->sources_asked, id, 0);
    if (!v || *v == 0) {
        bt_ts_fail(s, "SourceCode for id %u that was not asked", id);
        return;
    }
    const char *name = s->texts[*v - 1];
    *v = 0;
    s->source_files++;
    s->source_file_bytes += len;
    FILE *f = fopen(name, "rb");
    int same = 0;
    if (!f && errno == ENOENT) {
        s->source_virtual++;
        keep_text(s, (const char *)data, len);
        return;
    }
    if (f) {
        uint8_t *disk = malloc(len + 1);
        same = disk && fread(disk, 1, len + 1, f) == len && memcmp(disk, data, len) == 0;
        free(disk);
        fclose(f);
    }
    s->source_mismatches += !same;
}

static int flush_queries(struct bt_test_server *s)
{
    size_t off = 0;
    while (off < s->out_len) {
        ssize_t n = send(s->fd, s->out + off, s->out_len - off, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    s->out_len = 0;
    return 0;
}

static void want_string(struct bt_test_server *s, uint64_t key)
{
    if (key == 0)
        return;
    uint64_t *v = bt_ts_map_get(&s->strings, key, 1);
    if (*v == 0) {
        *v = UINT64_MAX; /* asked */
        s->pending_strings++;
        query(s, BT_QUERY_STRING, key);
    }
}

static uint64_t keep_text(struct bt_test_server *s, const char *text, size_t len)
{
    if (s->texts_count == s->texts_cap) {
        s->texts_cap = s->texts_cap ? 2 * s->texts_cap : 256;
        s->texts = realloc(s->texts, s->texts_cap * sizeof(char *));
    }
    s->texts[s->texts_count] = strndup(text, len);
    return ++s->texts_count;
}

static struct bt_ts_thread *thread_for(struct bt_test_server *s, uint32_t tid)
{
    for (size_t i = 0; i < s->threads_count; i++)
        if (s->threads[i].tid == tid)
            return &s->threads[i];
    if (s->threads_count == s->threads_cap) {
        s->threads_cap = s->threads_cap ? 2 * s->threads_cap : 16;
        s->threads = realloc(s->threads, s->threads_cap * sizeof(*s->threads));
        s->current = NULL;
    }
    struct bt_ts_thread *t = &s->threads[s->threads_count++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    s->pending_threads++;
    query(s, BT_QUERY_THREAD_STRING, tid);
    return t;
}

static int take_single(struct bt_test_server *s, const char *what, char **text, size_t *len)
{
    if (s->single_len < 0) {
        bt_ts_fail(s, "%s without a staged string", what);
        return -1;
    }
    *text = s->single;
    *len = (size_t)s->single_len;
    s->single_len = -1;
    return 0;
}

static void stage(struct bt_test_server *s, int second, const uint8_t *p, size_t len)
{
    int *slot_len = second ? &s->second_len : &s->single_len;
    if (*slot_len >= 0)
        bt_ts_fail(s, "a %s string was staged twice without a consumer",
                   second ? "second" : "single");
    memcpy(second ? s->second : s->single, p, len);
    *slot_len = (int)len;
}

static void zone_begin(struct bt_test_server *s, uint64_t key, int64_t time)
{
    if (!s->current) {
        bt_ts_fail(s, "zone begin before any ThreadContext");
        return;
    }
    if (time < s->init_begin)
        bt_ts_fail(s, "zone begins at %lld, before initBegin %lld", (long long)time,
                   (long long)s->init_begin);
    struct bt_ts_thread *t = s->current;
    if (t->depth >= sizeof(t->open_begin) / sizeof(t->open_begin[0])) {
        bt_ts_fail(s, "zones nested deeper than the test server tracks");
        return;
    }
    t->open_begin[t->depth++] = time;
    t->zones++;
    s->zones_total++;
    (*bt_ts_map_get(&s->zone_counts, key, 1))++;
}

static void zone_end(struct bt_test_server *s, int64_t time)
{
    struct bt_ts_thread *t = s->current;
    if (!t || t->depth == 0) {
        bt_ts_fail(s, "zone ended twice (no open zone on thread %u)", t ? t->tid : 0);
        return;
    }
    int64_t begin = t->open_begin[--t->depth];
    if (time - begin > s->longest_zone)
        s->longest_zone = time - begin;
    if (time < begin)
        bt_ts_fail(s, "zone ends at %lld before it begins at %lld", (long long)time,
                   (long long)begin);
}

static void zone_decoration(struct bt_test_server *s, const char *what)
{
    if (!s->current || s->current->depth == 0)
        bt_ts_fail(s, "%s with no open zone", what);
}

static uint64_t payload_id(struct bt_test_server *s, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < s->payloads_count; i++)
        if (s->payload_lens[i] == len && memcmp(s->payloads[i], p, len) == 0)
            return ~(uint64_t)i;
    if (s->payloads_count == s->payloads_cap) {
        s->payloads_cap = s->payloads_cap ? 2 * s->payloads_cap : 16;
        s->payloads = realloc(s->payloads, s->payloads_cap * sizeof(char *));
        s->payload_lens = realloc(s->payload_lens, s->payloads_cap * sizeof(size_t));
    }
    s->payloads[s->payloads_count] = malloc(len);
    memcpy(s->payloads[s->payloads_count], p, len);
    s->payload_lens[s->payloads_count] = len;
    return ~(uint64_t)s->payloads_count++;
}

static void srcloc_seen(struct bt_test_server *s, uint64_t key)
{
    uint64_t *v = bt_ts_map_get(&s->srclocs, key, 1);
    if (*v != 0)
        return;
    *v = UINT64_MAX;
    if (s->srcloc_tail - s->srcloc_head >= sizeof(s->srcloc_fifo) / 8) {
        bt_ts_fail(s, "too many source locations pending");
        return;
    }
    s->srcloc_fifo[s->srcloc_tail++ % (sizeof(s->srcloc_fifo) / 8)] = key;
    query(s, BT_QUERY_SOURCE_LOCATION, key);
}

static int canonical(uint64_t a)
{
    return ((a & 0x3000000000000000ull) << 2) == (a & 0xC000000000000000ull);
}

static void callstack_payload(struct bt_test_server *s, const uint8_t *p, size_t len)
{
    s->callstacks++;
    if (len >= 8)
        (*bt_ts_map_get(&s->first_frames, bt_wire_get_u64(p), 1))++;
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t a = bt_wire_get_u64(p + i);
        if (!canonical(a))
            s->canonical_violations++;
        uint64_t *v = bt_ts_map_get(&s->frames_seen, a, 1);
        if (*v == 0) {
            *v = 1;
            s->pending_callstack_frames++;
            query(s, BT_QUERY_CALLSTACK_FRAME, a);
        }
    }
}

/* A client time as the server stores it: ns since initBegin. */
static int64_t server_ns(const struct bt_test_server *s, int64_t time)
{
    return (int64_t)((double)(time - s->init_begin) * s->timer_mul);
}

static void memory_event(struct bt_test_server *s, const uint8_t *p, int64_t time, uint64_t pool,
                         int alloc)
{
    uint32_t tid = bt_wire_get_u32(p + 9);
    uint64_t ptr = bt_wire_get_u64(p + 13);
    /* thread_for may move the thread table; find the current thread again */
    int had_current = s->current != NULL;
    uint32_t current = had_current ? s->current->tid : 0;
    thread_for(s, tid);
    s->current = had_current ? thread_for(s, current) : NULL;
    if (pool)
        want_string(s, pool);
    uint64_t live_key = hash64(pool) ^ ptr;
    if (alloc) {
        uint64_t *last = bt_ts_map_get(&s->pool_last, pool, 1);
        if ((int64_t)*last > time && *last != 0)
            bt_ts_fail(s, "allocation times decrease in a pool");
        *last = (uint64_t)time;
        uint64_t *live = bt_ts_map_get(&s->live, live_key, 1);
        if (*live && !(s->flags & BT_WELCOME_FLAG_IGNORE_MEM_FAULTS))
            bt_ts_fail(s, "allocation of a live pointer 0x%llx", (unsigned long long)ptr);
        *live = 1 + (uint64_t)server_ns(s, time); /* nonzero: live */
        (*bt_ts_map_get(&s->pool_allocs, pool, 1))++;
    } else {
        if (ptr == 0)
            return;
        uint64_t *live = bt_ts_map_get(&s->live, live_key, 0);
        if ((!live || !*live) && !(s->flags & BT_WELCOME_FLAG_IGNORE_MEM_FAULTS))
            bt_ts_fail(s, "free of unknown pointer 0x%llx", (unsigned long long)ptr);
        /* upstream's memory plot asserts when a free shares its alloc's ns */
        if (live && *live && (uint64_t)server_ns(s, time) + 1 <= *live)
            bt_ts_fail(s, "free of 0x%llx at the nanosecond of its allocation or before",
                       (unsigned long long)ptr);
        if (live)
            *live = 0;
        (*bt_ts_map_get(&s->pool_frees, pool, 1))++;
    }
}

static void answer(struct bt_test_server *s, uint64_t *pending, const char *what)
{
    if (*pending == 0)
        bt_ts_fail(s, "%s answer nobody asked for", what);
    else
        (*pending)--;
}

static void on_event(void *ctx, const uint8_t *p, size_t size, int64_t time)
{
    struct bt_test_server *s = ctx;
    s->events++;
    if (s->tap)
        s->tap(s->tap_ctx, p, size, time);
    if (s->error[0])
        return;
    if (bt_ts_sys_event(s, p, size, time))
        return;
    uint8_t t = p[0];
    char *text;
    size_t len;
    switch (t) {
    case BT_EV_THREAD_CONTEXT: {
        /* a thread running a fiber puts its zones on the fiber's stack */
        s->context_tid = bt_wire_get_u32(p + 1);
        uint64_t fiber = bt_ts_map_value(&s->in_fiber, s->context_tid);
        s->current = thread_for(s, fiber ? (uint32_t)fiber : s->context_tid);
        break;
    }
    case BT_EV_ZONE_BEGIN:
    case BT_EV_ZONE_BEGIN32:
    case BT_EV_ZONE_BEGIN16:
    case BT_EV_ZONE_BEGIN_CALLSTACK:
    case BT_EV_ZONE_BEGIN_CALLSTACK32:
    case BT_EV_ZONE_BEGIN_CALLSTACK16: {
        int cs = t >= BT_EV_ZONE_BEGIN_CALLSTACK;
        if (cs != s->pending_callstack)
            bt_ts_fail(s, "%s %s a Callstack event", bt_wire_event_name(t),
                       cs ? "without" : "after");
        s->pending_callstack = 0;
        uint64_t key = bt_wire_get_u64(p + size - 8);
        srcloc_seen(s, key);
        zone_begin(s, key, time);
        break;
    }
    case BT_EV_SOURCE_LOCATION_PAYLOAD:
        if (s->pending_payload)
            bt_ts_fail(s, "two SourceLocationPayloads in a row");
        s->pending_payload = payload_id(s, p + 11, bt_wire_get_u16(p + 9));
        break;
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
        if (!s->pending_payload) {
            bt_ts_fail(s, "ZoneBeginAllocSrcLoc without its payload");
            break;
        }
        if ((t == BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK) != s->pending_callstack)
            bt_ts_fail(s, "%s and the Callstack event disagree", bt_wire_event_name(t));
        s->pending_callstack = 0;
        zone_begin(s, s->pending_payload, time);
        s->pending_payload = 0;
        break;
    case BT_EV_ZONE_END:
    case BT_EV_ZONE_END32:
    case BT_EV_ZONE_END16:
        zone_end(s, time);
        break;
    case BT_EV_ZONE_TEXT:
    case BT_EV_ZONE_NAME:
        zone_decoration(s, bt_wire_event_name(t));
        if (take_single(s, bt_wire_event_name(t), &text, &len) == 0) {
            keep_text(s, text, len);
            if (t == BT_EV_ZONE_TEXT)
                s->zone_texts++;
            else
                s->zone_names++;
        }
        break;
    case BT_EV_ZONE_COLOR:
        zone_decoration(s, "ZoneColor");
        s->zone_colors++;
        break;
    case BT_EV_ZONE_VALUE:
        zone_decoration(s, "ZoneValue");
        s->zone_values++;
        break;
    case BT_EV_SINGLE_STRING_DATA:
        stage(s, 0, p + 3, size - 3);
        break;
    case BT_EV_SECOND_STRING_DATA:
        stage(s, 1, p + 3, size - 3);
        break;
    case BT_EV_SINGLE_STRING_DATA8:
        stage(s, 0, p + 2, size - 2);
        break;
    case BT_EV_SECOND_STRING_DATA8:
        stage(s, 1, p + 2, size - 2);
        break;
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_CALLSTACK:
    case BT_EV_MESSAGE_COLOR_CALLSTACK: {
        int cs = t == BT_EV_MESSAGE_CALLSTACK || t == BT_EV_MESSAGE_COLOR_CALLSTACK;
        if (cs != s->pending_callstack)
            bt_ts_fail(s, "%s and the Callstack event disagree", bt_wire_event_name(t));
        s->pending_callstack = 0;
        if (!s->current)
            bt_ts_fail(s, "message before any ThreadContext");
        uint8_t meta = p[size - 1];
        if (take_single(s, "Message", &text, &len) == 0) {
            /* The runtime's note that an older protocol lost something is
             * counted apart from the program's messages. */
            static const char note[] = " events dropped: Tracy protocol ";
            if (memmem(text, len, note, sizeof note - 1)) {
                keep_text(s, text, len);
                s->drop_notes++;
                break;
            }
            s->message_hash += bt_ts_text_hash(text, len);
            if (s->texts_count < 100000)
                keep_text(s, text, len);
        }
        if ((meta & 0x0F) > 1 || (meta >> 4) > 5)
            bt_ts_fail(s, "message meta byte 0x%02x out of range", meta);
        else
            s->messages_by_severity[meta >> 4]++;
        s->messages++;
        s->messages_colored += t == BT_EV_MESSAGE_COLOR || t == BT_EV_MESSAGE_COLOR_CALLSTACK;
        break;
    }
    case BT_EV_MESSAGE_LITERAL:
    case BT_EV_MESSAGE_LITERAL_COLOR:
    case BT_EV_MESSAGE_LITERAL_CALLSTACK:
    case BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK: {
        int cs = t == BT_EV_MESSAGE_LITERAL_CALLSTACK || t == BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
        if (cs != s->pending_callstack)
            bt_ts_fail(s, "%s and the Callstack event disagree", bt_wire_event_name(t));
        s->pending_callstack = 0;
        uint64_t tagged = bt_wire_get_u64(p + size - 8);
        want_string(s, tagged >> 8);
        if (((tagged & 0xFF) >> 4) > 5)
            bt_ts_fail(s, "literal message meta byte out of range");
        else
            s->messages_by_severity[(tagged & 0xFF) >> 4]++;
        s->messages++;
        s->messages_literal++;
        s->messages_colored +=
            t == BT_EV_MESSAGE_LITERAL_COLOR || t == BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
        break;
    }
    case BT_EV_MESSAGE_APP_INFO:
        if (take_single(s, "MessageAppInfo", &text, &len) == 0)
            keep_text(s, text, len);
        s->app_infos++;
        break;
    case BT_EV_PLOT_DATA_INT:
    case BT_EV_PLOT_DATA_FLOAT:
    case BT_EV_PLOT_DATA_DOUBLE: {
        uint64_t key = bt_wire_get_u64(p + 1);
        uint64_t *v = bt_ts_map_get(&s->plot_points, key, 1);
        if ((*v)++ == 0) {
            s->pending_plots++;
            query(s, BT_QUERY_PLOT_NAME, key);
        }
        break;
    }
    case BT_EV_PLOT_CONFIG:
        break;
    case BT_EV_THREAD_GROUP_HINT: {
        uint32_t tid = bt_wire_get_u32(p + 1);
        if (!bt_ts_map_value(&s->thread_names, tid))
            bt_ts_fail(s, "ThreadGroupHint for thread %u before its ThreadName", tid);
        *bt_ts_map_get(&s->thread_hints, tid, 1) = 1ull << 32 | bt_wire_get_u32(p + 5);
        s->thread_group_hints++;
        break;
    }
    case BT_EV_SECTION_ENTER: {
        uint32_t id = bt_wire_get_u32(p + 9);
        uint64_t *open = bt_ts_map_get(&s->sections_open, id, 1);
        if (id == 0 || *open)
            bt_ts_fail(s, "SectionEnter of section %u, which is %s", id, id ? "open" : "no id");
        *open = 1;
        if (take_single(s, "SectionEnter", &text, &len) == 0)
            keep_text(s, text, len);
        s->section_enters++;
        break;
    }
    case BT_EV_SECTION_LEAVE: {
        uint32_t id = bt_wire_get_u32(p + 9);
        uint64_t *open = bt_ts_map_get(&s->sections_open, id, 0);
        if (!open || !*open)
            bt_ts_fail(s, "SectionLeave of section %u, which is not open", id);
        else
            *open = 0;
        s->section_leaves++;
        break;
    }
    case BT_EV_SECTION_SETUP:
        if (take_single(s, "SectionSetup", &text, &len) == 0)
            keep_text(s, text, len);
        s->section_setups++;
        break;
    case BT_EV_PARAM_SETUP: {
        uint32_t idx = bt_wire_get_u32(p + 1);
        uint8_t type = p[13];
        int32_t value = (int32_t)bt_wire_get_u32(p + 14);
        if (type > 2)
            bt_ts_fail(s, "ParamSetup of parameter %u with type %u", idx, type);
        want_string(s, bt_wire_get_u64(p + 5));
        s->param_setups++;
        if (s->change_params) {
            query(s, BT_QUERY_PARAMETER, (uint64_t)idx << 32 | (uint32_t)(value + 1));
            s->pending_other++;
        }
        break;
    }
    case BT_EV_FRAME_MARK_MSG:
    case BT_EV_FRAME_MARK_MSG_START:
    case BT_EV_FRAME_MARK_MSG_END: {
        uint64_t key = bt_wire_get_u64(p + 9);
        if (key >> 63)
            bt_ts_fail(s, "frame name key with bit 63 set");
        uint64_t *last = bt_ts_map_get(&s->frame_last, key, 1);
        if (*last && (int64_t)*last > time)
            bt_ts_fail(s, "frame times decrease in a frame set");
        *last = (uint64_t)time;
        uint64_t *v = bt_ts_map_get(&s->frame_marks, key, 1);
        if ((*v)++ == 0 && key) {
            s->pending_frames++;
            query(s, BT_QUERY_FRAME_NAME, key);
        }
        break;
    }
    case BT_EV_MEM_NAME_PAYLOAD:
        s->mem_name = bt_wire_get_u64(p + 1);
        if (s->mem_name == 0)
            bt_ts_fail(s, "MemNamePayload with name 0");
        break;
    case BT_EV_MEM_ALLOC:
    case BT_EV_MEM_ALLOC_NAMED:
    case BT_EV_MEM_ALLOC_CALLSTACK:
    case BT_EV_MEM_ALLOC_CALLSTACK_NAMED:
    case BT_EV_MEM_FREE:
    case BT_EV_MEM_FREE_NAMED:
    case BT_EV_MEM_FREE_CALLSTACK:
    case BT_EV_MEM_FREE_CALLSTACK_NAMED: {
        int named = t == BT_EV_MEM_ALLOC_NAMED || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED ||
                    t == BT_EV_MEM_FREE_NAMED || t == BT_EV_MEM_FREE_CALLSTACK_NAMED;
        int cs = t >= BT_EV_MEM_ALLOC_CALLSTACK;
        if (cs != s->pending_callstack)
            bt_ts_fail(s, "%s and the CallstackSerial event disagree", bt_wire_event_name(t));
        s->pending_callstack = 0;
        if (named && !s->mem_name)
            bt_ts_fail(s, "%s without MemNamePayload", bt_wire_event_name(t));
        int alloc = t == BT_EV_MEM_ALLOC || t == BT_EV_MEM_ALLOC_NAMED ||
                    t == BT_EV_MEM_ALLOC_CALLSTACK || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED;
        memory_event(s, p, time, named ? s->mem_name : 0, alloc);
        s->mem_name = 0;
        break;
    }
    case BT_EV_MEM_DISCARD:
    case BT_EV_MEM_DISCARD_CALLSTACK:
        s->pending_callstack = 0;
        want_string(s, bt_wire_get_u64(p + 13));
        break;
    case BT_EV_CALLSTACK_PAYLOAD:
        callstack_payload(s, p + 11, bt_wire_get_u16(p + 9));
        break;
    case BT_EV_CALLSTACK:
    case BT_EV_CALLSTACK_SERIAL:
        s->pending_callstack = 1;
        break;
    case BT_EV_LOCK_ANNOUNCE:
        s->lock_announces++;
        srcloc_seen(s, bt_wire_get_u64(p + 13));
        break;
    case BT_EV_LOCK_WAIT:
    case BT_EV_LOCK_SHARED_WAIT:
    case BT_EV_LOCK_OBTAIN:
    case BT_EV_LOCK_SHARED_OBTAIN: {
        /* upstream's loader asserts that an obtain follows a wait of its thread */
        int shared = t == BT_EV_LOCK_SHARED_WAIT || t == BT_EV_LOCK_SHARED_OBTAIN;
        uint64_t key = (uint64_t)bt_wire_get_u32(p + 5) << 32 | bt_wire_get_u32(p + 1) |
                       (uint64_t)shared << 63;
        uint64_t *waiting = bt_ts_map_get(&s->lock_waiting, key, 1);
        if (t == BT_EV_LOCK_WAIT || t == BT_EV_LOCK_SHARED_WAIT) {
            *waiting = 1;
            s->lock_waits += !shared;
            s->lock_shared_waits += shared;
        } else {
            if (!*waiting)
                bt_ts_fail(s, "%s of lock %u by thread %u without a wait", bt_wire_event_name(t),
                           bt_wire_get_u32(p + 5), bt_wire_get_u32(p + 1));
            *waiting = 0;
            s->lock_obtains += !shared;
            s->lock_shared_obtains += shared;
        }
        break;
    }
    case BT_EV_LOCK_RELEASE:
        s->lock_releases++;
        break;
    case BT_EV_LOCK_SHARED_RELEASE:
        s->lock_shared_releases++;
        break;
    case BT_EV_GPU_NEW_CONTEXT:
        if (s->gpu_known[p[25]])
            bt_ts_fail(s, "GPU context %u announced twice", p[25]);
        s->gpu_known[p[25]] = 1 | (uint8_t)(p[26] << 1); /* bit 1: calibrated context */
        s->gpu_contexts++;
        break;
    case BT_EV_GPU_CONTEXT_NAME:
        if (!s->gpu_known[p[1]])
            bt_ts_fail(s, "GpuContextName for unknown context %u", p[1]);
        if (take_single(s, "GpuContextName", &text, &len) == 0)
            keep_text(s, text, len);
        s->gpu_context_names++;
        break;
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL: {
        unsigned k = (t - BT_EV_GPU_ZONE_BEGIN) % 5u; /* 0 plain 1 cs 2 alloc 3 alloc+cs */
        int cs = k == 1 || k == 3, alloc = k >= 2;
        if (cs != s->pending_callstack)
            bt_ts_fail(s, "%s and the Callstack event disagree", bt_wire_event_name(t));
        s->pending_callstack = 0;
        if (!s->gpu_known[p[15]])
            bt_ts_fail(s, "%s on unknown GPU context %u", bt_wire_event_name(t), p[15]);
        if (alloc) {
            if (!s->pending_payload)
                bt_ts_fail(s, "%s without SourceLocationPayload", bt_wire_event_name(t));
            s->pending_payload = 0;
            s->gpu_zone_begins_alloc++;
        } else {
            srcloc_seen(s, bt_wire_get_u64(p + 16));
        }
        s->gpu_zone_begins++;
        s->gpu_zone_begins_serial += t >= BT_EV_GPU_ZONE_BEGIN_SERIAL;
        s->gpu_zone_callstacks += cs;
        break;
    }
    case BT_EV_GPU_ZONE_END:
    case BT_EV_GPU_ZONE_END_SERIAL:
        if (!s->gpu_known[p[15]])
            bt_ts_fail(s, "GpuZoneEnd on unknown GPU context %u", p[15]);
        s->gpu_zone_ends++;
        break;
    case BT_EV_GPU_TIME:
        if (!s->gpu_known[p[11]])
            bt_ts_fail(s, "GpuTime on unknown GPU context %u", p[11]);
        s->gpu_times++;
        break;
    case BT_EV_GPU_CALIBRATION:
        /* upstream's loader asserts that the context was created with the
         * calibration flag */
        if (!(s->gpu_known[p[25]] & 2))
            bt_ts_fail(s, "GpuCalibration on GPU context %u, created without the calibration flag",
                       p[25]);
        s->gpu_calibrations++;
        break;
    case BT_EV_GPU_TIME_SYNC:
        if (!s->gpu_known[p[17]])
            bt_ts_fail(s, "GpuTimeSync on unknown GPU context %u", p[17]);
        s->gpu_time_syncs++;
        break;
    case BT_EV_FIBER_ENTER: {
        uint64_t key = bt_wire_get_u64(p + 9);
        uint64_t *v = bt_ts_map_get(&s->fibers, key, 1);
        if (*v == 0) {
            *v = UINT64_MAX;
            s->pending_fibers++;
            query(s, BT_QUERY_FIBER_NAME, key);
        }
        s->fiber_enters++;
        uint32_t tid = bt_wire_get_u32(p + 17);
        if (tid != s->context_tid)
            bt_ts_fail(s, "FiberEnter for thread %u in the context of thread %u", tid,
                       s->context_tid);
        /* the fiber's pseudo thread: a tid no kernel hands out */
        uint32_t pseudo = 0x80000000u | (uint32_t)(hash64(key) & 0x7FFFFFFFu);
        *bt_ts_map_get(&s->in_fiber, tid, 1) = pseudo;
        s->current = thread_for(s, pseudo);
        break;
    }
    case BT_EV_FIBER_LEAVE: {
        s->fiber_leaves++;
        uint32_t tid = bt_wire_get_u32(p + 9);
        uint64_t *v = bt_ts_map_get(&s->in_fiber, tid, 0);
        if (!v || !*v)
            bt_ts_fail(s, "FiberLeave of thread %u, which runs no fiber", tid);
        else
            *v = 0;
        if (tid == s->context_tid)
            s->current = thread_for(s, tid);
        break;
    }
    case BT_EV_FIBER_NAME: {
        uint64_t *v = bt_ts_map_get(&s->fibers, bt_wire_get_u64(p + 1), 0);
        if (!v || *v != UINT64_MAX)
            bt_ts_fail(s, "FiberName nobody asked for");
        else
            *v = keep_text(s, (const char *)p + 11, size - 11);
        answer(s, &s->pending_fibers, "FiberName");
        s->fiber_names++;
        break;
    }
    case BT_EV_FRAME_IMAGE_DATA:
        if (s->pending_image)
            bt_ts_fail(s, "two FrameImageData in a row");
        s->pending_image = 1;
        s->pending_image_len = bt_wire_get_u32(p + 9);
        break;
    case BT_EV_FRAME_IMAGE: {
        uint64_t w = bt_wire_get_u16(p + 5), h = bt_wire_get_u16(p + 7);
        if (!s->pending_image)
            bt_ts_fail(s, "FrameImage without FrameImageData");
        else if (w % 4 || h % 4 || s->pending_image_len != w * h / 2)
            bt_ts_fail(s, "FrameImage %llux%llu with %llu bytes of DXT1", (unsigned long long)w,
                       (unsigned long long)h, (unsigned long long)s->pending_image_len);
        s->pending_image = 0;
        s->frame_images++;
        break;
    }
    case BT_EV_LOCK_NAME:
        if (take_single(s, "LockName", &text, &len) == 0)
            keep_text(s, text, len);
        s->lock_names++;
        break;
    case BT_EV_LOCK_MARK:
        srcloc_seen(s, bt_wire_get_u64(p + 9));
        break;
    case BT_EV_STRING_DATA: {
        uint64_t key = bt_wire_get_u64(p + 1);
        uint64_t *v = bt_ts_map_get(&s->strings, key, 0);
        if (!v || *v != UINT64_MAX)
            bt_ts_fail(s, "StringData for key 0x%llx that was not asked", (unsigned long long)key);
        else
            *v = keep_text(s, (const char *)p + 11, size - 11);
        answer(s, &s->pending_strings, "StringData");
        if (v && code_transfer(s) && bt_ts_map_get(&s->file_keys, key, 0))
            ask_source(s, s->texts[*v - 1], *v);
        break;
    }
    case BT_EV_THREAD_NAME:
    case BT_EV_PLOT_NAME:
    case BT_EV_FRAME_NAME: {
        struct bt_ts_map *m = t == BT_EV_THREAD_NAME ? &s->thread_names
                              : t == BT_EV_PLOT_NAME ? &s->plot_names
                                                     : &s->frame_names;
        *bt_ts_map_get(m, bt_wire_get_u64(p + 1), 1) =
            keep_text(s, (const char *)p + 11, size - 11);
        answer(s,
               t == BT_EV_THREAD_NAME ? &s->pending_threads
               : t == BT_EV_PLOT_NAME ? &s->pending_plots
                                      : &s->pending_frames,
               bt_wire_event_name(t));
        break;
    }
    case BT_EV_SOURCE_LOCATION: {
        if (s->srcloc_head == s->srcloc_tail) {
            bt_ts_fail(s, "SourceLocation answer nobody asked for");
            break;
        }
        uint64_t key = s->srcloc_fifo[s->srcloc_head++ % (sizeof(s->srcloc_fifo) / 8)];
        if (s->srcloc_count == s->srcloc_cap) {
            s->srcloc_cap = s->srcloc_cap ? 2 * s->srcloc_cap : 64;
            s->srcloc_info = realloc(s->srcloc_info, s->srcloc_cap * sizeof(*s->srcloc_info));
        }
        s->srcloc_info[s->srcloc_count].name = bt_wire_get_u64(p + 1);
        s->srcloc_info[s->srcloc_count].function = bt_wire_get_u64(p + 9);
        s->srcloc_info[s->srcloc_count].file = bt_wire_get_u64(p + 17);
        s->srcloc_info[s->srcloc_count].line = bt_wire_get_u32(p + 25);
        *bt_ts_map_get(&s->srclocs, key, 1) = ++s->srcloc_count;
        want_string(s, bt_wire_get_u64(p + 1));
        want_string(s, bt_wire_get_u64(p + 9));
        want_string(s, bt_wire_get_u64(p + 17));
        if (bt_wire_get_u64(p + 17))
            *bt_ts_map_get(&s->file_keys, bt_wire_get_u64(p + 17), 1) = 1;
        break;
    }
    case BT_EV_CALLSTACK_FRAME_SIZE:
        s->answering_frame = bt_wire_get_u64(p + 1);
        if (take_single(s, "CallstackFrameSize", &text, &len) == 0 && p[9] == 0)
            bt_ts_fail(s, "CallstackFrameSize with 0 frames");
        answer(s, &s->pending_callstack_frames, "CallstackFrameSize");
        s->callstack_frames_answered++;
        break;
    case BT_EV_CALLSTACK_FRAME: {
        if (take_single(s, "CallstackFrame", &text, &len) == 0) {
            uint64_t *name = bt_ts_map_get(&s->frame_functions, s->answering_frame, 1);
            uint64_t index = keep_text(s, text, len);
            if (*name == 0) /* inline frames follow the outermost: keep the first */
                *name = index;
        }
        if (s->second_len < 0)
            bt_ts_fail(s, "CallstackFrame without a second string");
        else
            keep_text(s, s->second, (size_t)s->second_len);
        s->second_len = -1;
        uint64_t sym = bt_wire_get_u64(p + 5);
        if (sym) {
            uint64_t *v = bt_ts_map_get(&s->symbols_seen, sym, 1);
            uint32_t sym_len = bt_wire_get_u32(p + 13);
            if (*v == 0) {
                *v = 1;
                s->pending_symbols++;
                query(s, BT_QUERY_SYMBOL, sym);
                if (code_transfer(s) && sym_len > 0 && sym_len <= 128 * 1024) {
                    *bt_ts_map_get(&s->code_asked, sym, 1) = sym_len;
                    query_extra(s, BT_QUERY_SYMBOL_CODE, sym, sym_len);
                    s->pending_other++;
                }
            }
        }
        break;
    }
    case BT_EV_SYMBOL_CODE: {
        uint64_t sym = bt_wire_get_u64(p + 1);
        uint64_t *asked = bt_ts_map_get(&s->code_asked, sym, 0);
        uint32_t code_len = bt_wire_get_u32(p + 9);
        if (!asked || *asked != code_len)
            bt_ts_fail(s, "SymbolCode of %u bytes for 0x%llx, which was not asked so", code_len,
                       (unsigned long long)sym);
        else
            *asked = 0;
        s->symbol_code++;
        s->symbol_code_bytes += code_len;
        answer(s, &s->pending_other, "SymbolCode");
        break;
    }
    case BT_EV_SOURCE_CODE:
        source_arrived(s, (uint32_t)bt_wire_get_u64(p + 1), p + 13, bt_wire_get_u32(p + 9));
        answer(s, &s->pending_other, "SourceCode");
        break;
    case BT_EV_SYMBOL_INFORMATION:
        take_single(s, "SymbolInformation", &text, &len);
        answer(s, &s->pending_symbols, "SymbolInformation");
        s->symbols_answered++;
        break;
    case BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE:
        s->symbol_code_unavailable++;
        answer(s, &s->pending_other, bt_wire_event_name(t));
        break;
    case BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE: {
        uint64_t *v = bt_ts_map_get(&s->sources_asked, bt_wire_get_u32(p + 1), 0);
        if (v && *v)
            *v = 0;
        else if (code_transfer(s))
            bt_ts_fail(s, "AckSourceCodeNotAvailable for id %u that was not asked",
                       bt_wire_get_u32(p + 1));
        s->source_files_unavailable++;
        answer(s, &s->pending_other, bt_wire_event_name(t));
        break;
    }
    case BT_EV_ACK_SERVER_QUERY_NOOP:
        answer(s, &s->pending_other, bt_wire_event_name(t));
        break;
    case BT_EV_TERMINATE:
        s->terminate_seen = 1;
        break;
    default:
        break;
    }
}

static int read_exact(int fd, void *buf, size_t n, int timeout_ms)
{
    uint8_t *p = buf;
    while (n) {
        struct pollfd pf = {fd, POLLIN, 0};
        int rc = poll(&pf, 1, timeout_ms);
        if (rc <= 0)
            return rc == 0 ? -ETIMEDOUT : -errno;
        ssize_t got = recv(fd, p, n, 0);
        if (got <= 0)
            return got == 0 ? -EPIPE : -errno;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

int bt_ts_connect(struct bt_test_server *s, const char *addr, uint16_t port, int timeout_ms)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->single_len = -1;
    s->second_len = -1;
    if (bt_ts_decoder_init(&s->dec, on_event, s) != 0)
        return -1;
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof(ss));
    if (strchr(addr, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        inet_pton(AF_INET6, addr, &a->sin6_addr);
        sl = sizeof(*a);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        inet_pton(AF_INET, addr, &a->sin_addr);
        sl = sizeof(*a);
    }
    for (int waited = 0; waited <= timeout_ms; waited += 20) {
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&ss, sl) == 0) {
            s->fd = fd;
            return 0;
        }
        close(fd);
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    snprintf(s->error, sizeof(s->error), "cannot connect to %s port %u", addr, port);
    return -1;
}

int bt_ts_handshake(struct bt_test_server *s, uint32_t version)
{
    /* BT_TEST_PROTOCOL (e.g. "72", "66-tt") makes a server asked for 82
     * speak that protocol instead: every runtime session test then runs
     * against an older Tracy. */
    const char *older = getenv("BT_TEST_PROTOCOL");
    const struct bt_proto *p = bt_proto_get(version);
    if (older && version == BT_WIRE_PROTOCOL_VERSION) {
        p = bt_proto_by_name(older);
        if (!p)
            return -1;
        version = p->number;
    }
    s->dec.proto = p && p->number != BT_WIRE_PROTOCOL_VERSION ? p : NULL;
    uint8_t hello[12];
    memcpy(hello, BT_WIRE_SHIBBOLETH, 8);
    bt_wire_put_u32(hello + 8, version);
    if (send(s->fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello))
        return -1;
    uint8_t status;
    if (read_exact(s->fd, &status, 1, 5000) != 0)
        return -1;
    if (status != BT_HANDSHAKE_WELCOME)
        return status;
    if (s->dec.proto) {
        uint8_t raw[BT_WELCOME_SIZE + 8];
        uint64_t delay;
        if (read_exact(s->fd, raw, s->dec.proto->welcome_size, 5000) != 0)
            return -1;
        bt_proto_welcome_up(s->dec.proto, raw, s->welcome, &delay);
    } else if (read_exact(s->fd, s->welcome, sizeof(s->welcome), 5000) != 0) {
        return -1;
    }
    uint64_t bits = bt_wire_get_u64(s->welcome + BT_WELCOME_OFF_TIMER_MUL);
    memcpy(&s->timer_mul, &bits, 8);
    s->init_begin = (int64_t)bt_wire_get_u64(s->welcome + BT_WELCOME_OFF_INIT_BEGIN);
    s->flags = s->welcome[BT_WELCOME_OFF_FLAGS];
    if (s->flags & BT_WELCOME_FLAG_ON_DEMAND) {
        uint8_t od[BT_ON_DEMAND_SIZE];
        if (read_exact(s->fd, od, sizeof(od), 5000) != 0)
            return -1;
    }
    return status;
}

int bt_ts_ask(struct bt_test_server *s, uint8_t type, uint64_t key)
{
    if (type == BT_QUERY_STRING)
        want_string(s, key);
    else if (type == BT_QUERY_SOURCE_LOCATION)
        srcloc_seen(s, key);
    else
        return -1;
    return flush_queries(s);
}

static int all_answered(const struct bt_test_server *s)
{
    return s->pending_strings == 0 && s->pending_threads == 0 && s->pending_plots == 0 &&
           s->pending_frames == 0 && s->pending_callstack_frames == 0 && s->pending_symbols == 0 &&
           s->pending_other == 0 && s->pending_fibers == 0 && s->srcloc_head == s->srcloc_tail &&
           s->single_len < 0 && !s->pending_image && s->second_len < 0 && bt_ts_sys_answered(s);
}

int bt_ts_run(struct bt_test_server *s, int timeout_ms)
{
    static uint8_t block[BT_WIRE_LZ4_BOUND];
    while (!s->error[0]) {
        uint8_t size[4];
        int rc = read_exact(s->fd, size, 4, timeout_ms);
        if (rc != 0) {
            bt_ts_fail(s, "%s after %llu frames (terminate %s)",
                       rc == -ETIMEDOUT ? "timed out waiting for data" : "connection closed",
                       (unsigned long long)s->frames_received,
                       s->terminate_seen ? "seen" : "not seen");
            break;
        }
        uint32_t n = bt_wire_get_u32(size);
        if (n == 0 || n > BT_WIRE_LZ4_BOUND) {
            bt_ts_fail(s, "frame of %u compressed bytes", n);
            break;
        }
        if (read_exact(s->fd, block, n, timeout_ms) != 0) {
            bt_ts_fail(s, "frame body cut short");
            break;
        }
        s->frames_received++;
        s->bytes_received += 4 + n;
        if (bt_ts_decoder_frame(&s->dec, block, n) != 0) {
            bt_ts_fail(s, "%s", s->dec.error);
            break;
        }
        if (flush_queries(s) != 0) {
            bt_ts_fail(s, "cannot send queries");
            break;
        }
        if (s->terminate_seen && all_answered(s)) {
            int open = 0;
            for (size_t i = 0; i < s->threads_count; i++)
                open += s->threads[i].depth != 0;
            if (open) {
                bt_ts_fail(s, "%d threads have open zones at the end", open);
                break;
            }
            uint8_t term[BT_QUERY_SIZE] = {BT_QUERY_TERMINATE};
            send(s->fd, term, sizeof(term), MSG_NOSIGNAL);
            s->done = 1;
            return 0;
        }
    }
    return -1;
}

void bt_ts_close(struct bt_test_server *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    bt_ts_decoder_free(&s->dec);
    bt_ts_sys_free(&s->sys);
    struct bt_ts_map *maps[] = {
        &s->strings,       &s->srclocs,      &s->thread_names, &s->plot_names,   &s->frame_names,
        &s->frames_seen,   &s->symbols_seen, &s->zone_counts,  &s->plot_points,  &s->frame_marks,
        &s->frame_last,    &s->live,         &s->pool_allocs,  &s->pool_frees,   &s->pool_last,
        &s->fibers,        &s->in_fiber,     &s->lock_waiting, &s->file_keys,    &s->code_asked,
        &s->sources_asked, &s->source_names, &s->thread_hints, &s->sections_open};
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
        bt_ts_map_free(maps[i]);
    for (size_t i = 0; i < s->texts_count; i++)
        free(s->texts[i]);
    free(s->texts);
    for (size_t i = 0; i < s->payloads_count; i++)
        free(s->payloads[i]);
    free(s->payloads);
    free(s->payload_lens);
    free(s->srcloc_info);
    free(s->threads);
    s->texts = NULL;
    s->payloads = NULL;
    s->threads = NULL;
    s->srcloc_info = NULL;
}

const char *bt_ts_string(const struct bt_test_server *s, uint64_t key)
{
    uint64_t v = bt_ts_map_value(&s->strings, key);
    return v && v != UINT64_MAX ? s->texts[v - 1] : NULL;
}

int bt_ts_saw_fiber(const struct bt_test_server *s, const char *name)
{
    for (size_t i = 0; i < s->fibers.cap; i++) {
        uint64_t v = s->fibers.used[i] ? s->fibers.values[i] : 0;
        if (v && v != UINT64_MAX && strcmp(s->texts[v - 1], name) == 0)
            return 1;
    }
    return 0;
}

/* Name a zone shows in the profiler: custom name, else function. */
static const char *zone_name(const struct bt_test_server *s, uint64_t key)
{
    if (key >> 63) { /* payload: color, line, function NUL, file NUL, name */
        size_t i = ~key;
        const char *p = s->payloads[i] + 8;
        size_t len = s->payload_lens[i];
        const char *file = p + strlen(p) + 1;
        const char *name = file + strlen(file) + 1;
        size_t name_len = len - (size_t)(name - s->payloads[i]);
        static char buf[256];
        if (name_len == 0)
            return p;
        snprintf(buf, sizeof(buf), "%.*s", (int)name_len, name);
        return buf;
    }
    uint64_t v = bt_ts_map_value(&s->srclocs, key);
    if (!v || v == UINT64_MAX)
        return NULL;
    const char *name = bt_ts_string(s, s->srcloc_info[v - 1].name);
    return name ? name : bt_ts_string(s, s->srcloc_info[v - 1].function);
}

uint64_t bt_ts_zones_named(const struct bt_test_server *s, const char *name)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->zone_counts.cap; i++) {
        if (!s->zone_counts.used[i])
            continue;
        const char *n = zone_name(s, s->zone_counts.keys[i]);
        if (n && strcmp(n, name) == 0)
            total += s->zone_counts.values[i];
    }
    return total;
}

static uint64_t by_name(const struct bt_ts_map *counts, const struct bt_ts_map *names,
                        const struct bt_test_server *s, const char *name)
{
    uint64_t total = 0;
    for (size_t i = 0; i < counts->cap; i++) {
        if (!counts->used[i])
            continue;
        uint64_t key = counts->keys[i];
        const char *n = NULL;
        if (key) {
            uint64_t v = names ? bt_ts_map_value(names, key) : bt_ts_map_value(&s->strings, key);
            n = v && v != UINT64_MAX ? s->texts[v - 1] : NULL;
        }
        if ((name == NULL && key == 0) || (name && n && strcmp(n, name) == 0))
            total += counts->values[i];
    }
    return total;
}

uint64_t bt_ts_plot_points(const struct bt_test_server *s, const char *name)
{
    return by_name(&s->plot_points, &s->plot_names, s, name);
}

uint64_t bt_ts_frame_marks(const struct bt_test_server *s, const char *name)
{
    return by_name(&s->frame_marks, &s->frame_names, s, name);
}

uint64_t bt_ts_pool_allocs(const struct bt_test_server *s, const char *pool)
{
    return by_name(&s->pool_allocs, NULL, s, pool);
}

uint64_t bt_ts_pool_frees(const struct bt_test_server *s, const char *pool)
{
    return by_name(&s->pool_frees, NULL, s, pool);
}

const char *bt_ts_thread_name(const struct bt_test_server *s, uint32_t tid)
{
    uint64_t v = bt_ts_map_value(&s->thread_names, tid);
    return v ? s->texts[v - 1] : NULL;
}

int32_t bt_ts_thread_hint(const struct bt_test_server *s, const char *thread_name)
{
    for (size_t i = 0; i < s->thread_hints.cap; i++) {
        if (!s->thread_hints.used[i])
            continue;
        const char *name = bt_ts_thread_name(s, (uint32_t)s->thread_hints.keys[i]);
        if (name && strcmp(name, thread_name) == 0)
            return (int32_t)(uint32_t)s->thread_hints.values[i];
    }
    return 0;
}

uint64_t bt_ts_samples_in(const struct bt_test_server *s, const char *function)
{
    return by_name(&s->sys.top_samples, &s->frame_functions, s, function);
}

uint64_t bt_ts_callstacks_starting_in(const struct bt_test_server *s, const char *function)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->first_frames.cap; i++) {
        if (!s->first_frames.used[i])
            continue;
        uint64_t v = bt_ts_map_value(&s->frame_functions, s->first_frames.keys[i]);
        if (v && strcmp(s->texts[v - 1], function) == 0)
            total += s->first_frames.values[i];
    }
    return total;
}

int bt_ts_saw_text_ending(const struct bt_test_server *s, const char *suffix)
{
    size_t n = strlen(suffix);
    for (size_t i = 0; i < s->texts_count; i++) {
        size_t len = strlen(s->texts[i]);
        if (len >= n && strcmp(s->texts[i] + len - n, suffix) == 0)
            return 1;
    }
    return 0;
}

int bt_ts_saw_text_containing(const struct bt_test_server *s, const char *part)
{
    for (size_t i = 0; i < s->texts_count; i++)
        if (strstr(s->texts[i], part))
            return 1;
    return 0;
}

int bt_ts_saw_text(const struct bt_test_server *s, const char *text)
{
    for (size_t i = 0; i < s->texts_count; i++)
        if (strcmp(s->texts[i], text) == 0)
            return 1;
    return 0;
}

int bt_ts_sink_write(void *ctx, const void *data, size_t len)
{
    struct bt_ts_sink *s = ctx;
    if (s->len + len > s->cap) {
        size_t cap = (s->len + len) * 2;
        uint8_t *p = realloc(s->data, cap);
        if (!p)
            return -1;
        s->data = p;
        s->cap = cap;
    }
    memcpy(s->data + s->len, data, len);
    s->len += len;
    s->writes++;
    return 0;
}

uint8_t *bt_ts_read_file(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1)) &&
        fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = buf ? (size_t)size : 0;
    return buf;
}
