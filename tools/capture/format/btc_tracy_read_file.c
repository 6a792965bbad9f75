/* The .tracy reader's entry points (btc_tracy_read*, btc_tracy_rewrite):
 * the file or buffer opened, the container's header read and its
 * decompressors set up, then the payload handed to the section readers
 * (btc_tracy_read.c), which read it through the block stream
 * (btc_tracy_read_stream.c). The top of the reader. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "btc_tracy_read_parts.h"

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
    btcr_trace_init(t);
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
    btcr_trace_init(t);
    struct rd r = {.err = err, .errlen = errlen, .mem = buf, .mem_len = n, .mfn = mfn};
    int rc = read_container(&r, t, fn, ctx);
    rd_free(&r);
    return rc;
}

int btc_tracy_rewrite(const char *in, const char *out, const struct btc_rewrite *rw, char *err,
                      size_t errlen)
{
    struct btc_trace t;
    btcr_trace_init(&t);
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
