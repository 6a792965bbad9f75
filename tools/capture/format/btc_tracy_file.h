/* The .tracy file's block stream (struct fw): the container header, the
 * payload cut into 64 KiB blocks and compressed (btc_compress.h), and the
 * little-endian put helpers every section is written with. The bottom of
 * the writer (btc_tracy_file.c); the reader's rewrite writes through it
 * too. Internal to the capture core. */
#ifndef BTC_TRACY_FILE_H
#define BTC_TRACY_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "btc_compress.h"
#include "btc_format.h"
#include "btc_util.h"

struct btc_spool;

struct fw {
    FILE *f;
    uint8_t *blk; /* the block being filled (btc_compress_block) */
    size_t len;
    struct btc_compress *c;
    uint64_t file_bytes;
    uint64_t payload; /* uncompressed bytes handed to the compressor */
    int failed;
    int legacy; /* set before btc_fw_begin: the container of files before 0.11.0 */
    int lz4;    /* set before btc_fw_begin: LZ4 blocks instead of zstd */
    int alone;  /* set before btc_fw_begin: every block compressed on its own */
    /* While set, blocks go to this spool instead of the file (a part whose
     * length must be known before what precedes it is written). */
    struct btc_spool *detour;
};

/* Appends n bytes, compressing each block as it fills. */

void btc_fw_put(struct fw *w, const void *p, size_t n);
/* Hands the block being filled on (to the compressor, or the detour). */
void btc_fw_block(struct fw *w);

/* Opens PATH for a new .tracy (container header written): a regular
 * file is written as tmp (filled in, tmplen bytes) and renamed by
 * btc_fw_end only when complete. Returns BTC_OK or an error with err. */
int btc_fw_begin(struct fw *w, const char *path, char *tmp, size_t tmplen, char *err,
                 size_t errlen);
/* Flushes and closes; rc is the payload writer's result: on failure the
 * temporary file goes and PATH is left as it was. Returns the final rc. */
int btc_fw_end(struct fw *w, const char *path, const char *tmp, int rc, uint64_t *bytes, char *err,
               size_t errlen);
static inline void put(struct fw *w, const void *p, size_t n)
{
    btc_fw_put(w, p, n);
}

static inline void put_u8(struct fw *w, uint8_t v)
{
    put(w, &v, 1);
}
/* n is a constant at every call, so each put_uN inlines to its own fast
 * path: one store while the block has room. */
static inline void put_le(struct fw *w, uint64_t v, unsigned n)
{
    if (w->len + n < BTC_FILE_BLOCK_SIZE) {
        btc_le_store(w->blk + w->len, v, n);
        w->len += n;
        return;
    }
    uint8_t b[8];
    btc_le_store(b, v, n);
    put(w, b, n);
}
static inline void put_u16(struct fw *w, uint16_t v)
{
    put_le(w, v, 2);
}
static inline void put_u32(struct fw *w, uint32_t v)
{
    put_le(w, v, 4);
}
static inline void put_u64(struct fw *w, uint64_t v)
{
    put_le(w, v, 8);
}
static inline void put_i64(struct fw *w, int64_t v)
{
    put_u64(w, (uint64_t)v);
}
static inline void put_f64(struct fw *w, double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    put_u64(w, b);
}
static inline void put_u24(struct fw *w, uint32_t v)
{
    put_le(w, v & 0xFFFFFF, 3);
}
/* Time written against a running reference (notes 7.2 "WTO"). */
static inline void put_wto(struct fw *w, int64_t *ref, int64_t t)
{
    put_u64(w, (uint64_t)t - (uint64_t)*ref);
    *ref = t;
}
static inline void put_str(struct fw *w, const char *s, size_t n)
{
    put_u64(w, n);
    put(w, s, n);
}
static inline void put_strref_idx(struct fw *w, int64_t idx)
{
    if (idx < 0) {
        put_u64(w, 0);
        put_u8(w, 0);
    } else {
        put_u64(w, (uint64_t)idx);
        put_u8(w, BTC_STRREF_IDX | BTC_STRREF_ACTIVE);
    }
}

#endif
