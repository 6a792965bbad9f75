/* The .tracy writer's messages: loaded from their spool and sorted by time
 * (btcw_load_messages), written as the file's message list and again per
 * thread; source and severity only in files from 0.13.2 on. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btc_format.h"
#include "btc_tracy.h"
#include "btc_tracy_write_parts.h"

static int cmp_msg(const void *a, const void *b)
{
    const struct btc_msg_rec *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Messages must be in time order (upstream keeps them so). When threads
 * interleaved them out of order they are sorted in memory, 32 bytes each. */
int btcw_load_messages(struct writer *wr, struct btc_msg_rec **out)
{
    struct btc_model *m = wr->m;
    *out = NULL;
    if (!m->msgs.count || !m->msgs_unsorted)
        return BTC_OK; /* none, or already in time order: streamed from the spool */
    struct btc_msg_rec *v = malloc(m->msgs.count * sizeof *v);
    if (!v)
        return BTC_ERR_NOMEM;
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &m->msgs) < 0) {
        free(v);
        return btcw_io_fail(wr, "message");
    }
    const uint8_t *p;
    size_t n = 0;
    int rc;
    while ((rc = btc_spool_reader_next(&r, &p)) > 0 && n < m->msgs.count)
        memcpy(&v[n++], p, sizeof *v);
    btc_spool_reader_close(&r);
    if (rc < 0 || n != m->msgs.count) {
        free(v);
        return btcw_io_fail(wr, "message");
    }
    /* qsort is not stable; cmp_msg breaks ties by position. */
    qsort(v, n, sizeof *v, cmp_msg);
    *out = v;
    return BTC_OK;
}

static void put_message(struct writer *wr, uint64_t key, int64_t *ref, const struct btc_msg_rec *v)
{
    struct fw *w = &wr->w;
    put_u64(w, key);
    put_wto(w, ref, v->time);
    int64_t text;
    if (v->text & BTC_MSG_TEXT_IS_KEY)
        text = btcw_key_string(wr, v->text & ~BTC_MSG_TEXT_IS_KEY);
    else if (v->text & BTC_MSG_TEXT_IS_SPOOLED)
        text = (int64_t)(wr->texts_base + (v->text & ~BTC_MSG_TEXT_IS_SPOOLED));
    else
        text = (int64_t)v->text;
    put_strref_idx(w, text < 0 ? wr->unknown : text);
    put_u32(w, v->color);
    put_u24(w, v->callstack);
    if (wr->version >= BTC_GATE_MSG_META) {
        put_u8(w, v->meta & 0xF);
        put_u8(w, v->meta >> 4);
    }
}

/* Messages from the sorted array, or, when they arrived in time order
 * (v NULL), straight from the spool. A message's key is its position. */
int btcw_messages(struct writer *wr, const struct btc_msg_rec *v)
{
    struct btc_model *m = wr->m;
    put_u64(&wr->w, m->msgs.count);
    int64_t ref = 0;
    if (v) {
        for (uint64_t i = 0; i < m->msgs.count; i++)
            put_message(wr, i, &ref, &v[i]);
        return BTC_OK;
    }
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &m->msgs) < 0)
        return btcw_io_fail(wr, "message");
    const uint8_t *p;
    int rc;
    uint64_t i = 0;
    while ((rc = btc_spool_reader_next(&r, &p)) > 0 && i < m->msgs.count) {
        struct btc_msg_rec rec;
        memcpy(&rec, p, sizeof rec);
        put_message(wr, i++, &ref, &rec);
    }
    btc_spool_reader_close(&r);
    return rc < 0 || i != m->msgs.count ? btcw_io_fail(wr, "message") : BTC_OK;
}

/* The keys of one thread's messages. */
int btcw_thread_messages(struct writer *wr, const struct btc_msg_rec *v, uint32_t thread)
{
    struct btc_model *m = wr->m;
    if (v) {
        for (uint64_t k = 0; k < m->msgs.count; k++)
            if (v[k].thread == thread)
                put_u64(&wr->w, k);
        return BTC_OK;
    }
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &m->msgs) < 0)
        return btcw_io_fail(wr, "message");
    const uint8_t *p;
    int rc;
    uint64_t k = 0;
    while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
        struct btc_msg_rec rec;
        memcpy(&rec, p, sizeof rec);
        if (rec.thread == thread)
            put_u64(&wr->w, k);
        k++;
    }
    btc_spool_reader_close(&r);
    return rc < 0 ? btcw_io_fail(wr, "message") : BTC_OK;
}
