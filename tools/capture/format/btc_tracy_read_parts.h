/* What the units of the .tracy reader share (its entry points in
 * btc_tracy_read_file.c, its sections in btc_tracy_read.c and
 * btc_tracy_read_*.c): the reader's state, the block stream under them all
 * (btc_tracy_read_stream.c), the trace's set-up (btc_tracy_trace.c) and the
 * little-endian field readers every section uses. Internal to the reader. */
#ifndef BTC_TRACY_READ_PARTS_H
#define BTC_TRACY_READ_PARTS_H

#include <lz4.h>
#include <stdio.h>
#include <string.h>
#include <zstd.h>

#include "btc_format.h"
#include "btc_tracy.h"
#include "btc_tracy_file.h"

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

/* The trace set up empty (btc_tracy_trace.c). */
void btcr_trace_init(struct btc_trace *t);
/* The block stream, btc_tracy_read_stream.c. */
int btcr_raw_read(struct rd *r, void *p, size_t n);
void btcr_fail(struct rd *r, const char *msg);
uint64_t btcr_vec_bytes(const struct btc_vec *v);
int btcr_over_limit(struct rd *r, const struct btc_trace *t, uint64_t more);
int btcr_next_block(struct rd *r);
void btcr_get(struct rd *r, void *p, size_t n);
int64_t btcr_string_of_key(struct btc_trace *t, uint64_t key);
void btcr_srcloc(struct rd *r, struct btc_trace *t, struct btc_read_srcloc *s);
void btcr_gpu_zones(struct rd *r, struct btc_trace *t, uint32_t ctx, int query_ids);
int btcr_callstacks(struct rd *r, struct btc_trace *t);
int btcr_count_callstack(struct rd *r, struct btc_trace *t, uint32_t cs, uint64_t add);
int btcr_give_sample(struct rd *r, const struct btc_trace *t, const struct btc_read_sample *smp);
int btcr_payload(struct rd *r, struct btc_trace *t, btc_zone_fn fn, void *ctx);

static inline void skip(struct rd *r, uint64_t n)
{
    uint8_t tmp[256];
    while (n && !r->failed) {
        size_t k = n > sizeof tmp ? sizeof tmp : (size_t)n;
        btcr_get(r, tmp, k);
        n -= k;
    }
}

static inline uint8_t g8(struct rd *r)
{
    uint8_t v;
    btcr_get(r, &v, 1);
    return v;
}
static inline uint16_t g16(struct rd *r)
{
    uint8_t b[2];
    btcr_get(r, b, 2);
    return bt_wire_get_u16(b);
}
static inline uint32_t g24(struct rd *r)
{
    uint8_t b[3];
    btcr_get(r, b, 3);
    return b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16);
}
static inline uint32_t g32(struct rd *r)
{
    uint8_t b[4];
    btcr_get(r, b, 4);
    return bt_wire_get_u32(b);
}
static inline uint64_t g64(struct rd *r)
{
    uint8_t b[8];
    btcr_get(r, b, 8);
    return bt_wire_get_u64(b);
}
static inline double gf64(struct rd *r)
{
    uint64_t b = g64(r);
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static inline int64_t gwto(struct rd *r, int64_t *ref)
{
    *ref = (int64_t)((uint64_t)*ref + g64(r));
    return *ref;
}

/* A length-prefixed name limited to BTC_FILE_NAME_MAX - 1 bytes. */
static inline void gname(struct rd *r, char *out)
{
    uint64_t len = g64(r);
    if (len >= BTC_FILE_NAME_MAX) {
        btcr_fail(r, "name longer than 1023 bytes");
        out[0] = 0;
        return;
    }
    btcr_get(r, out, (size_t)len);
    out[len] = 0;
}

/* Reads count-prefixed fixed-size records and ignores them. */
static inline void skip_list(struct rd *r, size_t rec)
{
    uint64_t n = g64(r);
    for (uint64_t i = 0; i < n && !r->failed; i++)
        skip(r, rec);
}

#endif
