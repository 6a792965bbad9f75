/* The .tracy reader's block stream: the container (zstd or LZ4, 1..255
 * streams, or the legacy single stream of files before 0.11.0) read block by
 * block, the payload handed to the section readers field by field, the
 * memory bound, and the entry points (btc_tracy_read*, btc_tracy_rewrite). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "btc_file_versions.h"
#include "btc_tracy_read_parts.h"

int btcr_raw_read(struct rd *r, void *p, size_t n)
{
    if (r->f)
        return fread(p, 1, n, r->f) == n;
    if (r->mem_len - r->mem_pos < n)
        return 0;
    memcpy(p, r->mem + r->mem_pos, n);
    r->mem_pos += n;
    return 1;
}

void btcr_fail(struct rd *r, const char *msg)
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

uint64_t btcr_vec_bytes(const struct btc_vec *v)
{
    return (uint64_t)v->cap * v->item;
}

/* Whether holding `more` bytes beside what t holds (its strings and tables;
 * zones and messages stream through callbacks) passes the memory limit; if
 * so the read fails saying so. A small file can expand to gigabytes. */
int btcr_over_limit(struct rd *r, const struct btc_trace *t, uint64_t more)
{
    uint64_t held = btc_strtab_memory(&t->strings) + btcr_vec_bytes(&t->string_keys) +
                    (uint64_t)t->key_string.cap * 17 + btcr_vec_bytes(&t->statics) +
                    btcr_vec_bytes(&t->payloads) + btcr_vec_bytes(&t->framesets) +
                    btcr_vec_bytes(&t->threads) + btcr_vec_bytes(&t->pools) +
                    btcr_vec_bytes(&t->plots) + btcr_vec_bytes(&t->app_info) +
                    btcr_vec_bytes(&t->gpu_names) + btcr_vec_bytes(&t->gpu_stats) +
                    btcr_vec_bytes(&t->sampled) + (uint64_t)t->cs_counts.cap * 17 +
                    btcr_vec_bytes(&t->lock_stats) + (uint64_t)t->leak_cs.cap * 17;
    if (held + more <= memory_limit)
        return 0;
    char msg[160];
    int mib = memory_limit % (1u << 20) == 0;
    snprintf(msg, sizeof msg,
             "holding this file's strings and tables needs more than the reader's memory limit "
             "of %llu %s",
             (unsigned long long)(memory_limit >> (mib ? 20 : 10)), mib ? "MiB" : "KiB");
    btcr_fail(r, msg);
    return 1;
}

/* Loads the next block of the payload; returns 0 at a clean end. */
int btcr_next_block(struct rd *r)
{
    uint8_t szb[4];
    if (!btcr_raw_read(r, szb, 4)) {
        r->at_end = 1;
        return 0;
    }
    uint32_t sz = bt_wire_get_u32(szb);
    if (sz == 0 || sz > MAX_COMPRESSED) {
        btcr_fail(r, "block with an impossible compressed size");
        return 0;
    }
    if (!btcr_raw_read(r, r->cbuf, sz)) {
        btcr_fail(r, "file ends inside a compressed block");
        return 0;
    }
    struct stream_ctx *s = &r->ctx[r->next_stream];
    r->next_stream = (r->next_stream + 1) % r->streams;
    if (r->compression == BTC_FILE_COMPRESS_ZSTD) {
        ZSTD_inBuffer in = {r->cbuf, sz, 0};
        ZSTD_outBuffer out = {r->blk, BTC_FILE_BLOCK_SIZE, 0};
        size_t rc = ZSTD_decompressStream(s->z, &out, &in);
        if (ZSTD_isError(rc)) {
            btcr_fail(r, "zstd block does not decompress");
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
            btcr_fail(r, "LZ4 block does not decompress");
            return 0;
        }
        r->cur = dst;
        r->len = (size_t)n;
    }
    r->pos = 0;
    return r->len > 0;
}

void btcr_get(struct rd *r, void *p, size_t n)
{
    uint8_t *o = p;
    while (n) {
        if (r->failed) {
            memset(o, 0, n);
            return;
        }
        if (r->pos == r->len && !btcr_next_block(r)) {
            if (!r->failed)
                btcr_fail(r, "payload ends early");
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
    if (!btcr_raw_read(r, magic, 4)) {
        snprintf(r->err, r->errlen, "file shorter than its 4-byte magic");
        return BTC_ERR_FORMAT;
    }
    if (memcmp(magic, btc_file_magic, 4) == 0) {
        uint8_t cs[2];
        if (!btcr_raw_read(r, cs, 2)) {
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
    int rc = btcr_payload(r, t, fn, ctx);
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
        /* The copy keeps the original's container and compression: a 0.10
         * file rewritten in the newer container is one 0.10's GUI and
         * csvexport refuse ("not a Tracy dump"). */
        uint8_t head[5] = {0};
        size_t got = fread(head, 1, sizeof head, r.f);
        rewind(r.f);
        memset(&w, 0, sizeof w);
        bool legacy_lz4 = got >= 4 && memcmp(head, btc_file_magic_legacy_lz4, 4) == 0;
        w.legacy = legacy_lz4 || (got >= 4 && memcmp(head, btc_file_magic_legacy_zstd, 4) == 0);
        w.lz4 = legacy_lz4 || (got == 5 && memcmp(head, btc_file_magic, 4) == 0 &&
                               head[4] == BTC_FILE_COMPRESS_LZ4);
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
        if (r.pos == r.len && !btcr_next_block(&r))
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
