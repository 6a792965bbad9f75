/* The .tracy writer's thread records (section 23): each thread's zones, its
 * timeline expanded into the file's encoding from the timeline spool (split
 * out per pass of up to 128 threads) or, with a head start, spliced in as
 * the blocks made while the capture ran (btc_tracy_prewrite.h), then its
 * messages and samples. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btc_tracy_prewrite.h"
#include "btc_tracy_write_parts.h"

/* Puts the whole timeline records at the head of in (n bytes) in the
 * file's encoding (btc_timeline_expand), straight into the block being
 * filled; *used: the bytes taken. BTC_ERR_IO on a damaged record. */
static int put_timeline(struct fw *w, const uint8_t *in, size_t n, size_t *used)
{
    size_t i = 0;
    while (i < n) {
        size_t u, made;
        if (btc_timeline_expand(in + i, n - i, &u, w->blk + w->len, BTC_FILE_BLOCK_SIZE - w->len,
                                &made) < 0)
            return BTC_ERR_IO;
        w->len += made;
        i += u;
        if (w->len == BTC_FILE_BLOCK_SIZE)
            btc_fw_block(w);
        if (u || i == n)
            continue;
        /* The next record does not fit the block's end: expanded aside,
         * it straddles two blocks. None taken: it is incomplete. */
        uint8_t one[BTC_TL_EXPANDED_MAX];
        if (btc_timeline_expand(in + i, n - i, &u, one, sizeof one, &made) < 0)
            return BTC_ERR_IO;
        if (!u)
            break;
        btc_fw_put(w, one, made);
        i += u;
    }
    *used = i;
    return BTC_OK;
}

/* Puts one thread's timeline spool (split_zones) in the file's encoding. */
static int copy_timeline(struct writer *wr, struct btc_spool *s)
{
    struct btc_byte_reader r;
    int rc = btc_byte_reader_open(&r, s, 64 * 1024);
    size_t want = 1;
    uint64_t taken = 0;
    while (rc >= 0 && (rc = btc_byte_reader_fill(&r, want)) > 0) {
        size_t used;
        if ((rc = put_timeline(&wr->w, r.buf + r.pos, r.len - r.pos, &used)) < 0)
            break;
        r.pos += used;
        taken += used;
        /* A record cut by the read: read on until it is whole. */
        want = r.len - r.pos + 1;
    }
    /* The spool ends inside a record, or short of what was written (the
     * file was cut under us). */
    if (rc == 0 && taken != s->flushed)
        rc = BTC_ERR_IO;
    btc_byte_reader_close(&r);
    return rc;
}

/* One thread's zones: its timeline records, from the thread's own spool
 * when the zones were split (own), else picked out of the shared one. */
static int write_timeline(struct writer *wr, struct btc_spool *own, uint32_t thread,
                          uint64_t top_level)
{
    put_u32(&wr->w, (uint32_t)top_level);
    if (!top_level)
        return BTC_OK;
    if (own)
        return copy_timeline(wr, own) < 0 ? btcw_io_fail(wr, "zone") : BTC_OK;
    struct btc_timeline_reader r;
    if (btc_timeline_reader_open(&r, &wr->m->zones) < 0)
        return btcw_io_fail(wr, "zone");
    uint32_t th, len;
    const uint8_t *p;
    int rc;
    size_t used;
    while ((rc = btc_timeline_reader_next(&r, &th, &p, &len)) > 0)
        if (th == thread && (put_timeline(&wr->w, p, len, &used) < 0 || used != len)) {
            rc = BTC_ERR_IO; /* a fragment holds whole records */
            break;
        }
    btc_timeline_reader_close(&r);
    return rc < 0 ? btcw_io_fail(wr, "zone") : BTC_OK;
}

/* Threads whose zones are split out per pass, and each one's buffer. */
#define SPLIT_THREADS      128
#define SPLIT_BUFFER_BYTES (32u * 1024u)

struct split {
    struct btc_spool spools[SPLIT_THREADS];
    int64_t *slot; /* per model thread: its spool in this pass, -1 none */
    size_t open;
};

static void split_close(struct split *s)
{
    for (size_t i = 0; i < s->open; i++)
        btc_spool_close(&s->spools[i]);
    s->open = 0;
}

/* One pass over the timeline spool copies the bytes of up to SPLIT_THREADS
 * threads with zones, from thread `first` on, into spools of their own, so
 * writing T threads reads the shared spool about T / 128 times, not T times. */
static int split_zones(struct writer *wr, struct split *s, size_t first)
{
    struct btc_model *m = wr->m;
    split_close(s);
    for (size_t i = 0; i < m->threads.len; i++)
        s->slot[i] = -1;
    for (size_t i = first; i < m->threads.len && s->open < SPLIT_THREADS; i++) {
        if (!((struct btc_thread *)btc_vec_at(&m->threads, i))->zones ||
            (wr->pre_blocks && i == wr->pre_thread))
            continue;
        if (btc_spool_open_sized(&s->spools[s->open], m->spool_dir, 1, SPLIT_BUFFER_BYTES, wr->err,
                                 wr->errlen) < 0)
            return BTC_ERR_IO;
        s->slot[i] = (int64_t)s->open++;
    }
    struct btc_timeline_reader r;
    if (btc_timeline_reader_open(&r, &m->zones) < 0)
        return btcw_io_fail(wr, "zone");
    uint32_t th, len;
    const uint8_t *p;
    int rc;
    while ((rc = btc_timeline_reader_next(&r, &th, &p, &len)) > 0) {
        if (th < m->threads.len && s->slot[th] >= 0 &&
            btc_spool_write(&s->spools[s->slot[th]], p, len) < 0) {
            rc = BTC_ERR_IO;
            break;
        }
    }
    btc_timeline_reader_close(&r);
    return rc < 0 ? btcw_io_fail(wr, "zone") : BTC_OK;
}

/* With a head start, what follows the string table up to the ready
 * timeline is written aside first (its length decides the filler's). */
int btcw_detour_begin(struct writer *wr)
{
    struct fw *w = &wr->w;
    uint8_t *b = malloc(BTC_FILE_BLOCK_SIZE);
    if (!b)
        return BTC_ERR_NOMEM;
    wr->home_blk = w->blk;
    wr->home_len = w->len;
    w->blk = b;
    w->len = 0;
    w->detour = &wr->detour;
    return BTC_OK;
}

/* The ready thread's timeline (btc_tracy_prewrite.h): its top-level count
 * ends the detour; then come the filler string, of the length that makes
 * the detour end on a block boundary, the detour, the blocks made while
 * the capture ran, as they are, and the bytes after the last of them. */
static int splice_timeline(struct writer *wr, uint64_t top_level)
{
    struct fw *w = &wr->w;
    put_u32(w, (uint32_t)top_level);
    btc_fw_block(w);
    free(w->blk);
    w->blk = wr->home_blk;
    w->len = wr->home_len;
    w->detour = NULL;
    if (w->failed)
        return btcw_io_fail(wr, "detour");
    uint64_t end = w->payload + w->len + 16 + btc_spool_bytes(&wr->detour);
    size_t fill = (size_t)((BTC_FILE_BLOCK_SIZE - end % BTC_FILE_BLOCK_SIZE) % BTC_FILE_BLOCK_SIZE);
    char spaces[4096];
    memset(spaces, ' ', sizeof spaces);
    put_u64(w, wr->filler_key);
    put_u64(w, fill);
    for (size_t k; fill; fill -= k) {
        k = fill < sizeof spaces ? fill : sizeof spaces;
        put(w, spaces, k);
    }
    struct btc_byte_reader r;
    int rc = btc_byte_reader_open(&r, &wr->detour, 64 * 1024);
    uint64_t copied = 0;
    while (rc >= 0 && (rc = btc_byte_reader_fill(&r, 1)) > 0) {
        put(w, r.buf + r.pos, r.len - r.pos);
        copied += r.len - r.pos;
        r.pos = r.len;
    }
    btc_byte_reader_close(&r);
    if (rc < 0 || copied != btc_spool_bytes(&wr->detour))
        return btcw_io_fail(wr, "detour");
    if (w->len || w->failed) {
        snprintf(wr->err, wr->errlen, "the zone blocks made early do not fall on a block boundary");
        return BTC_ERR_IO;
    }
    for (uint64_t i = 0; i < wr->pre_blocks && !w->failed; i++) {
        size_t len;
        const uint8_t *b = btc_prewrite_block(wr->pre, i, &len);
        if (!b)
            return btcw_io_fail(wr, "zone block");
        if (btc_compress_put_compressed(w->c, b, len, w->f, &w->file_bytes) < 0)
            w->failed = 1;
        w->payload += BTC_FILE_BLOCK_SIZE;
    }
    w->blk = btc_compress_block(w->c);
    size_t len;
    const uint8_t *rest = btc_prewrite_rest(wr->pre, &len);
    put(w, rest, len);
    return BTC_OK;
}

int btcw_threads(struct writer *wr, const struct btc_msg_rec *msgs)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    uint64_t child_lists = 0;
    for (size_t i = 0; i < m->threads.len; i++)
        child_lists += ((struct btc_thread *)btc_vec_at(&m->threads, i))->child_lists;
    put_u64(w, m->zone_count);
    put_u64(w, child_lists);
    put_u64(w, m->threads.len);

    size_t with_zones = 0;
    for (size_t i = 0; i < m->threads.len; i++)
        with_zones += ((struct btc_thread *)btc_vec_at(&m->threads, i))->zones > 0;
    struct split *split = NULL;
    if (with_zones > 1) {
        split = calloc(1, sizeof *split);
        if (!split || !(split->slot = calloc(m->threads.len, sizeof *split->slot))) {
            free(split);
            return BTC_ERR_NOMEM;
        }
        for (size_t i = 0; i < m->threads.len; i++)
            split->slot[i] = -1;
    }

    int rc = BTC_OK;
    for (size_t i = 0; i < m->threads.len && !rc; i++) {
        struct btc_thread *t = btc_vec_at(&m->threads, i);
        put_u64(w, t->tid);
        put_u64(w, t->zones);
        put_u64(w, t->kernel_samples);
        put_u8(w, t->is_fiber);
        if (wr->version >= BTC_GATE_GROUP_HINT)
            put_u32(w, (uint32_t)t->group_hint);
        if (wr->pre_blocks && i == wr->pre_thread) {
            rc = splice_timeline(wr, t->top_zones);
        } else {
            struct btc_spool *own = NULL;
            if (split && t->zones) {
                if (split->slot[i] < 0 && (rc = split_zones(wr, split, i)) < 0)
                    break;
                own = &split->spools[split->slot[i]];
            }
            rc = write_timeline(wr, own, (uint32_t)i, t->top_zones);
        }
        put_u64(w, t->messages);
        if (rc >= 0 && t->messages)
            rc = btcw_thread_messages(wr, msgs, (uint32_t)i);
        if (rc >= 0)
            rc = btcw_thread_samples(wr, (uint32_t)i);
    }
    if (split) {
        split_close(split);
        free(split->slot);
        free(split);
    }
    return rc;
}
