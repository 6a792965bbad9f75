/* Zone timelines: every thread's zones spooled in a compact form of the
 * .tracy file's own encoding, which the writer expands record by record
 * (btc_timeline_expand) instead of rebuilding the zone tree.
 *
 * The file's encoding, per zone: source location i16, start delta i64,
 * extra u32, child count u32, the children, end delta i64 (times as deltas
 * against the thread's previous time). The spool keeps the same zones in
 * the same order, as records led by a tag byte: its kind (the top two
 * bits), the bytes of its delta less one (the low three: deltas drop their
 * high zero bytes) and, for a leaf, those of its end delta (the next three):
 *
 *   begin:      tag, source location i16, delta, extra u32, child count u32
 *   end:        tag, delta
 *   leaf:       tag, source location i16, delta, end delta
 *   leaf_extra: tag, source location i16, delta, extra u32, end delta
 *
 * A zone's extra and child count are known only at its end: they sit at a
 * fixed place in its begin and are patched there, in the buffer or in the
 * file. A zone that ends with no children while its begin is still the
 * last thing spooled (most zones) becomes a leaf instead: the field gives
 * way to its extra, if any, and its end. An empty zone takes some 5 bytes
 * instead of the file's 26.
 *
 * Threads share one spool file of fragments, [u32 thread][u32 length][bytes],
 * each the run of one thread's records between two other threads' (a run
 * ends at a buffer flush too); no record straddles two fragments. */
#ifndef BTC_TIMELINE_H
#define BTC_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "btc_spool.h"
#include "btc_util.h"

#define BTC_TL_FRAGMENT_HEADER 8u
enum btc_tl_kind { BTC_TL_BEGIN, BTC_TL_END, BTC_TL_LEAF, BTC_TL_LEAF_EXTRA };
#define BTC_TL_KIND(tag)      ((unsigned)(tag) >> 6)
#define BTC_TL_LEN(tag)       (((unsigned)(tag)&7u) + 1u)
#define BTC_TL_END_LEN(tag)   ((((unsigned)(tag) >> 3) & 7u) + 1u)
#define BTC_TL_TAG(kind, len) ((uint8_t)((unsigned)(kind) << 6 | ((len)-1u)))
/* The most bytes a record takes: a begin (tag, srcloc, delta, extra,
 * children), an end, a leaf. */
#define BTC_TL_BEGIN_MAX 19u
#define BTC_TL_END_MAX   9u
#define BTC_TL_LEAF_MAX  19u
/* The file's encoding of a begin (srcloc, start, extra, children), an end,
 * and the most one record expands to (a leaf: both). */
#define BTC_TL_FILE_BEGIN_BYTES 18u
#define BTC_TL_FILE_END_BYTES   8u
#define BTC_TL_EXPANDED_MAX     (BTC_TL_FILE_BEGIN_BYTES + BTC_TL_FILE_END_BYTES)

/* A watcher of the spool's bytes (the .tracy writer's prewrite): each run
 * of whole fragments as a flush hands it to the file (off: its spool
 * offset), and each patch made afterwards to bytes already handed over
 * (at: their spool offset), in that order. Called in the thread that
 * writes the timeline; the bytes are the caller's only during the call. */
struct btc_tl_tap {
    void (*chunk)(void *ctx, const uint8_t *p, size_t n, uint64_t off);
    void (*patch)(void *ctx, uint64_t at, const void *p, size_t n);
    void *ctx;
};

struct btc_timeline {
    struct btc_spool raw;         /* a byte stream (record size 1; its count is not kept) */
    size_t frag;                  /* offset in raw's buffer of the open fragment's header, whose
                                     length is written when the fragment closes */
    uint32_t thread;              /* its thread; frag == SIZE_MAX: no open fragment */
    const struct btc_tl_tap *tap; /* NULL: none */
};

int btc_timeline_open(struct btc_timeline *tl, const char *dir, char *err, size_t errlen);
void btc_timeline_close(struct btc_timeline *tl);
/* Hands the buffered fragments to the file (and to the tap). */
int btc_timeline_flush(struct btc_timeline *tl);
/* A writer of one thread's records straight into the spool's buffer, kept
 * by the caller in a local variable across a run of records (a run of
 * zones: btc_model.c) and stored back with btc_tl_settle before anything
 * else uses the spool. Its fields then stay in registers: kept in the
 * spool, they would be read again after every byte stored (a byte store
 * may alias anything), about 10% of the decoding thread's time. */
struct btc_tl_cursor {
    uint8_t *buf, *p, *lim; /* the spool's buffer, the next byte, its room's end */
    uint64_t flushed;       /* the spool offset of buf[0] */
    uint32_t thread;
};
static inline void btc_tl_cursor(struct btc_timeline *tl, uint32_t thread, struct btc_tl_cursor *c)
{
    struct btc_spool *s = &tl->raw;
    c->buf = s->buf;
    c->p = s->buf + s->buf_len;
    /* No room until the thread's fragment is open (btc_tl_room_slow). */
    c->lim = tl->thread == thread && tl->frag != SIZE_MAX ? s->buf + s->buf_cap : c->p;
    c->flushed = s->flushed;
    c->thread = thread;
}
static inline void btc_tl_settle(struct btc_timeline *tl, const struct btc_tl_cursor *c)
{
    tl->raw.buf_len = (size_t)(c->p - c->buf);
}
/* Room for n more bytes (n <= 64) at c->p, to be filled and passed over by
 * the caller, or NULL when the spool cannot be written. */
uint8_t *btc_tl_room_slow(struct btc_timeline *tl, struct btc_tl_cursor *c, size_t n);
static inline uint8_t *btc_tl_room(struct btc_timeline *tl, struct btc_tl_cursor *c, size_t n)
{
    return (size_t)(c->lim - c->p) >= n ? c->p : btc_tl_room_slow(tl, c, n);
}
/* Bytes a delta takes in the spool: 1 to 8, none of them high zeros. */
static inline unsigned btc_tl_delta_len(uint64_t v)
{
    return (71u - (unsigned)__builtin_clzll(v | 1)) >> 3;
}
/* A zone's begin. *at: where its patch field is (a spool offset), and
 * *tag_back: how far before it its tag sits, for btc_tl_close_zone. */
static inline int btc_tl_begin(struct btc_timeline *tl, struct btc_tl_cursor *c, int16_t srcloc,
                               uint64_t start_delta, uint64_t *at, uint8_t *tag_back)
{
    uint8_t *p = btc_tl_room(tl, c, BTC_TL_BEGIN_MAX);
    if (!p)
        return BTC_ERR_IO;
    unsigned n = btc_tl_delta_len(start_delta);
    p[0] = BTC_TL_TAG(BTC_TL_BEGIN, n);
    btc_le_store(p + 1, (uint16_t)srcloc, 2);
    btc_le_store(p + 3, start_delta, 8);
    btc_le_store(p + 3 + n, 0, 8);
    *tag_back = (uint8_t)(3 + n);
    *at = c->flushed + (uint64_t)(p - c->buf) + 3 + n;
    c->p = p + 3 + n + 8;
    return BTC_OK;
}
static inline int btc_tl_end(struct btc_timeline *tl, struct btc_tl_cursor *c, uint64_t end_delta)
{
    uint8_t *p = btc_tl_room(tl, c, BTC_TL_END_MAX);
    if (!p)
        return BTC_ERR_IO;
    unsigned n = btc_tl_delta_len(end_delta);
    p[0] = BTC_TL_TAG(BTC_TL_END, n);
    btc_le_store(p + 1, end_delta, 8);
    c->p = p + 1 + n;
    return BTC_OK;
}
/* Ends a zone: a zone with no children whose begin is still the last
 * record becomes a leaf; any other has its extra and child count patched
 * (unless both are zero) and an end record. */
int btc_timeline_patch(struct btc_timeline *tl, uint64_t at, const void *p, size_t n);
static inline int btc_tl_close_zone(struct btc_timeline *tl, struct btc_tl_cursor *c, uint64_t at,
                                    uint8_t tag_back, uint32_t extra, uint32_t children,
                                    uint64_t end_delta)
{
    if (!children && at >= c->flushed && c->buf + (at - c->flushed) + 8 == c->p) {
        uint8_t *f = c->p - 8;
        size_t ex = extra ? 4 : 0;
        /* The end's 8-byte store fits in the field, or with an extra
         * before it, in the buffer's room. */
        if (f + ex + 8 <= c->lim) {
            unsigned n = btc_tl_delta_len(end_delta);
            f[-(int)tag_back] |=
                (uint8_t)((extra ? BTC_TL_LEAF_EXTRA : BTC_TL_LEAF) << 6 | (n - 1) << 3);
            btc_le_store(f, extra, 4);
            btc_le_store(f + ex, end_delta, 8);
            c->p = f + ex + n;
            return BTC_OK;
        }
    }
    if (extra || children) {
        uint8_t both[8];
        btc_le_store(both, extra | (uint64_t)children << 32, 8);
        if (btc_timeline_patch(tl, at, both, sizeof both) < 0)
            return BTC_ERR_IO;
    }
    return btc_tl_end(tl, c, end_delta);
}
/* A zone with no children and no extra, begun and ended at once: the
 * leaf btc_tl_begin and btc_tl_close_zone would leave. */
static inline int btc_tl_leaf(struct btc_timeline *tl, struct btc_tl_cursor *c, int16_t srcloc,
                              uint64_t start_delta, uint64_t end_delta)
{
    uint8_t *p = btc_tl_room(tl, c, BTC_TL_LEAF_MAX);
    if (!p)
        return BTC_ERR_IO;
    unsigned n = btc_tl_delta_len(start_delta), n2 = btc_tl_delta_len(end_delta);
    p[0] = (uint8_t)(BTC_TL_TAG(BTC_TL_LEAF, n) | (n2 - 1) << 3);
    btc_le_store(p + 1, (uint16_t)srcloc, 2);
    btc_le_store(p + 3, start_delta, 8);
    btc_le_store(p + 3 + n, end_delta, 8);
    c->p = p + 3 + n + n2;
    return BTC_OK;
}
/* Bytes the spool holds, in its file and its buffer. */
static inline uint64_t btc_timeline_bytes(const struct btc_timeline *tl)
{
    return btc_spool_bytes(&tl->raw);
}

/* Sequential reader over the fragments (flushes the spool first). */
struct btc_timeline_reader {
    struct btc_byte_reader in;
};
int btc_timeline_reader_open(struct btc_timeline_reader *r, struct btc_timeline *tl);
/* Returns 1 with the next fragment's thread and bytes, 0 at the end, < 0 on
 * a read error or a damaged spool. */
int btc_timeline_reader_next(struct btc_timeline_reader *r, uint32_t *thread, const uint8_t **bytes,
                             uint32_t *len);
void btc_timeline_reader_close(struct btc_timeline_reader *r);

/* Expands the whole records at the head of in (n bytes) into the file's
 * encoding at out (room bytes), as many as fit: *used bytes read, *made
 * written. BTC_ERR_IO on a damaged record. */
int btc_timeline_expand(const uint8_t *in, size_t n, size_t *used, uint8_t *out, size_t room,
                        size_t *made);

#endif
