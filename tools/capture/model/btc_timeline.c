/* Zone timelines (see btc_timeline.h): fragments of per-thread bytes kept
 * in a byte-stream spool, patched in place, read back in order. */
#define _GNU_SOURCE
#include "btc_timeline.h"

#include <stdlib.h>

#include "boardtrace/wire.h"

/* Large enough that a zone's end usually finds its beginning still in the
 * buffer (about 28,000 zones of one thread), and that the background
 * writer is woken rarely (a wake-up costs some 15 us in a VM); two such
 * buffers are still small beside the capture's other memory. */
#define TL_BUF_BYTES (512u * 1024u)
/* The reader's buffer holds at least one whole fragment. */
#define TL_READ_BYTES (TL_BUF_BYTES + 64u * 1024u)

int btc_timeline_open(struct btc_timeline *tl, const char *dir, char *err, size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    tl->frag = SIZE_MAX;
    int rc = btc_spool_open_sized(&tl->raw, dir, 1, TL_BUF_BYTES, err, errlen);
    /* The bulk of a capture's spooled bytes: written beside the decoding,
     * when there is a second CPU to do it on. */
    if (rc == BTC_OK && btc_usable_cpus() > 1)
        btc_spool_background(&tl->raw);
    return rc;
}

void btc_timeline_close(struct btc_timeline *tl)
{
    btc_spool_close(&tl->raw);
}

/* Writes the open fragment's length into its header and closes it. */
static void close_fragment(struct btc_timeline *tl)
{
    if (tl->frag == SIZE_MAX)
        return;
    struct btc_spool *s = &tl->raw;
    uint32_t flen = (uint32_t)(s->buf_len - tl->frag - BTC_TL_FRAGMENT_HEADER);
    memcpy(s->buf + tl->frag + 4, &flen, 4);
    tl->frag = SIZE_MAX;
}

int btc_timeline_flush(struct btc_timeline *tl)
{
    close_fragment(tl);
    struct btc_spool *s = &tl->raw;
    if (tl->tap && s->buf_len)
        tl->tap->chunk(tl->tap->ctx, s->buf, s->buf_len, s->flushed);
    return btc_spool_flush(s);
}

uint8_t *btc_tl_room_slow(struct btc_timeline *tl, struct btc_tl_cursor *c, size_t n)
{
    struct btc_spool *s = &tl->raw;
    btc_tl_settle(tl, c);
    if (s->buf_len + BTC_TL_FRAGMENT_HEADER + n > s->buf_cap && btc_timeline_flush(tl) < 0)
        return NULL;
    if (tl->frag == SIZE_MAX || tl->thread != c->thread) {
        close_fragment(tl);
        uint32_t head[2] = {c->thread, 0};
        memcpy(s->buf + s->buf_len, head, sizeof head);
        tl->frag = s->buf_len;
        tl->thread = c->thread;
        s->buf_len += BTC_TL_FRAGMENT_HEADER;
    }
    btc_tl_cursor(tl, c->thread, c);
    return c->p;
}

int btc_timeline_patch(struct btc_timeline *tl, uint64_t at, const void *p, size_t n)
{
    /* Bytes never straddle a flush: a record that does not fit flushes
     * first, so they are all in the buffer or all in the file. */
    int rc = btc_spool_patch(&tl->raw, at, 0, p, n);
    if (rc == BTC_OK && tl->tap && at < tl->raw.flushed)
        tl->tap->patch(tl->tap->ctx, at, p, n);
    return rc;
}

int btc_timeline_reader_open(struct btc_timeline_reader *r, struct btc_timeline *tl)
{
    int rc = btc_timeline_flush(tl);
    if (rc < 0)
        return rc;
    return btc_byte_reader_open(&r->in, &tl->raw, TL_READ_BYTES);
}

int btc_timeline_reader_next(struct btc_timeline_reader *r, uint32_t *thread, const uint8_t **bytes,
                             uint32_t *len)
{
    struct btc_byte_reader *in = &r->in;
    int rc = btc_byte_reader_fill(in, BTC_TL_FRAGMENT_HEADER);
    if (rc <= 0)
        return rc < 0 || in->len == in->pos ? rc : BTC_ERR_IO;
    uint32_t head[2];
    memcpy(head, in->buf + in->pos, sizeof head);
    if (head[1] > TL_BUF_BYTES)
        return BTC_ERR_IO;
    rc = btc_byte_reader_fill(in, BTC_TL_FRAGMENT_HEADER + (size_t)head[1]);
    if (rc <= 0)
        return rc < 0 ? rc : BTC_ERR_IO; /* a fragment cut short: the spool is damaged */
    *thread = head[0];
    *bytes = in->buf + in->pos + BTC_TL_FRAGMENT_HEADER;
    *len = head[1];
    in->pos += BTC_TL_FRAGMENT_HEADER + (size_t)head[1];
    return 1;
}

void btc_timeline_reader_close(struct btc_timeline_reader *r)
{
    btc_byte_reader_close(&r->in);
}

/* A delta of n bytes (1 to 8) at p, of which avail can be read. */
static inline uint64_t load_delta(const uint8_t *p, unsigned n, size_t avail)
{
    if (avail >= 8) {
        uint64_t v = bt_wire_get_u64(p);
        return n == 8 ? v : v & ((UINT64_C(1) << (8 * n)) - 1);
    }
    uint64_t v = 0; /* at the end of the bytes at hand: no reading past them */
    for (unsigned k = 0; k < n; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}

int btc_timeline_expand(const uint8_t *in, size_t n, size_t *used, uint8_t *out, size_t room,
                        size_t *made)
{
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned tag = in[i], kind = BTC_TL_KIND(tag), len = BTC_TL_LEN(tag);
        unsigned len2 = kind >= BTC_TL_LEAF ? BTC_TL_END_LEN(tag) : 0;
        if (kind < BTC_TL_LEAF && (tag & 0x38u))
            return BTC_ERR_IO; /* an end length on a record with no end */
        static const uint8_t fixed[4] = {11, 1, 3, 7}, expanded[4] = {18, 8, 26, 26};
        size_t size = fixed[kind] + len + len2;
        if (i + size > n || o + expanded[kind] > room)
            break;
        const uint8_t *p = in + i;
        uint8_t *q = out + o;
        if (kind == BTC_TL_END) {
            btc_le_store(q, load_delta(p + 1, len, n - i - 1), 8);
        } else {
            /* srcloc, start, then extra and child count: the patched
             * field, a leaf's extra, or none. */
            memcpy(q, p + 1, 2);
            btc_le_store(q + 2, load_delta(p + 3, len, n - i - 3), 8);
            const uint8_t *f = p + 3 + len;
            uint64_t both = kind == BTC_TL_BEGIN        ? bt_wire_get_u64(f)
                            : kind == BTC_TL_LEAF_EXTRA ? bt_wire_get_u32(f)
                                                        : 0;
            btc_le_store(q + 10, both, 8);
            if (kind >= BTC_TL_LEAF) {
                f += kind == BTC_TL_LEAF_EXTRA ? 4 : 0;
                btc_le_store(q + 18, load_delta(f, len2, (size_t)(in + n - f)), 8);
            }
        }
        o += expanded[kind];
        i += size;
    }
    *used = i;
    *made = o;
    return BTC_OK;
}
