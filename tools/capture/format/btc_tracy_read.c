/* The .tracy reader: undoes the block container (zstd or LZ4, 1..255
 * streams), then walks every section of a 0.14.0 or 0.11.1 payload, keeping
 * names and counts and handing zones to a callback as it meets them. Every
 * count comes from the file, so each loop stops at the first short read. */
#define _GNU_SOURCE
#include <errno.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "btc_file_versions.h"
#include "btc_format.h"
#include "btc_tracy.h"
#include "btc_tracy_write_parts.h"

#define MAX_STRING_BYTES (64u * 1024u * 1024u)
#define MAX_ZONE_DEPTH   (1u << 20)
#define MAX_COMPRESSED   (2u * 1024u * 1024u)

struct stream_ctx {
    ZSTD_DStream *z;
    LZ4_streamDecode_t *lz4;
    uint8_t *lz4buf[2];
    int lz4sel;
};

struct rd {
    FILE *f;
    const uint8_t *mem;
    size_t mem_len, mem_pos;
    int compression;
    unsigned streams, next_stream;
    struct stream_ctx *ctx;
    uint8_t *cbuf;
    uint8_t *blk; /* current decompressed block */
    const uint8_t *cur;
    size_t len, pos;
    int at_end;
    int failed;
    char *err;
    size_t errlen;
    uint64_t payload_off;
    btc_message_fn mfn;
    const struct btc_read_more *more;
    void *cb_ctx;
    int cb_rc; /* a callback's failure, ends the read */
    uint64_t gpu_timeline;
    uint32_t gpu_depth;
    /* btc_tracy_rewrite: payload bytes read are copied to out while
     * copy_on; the strings' count and the frames are written by hand. */
    const struct btc_rewrite *rw;
    struct fw *out;
    int copy_on;
};

static int raw_read(struct rd *r, void *p, size_t n)
{
    if (r->f)
        return fread(p, 1, n, r->f) == n;
    if (r->mem_len - r->mem_pos < n)
        return 0;
    memcpy(p, r->mem + r->mem_pos, n);
    r->mem_pos += n;
    return 1;
}

static void rd_fail(struct rd *r, const char *msg)
{
    if (!r->failed)
        snprintf(r->err, r->errlen, "payload offset %llu: %s", (unsigned long long)r->payload_off,
                 msg);
    r->failed = 1;
}

static uint64_t memory_limit = BTC_READ_MEMORY_DEFAULT;

void btc_tracy_read_set_memory_limit(uint64_t bytes)
{
    memory_limit = bytes ? bytes : BTC_READ_MEMORY_DEFAULT;
}

uint64_t btc_tracy_read_memory_limit(void)
{
    return memory_limit;
}

static uint64_t vec_bytes(const struct btc_vec *v)
{
    return (uint64_t)v->cap * v->item;
}

/* Whether holding `more` bytes beside what t holds (its strings and tables;
 * zones and messages stream through callbacks) passes the memory limit; if
 * so the read fails saying so. A small file can expand to gigabytes. */
static int over_limit(struct rd *r, const struct btc_trace *t, uint64_t more)
{
    uint64_t held = btc_strtab_memory(&t->strings) + vec_bytes(&t->string_keys) +
                    (uint64_t)t->key_string.cap * 17 + vec_bytes(&t->statics) +
                    vec_bytes(&t->payloads) + vec_bytes(&t->framesets) + vec_bytes(&t->threads) +
                    vec_bytes(&t->pools) + vec_bytes(&t->plots) + vec_bytes(&t->app_info) +
                    vec_bytes(&t->gpu_names) + vec_bytes(&t->gpu_stats) + vec_bytes(&t->sampled) +
                    (uint64_t)t->cs_counts.cap * 17 + vec_bytes(&t->lock_stats) +
                    (uint64_t)t->leak_cs.cap * 17;
    if (held + more <= memory_limit)
        return 0;
    char msg[160];
    int mib = memory_limit % (1u << 20) == 0;
    snprintf(msg, sizeof msg,
             "holding this file's strings and tables needs more than the reader's memory limit "
             "of %llu %s",
             (unsigned long long)(memory_limit >> (mib ? 20 : 10)), mib ? "MiB" : "KiB");
    rd_fail(r, msg);
    return 1;
}

/* Loads the next block of the payload; returns 0 at a clean end. */
static int next_block(struct rd *r)
{
    uint8_t szb[4];
    if (!raw_read(r, szb, 4)) {
        r->at_end = 1;
        return 0;
    }
    uint32_t sz = bt_wire_get_u32(szb);
    if (sz == 0 || sz > MAX_COMPRESSED) {
        rd_fail(r, "block with an impossible compressed size");
        return 0;
    }
    if (!raw_read(r, r->cbuf, sz)) {
        rd_fail(r, "file ends inside a compressed block");
        return 0;
    }
    struct stream_ctx *s = &r->ctx[r->next_stream];
    r->next_stream = (r->next_stream + 1) % r->streams;
    if (r->compression == BTC_FILE_COMPRESS_ZSTD) {
        ZSTD_inBuffer in = {r->cbuf, sz, 0};
        ZSTD_outBuffer out = {r->blk, BTC_FILE_BLOCK_SIZE, 0};
        size_t rc = ZSTD_decompressStream(s->z, &out, &in);
        if (ZSTD_isError(rc)) {
            rd_fail(r, "zstd block does not decompress");
            return 0;
        }
        r->cur = r->blk;
        r->len = out.pos;
    } else {
        /* Upstream's LZ4 streams alternate two 64 KiB buffers so a block may
         * reference the previous block of the same stream. */
        uint8_t *dst = s->lz4buf[s->lz4sel];
        s->lz4sel ^= 1;
        int n = LZ4_decompress_safe_continue(s->lz4, (const char *)r->cbuf, (char *)dst, (int)sz,
                                             BTC_FILE_BLOCK_SIZE);
        if (n < 0) {
            rd_fail(r, "LZ4 block does not decompress");
            return 0;
        }
        r->cur = dst;
        r->len = (size_t)n;
    }
    r->pos = 0;
    return r->len > 0;
}

static void get(struct rd *r, void *p, size_t n)
{
    uint8_t *o = p;
    while (n) {
        if (r->failed) {
            memset(o, 0, n);
            return;
        }
        if (r->pos == r->len && !next_block(r)) {
            if (!r->failed)
                rd_fail(r, "payload ends early");
            memset(o, 0, n);
            return;
        }
        size_t k = r->len - r->pos;
        if (k > n)
            k = n;
        memcpy(o, r->cur + r->pos, k);
        if (r->copy_on)
            btc_fw_put(r->out, r->cur + r->pos, k);
        r->pos += k;
        r->payload_off += k;
        o += k;
        n -= k;
    }
}

static void skip(struct rd *r, uint64_t n)
{
    uint8_t tmp[256];
    while (n && !r->failed) {
        size_t k = n > sizeof tmp ? sizeof tmp : (size_t)n;
        get(r, tmp, k);
        n -= k;
    }
}

static uint8_t g8(struct rd *r)
{
    uint8_t v;
    get(r, &v, 1);
    return v;
}
static uint16_t g16(struct rd *r)
{
    uint8_t b[2];
    get(r, b, 2);
    return bt_wire_get_u16(b);
}
static uint32_t g24(struct rd *r)
{
    uint8_t b[3];
    get(r, b, 3);
    return b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16);
}
static uint32_t g32(struct rd *r)
{
    uint8_t b[4];
    get(r, b, 4);
    return bt_wire_get_u32(b);
}
static uint64_t g64(struct rd *r)
{
    uint8_t b[8];
    get(r, b, 8);
    return bt_wire_get_u64(b);
}
static double gf64(struct rd *r)
{
    uint64_t b = g64(r);
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static int64_t gwto(struct rd *r, int64_t *ref)
{
    *ref = (int64_t)((uint64_t)*ref + g64(r));
    return *ref;
}

/* A length-prefixed name limited to BTC_FILE_NAME_MAX - 1 bytes. */
static void gname(struct rd *r, char *out)
{
    uint64_t len = g64(r);
    if (len >= BTC_FILE_NAME_MAX) {
        rd_fail(r, "name longer than 1023 bytes");
        out[0] = 0;
        return;
    }
    get(r, out, (size_t)len);
    out[len] = 0;
}

/* Reads count-prefixed fixed-size records and ignores them. */
static void skip_list(struct rd *r, size_t rec)
{
    uint64_t n = g64(r);
    for (uint64_t i = 0; i < n && !r->failed; i++)
        skip(r, rec);
}

static int64_t string_of_key(struct btc_trace *t, uint64_t key)
{
    uint64_t *v = btc_map_get(&t->key_string, key);
    return v ? (int64_t)*v : -1;
}

static void read_srcloc(struct rd *r, struct btc_trace *t, struct btc_read_srcloc *s)
{
    int64_t *fields[3] = {&s->name, &s->function, &s->file};
    for (int i = 0; i < 3; i++) {
        uint64_t v = g64(r);
        uint8_t flags = g8(r);
        if (!(flags & BTC_STRREF_ACTIVE))
            *fields[i] = -1;
        else if (flags & BTC_STRREF_IDX)
            *fields[i] = v < btc_strtab_count(&t->strings) ? (int64_t)v : -1;
        else
            *fields[i] = string_of_key(t, v);
    }
    s->line = g32(r);
    s->color = g32(r);
}

struct zone_frame {
    uint32_t left;
    int64_t start;
    int16_t srcloc;
    uint32_t extra;
};

static int read_timeline(struct rd *r, struct btc_trace *t, uint64_t tid, btc_zone_fn fn, void *ctx)
{
    struct btc_vec stack;
    btc_vec_init(&stack, sizeof(struct zone_frame));
    int64_t ref = 0;
    uint32_t top = g32(r);
    int rc = BTC_OK;
    uint32_t top_left = top;
    while (!r->failed && (top_left || stack.len)) {
        struct zone_frame *parent = stack.len ? btc_vec_at(&stack, stack.len - 1) : NULL;
        if (parent && parent->left == 0) {
            struct btc_read_zone z = {.thread_id = tid,
                                      .srcloc = parent->srcloc,
                                      .depth = (uint32_t)stack.len - 1,
                                      .start = parent->start,
                                      .extra = parent->extra};
            z.end = gwto(r, &ref);
            stack.len--;
            t->zones++;
            t->zones_unended += z.end < 0;
            if (!r->failed && fn && (rc = fn(ctx, t, &z)) < 0)
                break;
            continue;
        }
        if (parent)
            parent->left--;
        else
            top_left--;
        if (stack.len >= MAX_ZONE_DEPTH) {
            rd_fail(r, "zones nested too deep");
            break;
        }
        struct zone_frame *z = btc_vec_push(&stack);
        if (!z) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        z->srcloc = (int16_t)g16(r);
        z->start = gwto(r, &ref);
        z->extra = g32(r);
        z->left = g32(r);
    }
    btc_vec_free(&stack);
    return rc;
}

static struct btc_read_gpu_stat *gpu_stat(struct btc_trace *t, uint32_t ctx, int16_t srcloc)
{
    for (size_t i = 0; i < t->gpu_stats.len; i++) {
        struct btc_read_gpu_stat *g = btc_vec_at(&t->gpu_stats, i);
        if (g->ctx == ctx && g->srcloc == srcloc)
            return g;
    }
    struct btc_read_gpu_stat *g = btc_vec_push(&t->gpu_stats);
    if (g) {
        g->ctx = ctx;
        g->srcloc = srcloc;
        g->min_ns = INT64_MAX;
    }
    return g;
}

struct gpu_frame {
    int64_t cpu_start, gpu_start;
    uint64_t left;
    int16_t srcloc;
};

static void gpu_zone_end(struct rd *r, struct btc_trace *t, uint32_t ctx, const struct gpu_frame *z,
                         int64_t cpu_end, int64_t gpu_end)
{
    if (r->more && r->more->gpu_zone && !r->failed && r->cb_rc >= 0) {
        struct btc_read_gpu_zone g = {.ctx = ctx,
                                      .timeline = r->gpu_timeline,
                                      .depth = r->gpu_depth,
                                      .srcloc = z->srcloc,
                                      .cpu_start = z->cpu_start,
                                      .cpu_end = cpu_end,
                                      .gpu_start = z->gpu_start,
                                      .gpu_end = gpu_end};
        r->cb_rc = r->more->gpu_zone(r->cb_ctx, t, &g);
        if (r->cb_rc < 0)
            rd_fail(r, "export stopped");
    }
    struct btc_read_gpu_stat *g = gpu_stat(t, ctx, z->srcloc);
    if (!g) {
        rd_fail(r, "out of memory for GPU zone statistics");
        return;
    }
    g->zones++;
    int64_t d = (int64_t)((uint64_t)gpu_end - (uint64_t)z->gpu_start);
    if (z->gpu_start < 0 || gpu_end < 0 || d <= 0)
        return;
    g->count++;
    g->total_ns = (int64_t)((uint64_t)g->total_ns + (uint64_t)d);
    if (d < g->min_ns)
        g->min_ns = d;
    if (d > g->max_ns)
        g->max_ns = d;
}

static void read_gpu_zones(struct rd *r, struct btc_trace *t, uint32_t ctx, int query_ids)
{
    /* Depth-first like the CPU timeline: start, children, then the ends,
     * CPU and GPU times each against their own running reference. */
    struct btc_vec stack;
    btc_vec_init(&stack, sizeof(struct gpu_frame));
    int64_t ref = 0, gref = 0;
    uint64_t top = g64(r);
    while (!r->failed && (top || stack.len)) {
        struct gpu_frame *parent = stack.len ? btc_vec_at(&stack, stack.len - 1) : NULL;
        if (parent && parent->left == 0) {
            int64_t cpu_end = gwto(r, &ref);
            int64_t gpu_end = gwto(r, &gref);
            if (query_ids)
                g16(r);
            r->gpu_depth = (uint32_t)stack.len - 1;
            gpu_zone_end(r, t, ctx, parent, cpu_end, gpu_end);
            stack.len--;
            continue;
        }
        if (parent)
            parent->left--;
        else
            top--;
        struct gpu_frame z;
        z.cpu_start = gwto(r, &ref);
        z.gpu_start = gwto(r, &gref);
        z.srcloc = (int16_t)g16(r);
        uint32_t callstack = g24(r);
        g16(r);
        t->gpu_zones++;
        t->gpu_zones_with_callstack += callstack != 0;
        z.left = g64(r);
        if (!z.left) {
            int64_t cpu_end = gwto(r, &ref);
            int64_t gpu_end = gwto(r, &gref);
            if (query_ids)
                g16(r);
            r->gpu_depth = (uint32_t)stack.len;
            gpu_zone_end(r, t, ctx, &z, cpu_end, gpu_end);
            continue;
        }
        struct gpu_frame *n = stack.len < MAX_ZONE_DEPTH ? btc_vec_push(&stack) : NULL;
        if (!n) {
            rd_fail(r, "GPU zones nested too deep");
            break;
        }
        *n = z;
    }
    btc_vec_free(&stack);
}

static int count_callstack(struct rd *r, struct btc_trace *t, uint32_t cs, uint64_t add)
{
    if (!cs)
        return BTC_OK;
    uint64_t *c = btc_map_get(&t->cs_counts, cs);
    if (c) {
        *c += add;
        return BTC_OK;
    }
    if (over_limit(r, t, 0))
        return BTC_ERR_FORMAT;
    return btc_map_put(&t->cs_counts, cs, add) < 0 ? BTC_ERR_NOMEM : BTC_OK;
}

/* A sample to the caller's callback, if any. */
static int give_sample(struct rd *r, const struct btc_trace *t, const struct btc_read_sample *smp)
{
    if (!r->more || !r->more->sample || r->failed)
        return BTC_OK;
    int rc = r->more->sample(r->cb_ctx, t, smp);
    return rc < 0 ? rc : BTC_OK;
}

/* Callstacks (section 27) and frames (28): counted, and for the callstacks
 * timer samples hit, each function's self and inclusive samples (a frame's
 * function is its first subframe: the innermost when inlined). */
/* A frame record for btc_tracy_rewrite: read whole, given to the hook,
 * written back with its changes (same length). */
static void rewrite_frame(struct rd *r, struct btc_trace *t, struct btc_map *frame_slot,
                          struct btc_vec *names)
{
    int copy = r->copy_on;
    r->copy_on = 0;
    uint64_t fid = g64(r);
    uint8_t n = g8(r);
    uint32_t image = g24(r);
    struct btc_rewrite_sub sub[256];
    for (unsigned k = 0; k < n; k++) {
        sub[k].name = g24(r) - 1;
        sub[k].file = g24(r) - 1;
        sub[k].line = g32(r);
        sub[k].sym_addr = g64(r);
    }
    if (!r->failed && r->rw->frame)
        r->rw->frame(r->rw->ctx, t, fid, sub, n);
    uint64_t *slotp = btc_map_get(frame_slot, fid);
    if (slotp && n) {
        int64_t *nm = btc_vec_at(names, (size_t)*slotp - 1);
        nm[0] = sub[0].name == UINT32_MAX ? -1 : (int64_t)sub[0].name;
        nm[1] = (int64_t)image - 1;
    }
    if (r->out) {
        put_u64(r->out, fid);
        put_u8(r->out, n);
        put_u24(r->out, image);
        for (unsigned k = 0; k < n; k++) {
            put_u24(r->out, sub[k].name + 1);
            put_u24(r->out, sub[k].file + 1);
            put_u32(r->out, sub[k].line);
            put_u64(r->out, sub[k].sym_addr);
        }
    }
    r->copy_on = copy;
}

static int read_callstacks(struct rd *r, struct btc_trace *t)
{
    struct sampled_cs {
        uint64_t count;
        size_t first, n; /* in fids */
        uint64_t id;
    };
    struct btc_vec stacks, fids;
    struct btc_map frame_slot; /* frame id -> slot in names, + 1 */
    struct btc_vec names;      /* per needed frame: i64 name, i64 image */
    btc_vec_init(&stacks, sizeof(struct sampled_cs));
    btc_vec_init(&fids, sizeof(uint64_t));
    btc_map_init(&frame_slot);
    btc_vec_init(&names, 2 * sizeof(int64_t));
    int rc = BTC_OK;
    uint64_t n = g64(r);
    t->callstacks = n;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0; i++) {
        uint16_t len = g16(r);
        uint64_t *c = btc_map_get(&t->cs_counts, i + 1);
        uint64_t count = c && (int64_t)*c > 0 ? *c : 0;
        if (!count && !btc_map_get(&t->leak_cs, i + 1)) {
            skip(r, (uint64_t)len * 8);
            continue;
        }
        struct sampled_cs *sc = btc_vec_push(&stacks);
        if (!sc || btc_vec_reserve(&fids, len) < 0) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        *sc = (struct sampled_cs){count, fids.len, len, i + 1};
        for (uint16_t k = 0; k < len; k++) {
            uint64_t fid = g64(r);
            *(uint64_t *)btc_vec_push(&fids) = fid;
            if (!btc_map_get(&frame_slot, fid)) {
                int64_t *nm = btc_vec_push(&names);
                if (!nm || btc_map_put(&frame_slot, fid, names.len) < 0) {
                    rc = BTC_ERR_NOMEM;
                    break;
                }
                nm[0] = nm[1] = -1;
            }
        }
        t->timer_samples += count;
        if (over_limit(r, t, vec_bytes(&fids) + vec_bytes(&names)))
            rc = BTC_ERR_FORMAT;
    }
    n = g64(r);
    t->callstack_frames = n;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0; i++) {
        if (r->rw) {
            rewrite_frame(r, t, &frame_slot, &names);
            continue;
        }
        uint64_t fid = g64(r);
        uint8_t sub = g8(r);
        int64_t image = (int64_t)g24(r) - 1;
        uint64_t *slotp = btc_map_get(&frame_slot, fid);
        if (slotp && sub) {
            int64_t *nm = btc_vec_at(&names, (size_t)*slotp - 1);
            nm[0] = (int64_t)g24(r) - 1;
            nm[1] = image;
            skip(r, 15 + (uint64_t)(sub - 1) * 18);
        } else {
            skip(r, (uint64_t)sub * 18);
        }
    }
    /* Per function: self from the innermost frame, inclusive once per
     * distinct function of the stack. */
    struct btc_map fn_slot; /* name -> slot in t->sampled + 1 */
    btc_map_init(&fn_slot);
    for (size_t i = 0; i < stacks.len && rc >= 0 && !r->failed; i++) {
        const struct sampled_cs *sc = btc_vec_at(&stacks, i);
        if (sc->n) {
            uint64_t fid = *(uint64_t *)btc_vec_at(&fids, sc->first);
            const int64_t *nm = btc_vec_at(&names, (size_t)*btc_map_get(&frame_slot, fid) - 1);
            if (nm[0] >= 0 && btc_map_put(&t->sample_top, sc->id, (uint64_t)nm[0] + 1) < 0)
                rc = BTC_ERR_NOMEM;
        }
        for (size_t k = 0; k < sc->n && sc->count && rc >= 0; k++) {
            uint64_t fid = *(uint64_t *)btc_vec_at(&fids, sc->first + k);
            const int64_t *nm = btc_vec_at(&names, (size_t)*btc_map_get(&frame_slot, fid) - 1);
            int seen = 0;
            for (size_t j = 0; j < k && !seen; j++) {
                uint64_t other = *(uint64_t *)btc_vec_at(&fids, sc->first + j);
                seen = ((const int64_t *)btc_vec_at(
                           &names, (size_t)*btc_map_get(&frame_slot, other) - 1))[0] == nm[0];
            }
            if (seen)
                continue;
            uint64_t *fs = btc_map_get(&fn_slot, (uint64_t)nm[0]);
            struct btc_read_sampled *f;
            if (fs) {
                f = btc_vec_at(&t->sampled, (size_t)*fs - 1);
            } else {
                f = btc_vec_push(&t->sampled);
                if (!f || btc_map_put(&fn_slot, (uint64_t)nm[0], t->sampled.len) < 0) {
                    rc = BTC_ERR_NOMEM;
                    break;
                }
                f->name = nm[0];
                f->image = nm[1];
            }
            f->inclusive += sc->count;
            if (k == 0)
                f->self += sc->count;
        }
    }
    btc_map_free(&fn_slot);
    btc_vec_free(&stacks);
    btc_vec_free(&fids);
    btc_map_free(&frame_slot);
    btc_vec_free(&names);
    btc_map_free(&t->cs_counts);
    btc_map_init(&t->cs_counts);
    return rc;
}

static int read_payload(struct rd *r, struct btc_trace *t, btc_zone_fn fn, void *ctx)
{
    uint8_t hdr[BTC_FILE_HEADER_SIZE];
    get(r, hdr, sizeof hdr);
    if (r->failed || memcmp(hdr, btc_file_header, 5) != 0) {
        rd_fail(r, "payload does not start with the \"tracy\" header");
        return BTC_ERR_FORMAT;
    }
    t->version = BTC_FILE_VERSION(hdr[5], hdr[6], hdr[7]);
    if (!btc_file_release_of(t->version)) {
        char msg[200];
        snprintf(msg, sizeof msg, "file version %u.%u.%u, expected one of %s", hdr[5], hdr[6],
                 hdr[7], btc_file_releases_text());
        rd_fail(r, msg);
        return BTC_ERR_FORMAT;
    }
    const uint32_t fv = t->version;
    if (fv < BTC_GATE_NO_DELAY)
        g64(r); /* delay */
    t->resolution = (int64_t)g64(r);
    t->timer_mul = gf64(r);
    t->last_time = (int64_t)g64(r);
    g64(r); /* frame offset */
    t->pid = g64(r);
    g64(r); /* sampling period */
    t->cpu_arch = g8(r);
    g32(r);
    skip(r, 12);
    g8(r);
    gname(r, t->capture_name);
    gname(r, t->program);
    t->capture_time = g64(r);
    g64(r);
    gname(r, t->host_info);

    uint64_t n = g64(r); /* CPU topology */
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        g32(r);
        uint64_t dies = fv >= BTC_GATE_DIES ? g64(r) : 1;
        for (uint64_t d = 0; d < dies && !r->failed; d++) {
            if (fv >= BTC_GATE_DIES)
                g32(r);
            uint64_t cores = g64(r);
            for (uint64_t c = 0; c < cores && !r->failed; c++) {
                g32(r);
                uint64_t th = g64(r);
                t->cpu_threads += th;
                skip(r, th * 4);
            }
        }
    }
    t->crash_thread = g64(r); /* crash event */
    t->crash_time = (int64_t)g64(r);
    t->crash_text = (int64_t)g64(r); /* a pointer key until the strings are read */
    t->crash_callstack = g32(r);

    n = g64(r); /* frame sets */
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, 0); i++) {
        struct btc_read_frameset *fs = btc_vec_push(&t->framesets);
        if (!fs)
            return BTC_ERR_NOMEM;
        uint64_t name = g64(r);
        fs->name = (int64_t)name; /* resolved to a string once the strings are read */
        fs->continuous = g8(r);
        fs->frames = g64(r);
        int (*cb)(void *, const struct btc_trace *, const struct btc_read_frame *) =
            r->more ? r->more->frame : NULL;
        int64_t ref = 0;
        uint8_t continuous = fs->continuous;
        for (uint64_t k = 0; k < fs->frames && !r->failed; k++) {
            if (!cb) {
                skip(r, continuous ? 12 : 20);
                continue;
            }
            struct btc_read_frame f = {.set = (uint32_t)i, .end = -1};
            f.start = gwto(r, &ref);
            if (!continuous)
                f.end = gwto(r, &ref);
            g32(r); /* frame image */
            if (!r->failed && (r->cb_rc = cb(r->cb_ctx, t, &f)) < 0)
                rd_fail(r, "export stopped");
        }
    }
    if (fv >= BTC_GATE_SECTIONS) {
        n = g64(r);
        for (uint64_t i = 0; i < n && !r->failed; i++) {
            g16(r);
            uint64_t items = g64(r);
            t->sections += items;
            for (uint64_t k = 0; k < items && !r->failed; k++)
                skip(r, 15);
        }
        t->section_categories = g64(r);
        for (uint64_t i = 0; i < t->section_categories && !r->failed; i++)
            skip(r, 5);
    }

    struct btc_map skeys; /* file string key -> index */
    btc_map_init(&skeys);
    int rc = BTC_OK;
    r->copy_on = 0;
    n = g64(r);
    if (r->out) {
        put_u64(r->out, n + r->rw->extra_count);
        r->copy_on = 1;
    }
    char *buf = NULL;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t key = g64(r);
        uint64_t len = g64(r);
        if (len > MAX_STRING_BYTES) {
            rd_fail(r, "string longer than 64 MiB");
            break;
        }
        if (over_limit(r, t, 2 * len))
            break;
        char *nb = realloc(buf, len ? (size_t)len : 1);
        if (!nb) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        buf = nb;
        get(r, buf, (size_t)len);
        /* Strings are kept in file order even when two are equal. */
        size_t before = btc_strtab_count(&t->strings);
        int64_t idx = btc_strtab_intern(&t->strings, buf, (size_t)len);
        uint64_t *k = btc_vec_push(&t->string_keys);
        if (idx < 0 || !k) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        if ((size_t)idx != before) {
            /* A duplicate: store a second copy so indices stay aligned. */
            uint64_t *off = btc_vec_push(&t->strings.offs);
            uint32_t *l = btc_vec_push(&t->strings.lens);
            if (!off || !l) {
                rc = BTC_ERR_NOMEM;
                break;
            }
            *off = ((uint64_t *)t->strings.offs.data)[idx];
            *l = ((uint32_t *)t->strings.lens.data)[idx];
        }
        *k = key;
        if (btc_map_put(&skeys, key, i) < 0) {
            rc = BTC_ERR_NOMEM;
            break;
        }
    }
    free(buf);
    /* Appended strings: keys of their own, far from any pointer. */
    for (uint64_t i = 0; r->out && i < r->rw->extra_count; i++) {
        put_u64(r->out, 0xb7d0000000000000ull + i);
        put_u64(r->out, r->rw->extra_len[i]);
        put(r->out, r->rw->extra[i], r->rw->extra_len[i]);
    }
    n = rc < 0 ? 0 : g64(r); /* pointer strings */
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t ptr = g64(r);
        uint64_t *idx = btc_map_get(&skeys, g64(r));
        if (idx && btc_map_put(&t->key_string, ptr, *idx) < 0)
            rc = BTC_ERR_NOMEM;
    }
    struct btc_map thread_names;
    btc_map_init(&thread_names);
    n = rc < 0 ? 0 : g64(r);
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t tid = g64(r);
        uint64_t *idx = btc_map_get(&skeys, g64(r));
        if (idx && btc_map_put(&thread_names, tid, *idx) < 0)
            rc = BTC_ERR_NOMEM;
    }
    btc_map_free(&skeys);
    if (rc < 0) {
        btc_map_free(&thread_names);
        return rc;
    }
    for (size_t i = 0; i < t->framesets.len; i++) {
        struct btc_read_frameset *fs = btc_vec_at(&t->framesets, i);
        fs->name = fs->name ? string_of_key(t, (uint64_t)fs->name) : -1;
    }
    t->crash_text = t->crash_thread ? string_of_key(t, (uint64_t)t->crash_text) : -1;
    t->external_names = g64(r);
    for (uint64_t i = 0; i < t->external_names && !r->failed; i++)
        skip(r, 24);
    skip_list(r, 8); /* thread compression */
    t->external_threads = g64(r);
    for (uint64_t i = 0; i < t->external_threads && !r->failed; i++)
        skip(r, 8);

    /* Section 14 may list static locations in any order; zones refer to
     * them through the index table (section 15), whose entry s holds the key
     * of location s. */
    struct btc_vec unordered;
    btc_vec_init(&unordered, sizeof(struct btc_read_srcloc));
    struct btc_map by_key;
    btc_map_init(&by_key);
    n = g64(r);
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, vec_bytes(&unordered)); i++) {
        uint64_t key = g64(r);
        struct btc_read_srcloc *s = btc_vec_push(&unordered);
        if (!s || btc_map_put(&by_key, key, i) < 0) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        read_srcloc(r, t, s);
    }
    n = rc < 0 ? 0 : g64(r);
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, vec_bytes(&unordered)); i++) {
        uint64_t key = g64(r);
        if (i == 0)
            continue; /* entry 0 is reserved */
        struct btc_read_srcloc *s = btc_vec_push(&t->statics);
        if (!s) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        uint64_t *at = btc_map_get(&by_key, key);
        if (at)
            *s = *(struct btc_read_srcloc *)btc_vec_at(&unordered, (size_t)*at);
        else
            *s = (struct btc_read_srcloc){-1, -1, -1, 0, 0};
    }
    btc_vec_free(&unordered);
    btc_map_free(&by_key);
    n = rc < 0 ? 0 : g64(r); /* payload source locations */
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, 0); i++) {
        struct btc_read_srcloc *s = btc_vec_push(&t->payloads);
        if (!s) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        read_srcloc(r, t, s);
    }
    if (rc < 0) {
        btc_map_free(&thread_names);
        return rc;
    }
    skip_list(r, 10); /* zone count hints */
    skip_list(r, 10); /* GPU zone count hints */

    n = g64(r); /* locks */
    t->locks = n;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0 && !over_limit(r, t, 0); i++) {
        uint32_t id = g32(r);
        int64_t name = (int64_t)g24(r) - 1;
        int16_t srcloc = (int16_t)g16(r);
        uint8_t type = g8(r);
        skip(r, 1);           /* valid */
        int64_t ref = g64(r); /* announced: event times are offsets from it */
        skip(r, 8);           /* terminated */
        uint64_t nth = g64(r);
        skip(r, nth * 8);
        uint64_t ne = g64(r);
        t->lock_events += ne;
        if (!r->failed)
            rc = btc_read_lock_begin(t, id, name, srcloc, type, nth, ne);
        for (uint64_t k = 0; k < ne && !r->failed && rc >= 0; k++) {
            int64_t time = gwto(r, &ref);
            t->lock_events_marked += g16(r) != 0;
            uint8_t thread = g8(r);
            btc_read_lock_event(t, time, thread, g8(r));
        }
    }
    if (rc < 0)
        return rc;

    n = g64(r); /* messages */
    t->messages = n;
    int64_t mref = 0;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0; i++) {
        g64(r); /* key */
        int64_t time = gwto(r, &mref);
        uint64_t text = g64(r);
        uint8_t flags = g8(r);
        uint32_t color = g32(r);
        uint32_t cs = g24(r);
        uint8_t source = 0, severity = 2; /* before 0.13.2: user, info (as upstream reads them) */
        if (fv >= BTC_GATE_MSG_META) {
            source = g8(r);
            severity = g8(r);
        }
        if (r->mfn && !r->failed) {
            int64_t idx = !(flags & BTC_STRREF_ACTIVE) ? -1
                          : (flags & BTC_STRREF_IDX)
                              ? (text < btc_strtab_count(&t->strings) ? (int64_t)text : -1)
                              : string_of_key(t, text);
            struct btc_read_message msg = {time, btc_trace_string(t, idx), color, source, severity};
            rc = r->mfn(ctx, t, &msg);
        }
        if (source == BT_MSG_SOURCE_TRACY)
            t->messages_tracy++;
        else
            t->messages_user++;
        if (source != BT_MSG_SOURCE_TRACY && color != 0xFFFFFFFFu)
            t->messages_colored++;
        t->messages_with_callstack += cs != 0;
    }
    if (rc < 0)
        return rc;
    n = g64(r); /* zone extras */
    t->extras = n;
    for (uint64_t i = 0; i < n && !r->failed; i++)
        skip(r, 12);

    g64(r); /* total zones */
    g64(r); /* child lists */
    n = g64(r);
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0 && !over_limit(r, t, 0); i++) {
        struct btc_read_thread *th = btc_vec_push(&t->threads);
        if (!th) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        th->id = g64(r);
        uint64_t *nm = btc_map_get(&thread_names, th->id);
        th->name = nm ? (int64_t)*nm : -1;
        th->zones = g64(r);
        th->kernel_samples = g64(r);
        th->is_fiber = g8(r) != 0;
        th->group_hint = fv >= BTC_GATE_GROUP_HINT ? (int32_t)g32(r) : 0;
        uint64_t tid = th->id;
        rc = read_timeline(r, t, tid, fn, ctx);
        th = btc_vec_at(&t->threads, t->threads.len - 1);
        th->messages = g64(r);
        skip(r, th->messages * 8);
        /* Timer samples per callstack: all samples, less those at context
         * switches (a subset, with the same callstacks). */
        th->ctx_samples = g64(r);
        int64_t ref = 0;
        for (uint64_t k = 0; k < th->ctx_samples && !r->failed && rc >= 0; k++) {
            struct btc_read_sample smp = {tid, gwto(r, &ref), g24(r), 1};
            rc = count_callstack(r, t, smp.callstack, UINT64_MAX);
            if (rc >= 0)
                rc = give_sample(r, t, &smp);
        }
        th->samples = g64(r);
        ref = 0;
        for (uint64_t k = 0; k < th->samples && !r->failed && rc >= 0; k++) {
            struct btc_read_sample smp = {tid, gwto(r, &ref), g24(r), 0};
            rc = count_callstack(r, t, smp.callstack, 1);
            if (rc >= 0)
                rc = give_sample(r, t, &smp);
        }
        if (rc < 0)
            break;
        t->samples += th->samples;
        t->ctx_samples += th->ctx_samples;
    }
    btc_map_free(&thread_names);
    if (rc < 0)
        return rc;

    t->gpu_zones_timed = g64(r);
    g64(r); /* child lists */
    n = g64(r);
    t->gpu_contexts = n;
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, 0); i++) {
        skip(r, 8 + 1 + 8 + 4 + 1);
        int64_t *name = btc_vec_push(&t->gpu_names);
        if (!name)
            return BTC_ERR_NOMEM;
        *name = (int64_t)g24(r) - 1;
        skip(r, 8);
        if (fv >= BTC_GATE_GPU_NOTES)
            skip_list(r, 11);
        uint64_t nth = g64(r);
        for (uint64_t k = 0; k < nth && !r->failed; k++) {
            r->gpu_timeline = g64(r);
            read_gpu_zones(r, t, (uint32_t)i, fv >= BTC_GATE_GPU_NOTES);
        }
        if (fv >= BTC_GATE_GPU_NOTES) {
            uint64_t groups = g64(r);
            for (uint64_t k = 0; k < groups && !r->failed; k++) {
                g16(r);
                skip_list(r, 16);
            }
        }
    }

    n = g64(r); /* plots */
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, 0); i++) {
        struct btc_read_plot *p = btc_vec_push(&t->plots);
        if (!p)
            return BTC_ERR_NOMEM;
        p->type = g8(r);
        skip(r, 3 + 4);
        p->name = string_of_key(t, g64(r));
        p->min = gf64(r);
        p->max = gf64(r);
        gf64(r);
        p->points = g64(r);
        int (*cb)(void *, const struct btc_trace *, const struct btc_read_point *) =
            r->more ? r->more->point : NULL;
        int64_t ref = 0;
        for (uint64_t k = 0; k < p->points && !r->failed; k++) {
            if (!cb) {
                skip(r, 16);
                continue;
            }
            struct btc_read_point pt = {.plot = (uint32_t)i};
            pt.time = gwto(r, &ref);
            pt.value = gf64(r);
            if (!r->failed && (r->cb_rc = cb(r->cb_ctx, t, &pt)) < 0)
                rd_fail(r, "export stopped");
        }
    }

    n = g64(r); /* memory pools */
    g64(r);
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, 0); i++) {
        struct btc_read_pool *p = btc_vec_push(&t->pools);
        if (!p)
            return BTC_ERR_NOMEM;
        uint64_t name = g64(r);
        p->name = name ? string_of_key(t, name) : -1;
        p->events = g64(r);
        p->active = g64(r);
        g64(r);
        int (*cb)(void *, const struct btc_trace *, const struct btc_read_mem *) =
            r->more ? r->more->mem : NULL;
        int64_t ref = 0;
        for (uint64_t k = 0; k < p->events && !r->failed; k++) {
            struct btc_read_mem e = {.pool = (uint32_t)i};
            e.ptr = g64(r);
            e.size = g64(r);
            uint32_t csa = g24(r);
            uint32_t csf = g24(r);
            e.time_alloc = gwto(r, &ref);
            int64_t free_off = (int64_t)g64(r);
            skip(r, 4);
            p->allocs_with_callstack += csa != 0;
            p->frees_with_callstack += csf != 0;
            p->freed += free_off >= 0;
            e.time_free =
                free_off < 0 ? -1 : (int64_t)((uint64_t)e.time_alloc + (uint64_t)free_off);
            e.cs_alloc = csa;
            if (free_off < 0 && csa && !btc_map_get(&t->leak_cs, csa) &&
                (over_limit(r, t, 0) || btc_map_put(&t->leak_cs, csa, 1) < 0))
                return r->failed ? BTC_ERR_FORMAT : BTC_ERR_NOMEM;
            if (cb && !r->failed && (r->cb_rc = cb(r->cb_ctx, t, &e)) < 0)
                rd_fail(r, "export stopped");
        }
        skip(r, 32);
    }

    if ((rc = read_callstacks(r, t)) < 0)
        return rc;
    n = g64(r); /* app info */
    for (uint64_t i = 0; i < n && !r->failed && !over_limit(r, t, 0); i++) {
        uint64_t v = g64(r);
        uint8_t flags = g8(r);
        uint32_t *slot = btc_vec_push(&t->app_info);
        if (!slot)
            return BTC_ERR_NOMEM;
        int64_t idx = (flags & BTC_STRREF_IDX) ? (int64_t)v : string_of_key(t, v);
        *slot = idx < 0 ? UINT32_MAX : (uint32_t)idx;
    }
    skip(r, g32(r)); /* frame image dictionary */
    n = g64(r);
    t->frame_images = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint16_t w = g16(r), h = g16(r);
        g8(r);
        skip(r, (uint64_t)w * h / 2);
    }
    n = g64(r); /* context switches */
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t tid = g64(r);
        uint64_t k = g64(r);
        t->ctx_switches += k;
        for (size_t j = 0; j < t->threads.len; j++) {
            struct btc_read_thread *th = btc_vec_at(&t->threads, j);
            if (th->id == tid)
                th->ctx_switches = k;
        }
        for (uint64_t j = 0; j < k && !r->failed; j++)
            skip(r, fv >= BTC_GATE_WAKEUP_CPU ? 36 : 35);
    }
    g64(r); /* per-CPU context switches */
    for (unsigned c = 0; c < BTC_FILE_PER_CPU_SLOTS && !r->failed; c++) {
        uint64_t k = g64(r);
        t->cpu_ctx_switches += k;
        for (uint64_t j = 0; j < k && !r->failed; j++)
            skip(r, 18);
    }
    t->tid_pids = g64(r); /* tid -> pid */
    for (uint64_t i = 0; i < t->tid_pids && !r->failed; i++)
        skip(r, 16);
    t->cpu_thread_data = g64(r);
    for (uint64_t i = 0; i < t->cpu_thread_data && !r->failed; i++) {
        skip(r, 16); /* tid, running time */
        t->cpu_regions += g32(r);
        t->cpu_migrations += g32(r);
    }
    g64(r); /* symbol locations */
    g64(r);
    n = g64(r);
    t->symbols = n;
    for (uint64_t i = 0; i < n && !r->failed; i++)
        skip(r, 32);
    n = g64(r); /* symbol code */
    t->symbol_code = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        g64(r);
        uint32_t len = g32(r);
        t->symbol_code_bytes += len;
        skip(r, len);
    }
    skip_list(r, 16); /* code -> symbol */
    n = g64(r);       /* hardware samples */
    t->hw_sample_addresses = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        g64(r);
        for (int k = 0; k < 6 && !r->failed; k++) {
            uint64_t c = g64(r);
            t->hw_samples[k] += c;
            for (uint64_t j = 0; j < c && !r->failed; j++)
                skip(r, 8);
        }
    }
    n = g64(r); /* source file cache */
    t->source_files = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        skip(r, g32(r));
        uint32_t len = g32(r);
        t->source_file_bytes += len;
        skip(r, len);
    }
    if (r->failed)
        return BTC_ERR_FORMAT;
    if (r->pos != r->len || next_block(r) || r->failed) {
        rd_fail(r, "data after the last section");
        return BTC_ERR_FORMAT;
    }
    return BTC_OK;
}

static void trace_init(struct btc_trace *t)
{
    memset(t, 0, sizeof *t);
    btc_strtab_init(&t->strings);
    btc_vec_init(&t->string_keys, sizeof(uint64_t));
    btc_map_init(&t->key_string);
    btc_vec_init(&t->statics, sizeof(struct btc_read_srcloc));
    btc_vec_init(&t->payloads, sizeof(struct btc_read_srcloc));
    btc_vec_init(&t->framesets, sizeof(struct btc_read_frameset));
    btc_vec_init(&t->threads, sizeof(struct btc_read_thread));
    btc_vec_init(&t->pools, sizeof(struct btc_read_pool));
    btc_vec_init(&t->plots, sizeof(struct btc_read_plot));
    btc_vec_init(&t->app_info, sizeof(uint32_t));
    btc_vec_init(&t->gpu_names, sizeof(int64_t));
    btc_vec_init(&t->gpu_stats, sizeof(struct btc_read_gpu_stat));
    btc_vec_init(&t->sampled, sizeof(struct btc_read_sampled));
    btc_map_init(&t->cs_counts);
    btc_map_init(&t->sample_top);
    btc_vec_init(&t->lock_stats, sizeof(struct btc_read_lock));
    btc_map_init(&t->leak_cs);
}

void btc_trace_free(struct btc_trace *t)
{
    btc_strtab_free(&t->strings);
    btc_vec_free(&t->string_keys);
    btc_map_free(&t->key_string);
    btc_vec_free(&t->statics);
    btc_vec_free(&t->payloads);
    btc_vec_free(&t->framesets);
    btc_vec_free(&t->threads);
    btc_vec_free(&t->pools);
    btc_vec_free(&t->plots);
    btc_vec_free(&t->app_info);
    btc_vec_free(&t->gpu_names);
    btc_vec_free(&t->gpu_stats);
    btc_vec_free(&t->sampled);
    btc_map_free(&t->cs_counts);
    btc_map_free(&t->sample_top);
    btc_vec_free(&t->lock_stats);
    btc_map_free(&t->leak_cs);
}

const char *btc_trace_string(const struct btc_trace *t, int64_t idx)
{
    if (idx < 0)
        return "";
    const char *s = btc_strtab_get(&t->strings, (uint32_t)idx, NULL);
    return s ? s : "";
}

const struct btc_read_srcloc *btc_trace_srcloc(const struct btc_trace *t, int16_t id)
{
    if (id > 0 && (size_t)id <= t->statics.len)
        return btc_vec_at(&t->statics, (size_t)id - 1);
    if (id < 0 && (size_t)(-(int)id) <= t->payloads.len)
        return btc_vec_at(&t->payloads, (size_t)(-(int)id) - 1);
    return NULL;
}

static int rd_nomem(struct rd *r)
{
    snprintf(r->err, r->errlen, "out of memory while reading the trace");
    return BTC_ERR_NOMEM;
}

static int read_container(struct rd *r, struct btc_trace *t, btc_zone_fn fn, void *ctx)
{
    uint8_t magic[4];
    if (!raw_read(r, magic, 4)) {
        snprintf(r->err, r->errlen, "file shorter than its 4-byte magic");
        return BTC_ERR_FORMAT;
    }
    if (memcmp(magic, btc_file_magic, 4) == 0) {
        uint8_t cs[2];
        if (!raw_read(r, cs, 2)) {
            snprintf(r->err, r->errlen, "file ends inside its header");
            return BTC_ERR_FORMAT;
        }
        r->compression = cs[0];
        r->streams = cs[1];
        if (cs[0] > BTC_FILE_COMPRESS_ZSTD || r->streams == 0) {
            snprintf(r->err, r->errlen,
                     "header: compression %u, streams %u (expected 0 or 1, and 1..255)", cs[0],
                     cs[1]);
            return BTC_ERR_FORMAT;
        }
    } else if (memcmp(magic, "tlZ\x04", 4) == 0) {
        r->compression = BTC_FILE_COMPRESS_LZ4;
        r->streams = 1;
    } else if (memcmp(magic, "tZst", 4) == 0) {
        r->compression = BTC_FILE_COMPRESS_ZSTD;
        r->streams = 1;
    } else {
        snprintf(r->err, r->errlen, "not a .tracy file (magic %02x %02x %02x %02x)", magic[0],
                 magic[1], magic[2], magic[3]);
        return BTC_ERR_FORMAT;
    }
    r->ctx = calloc(r->streams, sizeof *r->ctx);
    r->cbuf = malloc(MAX_COMPRESSED);
    r->blk = malloc(BTC_FILE_BLOCK_SIZE);
    if (!r->ctx || !r->cbuf || !r->blk)
        return rd_nomem(r);
    for (unsigned i = 0; i < r->streams; i++) {
        if (r->compression == BTC_FILE_COMPRESS_ZSTD) {
            if (!(r->ctx[i].z = ZSTD_createDStream()))
                return rd_nomem(r);
            ZSTD_initDStream(r->ctx[i].z);
        } else {
            r->ctx[i].lz4 = LZ4_createStreamDecode();
            r->ctx[i].lz4buf[0] = malloc(BTC_FILE_BLOCK_SIZE);
            r->ctx[i].lz4buf[1] = malloc(BTC_FILE_BLOCK_SIZE);
            if (!r->ctx[i].lz4 || !r->ctx[i].lz4buf[0] || !r->ctx[i].lz4buf[1])
                return rd_nomem(r);
        }
    }
    int rc = read_payload(r, t, fn, ctx);
    return rc == BTC_ERR_NOMEM ? rd_nomem(r) : rc;
}

static void rd_free(struct rd *r)
{
    for (unsigned i = 0; r->ctx && i < r->streams; i++) {
        ZSTD_freeDStream(r->ctx[i].z);
        if (r->ctx[i].lz4)
            LZ4_freeStreamDecode(r->ctx[i].lz4);
        free(r->ctx[i].lz4buf[0]);
        free(r->ctx[i].lz4buf[1]);
    }
    free(r->ctx);
    free(r->cbuf);
    free(r->blk);
}

int btc_tracy_read(const char *path, struct btc_trace *t, btc_zone_fn fn, void *ctx, char *err,
                   size_t errlen)
{
    return btc_tracy_read_messages(path, t, fn, NULL, ctx, err, errlen);
}

int btc_tracy_read_messages(const char *path, struct btc_trace *t, btc_zone_fn fn,
                            btc_message_fn mfn, void *ctx, char *err, size_t errlen)
{
    return btc_tracy_read_more(path, t, fn, mfn, NULL, ctx, err, errlen);
}

int btc_tracy_read_more(const char *path, struct btc_trace *t, btc_zone_fn fn, btc_message_fn mfn,
                        const struct btc_read_more *more, void *ctx, char *err, size_t errlen)
{
    trace_init(t);
    struct rd r = {.err = err, .errlen = errlen, .mfn = mfn, .more = more, .cb_ctx = ctx};
    r.f = fopen(path, "rb");
    if (!r.f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return BTC_ERR_IO;
    }
    struct stat st;
    if (fstat(fileno(r.f), &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is a folder, not a .tracy file", path);
        fclose(r.f);
        return BTC_ERR_IO;
    }
    int rc = read_container(&r, t, fn, ctx);
    fclose(r.f);
    rd_free(&r);
    return r.cb_rc < 0 ? r.cb_rc : rc;
}

int btc_tracy_read_mem(const uint8_t *buf, size_t n, struct btc_trace *t, btc_zone_fn fn,
                       btc_message_fn mfn, void *ctx, char *err, size_t errlen)
{
    trace_init(t);
    struct rd r = {.err = err, .errlen = errlen, .mem = buf, .mem_len = n, .mfn = mfn};
    int rc = read_container(&r, t, fn, ctx);
    rd_free(&r);
    return rc;
}

int btc_tracy_rewrite(const char *in, const char *out, const struct btc_rewrite *rw, char *err,
                      size_t errlen)
{
    struct btc_trace t;
    trace_init(&t);
    struct fw w;
    char tmp[4200] = "";
    struct rd r = {.err = err, .errlen = errlen, .rw = rw};
    r.f = fopen(in, "rb");
    if (!r.f) {
        snprintf(err, errlen, "cannot open %s: %s", in, strerror(errno));
        btc_trace_free(&t);
        return BTC_ERR_IO;
    }
    int rc = BTC_OK;
    if (out) {
        rc = btc_fw_begin(&w, out, tmp, sizeof tmp, err, errlen);
        if (rc >= 0) {
            r.out = &w;
            r.copy_on = 1;
        }
    }
    if (rc >= 0)
        rc = read_container(&r, &t, NULL, NULL);
    /* Whatever follows what the reader knows is copied as it is. */
    while (rc >= 0 && r.out && !r.failed) {
        if (r.pos == r.len && !next_block(&r))
            break;
        btc_fw_put(&w, r.cur + r.pos, r.len - r.pos);
        r.pos = r.len;
    }
    if (rc >= 0 && r.failed)
        rc = BTC_ERR_FORMAT;
    if (r.out)
        rc = btc_fw_end(&w, out, tmp, rc, NULL, err, errlen);
    fclose(r.f);
    rd_free(&r);
    btc_trace_free(&t);
    return rc;
}
