/* Cuts the decompressed Tracy stream into events: size by type (fixed, staged
 * string or keyed string), the four time references with their compact
 * forms, and the pending single/second strings consumed by later events. */
#include "btc_decode.h"

#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btc_util.h"

int btc_welcome_parse(const uint8_t *buf, size_t n, struct btc_welcome *w)
{
    if (n < BT_WELCOME_SIZE)
        return BTC_ERR_PROTOCOL;
    memset(w, 0, sizeof *w);
    uint64_t bits = bt_wire_get_u64(buf + BT_WELCOME_OFF_TIMER_MUL);
    memcpy(&w->timer_mul, &bits, sizeof bits);
    w->init_begin = (int64_t)bt_wire_get_u64(buf + BT_WELCOME_OFF_INIT_BEGIN);
    w->init_end = (int64_t)bt_wire_get_u64(buf + BT_WELCOME_OFF_INIT_END);
    w->resolution = bt_wire_get_u64(buf + BT_WELCOME_OFF_RESOLUTION);
    w->epoch = bt_wire_get_u64(buf + BT_WELCOME_OFF_EPOCH);
    w->exec_time = bt_wire_get_u64(buf + BT_WELCOME_OFF_EXEC_TIME);
    w->pid = bt_wire_get_u64(buf + BT_WELCOME_OFF_PID);
    w->sampling_period = (int64_t)bt_wire_get_u64(buf + BT_WELCOME_OFF_SAMPLING);
    w->flags = buf[BT_WELCOME_OFF_FLAGS];
    w->cpu_arch = buf[BT_WELCOME_OFF_CPU_ARCH];
    memcpy(w->cpu_vendor, buf + BT_WELCOME_OFF_CPU_VENDOR, BT_WELCOME_CPU_VENDOR_SIZE);
    w->cpu_id = bt_wire_get_u32(buf + BT_WELCOME_OFF_CPU_ID);
    memcpy(w->program, buf + BT_WELCOME_OFF_PROGRAM_NAME, BT_WELCOME_PROGRAM_NAME_SIZE);
    memcpy(w->host_info, buf + BT_WELCOME_OFF_HOST_INFO, BT_WELCOME_HOST_INFO_SIZE);
    /* A timer multiplier that is not a positive finite number would turn
     * every time into garbage; refuse it here rather than write nonsense. */
    if (!(w->timer_mul > 0 && w->timer_mul < 1e9))
        return BTC_ERR_PROTOCOL;
    return BTC_OK;
}

enum time_kind { T_NONE, T_ABS, T_THR, T_SER, T_CTX, T_GPU };
enum time_form { F_PLAIN, F_WIDE, F_MID, F_SHORT };
static void event_time_layout(unsigned type, enum time_kind *kind, unsigned *off,
                              enum time_form *form);
static int consumes_single(unsigned type);

int btc_decoder_init(struct btc_decoder *d, const struct btc_welcome *w)
{
    memset(d, 0, sizeof *d);
    d->timer_mul = w->timer_mul;
    d->init_begin = w->init_begin;
    d->lz4 = LZ4_createStreamDecode();
    d->ring = malloc(BT_WIRE_RING_FRAMES * BT_WIRE_FRAME_SIZE + 1);
    d->single = malloc(BT_WIRE_LONG_STRING_MAX + 1);
    d->second = malloc(BT_WIRE_LONG_STRING_MAX + 1);
    if (!d->lz4 || !d->ring || !d->single || !d->second) {
        btc_decoder_free(d);
        return BTC_ERR_NOMEM;
    }
    LZ4_setStreamDecode(d->lz4, NULL, 0);
    for (unsigned t = 0; t < BT_EV_COUNT; t++) {
        enum time_kind kind;
        unsigned off;
        enum time_form form;
        event_time_layout(t, &kind, &off, &form);
        d->layout[t][0] = (uint8_t)kind;
        d->layout[t][1] = (uint8_t)off;
        d->layout[t][2] = (uint8_t)form;
        d->layout[t][3] = (uint8_t)consumes_single(t);
    }
    return BTC_OK;
}

void btc_decoder_free(struct btc_decoder *d)
{
    if (d->lz4)
        LZ4_freeStreamDecode(d->lz4);
    free(d->ring);
    free(d->single);
    free(d->second);
    free(d->canon);
    d->canon = NULL;
    d->lz4 = NULL;
    d->ring = NULL;
    d->single = d->second = NULL;
}

void btc_lz4_failure(uint64_t frame, uint64_t stream_off, size_t n, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "frame %llu at stream offset %llu: LZ4 block of %zu bytes does not decompress "
             "(expected at most %u bytes of events)",
             (unsigned long long)frame, (unsigned long long)stream_off, n,
             (unsigned)BT_WIRE_FRAME_SIZE);
}

/* An older protocol's events grow by at most a third in 0.14.0's form
 * (CpuTopology 13 -> 17 bytes); room for half again. */
#define CANON_CAP (BT_WIRE_FRAME_SIZE + BT_WIRE_FRAME_SIZE / 2 + BT_PROTO_EVENT_MAX)

int btc_decoder_set_protocol(struct btc_decoder *d, const struct bt_proto *p)
{
    free(d->canon);
    d->canon = NULL;
    d->proto = NULL;
    if (!p || p == bt_proto_get(BT_WIRE_PROTOCOL_VERSION))
        return BTC_OK;
    d->canon = malloc(CANON_CAP);
    if (!d->canon)
        return BTC_ERR_NOMEM;
    d->proto = p;
    return BTC_OK;
}

int btc_decoder_inflated_frame(struct btc_decoder *d, const uint8_t *events, size_t size,
                               size_t wire_bytes, btc_event_fn fn, void *ctx, char *err,
                               size_t errlen)
{
    d->compressed_bytes += wire_bytes;
    if (d->proto) {
        struct bt_proto_fault f;
        size_t n = size > BT_WIRE_FRAME_SIZE
                       ? (size_t)-1
                       : bt_proto_up_events(d->proto, events, size, d->canon, CANON_CAP, &f);
        if (n == (size_t)-1) {
            if (size > BT_WIRE_FRAME_SIZE)
                f = (struct bt_proto_fault){0, events[0], "frame larger than a frame may be"};
            unsigned canon = d->proto->to_canon[f.type];
            const char *name = canon != BT_PROTO_NONE ? bt_wire_event_name(canon) : NULL;
            snprintf(err, errlen,
                     "frame %llu, byte %zu of its events: event type %u (%s) %s: the client "
                     "said it speaks Tracy protocol %s (%s)",
                     (unsigned long long)d->frames, f.offset, f.type, name ? name : "no such type",
                     f.what, d->proto->name, d->proto->releases);
            d->frames++;
            return BTC_ERR_PROTOCOL;
        }
        events = d->canon;
        size = n;
    }
    int rc = btc_decoder_events(d, events, size, fn, ctx, err, errlen);
    d->frames++;
    return rc;
}

int btc_decoder_frame(struct btc_decoder *d, const uint8_t *block, size_t n, btc_event_fn fn,
                      void *ctx, char *err, size_t errlen)
{
    if (n == 0 || n > BT_WIRE_LZ4_BOUND) {
        snprintf(err, errlen,
                 "frame %llu at stream offset %llu: compressed size %zu, expected 1..%u",
                 (unsigned long long)d->frames, (unsigned long long)d->stream_off, n,
                 (unsigned)BT_WIRE_LZ4_BOUND);
        return BTC_ERR_PROTOCOL;
    }
    /* Same ring as upstream's server: LZ4 matches may reach 64 KiB back into
     * earlier frames, so decoded frames must stay where they were put. */
    int sz =
        LZ4_decompress_safe_continue(d->lz4, (const char *)block, (char *)d->ring + d->ring_off,
                                     (int)n, (int)BT_WIRE_FRAME_SIZE);
    if (sz < 0) {
        btc_lz4_failure(d->frames, d->stream_off, n, err, errlen);
        return BTC_ERR_PROTOCOL;
    }
    int rc = btc_decoder_inflated_frame(d, d->ring + d->ring_off, (size_t)sz, n + 4, fn, ctx, err,
                                        errlen);
    d->ring_off += (size_t)sz;
    if (d->ring_off > (BT_WIRE_RING_FRAMES - 1) * BT_WIRE_FRAME_SIZE)
        d->ring_off = 0;
    return rc;
}

/* Where an event's time sits, which reference it is a delta against, and its
 * compact form (protocol notes 4.3). */
static void event_time_layout(unsigned type, enum time_kind *kind, unsigned *off,
                              enum time_form *form)
{
    *kind = T_NONE;
    *off = 1;
    *form = F_PLAIN;
    switch (type) {
    case BT_EV_ZONE_BEGIN:
    case BT_EV_ZONE_BEGIN_CALLSTACK:
    case BT_EV_ZONE_END:
        *kind = T_THR;
        *form = F_WIDE;
        break;
    case BT_EV_ZONE_BEGIN32:
    case BT_EV_ZONE_BEGIN_CALLSTACK32:
    case BT_EV_ZONE_END32:
        *kind = T_THR;
        *form = F_MID;
        break;
    case BT_EV_ZONE_BEGIN16:
    case BT_EV_ZONE_BEGIN_CALLSTACK16:
    case BT_EV_ZONE_END16:
        *kind = T_THR;
        *form = F_SHORT;
        break;
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_END:
    case BT_EV_FIBER_ENTER:
    case BT_EV_FIBER_LEAVE:
    case BT_EV_SECTION_ENTER:
    case BT_EV_SECTION_LEAVE:
        *kind = T_THR;
        break;
    case BT_EV_PLOT_DATA_INT:
    case BT_EV_PLOT_DATA_FLOAT:
    case BT_EV_PLOT_DATA_DOUBLE:
        *kind = T_THR;
        *off = 9;
        break;
    case BT_EV_LOCK_WAIT:
    case BT_EV_LOCK_OBTAIN:
    case BT_EV_LOCK_SHARED_WAIT:
    case BT_EV_LOCK_SHARED_OBTAIN:
        *kind = T_SER;
        *off = 9;
        break;
    case BT_EV_LOCK_RELEASE:
    case BT_EV_LOCK_SHARED_RELEASE:
        *kind = T_SER;
        *off = 5;
        break;
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
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_END_SERIAL:
        *kind = T_SER;
        break;
    case BT_EV_CALLSTACK_SAMPLE:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH:
        *kind = T_CTX;
        *off = 5;
        *form = F_WIDE;
        break;
    case BT_EV_CALLSTACK_SAMPLE32:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH32:
        *kind = T_CTX;
        *off = 5;
        *form = F_MID;
        break;
    case BT_EV_CALLSTACK_SAMPLE16:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16:
        *kind = T_CTX;
        *off = 5;
        *form = F_SHORT;
        break;
    case BT_EV_CONTEXT_SWITCH:
    case BT_EV_THREAD_WAKEUP:
        *kind = T_CTX;
        break;
    case BT_EV_GPU_TIME:
        *kind = T_GPU;
        break;
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_CALLSTACK:
    case BT_EV_MESSAGE_COLOR_CALLSTACK:
    case BT_EV_MESSAGE_APP_INFO:
    case BT_EV_CRASH_REPORT:
    case BT_EV_FRAME_MARK_MSG:
    case BT_EV_FRAME_MARK_MSG_START:
    case BT_EV_FRAME_MARK_MSG_END:
    case BT_EV_MESSAGE_LITERAL:
    case BT_EV_MESSAGE_LITERAL_COLOR:
    case BT_EV_MESSAGE_LITERAL_CALLSTACK:
    case BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK:
    case BT_EV_GPU_NEW_CONTEXT:
    case BT_EV_SYS_TIME_REPORT:
    case BT_EV_SYS_POWER_REPORT:
        *kind = T_ABS;
        break;
    case BT_EV_FRAME_VSYNC:
    case BT_EV_LOCK_ANNOUNCE:
    case BT_EV_LOCK_TERMINATE:
        *kind = T_ABS;
        *off = 5;
        break;
    case BT_EV_HW_SAMPLE_CPU_CYCLE:
    case BT_EV_HW_SAMPLE_INSTRUCTION_RETIRED:
    case BT_EV_HW_SAMPLE_CACHE_REFERENCE:
    case BT_EV_HW_SAMPLE_CACHE_MISS:
    case BT_EV_HW_SAMPLE_BRANCH_RETIRED:
    case BT_EV_HW_SAMPLE_BRANCH_MISS:
        *kind = T_ABS;
        *off = 9;
        break;
    default:
        break;
    }
}

/* Events that take the staged single string (and, for CallstackFrame, the
 * second one too). */
static int consumes_single(unsigned type)
{
    switch (type) {
    case BT_EV_ZONE_TEXT:
    case BT_EV_ZONE_NAME:
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_CALLSTACK:
    case BT_EV_MESSAGE_COLOR_CALLSTACK:
    case BT_EV_MESSAGE_APP_INFO:
    case BT_EV_LOCK_NAME:
    case BT_EV_GPU_CONTEXT_NAME:
    case BT_EV_GPU_ANNOTATION_NAME:
    case BT_EV_CALLSTACK_FRAME_SIZE:
    case BT_EV_SYMBOL_INFORMATION:
    case BT_EV_SECTION_ENTER:
    case BT_EV_SECTION_SETUP:
    case BT_EV_CALLSTACK_FRAME:
        return 1;
    default:
        return 0;
    }
}

static int fail(const struct btc_decoder *d, uint64_t off, unsigned type, char *err, size_t errlen,
                const char *what)
{
    const char *name = bt_wire_event_name(type);
    snprintf(err, errlen, "stream offset %llu (frame %llu): event %s (%u): %s",
             (unsigned long long)off, (unsigned long long)d->frames, name ? name : "unknown", type,
             what);
    return BTC_ERR_PROTOCOL;
}

/* A time field in its compact form (protocol notes 4.3): the delta against
 * its reference, or the plain value. */
static inline int64_t read_time(const uint8_t *p, enum time_form form)
{
    if (form == F_SHORT)
        return bt_wire_get_u16(p);
    if (form == F_MID)
        return (int64_t)bt_wire_get_u32(p) + BT_WIRE_OFF16;
    int64_t v = (int64_t)bt_wire_get_u64(p);
    if (form == F_WIDE && v >= 0)
        v = (int64_t)((uint64_t)v + (uint64_t)BT_WIRE_OFF32);
    return v;
}

/* Zone begins and ends without callstack: the fast path's events. */
static inline int is_plain_zone(unsigned type)
{
    return type >= BT_EV_ZONE_BEGIN && type <= BT_EV_ZONE_END16 &&
           (type <= BT_EV_ZONE_BEGIN16 || type >= BT_EV_ZONE_END);
}

int btc_decoder_events(struct btc_decoder *d, const uint8_t *buf, size_t n, btc_event_fn fn,
                       void *ctx, char *err, size_t errlen)
{
    size_t pos = 0, refused = SIZE_MAX; /* refused: where the fast path gave up */
    while (pos < n) {
        const uint8_t *p = buf + pos;
        size_t left = n - pos;
        unsigned type = p[0];
        uint64_t off = d->stream_off + pos;
        char what[128];
        if (type >= BT_EV_COUNT) {
            snprintf(what, sizeof what, "unknown event type (expected a value below %u)",
                     (unsigned)BT_EV_COUNT);
            return fail(d, off, type, err, errlen, what);
        }
        if (d->zones.run && pos != refused && is_plain_zone(type) &&
            left >= bt_wire_event_size[type]) {
            /* Gather the run of whole zone events from here, with the
             * thread time reference each leaves behind. */
            struct btc_zone_op ops[BTC_ZONE_RUN_MAX];
            size_t at[BTC_ZONE_RUN_MAX + 1];
            int64_t ref[BTC_ZONE_RUN_MAX];
            int64_t ticks = d->ref_thr;
            size_t q = pos, k = 0;
            while (k < BTC_ZONE_RUN_MAX && q < n) {
                unsigned ty = buf[q];
                if (!is_plain_zone(ty) || n - q < bt_wire_event_size[ty])
                    break;
                size_t size = bt_wire_event_size[ty];
                int64_t v = read_time(buf + q + d->layout[ty][1], (enum time_form)d->layout[ty][2]);
                ticks = (int64_t)((uint64_t)ticks + (uint64_t)v);
                ops[k].time = btc_decoder_ns(d, ticks);
                ops[k].begin = ty <= BT_EV_ZONE_BEGIN16;
                ops[k].key = ops[k].begin ? bt_wire_get_u64(buf + q + size - 8) : 0;
                ref[k] = ticks;
                at[k++] = q;
                q += size;
            }
            at[k] = q;
            size_t took = d->zones.run(d->zones.ctx, ops, k);
            if (took) {
                d->ref_thr = ref[took - 1];
                d->events += took;
                pos = at[took];
            }
            /* The first event not taken goes the full way, once. */
            if (took < k)
                refused = pos;
            continue;
        }
        if (type == BT_EV_EXTERNAL_NAME_METADATA || type == BT_EV_SYMBOL_CODE_METADATA ||
            type == BT_EV_SOURCE_CODE_METADATA)
            return fail(d, off, type, err, errlen, "client-internal event on the wire");

        /* Field by field: an initializer zeroes the whole struct with a
         * string store, which costs more than the rest of a zone event. */
        struct btc_event ev;
        ev.type = (uint8_t)type;
        ev.p = p;
        ev.offset = off;
        ev.has_time = 0;
        ev.time = ev.ticks = 0;
        ev.str1 = ev.str2 = NULL;
        ev.str1_len = ev.str2_len = 0;
        ev.key = 0;
        ev.data = NULL;
        ev.data_len = 0;
        size_t size = bt_wire_event_size[type];
        if (type >= BT_EV_SINGLE_STRING_DATA && type <= BT_EV_SECOND_STRING_DATA8) {
            int is_long = type <= BT_EV_SECOND_STRING_DATA;
            size_t hdr = is_long ? 3 : 2;
            if (left < hdr)
                return fail(d, off, type, err, errlen, "string length cut off at frame end");
            size_t len = is_long ? (size_t)bt_wire_get_u16(p + 1) + BT_WIRE_LONG_STRING_MIN : p[1];
            /* The length field reaches past the staging buffers; the
             * client never sends more than BT_WIRE_LONG_STRING_MAX. */
            if (len > BT_WIRE_LONG_STRING_MAX) {
                snprintf(what, sizeof what, "string of %zu bytes, expected at most %u", len,
                         BT_WIRE_LONG_STRING_MAX);
                return fail(d, off, type, err, errlen, what);
            }
            if (left < hdr + len) {
                snprintf(what, sizeof what, "string of %zu bytes, only %zu left in the frame", len,
                         left - hdr);
                return fail(d, off, type, err, errlen, what);
            }
            int single = type == BT_EV_SINGLE_STRING_DATA || type == BT_EV_SINGLE_STRING_DATA8;
            if (single ? d->has_single : d->has_second)
                return fail(d, off, type, err, errlen,
                            "staged string arrived while the previous one was not consumed");
            memcpy(single ? d->single : d->second, p + hdr, len);
            if (single) {
                d->single_len = len;
                d->has_single = 1;
            } else {
                d->second_len = len;
                d->has_second = 1;
            }
            pos += hdr + len;
            d->events++;
            continue;
        }
        if (bt_wire_event_is_keyed(type)) {
            size_t lsz = bt_wire_event_has_long_length(type) ? 4 : 2;
            if (left < size + lsz)
                return fail(d, off, type, err, errlen, "key or length cut off at frame end");
            size_t len = lsz == 4 ? bt_wire_get_u32(p + size) : bt_wire_get_u16(p + size);
            if (left - size - lsz < len) {
                snprintf(what, sizeof what, "payload of %zu bytes, only %zu left in the frame", len,
                         left - size - lsz);
                return fail(d, off, type, err, errlen, what);
            }
            ev.key = bt_wire_get_u64(p + 1);
            ev.data = p + size + lsz;
            ev.data_len = len;
            size += lsz + len;
        } else if (left < size) {
            snprintf(what, sizeof what, "needs %zu bytes, only %zu left in the frame", size, left);
            return fail(d, off, type, err, errlen, what);
        }
        ev.size = size;

        enum time_kind kind = (enum time_kind)d->layout[type][0];
        unsigned toff = d->layout[type][1];
        enum time_form form = (enum time_form)d->layout[type][2];
        if (kind != T_NONE) {
            int64_t v = read_time(p + toff, form);
            /* Deltas wrap like the client's 64-bit arithmetic does. */
            int64_t *ref = kind == T_THR   ? &d->ref_thr
                           : kind == T_SER ? &d->ref_ser
                           : kind == T_CTX ? &d->ref_ctx
                           : kind == T_GPU ? &d->ref_gpu
                                           : NULL;
            int64_t ticks = v;
            if (ref) {
                ticks = (int64_t)((uint64_t)*ref + (uint64_t)v);
                *ref = ticks;
            }
            ev.ticks = ticks;
            ev.has_time = kind != T_GPU;
            ev.time = kind == T_GPU ? ticks : btc_decoder_ns(d, ticks);
        }
        if (type == BT_EV_THREAD_CONTEXT)
            d->ref_thr = 0;

        if (d->layout[type][3]) {
            if (!d->has_single)
                return fail(d, off, type, err, errlen,
                            "expected a staged string (SingleStringData) before this event");
            ev.str1 = d->single;
            ev.str1_len = d->single_len;
            d->has_single = 0;
            if (type == BT_EV_CALLSTACK_FRAME) {
                if (!d->has_second)
                    return fail(d, off, type, err, errlen,
                                "expected a staged second string (file name) before this event");
                ev.str2 = d->second;
                ev.str2_len = d->second_len;
                d->has_second = 0;
            }
        }
        d->events++;
        int rc = fn ? fn(ctx, &ev, err, errlen) : 0;
        if (rc < 0)
            return rc;
        pos += size;
    }
    d->stream_off += n;
    return BTC_OK;
}
