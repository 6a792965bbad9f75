/* The .tracy writer's shared parts: the compressed block stream (struct fw)
 * with its little-endian put helpers, and the writer state every section
 * unit (btc_tracy_write.c, btc_tracy_write_gpu.c, ...) writes through.
 * Internal to the capture core. */
#ifndef BTC_TRACY_WRITE_PARTS_H
#define BTC_TRACY_WRITE_PARTS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "btc_compress.h"
#include "btc_format.h"
#include "btc_model.h"

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

/* Appends n bytes, compressing each block as it fills (btc_tracy_write.c). */
void btc_fw_put(struct fw *w, const void *p, size_t n);

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

static inline int64_t welcome_ns(const struct btc_welcome *wl, int64_t ticks)
{
    return btc_ticks_to_ns(wl->timer_mul, wl->init_begin, ticks);
}

struct writer {
    struct btc_model *m;
    struct fw w;
    uint32_t version;
    int64_t unknown;     /* string index of "???" */
    int64_t frame_name;  /* string index of "Frame" */
    uint64_t texts_base; /* string index of the first spooled text */
    /* The head start (btc_tracy_prewrite.h): the thread whose timeline's
     * blocks are ready and how many (0: none, every timeline is encoded
     * here), and the spool of what goes between the string table's filler
     * and that timeline. */
    struct btc_prewrite *pre;
    uint32_t pre_thread;
    uint64_t pre_blocks;
    struct btc_spool detour;
    uint64_t filler_key; /* the filler string's key */
    uint8_t *home_blk;   /* the block being filled before the detour, and its length */
    size_t home_len;
    char *err;
    size_t errlen;
};

/* String index for a wire key, "???" when the client never answered. */
int64_t btcw_key_string(struct writer *wr, uint64_t key);
/* A source location record (35 bytes) of the file. */
void btcw_put_srcloc(struct writer *wr, const struct btc_srcloc *s, int is_payload);
/* Names a spool that could not be read back; returns BTC_ERR_IO. */
int btcw_io_fail(struct writer *wr, const char *what);

/* A thread's context-switch samples and samples (end of its section 23
 * record), btc_tracy_write_samples.c. */
int btcw_thread_samples(struct writer *wr, uint32_t thread);

/* Context switches, btc_tracy_write_ctxswitch.c: external names (section
 * 11), the external thread table (13), the regions of threads and CPUs (31,
 * 32) and the per-thread CPU figures (34). */
void btcw_external_names(struct writer *wr);
void btcw_external_threads(struct writer *wr);
int btcw_ctxswitch(struct writer *wr);
void btcw_cpu_threads(struct writer *wr);

/* Frame images, btc_tracy_write_images.c: the image of the default set's
 * frame (its index there), -1 none; and section 30. */
int32_t btcw_frame_image(struct writer *wr, uint64_t frame);
int btcw_frame_images(struct writer *wr);

/* Callstacks, btc_tracy_write_callstacks.c: the callstack and frame tables
 * (section 28) and the symbol table with the code-address map (35, 37),
 * the symbol code between them. */
int btcw_callstacks(struct writer *wr);
int btcw_symbols(struct writer *wr);

/* Transferred code, btc_tracy_write_code.c: symbol code (section 36) and
 * the source file cache (39). */
int btcw_symbol_code(struct writer *wr);
int btcw_source_files(struct writer *wr);

/* Hardware samples (section 38), btc_tracy_write_hw.c. */
int btcw_hw_samples(struct writer *wr);

/* Sections (section 7, 0.14.0 only), btc_tracy_write_sections.c. */
int btcw_sections(struct writer *wr);

/* The GPU section (24) and its zone-count hints (18), btc_tracy_write_gpu.c. */
void btcw_gpu_hints(struct writer *wr);
int btcw_gpu(struct writer *wr);

/* Sections written by their own units. */
struct btc_msg_rec;
int btcw_load_messages(struct writer *wr,
                       struct btc_msg_rec **out); /* btc_tracy_write_messages.c */
int btcw_messages(struct writer *wr, const struct btc_msg_rec *v);
int btcw_thread_messages(struct writer *wr, const struct btc_msg_rec *v, uint32_t thread);
int btcw_plots(struct writer *wr); /* btc_tracy_write_plots.c */
int btcw_memory(struct writer *wr);

#endif
