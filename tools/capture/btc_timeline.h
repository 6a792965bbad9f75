/* Zone timelines: every thread's zones spooled already in the .tracy file's
 * own encoding (per zone: source location, start, extra, child count, the
 * children, end; times as deltas against the thread's previous time), so
 * the writer copies them instead of re-encoding records.
 *
 * Threads share one spool file of fragments, [u32 thread][u32 length][bytes],
 * each the run of one thread's bytes between two other threads' (a run
 * ends at a buffer flush too). A zone's extra and child count are known
 * only at its end: they sit at a fixed place in its bytes and are patched
 * there, in the buffer or in the file. */
#ifndef BTC_TIMELINE_H
#define BTC_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "btc_spool.h"
#include "btc_util.h"

#define BTC_TL_FRAGMENT_HEADER 8u
/* A zone's opening bytes: srcloc u16, start delta u64, extra u32, children u32. */
#define BTC_TL_BEGIN_BYTES     18u
#define BTC_TL_BEGIN_EXTRA_OFF 10u
#define BTC_TL_END_BYTES       8u

struct btc_timeline {
    struct btc_spool raw; /* a byte stream (record size 1) */
    size_t frag;          /* offset in raw's buffer of the open fragment's header, whose
                             length is written when the fragment closes */
    uint32_t thread;      /* its thread; frag == SIZE_MAX: no open fragment */
};

int btc_timeline_open(struct btc_timeline *tl, const char *dir, char *err, size_t errlen);
void btc_timeline_close(struct btc_timeline *tl);
int btc_timeline_flush(struct btc_timeline *tl);
/* Room for n more bytes (n <= 64) of thread's timeline, to be filled by
 * the caller, or NULL when the spool cannot be written; *at gets their
 * offset in the spool, for btc_timeline_patch. */
uint8_t *btc_timeline_reserve_slow(struct btc_timeline *tl, uint32_t thread, size_t n,
                                   uint64_t *at);
static inline uint8_t *btc_timeline_reserve(struct btc_timeline *tl, uint32_t thread, size_t n,
                                            uint64_t *at)
{
    struct btc_spool *s = &tl->raw;
    if (tl->thread != thread || tl->frag == SIZE_MAX || s->buf_len + n > s->buf_cap)
        return btc_timeline_reserve_slow(tl, thread, n, at);
    *at = s->flushed + s->buf_len;
    uint8_t *p = s->buf + s->buf_len;
    s->buf_len += n;
    s->count += n;
    return p;
}
/* A zone's opening bytes, extra and child count zero until patched. */
static inline int btc_timeline_begin(struct btc_timeline *tl, uint32_t thread, int16_t srcloc,
                                     uint64_t start_delta, uint64_t *at)
{
    uint8_t *p = btc_timeline_reserve(tl, thread, BTC_TL_BEGIN_BYTES, at);
    if (!p)
        return BTC_ERR_IO;
    btc_le_store(p, (uint16_t)srcloc, 2);
    btc_le_store(p + 2, start_delta, 8);
    btc_le_store(p + BTC_TL_BEGIN_EXTRA_OFF, 0, 8);
    return BTC_OK;
}
static inline int btc_timeline_end(struct btc_timeline *tl, uint32_t thread, uint64_t end_delta)
{
    uint64_t at;
    uint8_t *p = btc_timeline_reserve(tl, thread, BTC_TL_END_BYTES, &at);
    if (!p)
        return BTC_ERR_IO;
    btc_le_store(p, end_delta, 8);
    return BTC_OK;
}
/* Overwrites n bytes at spool offset at. */
int btc_timeline_patch(struct btc_timeline *tl, uint64_t at, const void *p, size_t n);
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

#endif
