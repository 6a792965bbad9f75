/* Perfetto's own trace format (a protobuf `Trace`: a stream of TracePackets),
 * which the Perfetto UI opens without the JSON importer's cost: zones become
 * slices on their thread's track (begin and end events, names interned once),
 * messages instant events on a track of their own, frames slices on a track
 * per frame set, plots counter tracks. The packets are deflated in chunks
 * into `compressed_packets` (the one compression Perfetto reads inside a
 * trace), so the file stays near the size of the .tracy file; memory is
 * one chunk, whatever the trace's size. Encoded here directly: the handful
 * of messages and fields below (numbers from Perfetto's published .proto
 * files) need no protobuf library. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "btr_report.h"

/* Field numbers. Trace: */
#define TRACE_PACKET 1
/* TracePacket: */
#define PKT_TIMESTAMP                 8
#define PKT_SEQUENCE_ID               10
#define PKT_TRACK_EVENT               11
#define PKT_INTERNED_DATA             12
#define PKT_SEQUENCE_FLAGS            13
#define PKT_COMPRESSED_PACKETS        50
#define PKT_TRACK_DESCRIPTOR          60
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE   2
/* TrackDescriptor, and its process, thread and counter parts: */
#define TD_UUID        1
#define TD_NAME        2
#define TD_PROCESS     3
#define TD_THREAD      4
#define TD_PARENT_UUID 5
#define TD_COUNTER     8
#define PD_PID         1
#define PD_NAME        6
#define THD_PID        1
#define THD_TID        2
#define THD_NAME       5
/* TrackEvent: */
#define TE_TYPE          9
#define TE_NAME_IID      10
#define TE_TRACK_UUID    11
#define TE_NAME          23
#define TE_DOUBLE_VALUE  44
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END   2
#define TYPE_INSTANT     3
#define TYPE_COUNTER     4
/* InternedData.event_names, EventName: */
#define ID_EVENT_NAMES 2
#define EN_IID         1
#define EN_NAME        2

#define WIRE_VARINT  0
#define WIRE_FIXED64 1
#define WIRE_BYTES   2

/* The one packet sequence of this file (interned names are per sequence). */
#define SEQUENCE_ID 1
/* Track uuids: the process, the messages, frame sets and plots; a thread's
 * is its id's, moved past those. */
#define UUID_PROCESS  1
#define UUID_MESSAGES 2
#define UUID_FRAMES   0x100000000ull /* + frame set index */
#define UUID_PLOTS    0x200000000ull /* + plot index */
#define UUID_THREADS  0x300000000ull /* + thread id */

/* Packets gathered before they are deflated into one compressed packet. */
#define CHUNK_BYTES (1u << 20)

struct buf {
    uint8_t *p;
    size_t len, cap;
    int failed;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void varint(struct buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
        v >>= 7;
    } while (v);
    put(b, tmp, n);
}

static void key(struct buf *b, unsigned field, unsigned wire)
{
    varint(b, (uint64_t)field << 3 | wire);
}

static void f_varint(struct buf *b, unsigned field, uint64_t v)
{
    key(b, field, WIRE_VARINT);
    varint(b, v);
}

static void f_bytes(struct buf *b, unsigned field, const void *p, size_t n)
{
    key(b, field, WIRE_BYTES);
    varint(b, n);
    put(b, p, n);
}

static void f_string(struct buf *b, unsigned field, const char *s)
{
    f_bytes(b, field, s, strlen(s));
}

static void f_double(struct buf *b, unsigned field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(bits >> (8 * i));
    key(b, field, WIRE_FIXED64);
    put(b, le, sizeof le);
}

/* A nested message: its bytes, built in m, as field `field` of b. */
static void f_message(struct buf *b, unsigned field, struct buf *m)
{
    if (m->failed)
        b->failed = 1;
    f_bytes(b, field, m->p, m->len);
    m->len = 0;
}

struct perfetto {
    FILE *out;
    struct buf chunk;               /* serialized packets (Trace fields), not yet deflated */
    struct buf pkt, msg, sub, sub2; /* scratch for one packet and its nested messages */
    uint8_t *zbuf;
    size_t zcap;
    int first, started, in_thread, write_failed;
    uint64_t zones, events;
    struct btc_vec named;      /* u8 per interned name id: 1 once sent */
    struct btc_vec stack;      /* i64 end times of the open slices of the current thread */
    uint64_t thread;           /* the thread whose zones come now */
    int64_t last;              /* the latest time shown on its track */
    struct btc_vec last_start; /* i64 per frame set: start of its pending frame, -1 none */
};

/* Deflates the gathered packets into one compressed packet of the file. */
static void flush_chunk(struct perfetto *p)
{
    if (!p->chunk.len || p->write_failed)
        return;
    uLongf zlen = compressBound(p->chunk.len);
    if (zlen > p->zcap) {
        uint8_t *z = realloc(p->zbuf, zlen);
        if (!z) {
            p->write_failed = 1;
            return;
        }
        p->zbuf = z;
        p->zcap = zlen;
    }
    if (compress2(p->zbuf, &zlen, p->chunk.p, p->chunk.len, Z_DEFAULT_COMPRESSION) != Z_OK) {
        p->write_failed = 1;
        return;
    }
    struct buf outer = {0};
    f_bytes(&outer, PKT_COMPRESSED_PACKETS, p->zbuf, zlen);
    struct buf framed = {0};
    key(&framed, TRACE_PACKET, WIRE_BYTES);
    varint(&framed, outer.len);
    if (outer.failed || framed.failed || fwrite(framed.p, 1, framed.len, p->out) != framed.len ||
        fwrite(outer.p, 1, outer.len, p->out) != outer.len)
        p->write_failed = 1;
    free(outer.p);
    free(framed.p);
    p->chunk.len = 0;
}

/* Ends the packet built in p->pkt: on the file's sequence, the first one
 * clearing its incremental state (the interned names). */
static void end_packet(struct perfetto *p, int uses_interned)
{
    f_varint(&p->pkt, PKT_SEQUENCE_ID, SEQUENCE_ID);
    if (p->first)
        f_varint(&p->pkt, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    else if (uses_interned)
        f_varint(&p->pkt, PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    p->first = 0;
    f_message(&p->chunk, TRACE_PACKET, &p->pkt);
    p->events++;
    if (p->chunk.len >= CHUNK_BYTES)
        flush_chunk(p);
}

static void describe(struct perfetto *p, uint64_t uuid, uint64_t parent, const char *name,
                     int counter)
{
    f_varint(&p->msg, TD_UUID, uuid);
    if (parent)
        f_varint(&p->msg, TD_PARENT_UUID, parent);
    f_string(&p->msg, TD_NAME, name);
    if (counter)
        f_message(&p->msg, TD_COUNTER, &p->sub); /* empty: a counter track */
    f_message(&p->pkt, PKT_TRACK_DESCRIPTOR, &p->msg);
    end_packet(p, 0);
}

static void describe_process(struct perfetto *p, const struct btc_trace *t)
{
    f_varint(&p->msg, TD_UUID, UUID_PROCESS);
    f_varint(&p->sub, PD_PID, (uint64_t)(int32_t)t->pid);
    f_string(&p->sub, PD_NAME, t->program);
    f_message(&p->msg, TD_PROCESS, &p->sub);
    f_message(&p->pkt, PKT_TRACK_DESCRIPTOR, &p->msg);
    end_packet(p, 0);
    describe(p, UUID_MESSAGES, UUID_PROCESS, "Messages", 0);
}

/* The process and the messages' track, described before anything on them:
 * the reader has the file's header (pid, program) by the first callback. */
static void start(struct perfetto *p, const struct btc_trace *t)
{
    if (p->started)
        return;
    p->started = 1;
    describe_process(p, t);
}

static void describe_thread(struct perfetto *p, const struct btc_trace *t, uint64_t id)
{
    const char *name = "";
    for (size_t i = t->threads.len; i-- > 0;) {
        const struct btc_read_thread *th = btc_vec_at(&t->threads, i);
        if (th->id == id) {
            name = th->name >= 0 ? btc_trace_string(t, th->name) : "";
            break;
        }
    }
    f_varint(&p->msg, TD_UUID, UUID_THREADS + id);
    f_varint(&p->msg, TD_PARENT_UUID, UUID_PROCESS);
    f_varint(&p->sub, THD_PID, (uint64_t)(int32_t)t->pid);
    f_varint(&p->sub, THD_TID, (uint64_t)(int32_t)id);
    if (name[0])
        f_string(&p->sub, THD_NAME, name);
    f_message(&p->msg, TD_THREAD, &p->sub);
    f_message(&p->pkt, PKT_TRACK_DESCRIPTOR, &p->msg);
    end_packet(p, 0);
}

/* A slice's begin or end on a track; a begin names it by interned id. */
static void slice_event(struct perfetto *p, uint64_t track, int type, int64_t time, uint64_t iid,
                        const char *name)
{
    f_varint(&p->pkt, PKT_TIMESTAMP, (uint64_t)(time < 0 ? 0 : time));
    f_varint(&p->msg, TE_TYPE, (uint64_t)type);
    f_varint(&p->msg, TE_TRACK_UUID, track);
    if (iid)
        f_varint(&p->msg, TE_NAME_IID, iid);
    else if (name)
        f_string(&p->msg, TE_NAME, name);
    f_message(&p->pkt, PKT_TRACK_EVENT, &p->msg);
    end_packet(p, iid != 0);
}

/* Closes the open slices of the current thread down to `depth` open ones,
 * each at its end but never before what its track already showed: a zone
 * that overlaps the one after it (which the file allows) must still nest. */
static void close_slices(struct perfetto *p, size_t depth, int64_t before)
{
    while (p->stack.len > depth) {
        int64_t end = *(int64_t *)btc_vec_at(&p->stack, p->stack.len - 1);
        if (end > before)
            end = before;
        if (end < p->last)
            end = p->last;
        slice_event(p, UUID_THREADS + p->thread, TYPE_SLICE_END, end, 0, NULL);
        p->last = end;
        p->stack.len--;
    }
}

/* A source location's id in the interned names (static and client-supplied
 * ones both, as positive ids), sent along with the first slice naming it. */
static uint64_t intern(struct perfetto *p, const struct btc_trace *t, int16_t srcloc)
{
    uint64_t iid = (uint64_t)((int32_t)srcloc + 32769);
    while (p->named.len <= iid) {
        uint8_t *no = btc_vec_push(&p->named);
        if (!no)
            return 0;
        *no = 0;
    }
    uint8_t *sent = btc_vec_at(&p->named, iid);
    if (!*sent) {
        const struct btc_read_srcloc *loc = btc_trace_srcloc(t, srcloc);
        const char *name =
            loc ? btr_demangle(btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function))
                : "?";
        f_varint(&p->sub2, EN_IID, iid);
        f_string(&p->sub2, EN_NAME, name);
        f_message(&p->sub, ID_EVENT_NAMES, &p->sub2);
        f_message(&p->pkt, PKT_INTERNED_DATA, &p->sub);
        *sent = 1;
    }
    return iid;
}

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    struct perfetto *p = ctx;
    if (z->end < z->start)
        return 0; /* never ended: no duration to show */
    start(p, t);
    if (z->thread_id != p->thread || !p->in_thread) {
        close_slices(p, 0, INT64_MAX);
        p->thread = z->thread_id;
        p->in_thread = 1;
        p->last = INT64_MIN;
        describe_thread(p, t, z->thread_id);
    }
    /* Depth first: the slices open deeper than this zone's parent were its
     * predecessors' (siblings of it or of its parents). Its end is kept
     * within its parent's, its start after what the track showed. */
    close_slices(p, z->depth, z->start);
    int64_t begin = z->start > p->last ? z->start : p->last, end = z->end;
    if (p->stack.len && end > *(int64_t *)btc_vec_at(&p->stack, p->stack.len - 1))
        end = *(int64_t *)btc_vec_at(&p->stack, p->stack.len - 1);
    int64_t *slot = btc_vec_push(&p->stack);
    if (!slot)
        return BTC_ERR_NOMEM;
    *slot = end < begin ? begin : end;
    uint64_t iid = intern(p, t, z->srcloc);
    if (!iid)
        return BTC_ERR_NOMEM;
    slice_event(p, UUID_THREADS + z->thread_id, TYPE_SLICE_BEGIN, begin, iid, NULL);
    p->last = begin;
    p->zones++;
    return p->pkt.failed || p->chunk.failed ? BTC_ERR_NOMEM : 0;
}

static int on_message(void *ctx, const struct btc_trace *t, const struct btc_read_message *m)
{
    struct perfetto *p = ctx;
    start(p, t);
    slice_event(p, UUID_MESSAGES, TYPE_INSTANT, m->time, 0, m->text);
    return 0;
}

static void frame(struct perfetto *p, uint32_t set, int64_t start, int64_t end)
{
    slice_event(p, UUID_FRAMES + set, TYPE_SLICE_BEGIN, start, 0, "frame");
    slice_event(p, UUID_FRAMES + set, TYPE_SLICE_END, end, 0, NULL);
}

/* A continuous set's frame lasts until the next one starts. */
static int on_frame(void *ctx, const struct btc_trace *t, const struct btc_read_frame *f)
{
    struct perfetto *p = ctx;
    start(p, t);
    if (f->end >= 0) {
        if (f->end >= f->start)
            frame(p, f->set, f->start, f->end);
        return 0;
    }
    while (p->last_start.len <= f->set) {
        int64_t *none = btc_vec_push(&p->last_start);
        if (!none)
            return BTC_ERR_NOMEM;
        *none = -1;
    }
    int64_t *prev = btc_vec_at(&p->last_start, f->set);
    if (*prev >= 0 && f->start >= *prev)
        frame(p, f->set, *prev, f->start);
    *prev = f->start;
    return 0;
}

static int on_point(void *ctx, const struct btc_trace *t, const struct btc_read_point *pt)
{
    struct perfetto *p = ctx;
    start(p, t);
    if (!isfinite(pt->value))
        return 0;
    f_varint(&p->pkt, PKT_TIMESTAMP, (uint64_t)(pt->time < 0 ? 0 : pt->time));
    f_varint(&p->msg, TE_TYPE, TYPE_COUNTER);
    f_varint(&p->msg, TE_TRACK_UUID, UUID_PLOTS + pt->plot);
    f_double(&p->msg, TE_DOUBLE_VALUE, pt->value);
    f_message(&p->pkt, PKT_TRACK_EVENT, &p->msg);
    end_packet(p, 0);
    return 0;
}

/* The tracks named only once the whole file was read. */
static void describe_the_rest(struct perfetto *p, const struct btc_trace *t)
{
    char label[600];
    for (size_t i = 0; i < t->framesets.len; i++) {
        const struct btc_read_frameset *fs = btc_vec_at(&t->framesets, i);
        if (!fs->frames)
            continue;
        snprintf(label, sizeof label, "Frames: %s",
                 fs->name >= 0 ? btc_trace_string(t, fs->name) : "default");
        describe(p, UUID_FRAMES + i, UUID_PROCESS, label, 0);
    }
    for (size_t i = 0; i < t->plots.len; i++) {
        const struct btc_read_plot *pl = btc_vec_at(&t->plots, i);
        const char *name = pl->name >= 0   ? btc_trace_string(t, pl->name)
                           : pl->type == 2 ? "CPU usage"
                                           : "plot";
        describe(p, UUID_PLOTS + i, UUID_PROCESS, name, 1);
    }
}

int btr_perfetto_export(const char *path, FILE *out, uint64_t *zones_written, char *err,
                        size_t errlen)
{
    struct perfetto p = {.out = out, .first = 1};
    btc_vec_init(&p.named, 1);
    btc_vec_init(&p.stack, sizeof(int64_t));
    btc_vec_init(&p.last_start, sizeof(int64_t));
    struct btc_trace t;
    const struct btc_read_more more = {.frame = on_frame, .point = on_point};
    int rc = btc_tracy_read_more(path, &t, on_zone, on_message, &more, &p, err, errlen);
    if (rc >= 0) {
        close_slices(&p, 0, INT64_MAX);
        start(&p, &t);
        describe_the_rest(&p, &t);
        flush_chunk(&p);
        if (p.pkt.failed || p.chunk.failed || p.msg.failed || p.sub.failed || p.sub2.failed) {
            snprintf(err, errlen, "out of memory for the Perfetto packets");
            rc = BTC_ERR_NOMEM;
        } else if (p.write_failed) {
            snprintf(err, errlen, "writing or compressing the Perfetto packets failed");
            rc = BTC_ERR_IO;
        }
    }
    if (zones_written)
        *zones_written = p.zones;
    free(p.chunk.p);
    free(p.pkt.p);
    free(p.msg.p);
    free(p.sub.p);
    free(p.sub2.p);
    free(p.zbuf);
    btc_vec_free(&p.named);
    btc_vec_free(&p.stack);
    btc_vec_free(&p.last_start);
    btc_trace_free(&t);
    return rc;
}
