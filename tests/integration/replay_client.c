/* Fake Tracy client replaying a recorded upstream session: the recorded
 * stream is cut into data events and answer groups (a keyed string, a
 * source location, a callstack frame block, a symbol), data is re-sent in
 * fresh LZ4 frames and each query is answered from its group. */
#define _GNU_SOURCE
#include "replay_client.h"

#include <errno.h>
#include <lz4.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"

#define BATCH_TARGET (32u * 1024u)

struct group {
    size_t off, len; /* bytes in the decompressed recording */
    int answer;      /* query type it answers, -1 for data */
    uint64_t key;
    int zone_begins;
    unsigned events;             /* data events in it: one, or more when merged */
    size_t frame_off, frame_len; /* merged data: its LZ4 frame, made at load */
};

struct bt_replay {
    const struct bt_proto *proto; /* the protocol spoken */
    uint8_t welcome[1 + BT_WELCOME_SIZE];
    uint8_t *stream;
    size_t stream_len;
    uint8_t *frames; /* merged data groups' frames, ready to send */
    size_t frames_len;
    size_t *answer_index; /* open addressing over groups; SIZE_MAX = empty */
    size_t answer_mask;
    struct group *groups;
    size_t ngroups, cap_groups;
    int listen_fd;
    int fd;
    struct bt_replay_opts opts;
    uint64_t queries[BT_QUERY_COUNT];
    uint64_t sent;
    uint64_t zone_begins_sent;
    uint64_t frame_bytes;        /* frames sent, [u32 size][block] each, as a journal keeps them */
    uint64_t sources_unrecorded; /* source files asked that the recording has no answer for */
    double served;               /* s from the capture's connection to its Terminate query */
};

/* What the recorded capture asked, to pair answers that carry no key of
 * their own: the file name (a hash of it) each source-code query id stood
 * for. */
struct recorded_queries {
    uint64_t *source_ids, *source_names;
    size_t nsources;
};

static uint64_t name_hash(const uint8_t *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

/* A string sent in DataTransfer queries: its size (NUL included), then 12
 * bytes a part (8 in the pointer, 4 in the extra word). */
struct transfer {
    uint8_t buf[4096];
    size_t size, got;
};

static void transfer_part(struct transfer *t, const uint8_t *q)
{
    uint8_t chunk[12];
    memcpy(chunk, q + BT_QUERY_OFF_PTR, 8);
    memcpy(chunk + 8, q + BT_QUERY_OFF_EXTRA, 4);
    for (size_t i = 0; i < 12 && t->got < t->size; i++, t->got++)
        if (t->got < sizeof t->buf)
            t->buf[t->got] = chunk[i];
}

static uint64_t transfer_hash(const struct transfer *t)
{
    size_t n = t->got < sizeof t->buf ? t->got : sizeof t->buf;
    while (n && t->buf[n - 1] == 0)
        n--;
    return name_hash(t->buf, n);
}

static uint8_t *slurp(const char *dir, const char *name, size_t *len, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (!b)
        snprintf(err, errlen, "cannot read %s", path);
    *len = (size_t)n;
    return b;
}

/* Size of the event at p (staged strings and keyed strings included). */
static size_t event_size(const uint8_t *p, size_t left)
{
    unsigned t = p[0];
    if (t >= BT_EV_COUNT)
        return 0;
    if (t == BT_EV_SINGLE_STRING_DATA || t == BT_EV_SECOND_STRING_DATA)
        return left >= 3 ? 3 + (size_t)bt_wire_get_u16(p + 1) + BT_WIRE_LONG_STRING_MIN : 0;
    if (t == BT_EV_SINGLE_STRING_DATA8 || t == BT_EV_SECOND_STRING_DATA8)
        return left >= 2 ? 2 + (size_t)p[1] : 0;
    size_t fixed = bt_wire_event_size[t];
    if (bt_wire_event_is_keyed(t)) {
        if (bt_wire_event_has_long_length(t))
            return left >= fixed + 4 ? fixed + 4 + bt_wire_get_u32(p + fixed) : 0;
        return left >= fixed + 2 ? fixed + 2 + bt_wire_get_u16(p + fixed) : 0;
    }
    return fixed;
}

uint64_t bt_replay_hostile(uint64_t a)
{
    static const uint64_t tags[4] = {0, 0x9A3C000000000000ull, 0x8000000000000000ull,
                                     0x4000000000000000ull};
    return a ^ tags[(a >> 4) & 3];
}

/* Gives the recording's callstack addresses and allocation pointers their
 * hostile form, in place (0.14.0's event layout). */
static int make_hostile(uint8_t *stream, size_t len)
{
    uint64_t allocs = 0;
    for (size_t pos = 0; pos < len;) {
        uint8_t *p = stream + pos;
        size_t n = event_size(p, len - pos);
        if (!n || n > len - pos)
            return -1;
        unsigned t = p[0];
        if (t == BT_EV_CALLSTACK_PAYLOAD || t == BT_EV_CALLSTACK_ALLOC_PAYLOAD) {
            size_t head = bt_wire_event_size[t] + (bt_wire_event_has_long_length(t) ? 4 : 2);
            for (size_t k = head; k + 8 <= n; k += 8)
                bt_wire_put_u64(p + k, bt_replay_hostile(bt_wire_get_u64(p + k)));
        } else if (t >= BT_EV_MEM_ALLOC && t <= BT_EV_MEM_FREE_CALLSTACK_NAMED) {
            /* type, time (8), thread (4), pointer (8), then an allocation's
             * size (6) */
            uint64_t ptr = bt_wire_get_u64(p + 13);
            int alloc = t == BT_EV_MEM_ALLOC || t == BT_EV_MEM_ALLOC_NAMED ||
                        t == BT_EV_MEM_ALLOC_CALLSTACK || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED;
            if (alloc && allocs++ % 4 == 0) {
                bt_wire_put_u32(p + 21, UINT32_MAX);
                bt_wire_put_u16(p + 25, UINT16_MAX);
            }
            bt_wire_put_u64(p + 13, bt_replay_hostile(ptr));
        }
        pos += n;
    }
    return 0;
}

static int is_staged(unsigned t)
{
    return t >= BT_EV_SINGLE_STRING_DATA && t <= BT_EV_SECOND_STRING_DATA8;
}

static int push_group(struct bt_replay *r, size_t off, size_t len, int answer, uint64_t key, int zb)
{
    /* Without a pause to honour event by event, consecutive data events go
     * out together, a frame's worth at most, compressed once at load: the
     * replay then costs little beside the capture it measures. */
    struct group *last = r->ngroups ? &r->groups[r->ngroups - 1] : NULL;
    if (answer < 0 && last && last->answer < 0 && r->opts.pause_after <= 0 &&
        last->off + last->len == off && last->len + len <= BATCH_TARGET) {
        last->len += len;
        last->zone_begins += zb;
        last->events++;
        return 0;
    }
    if (r->ngroups == r->cap_groups) {
        size_t cap = r->cap_groups ? r->cap_groups * 2 : 1024;
        struct group *g = realloc(r->groups, cap * sizeof *g);
        if (!g)
            return -1;
        r->groups = g;
        r->cap_groups = cap;
    }
    r->groups[r->ngroups++] = (struct group){off, len, answer, key, zb, 1, 0, 0};
    return 0;
}

/* Compresses every merged data group into a frame of its own, ahead. */
static int precompress(struct bt_replay *r)
{
    size_t cap = 0;
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].answer < 0 && r->groups[i].events > 1)
            cap += 4 + (size_t)LZ4_compressBound(3 * (int)r->groups[i].len);
    if (cap == 0)
        return 0;
    r->frames = malloc(cap);
    if (!r->frames)
        return -1;
    for (size_t i = 0; i < r->ngroups; i++) {
        struct group *g = &r->groups[i];
        if (g->answer >= 0 || g->events <= 1)
            continue;
        const uint8_t *data = r->stream + g->off;
        size_t len = g->len;
        uint8_t *conv = NULL;
        if (r->proto != bt_proto_get(BT_WIRE_PROTOCOL_VERSION) && !r->opts.unconverted) {
            conv = malloc(3 * len + BT_PROTO_EVENT_MAX);
            len = conv ? bt_proto_down_events(r->proto, data, len, conv,
                                              3 * len + BT_PROTO_EVENT_MAX, NULL)
                       : (size_t)-1;
            if (len == (size_t)-1 || len > BT_WIRE_FRAME_SIZE) {
                free(conv);
                return -1;
            }
            data = conv;
        }
        int c = LZ4_compress_default((const char *)data, (char *)r->frames + r->frames_len + 4,
                                     (int)len, (int)(cap - r->frames_len - 4));
        free(conv);
        if (c <= 0)
            return -1;
        bt_wire_put_u32(r->frames + r->frames_len, (uint32_t)c);
        g->frame_off = r->frames_len;
        g->frame_len = 4 + (size_t)c;
        r->frames_len += g->frame_len;
    }
    return 0;
}

static uint64_t source_name(const struct recorded_queries *rq, uint64_t id)
{
    for (size_t i = 0; i < rq->nsources; i++)
        if (rq->source_ids[i] == id)
            return rq->source_names[i];
    return 0;
}

static int split(struct bt_replay *r, const uint64_t *srcloc_keys, size_t nsrcloc,
                 struct recorded_queries *rq, char *err, size_t errlen)
{
    size_t pos = 0, start = 0, srcloc_i = 0;
    while (pos < r->stream_len) {
        const uint8_t *p = r->stream + pos;
        size_t sz = event_size(p, r->stream_len - pos);
        if (!sz || sz > r->stream_len - pos) {
            snprintf(err, errlen, "recording: cannot size event %u at offset %zu", p[0], pos);
            return -1;
        }
        unsigned t = p[0];
        pos += sz;
        if (is_staged(t))
            continue; /* belongs to the next event */
        int answer = -1;
        uint64_t key = 0;
        size_t answer_end = 0; /* the group ends here rather than at pos */
        switch (t) {
        case BT_EV_STRING_DATA:
            answer = BT_QUERY_STRING;
            key = bt_wire_get_u64(p + 1);
            break;
        case BT_EV_THREAD_NAME:
            answer = BT_QUERY_THREAD_STRING;
            key = bt_wire_get_u64(p + 1);
            /* The group hint that follows a thread name is part of the answer. */
            if (pos < r->stream_len && r->stream[pos] == BT_EV_THREAD_GROUP_HINT)
                pos += bt_wire_event_size[BT_EV_THREAD_GROUP_HINT];
            break;
        case BT_EV_PLOT_NAME:
            answer = BT_QUERY_PLOT_NAME;
            key = bt_wire_get_u64(p + 1);
            break;
        case BT_EV_FRAME_NAME:
            answer = BT_QUERY_FRAME_NAME;
            key = bt_wire_get_u64(p + 1);
            break;
        case BT_EV_SOURCE_LOCATION:
            if (srcloc_i >= nsrcloc) {
                snprintf(err, errlen, "recording: more SourceLocation answers than queries");
                return -1;
            }
            answer = BT_QUERY_SOURCE_LOCATION;
            key = srcloc_keys[srcloc_i++];
            break;
        case BT_EV_SYMBOL_CODE:
            answer = BT_QUERY_SYMBOL_CODE;
            key = bt_wire_get_u64(p + 1);
            break;
        case BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE:
            /* Names no symbol (the client answers kernel symbols at once,
             * others from a worker, so the order is not the asking one):
             * the replay says "not available" itself for any symbol whose
             * code the recording lacks. */
            answer = BT_QUERY_SYMBOL_CODE;
            key = UINT64_MAX;
            break;
        case BT_EV_SOURCE_CODE:
            answer = BT_QUERY_SOURCE_CODE;
            key = source_name(rq, bt_wire_get_u64(p + 1));
            break;
        case BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE:
            answer = BT_QUERY_SOURCE_CODE;
            key = source_name(rq, bt_wire_get_u32(p + 1));
            break;
        case BT_EV_ACK_SERVER_QUERY_NOOP:
            /* Acknowledges a DataTransfer query: the replay makes its own. */
            answer = BT_QUERY_DATA_TRANSFER;
            key = UINT64_MAX;
            break;
        case BT_EV_FIBER_NAME:
            answer = BT_QUERY_FIBER_NAME;
            key = bt_wire_get_u64(p + 1);
            break;
        case BT_EV_EXTERNAL_THREAD_NAME:
            /* The thread's name, then its process's: one answer. */
            answer = BT_QUERY_EXTERNAL_NAME;
            key = bt_wire_get_u64(p + 1);
            if (pos < r->stream_len && r->stream[pos] == BT_EV_EXTERNAL_NAME) {
                size_t s2 = event_size(r->stream + pos, r->stream_len - pos);
                if (!s2)
                    return -1;
                pos += s2;
            }
            break;
        case BT_EV_SYMBOL_INFORMATION:
            answer = BT_QUERY_SYMBOL;
            key = bt_wire_get_u64(p + 5);
            break;
        case BT_EV_CALLSTACK_FRAME_SIZE: {
            answer = BT_QUERY_CALLSTACK_FRAME;
            key = bt_wire_get_u64(p + 1);
            unsigned n = p[9];
            if (r->opts.unresolved_frames) {
                /* The answer ends with its size, now 0: its subframes
                 * (and their staged strings) are skipped below. */
                r->stream[pos - 1] = 0;
                answer_end = pos;
            }
            while (n && pos < r->stream_len) {
                size_t s2 = event_size(r->stream + pos, r->stream_len - pos);
                if (!s2)
                    return -1;
                if (r->stream[pos] == BT_EV_CALLSTACK_FRAME)
                    n--;
                pos += s2;
            }
            break;
        }
        default:
            break;
        }
        int zb =
            t >= BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC && t <= BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK;
        zb |= t >= BT_EV_ZONE_BEGIN && t <= BT_EV_ZONE_BEGIN_CALLSTACK16;
        if (t == BT_EV_TERMINATE) {
            start = pos; /* sent by the replay itself once the data is out */
            continue;
        }
        if (push_group(r, start, (answer_end ? answer_end : pos) - start, answer, key, zb) < 0)
            return -1;
        start = pos;
    }
    return 0;
}

static size_t answer_slot(const struct bt_replay *r, int type, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)type << 56)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & r->answer_mask;
}

/* The answers by (query type, key), the first of each in recording order:
 * a capture asks for tens of thousands of callstack frames. */
static int index_answers(struct bt_replay *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->ngroups; i++)
        n += r->groups[i].answer >= 0;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    r->answer_index = malloc(cap * sizeof(*r->answer_index));
    if (!r->answer_index)
        return -1;
    r->answer_mask = cap - 1;
    for (size_t i = 0; i <= r->answer_mask; i++)
        r->answer_index[i] = SIZE_MAX;
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct group *g = &r->groups[i];
        if (g->answer < 0)
            continue;
        size_t j = answer_slot(r, g->answer, g->key);
        for (; r->answer_index[j] != SIZE_MAX; j = (j + 1) & r->answer_mask) {
            const struct group *o = &r->groups[r->answer_index[j]];
            if (o->answer == g->answer && o->key == g->key)
                break;
        }
        if (r->answer_index[j] == SIZE_MAX)
            r->answer_index[j] = i;
    }
    return 0;
}

int bt_replay_open(struct bt_replay **out, const struct bt_replay_opts *o, unsigned *port,
                   char *err, size_t errlen)
{
    struct bt_replay *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->opts = *o;
    r->proto = bt_proto_by_name(o->protocol ? o->protocol : "82");
    if (!r->proto) {
        snprintf(err, errlen, "no protocol named %s", o->protocol);
        free(r);
        return -1;
    }
    r->listen_fd = r->fd = -1;
    size_t c2s_len, s2c_len;
    uint8_t *c2s = slurp(o->data_dir, "client-to-server.bin", &c2s_len, err, errlen);
    uint8_t *s2c = c2s ? slurp(o->data_dir, "server-to-client.bin", &s2c_len, err, errlen) : NULL;
    int rc = -1;
    uint64_t *keys = NULL;
    struct recorded_queries rq = {0};
    if (!c2s || !s2c || s2c_len < BT_WIRE_SHIBBOLETH_SIZE + 4)
        goto done;
    /* The recording's own protocol, from the recorded capture's greeting
     * (a fork of the same number only by name): its events are taken to
     * 0.14.0's form here, and served in whatever protocol is asked. */
    const struct bt_proto *rec = bt_proto_get(bt_wire_get_u32(s2c + BT_WIRE_SHIBBOLETH_SIZE));
    if (rec && o->protocol && bt_proto_by_name(o->protocol)->number == rec->number)
        rec = bt_proto_by_name(o->protocol);
    if (!rec || c2s_len < 1 + rec->welcome_size) {
        snprintf(err, errlen, "recording: protocol %u is not one boardtrace speaks",
                 bt_wire_get_u32(s2c + BT_WIRE_SHIBBOLETH_SIZE));
        goto done;
    }
    if (!o->protocol)
        r->proto = rec;
    r->welcome[0] = c2s[0];
    uint64_t delay;
    bt_proto_welcome_up(rec, c2s + 1, r->welcome + 1, &delay);
    uint8_t *canon = malloc(2 * BT_WIRE_FRAME_SIZE);
    if (!canon)
        goto done;

    /* Source location answers carry no key: pair them with the recorded
     * capture's SourceLocation queries, in order. */
    size_t nkeys = 0;
    size_t nq = s2c_len / BT_QUERY_SIZE + 1;
    keys = calloc(nq, sizeof *keys);
    rq.source_ids = calloc(nq, sizeof(uint64_t));
    rq.source_names = calloc(nq, sizeof(uint64_t));
    static struct transfer tr;
    uint64_t last_name = 0;
    for (size_t off = BT_WIRE_SHIBBOLETH_SIZE + 4;
         keys && rq.source_ids && rq.source_names && off + BT_QUERY_SIZE <= s2c_len;
         off += BT_QUERY_SIZE) {
        uint8_t q[BT_QUERY_SIZE];
        memcpy(q, s2c + off, BT_QUERY_SIZE);
        q[0] = bt_proto_query_up(rec, q[0]);
        uint64_t ptr = bt_wire_get_u64(q + BT_QUERY_OFF_PTR);
        if (q[0] == BT_QUERY_SOURCE_LOCATION)
            keys[nkeys++] = ptr;
        else if (q[0] == BT_QUERY_DATA_TRANSFER)
            tr = (struct transfer){.size = ptr};
        else if (q[0] == BT_QUERY_DATA_TRANSFER_PART && (transfer_part(&tr, q), tr.got >= tr.size))
            last_name = transfer_hash(&tr);
        else if (q[0] == BT_QUERY_SOURCE_CODE) {
            rq.source_ids[rq.nsources] = ptr;
            rq.source_names[rq.nsources++] = last_name;
        }
    }

    /* Decode the recorded frames the way a server does (continue-decoding
     * into a ring), collecting the event bytes in one buffer. */
    LZ4_streamDecode_t *dec = LZ4_createStreamDecode();
    uint8_t *ring = malloc(3 * BT_WIRE_FRAME_SIZE + 1);
    size_t ring_off = 0, cap = 0;
    for (size_t off = 1 + rec->welcome_size; dec && ring && off + 4 <= c2s_len;) {
        uint32_t n = bt_wire_get_u32(c2s + off);
        int sz =
            LZ4_decompress_safe_continue(dec, (const char *)c2s + off + 4, (char *)ring + ring_off,
                                         (int)n, (int)BT_WIRE_FRAME_SIZE);
        if (sz < 0) {
            snprintf(err, errlen, "recording: frame at offset %zu does not decompress", off);
            goto done_dec;
        }
        const uint8_t *events = ring + ring_off;
        size_t len = (size_t)sz;
        if (rec != bt_proto_get(BT_WIRE_PROTOCOL_VERSION)) {
            struct bt_proto_fault f;
            len = bt_proto_up_events(rec, events, len, canon, 2 * BT_WIRE_FRAME_SIZE, &f);
            if (len == (size_t)-1) {
                snprintf(err, errlen, "recording: frame at offset %zu: byte %zu, type %u: %s", off,
                         f.offset, f.type, f.what);
                goto done_dec;
            }
            events = canon;
        }
        if (r->stream_len + len > cap) {
            cap = (r->stream_len + len) * 2;
            uint8_t *s = realloc(r->stream, cap);
            if (!s)
                goto done_dec;
            r->stream = s;
        }
        memcpy(r->stream + r->stream_len, events, len);
        r->stream_len += len;
        ring_off += (size_t)sz;
        if (ring_off > 2 * BT_WIRE_FRAME_SIZE)
            ring_off = 0;
        off += 4 + n;
    }
    if (r->opts.hostile_addresses && make_hostile(r->stream, r->stream_len) < 0) {
        snprintf(err, errlen, "recording: an event could not be measured");
        goto done_dec;
    }
    if (keys && rq.source_ids && rq.source_names && split(r, keys, nkeys, &rq, err, errlen) == 0 &&
        precompress(r) == 0 && index_answers(r) == 0)
        rc = 0;
done_dec:
    free(canon);
    LZ4_freeStreamDecode(dec);
    free(ring);
    if (rc == 0) {
        r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)o->port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        /* A fixed port may be held for an instant by a capture's connection
         * attempt that met itself (see test_capture_cli): retry briefly. */
        int bound = -1;
        for (int tries = 0; r->listen_fd >= 0 && tries < 50; tries++) {
            bound = bind(r->listen_fd, (struct sockaddr *)&a, sizeof a);
            if (bound == 0 || errno != EADDRINUSE || o->port == 0)
                break;
            usleep(20000);
        }
        if (r->listen_fd < 0 || bound < 0 || listen(r->listen_fd, 4) < 0 ||
            getsockname(r->listen_fd, (struct sockaddr *)&a, &al) < 0) {
            snprintf(err, errlen, "cannot listen on 127.0.0.1:%u: %s", o->port, strerror(errno));
            rc = -1;
        } else {
            *port = ntohs(a.sin_port);
        }
    }
done:
    free(rq.source_ids);
    free(rq.source_names);
    free(keys);
    free(c2s);
    free(s2c);
    if (rc < 0) {
        bt_replay_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

static int send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int recv_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n) {
        ssize_t k = recv(fd, b, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Independent LZ4 blocks: valid input for the server's continue-decoder.
 * Another protocol's events are cut into frames at event boundaries. */
static int send_frame(struct bt_replay *r, const uint8_t *data, size_t n)
{
    static uint8_t out[4 + BT_WIRE_LZ4_BOUND];
    uint8_t *conv = NULL;
    if (r->proto != bt_proto_get(BT_WIRE_PROTOCOL_VERSION) && !r->opts.unconverted) {
        size_t cap = 3 * n + BT_PROTO_EVENT_MAX;
        conv = malloc(cap);
        if (!conv)
            return -1;
        size_t k = bt_proto_down_events(r->proto, data, n, conv, cap, NULL);
        if (k != (size_t)-1) { /* else: deliberately broken input, sent as it is */
            data = conv;
            n = k;
        }
    }
    while (n) {
        size_t k = n > BT_WIRE_FRAME_SIZE ? BT_WIRE_FRAME_SIZE : n;
        if (conv && k < n) {
            size_t cut = 0;
            for (size_t e; cut < k && (e = bt_proto_event_size(r->proto, data + cut, n - cut)) &&
                           cut + e <= k;)
                cut += e;
            k = cut ? cut : k;
        }
        int c = LZ4_compress_default((const char *)data, (char *)out + 4, (int)k,
                                     (int)BT_WIRE_LZ4_BOUND);
        if (c <= 0) {
            free(conv);
            return -1;
        }
        bt_wire_put_u32(out, (uint32_t)c);
        if (send_all(r->fd, out, 4 + (size_t)c) < 0) {
            free(conv);
            return -1;
        }
        r->frame_bytes += 4 + (size_t)c;
        data += k;
        n -= k;
    }
    free(conv);
    return 0;
}

/* StringData of distinct 4000-byte texts under keys no query names, mib
 * MiB of them, then one thread, plot, frame, fiber and external thread
 * and process name each: answers
 * the capture did not ask for, sent before the recording. */
static int send_unsolicited(struct bt_replay *r, long mib)
{
    enum { TEXT = 4000, EACH = 11 + TEXT };
    static uint8_t buf[BATCH_TARGET / EACH * EACH];
    uint64_t total = (uint64_t)mib << 20, sent = 0, key = 0x5eed000000000000ull;
    while (sent < total) {
        size_t len = 0;
        for (; len + EACH <= sizeof buf && sent < total; len += EACH, sent += TEXT, key++) {
            uint8_t *p = buf + len;
            p[0] = BT_EV_STRING_DATA;
            bt_wire_put_u64(p + 1, key);
            bt_wire_put_u16(p + 9, TEXT);
            memset(p + 11, 'a' + (int)(key % 26), TEXT);
            snprintf((char *)p + 11, 24, "%016llx", (unsigned long long)key);
            p[11 + 16] = '-';
        }
        if (send_frame(r, buf, len) < 0)
            return -1;
    }
    const uint8_t kinds[] = {BT_EV_THREAD_NAME,          BT_EV_PLOT_NAME,
                             BT_EV_FRAME_NAME,           BT_EV_FIBER_NAME,
                             BT_EV_EXTERNAL_THREAD_NAME, BT_EV_EXTERNAL_NAME};
    size_t len = 0;
    for (size_t i = 0; i < sizeof kinds; i++, key++) {
        uint8_t *p = buf + len;
        p[0] = kinds[i];
        bt_wire_put_u64(p + 1, key);
        bt_wire_put_u16(p + 9, 5);
        memcpy(p + 11, "unasked", 5);
        len += 16;
    }
    return send_frame(r, buf, len);
}

struct batch {
    uint8_t *p;
    size_t len, cap;
};

static int batch_add(struct batch *b, const uint8_t *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

/* Copies the answer group g into b, its CallstackFrameSize's address made
 * the one asked for (a hostile address answered by its recorded frame). */
static int add_frame_answer(struct bt_replay *r, struct batch *b, const struct group *g,
                            uint64_t asked)
{
    size_t at = b->len;
    if (batch_add(b, r->stream + g->off, g->len) < 0)
        return -1;
    for (size_t pos = at; pos < b->len;) {
        uint8_t *p = b->p + pos;
        size_t n = event_size(p, b->len - pos);
        if (!n)
            return -1;
        if (p[0] == BT_EV_CALLSTACK_FRAME_SIZE) {
            bt_wire_put_u64(p + 1, asked);
            return 0;
        }
        pos += n;
    }
    return -1;
}

static const struct group *find_answer(const struct bt_replay *r, int type, uint64_t key)
{
    for (size_t j = answer_slot(r, type, key); r->answer_index[j] != SIZE_MAX;
         j = (j + 1) & r->answer_mask) {
        const struct group *g = &r->groups[r->answer_index[j]];
        if (g->answer == type && g->key == key)
            return g;
    }
    return NULL;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* After an early Terminate: goes on sending (frames of no-op events) for
 * slow_terminate_ms, then closes. 0, or -1 when the capture reset the
 * connection meanwhile instead of letting this client close first. */
static int linger(struct bt_replay *r, char *err, size_t errlen)
{
    static uint8_t noops[4096];
    memset(noops, BT_EV_ACK_SERVER_QUERY_NOOP, sizeof noops);
    double start = seconds_now(), end = start + r->opts.slow_terminate_ms / 1000.0;
    while (seconds_now() < end) {
        if (send_frame(r, noops, sizeof noops) < 0) {
            snprintf(err, errlen,
                     "the capture reset the connection %.0f ms after its Terminate, while this "
                     "client was still sending: %s",
                     (seconds_now() - start) * 1000, strerror(errno));
            return -1;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    printf("obeyed the Terminate after %d ms of sending more\n", r->opts.slow_terminate_ms);
    fflush(stdout);
    return 0;
}

int bt_replay_serve(struct bt_replay *r, char *err, size_t errlen)
{
    /* A capture offering another protocol is refused as upstream's client
     * refuses it, and comes again with the next; the one that offers all
     * of boardtrace's protocols comes at most that many times. */
    double t0 = 0;
    for (unsigned refused = 0;; refused++) {
        struct pollfd lp = {.fd = r->listen_fd, .events = POLLIN};
        if (poll(&lp, 1, 60000) != 1) {
            snprintf(err, errlen, "no capture connected within 60 s");
            return -1;
        }
        r->fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (r->fd < 0) {
            snprintf(err, errlen, "accept: %s", strerror(errno));
            return -1;
        }
        /* As the runtime's client: answers and the data behind them go out
         * at once, not held back by Nagle until the capture's delayed ACK. */
        int one = 1;
        setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        t0 = seconds_now();
        uint8_t hello[BT_WIRE_SHIBBOLETH_SIZE + 4];
        if (recv_all(r->fd, hello, sizeof hello) < 0 ||
            memcmp(hello, BT_WIRE_SHIBBOLETH, BT_WIRE_SHIBBOLETH_SIZE) != 0) {
            snprintf(err, errlen, "the capture did not send \"TracyPrf\"");
            return -1;
        }
        uint32_t offered = bt_wire_get_u32(hello + BT_WIRE_SHIBBOLETH_SIZE);
        int mismatch = offered != r->proto->number ||
                       r->opts.handshake_status == BT_HANDSHAKE_PROTOCOL_MISMATCH;
        if (!mismatch && r->opts.handshake_status) {
            uint8_t st = (uint8_t)r->opts.handshake_status;
            send_all(r->fd, &st, 1);
            return 0;
        }
        if (!mismatch)
            break;
        uint8_t st = BT_HANDSHAKE_PROTOCOL_MISMATCH;
        send_all(r->fd, &st, 1);
        close(r->fd);
        r->fd = -1;
        if (refused + 1 >= BT_PROTO_UPSTREAM_COUNT)
            return r->opts.handshake_status ? 0 : -1;
    }
    uint8_t welcome[1 + BT_WELCOME_SIZE + 8];
    welcome[0] = r->welcome[0];
    uint64_t delay = 0;
    bt_proto_welcome_down(r->proto, r->welcome + 1, delay, welcome + 1);
    if (send_all(r->fd, welcome, 1 + r->proto->welcome_size) < 0) {
        snprintf(err, errlen, "cannot send the welcome message");
        return -1;
    }
    if (r->opts.unsolicited_mib > 0 && send_unsolicited(r, r->opts.unsolicited_mib) < 0) {
        snprintf(err, errlen, "the capture closed the connection: %s", strerror(errno));
        return -1;
    }
    struct batch b = {0};
    static struct transfer xfer;
    size_t next = 0;
    int terminate_sent = 0, rc = -1;
    uint8_t qbuf[BT_QUERY_SIZE * 64];
    size_t qlen = 0;
    for (;;) {
        /* Answer every complete query that has arrived. */
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        /* wait for queries only when there is nothing left to send */
        int idle = b.len == 0 && (next >= r->ngroups || (r->opts.pause_after > 0 &&
                                                         (long)r->sent >= r->opts.pause_after));
        int ready = poll(&p, 1, idle ? 100 : 0);
        if (ready == 1) {
            ssize_t k = recv(r->fd, qbuf + qlen, sizeof qbuf - qlen, 0);
            if (k <= 0) {
                snprintf(err, errlen, "the capture closed the connection without Terminate");
                break;
            }
            qlen += (size_t)k;
            size_t pos = 0;
            for (; qlen - pos >= BT_QUERY_SIZE; pos += BT_QUERY_SIZE) {
                int type = bt_proto_query_up(r->proto, qbuf[pos]);
                uint64_t key = bt_wire_get_u64(qbuf + pos + 1);
                if (type >= BT_QUERY_COUNT) {
                    snprintf(err, errlen, "query type %d is not a valid query", type);
                    goto out;
                }
                r->queries[type]++;
                if (type == BT_QUERY_DATA_TRANSFER || type == BT_QUERY_DATA_TRANSFER_PART) {
                    if (type == BT_QUERY_DATA_TRANSFER)
                        xfer = (struct transfer){.size = key};
                    else
                        transfer_part(&xfer, qbuf + pos);
                    uint8_t ack = BT_EV_ACK_SERVER_QUERY_NOOP;
                    if (batch_add(&b, &ack, 1) < 0)
                        goto out;
                    continue;
                }
                if (type == BT_QUERY_SOURCE_CODE) {
                    /* Answered by file name, under the id this capture gave. */
                    const struct group *g = find_answer(r, type, transfer_hash(&xfer));
                    size_t at = b.len;
                    if (g) {
                        if (batch_add(&b, r->stream + g->off, g->len) < 0)
                            goto out;
                    } else {
                        uint8_t na[5] = {BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE};
                        r->sources_unrecorded++;
                        if (batch_add(&b, na, sizeof na) < 0)
                            goto out;
                    }
                    /* The answer is the group's last event. */
                    size_t last = at;
                    for (size_t e = at; e < b.len;) {
                        size_t sz = event_size(b.p + e, b.len - e);
                        if (!sz)
                            break;
                        last = e;
                        e += sz;
                    }
                    if (b.p[last] == BT_EV_SOURCE_CODE)
                        bt_wire_put_u64(b.p + last + 1, key);
                    else
                        bt_wire_put_u32(b.p + last + 1, (uint32_t)key);
                    continue;
                }
                if (type == BT_QUERY_TERMINATE) {
                    r->served = seconds_now() - t0;
                    if (!terminate_sent && r->opts.slow_terminate_ms > 0) {
                        rc = linger(r, err, errlen);
                        goto out;
                    }
                    rc = terminate_sent ? 0 : -1;
                    if (rc < 0)
                        snprintf(err, errlen, "the capture terminated before the data ended");
                    goto out;
                }
                const struct group *g = find_answer(r, type, key);
                if (!g && type == BT_QUERY_CALLSTACK_FRAME && r->opts.hostile_addresses) {
                    g = find_answer(r, type, bt_replay_hostile(key));
                    if (g) {
                        if (add_frame_answer(r, &b, g, key) < 0)
                            goto out;
                        continue;
                    }
                }
                if (!g && type == BT_QUERY_SYMBOL_CODE) {
                    uint8_t na = BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE;
                    if (batch_add(&b, &na, 1) < 0)
                        goto out;
                    continue;
                }
                if (!g) {
                    snprintf(err, errlen,
                             "query type %d for key 0x%llx has no answer in the recording", type,
                             (unsigned long long)key);
                    goto out;
                }
                if (batch_add(&b, r->stream + g->off, g->len) < 0)
                    goto out;
            }
            memmove(qbuf, qbuf + pos, qlen - pos);
            qlen -= pos;
        }
        int paused = r->opts.pause_after > 0 && (long)r->sent >= r->opts.pause_after;
        while (!paused && next < r->ngroups && b.len < BATCH_TARGET) {
            const struct group *g = &r->groups[next++];
            if (g->answer >= 0)
                continue;
            if (g->frame_len) {
                /* answers first, in their own frame; then the ready one */
                if ((b.len && send_frame(r, b.p, b.len) < 0) ||
                    send_all(r->fd, r->frames + g->frame_off, g->frame_len) < 0) {
                    snprintf(err, errlen, "the capture closed the connection: %s", strerror(errno));
                    goto out;
                }
                b.len = 0;
                r->frame_bytes += g->frame_len;
                r->sent += g->events;
                r->zone_begins_sent += (uint64_t)g->zone_begins;
                break; /* back to the queries */
            }
            if (batch_add(&b, r->stream + g->off, g->len) < 0)
                goto out;
            r->sent++;
            r->zone_begins_sent += (uint64_t)g->zone_begins;
            paused = r->opts.pause_after > 0 && (long)r->sent >= r->opts.pause_after;
        }
        if (paused && r->opts.pause_after > 0 && b.len == 0 && idle) {
            static int announced;
            if (!announced) {
                printf("paused after %llu events, %llu zone begins, %llu frame bytes\n",
                       (unsigned long long)r->sent, (unsigned long long)r->zone_begins_sent,
                       (unsigned long long)r->frame_bytes);
                fflush(stdout);
                announced = 1;
                if (r->opts.corrupt) {
                    uint8_t bad = BT_EV_COUNT + 68; /* 200: not an event type */
                    if (batch_add(&b, &bad, 1) < 0)
                        goto out;
                }
                if (r->opts.cut_frame) {
                    /* A header announcing 100 bytes, and 10 of them. */
                    uint8_t part[14] = {100};
                    if (send_all(r->fd, part, sizeof part) < 0)
                        goto out;
                    /* Then the connection ends there: a FIN after those
                     * bytes, which the capture reads before it (a kill
                     * with queries unread would reset the connection, and
                     * the bytes in flight could be lost with it). */
                    shutdown(r->fd, SHUT_WR);
                    char sink[4096];
                    while (recv(r->fd, sink, sizeof sink, 0) > 0)
                        ;
                    rc = 0;
                    goto out;
                }
                if (r->opts.bad_frame) {
                    uint8_t empty[4] = {0}; /* a frame of 0 bytes: no frame at all */
                    if (send_all(r->fd, empty, sizeof empty) < 0)
                        goto out;
                }
            }
        }
        if (!paused && next == r->ngroups && !terminate_sent) {
            uint8_t t = BT_EV_TERMINATE;
            if (batch_add(&b, &t, 1) < 0)
                goto out;
            terminate_sent = 1;
        }
        if (b.len) {
            if (send_frame(r, b.p, b.len) < 0) {
                snprintf(err, errlen, "the capture closed the connection: %s", strerror(errno));
                goto out;
            }
            b.len = 0;
        }
    }
out:
    free(b.p);
    close(r->fd);
    r->fd = -1;
    return rc;
}

const uint64_t *bt_replay_query_counts(const struct bt_replay *r)
{
    return r->queries;
}

double bt_replay_served_seconds(const struct bt_replay *r)
{
    return r->served;
}

uint64_t bt_replay_events_sent(const struct bt_replay *r)
{
    return r->sent;
}

uint64_t bt_replay_sources_unrecorded(const struct bt_replay *r)
{
    return r->sources_unrecorded;
}

void bt_replay_close(struct bt_replay *r)
{
    if (!r)
        return;
    if (r->listen_fd >= 0)
        close(r->listen_fd);
    if (r->fd >= 0)
        close(r->fd);
    free(r->stream);
    free(r->frames);
    free(r->answer_index);
    free(r->groups);
    free(r);
}
