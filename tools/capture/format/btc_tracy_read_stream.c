/* The .tracy reader's block stream: the container's blocks (zstd or LZ4,
 * 1..255 streams, or the legacy single stream of files before 0.11.0) read
 * one by one, the payload handed to the section readers field by field, and
 * the memory bound. The bottom of the reader: the entry points
 * (btc_tracy_read_file.c) and the section readers (btc_tracy_read*.c) read
 * through it. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

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
