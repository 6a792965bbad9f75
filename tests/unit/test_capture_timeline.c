/* The compact zone timeline spool: zones of interleaved threads, leaves and
 * parents, with and without extras, with deltas of every width (negative
 * ones too), written through cursors over several buffer flushes (patches
 * in the buffer and in the file) expand to exactly the file's encoding;
 * a damaged or cut record is refused, not misread. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btc_timeline.h"
#include "btc_util.h"

#define THREADS 3u
#define ZONES   300000u /* some 3 MB spooled: several flushes of the 512 KiB buffer */

struct expect {
    uint8_t *bytes; /* the thread's zones in the file's encoding */
    size_t len, cap;
    size_t stack[64]; /* offsets of the open zones' begins */
    uint32_t children[64];
    size_t depth;
    uint64_t at[64]; /* their patch fields in the spool */
    uint8_t tag_back[64];
    uint64_t ref;
};

static uint8_t *grow(struct expect *e, size_t n)
{
    if (e->len + n > e->cap) {
        e->cap = (e->cap + n) * 2;
        e->bytes = realloc(e->bytes, e->cap);
        assert_non_null(e->bytes);
    }
    uint8_t *p = e->bytes + e->len;
    e->len += n;
    return p;
}

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A delta of a random width, now and then a negative one. */
static uint64_t some_delta(void)
{
    uint64_t r = next();
    if ((r & 63) == 0)
        return (uint64_t) - (int64_t)(r >> 40);
    return r >> (8 * (r % 8) + 6);
}

static void begin(struct btc_timeline *tl, struct expect *e, uint32_t thread)
{
    struct btc_tl_cursor c;
    btc_tl_cursor(tl, thread, &c);
    uint64_t d = some_delta();
    int16_t srcloc = (int16_t)(next() % 2000) - 100;
    assert_int_equal(btc_tl_begin(tl, &c, srcloc, d, &e->at[e->depth], &e->tag_back[e->depth]),
                     BTC_OK);
    btc_tl_settle(tl, &c);
    if (e->depth)
        e->children[e->depth - 1]++;
    e->stack[e->depth] = e->len;
    e->children[e->depth] = 0;
    e->depth++;
    uint8_t *p = grow(e, BTC_TL_FILE_BEGIN_BYTES);
    btc_le_store(p, (uint16_t)srcloc, 2);
    btc_le_store(p + 2, d, 8);
    btc_le_store(p + 10, 0, 8);
}

static void end(struct btc_timeline *tl, struct expect *e, uint32_t thread)
{
    e->depth--;
    uint32_t extra = next() % 5 == 0 ? (uint32_t)(next() >> 33) + 1 : 0;
    uint32_t children = e->children[e->depth];
    uint64_t d = some_delta();
    struct btc_tl_cursor c;
    btc_tl_cursor(tl, thread, &c);
    assert_int_equal(
        btc_tl_close_zone(tl, &c, e->at[e->depth], e->tag_back[e->depth], extra, children, d),
        BTC_OK);
    btc_tl_settle(tl, &c);
    btc_le_store(e->bytes + e->stack[e->depth] + 10, extra | (uint64_t)children << 32, 8);
    btc_le_store(grow(e, BTC_TL_FILE_END_BYTES), d, 8);
}

/* A zone begun and ended at once (btc_tl_leaf). */
static void leaf(struct btc_timeline *tl, struct expect *e, uint32_t thread)
{
    struct btc_tl_cursor c;
    btc_tl_cursor(tl, thread, &c);
    uint64_t d = some_delta(), d2 = some_delta();
    int16_t srcloc = (int16_t)(next() % 2000) - 100;
    assert_int_equal(btc_tl_leaf(tl, &c, srcloc, d, d2), BTC_OK);
    btc_tl_settle(tl, &c);
    if (e->depth)
        e->children[e->depth - 1]++;
    uint8_t *p = grow(e, BTC_TL_FILE_BEGIN_BYTES + BTC_TL_FILE_END_BYTES);
    btc_le_store(p, (uint16_t)srcloc, 2);
    btc_le_store(p + 2, d, 8);
    btc_le_store(p + 10, 0, 8);
    btc_le_store(p + 18, d2, 8);
}

static void interleaved_threads_expand_to_the_file_encoding(void **state)
{
    (void)state;
    struct btc_timeline tl;
    char err[256];
    assert_int_equal(btc_timeline_open(&tl, "/tmp", err, sizeof err), BTC_OK);
    struct expect e[THREADS];
    memset(e, 0, sizeof e);
    for (unsigned z = 0; z < ZONES; z++) {
        /* Runs of one thread's records, then another's. */
        uint32_t th = (uint32_t)((z / 7 + next() % 2) % THREADS);
        struct expect *x = &e[th];
        uint64_t r = next();
        if (x->depth && (x->depth == 64 || r % 2))
            end(&tl, x, th);
        else if (r % 6 == 0)
            leaf(&tl, x, th);
        else
            begin(&tl, x, th);
    }
    for (uint32_t th = 0; th < THREADS; th++)
        while (e[th].depth)
            end(&tl, &e[th], th);
    uint8_t *got[THREADS];
    size_t got_len[THREADS] = {0};
    for (uint32_t th = 0; th < THREADS; th++)
        assert_non_null(got[th] = malloc(e[th].len));
    struct btc_timeline_reader r;
    assert_int_equal(btc_timeline_reader_open(&r, &tl), BTC_OK);
    uint32_t th, len;
    const uint8_t *p;
    int rc;
    while ((rc = btc_timeline_reader_next(&r, &th, &p, &len)) > 0) {
        assert_true(th < THREADS);
        size_t used, made;
        assert_int_equal(btc_timeline_expand(p, len, &used, got[th] + got_len[th],
                                             e[th].len - got_len[th], &made),
                         BTC_OK);
        assert_int_equal(used, len); /* a fragment holds whole records */
        got_len[th] += made;
    }
    assert_int_equal(rc, 0);
    btc_timeline_reader_close(&r);
    for (uint32_t t = 0; t < THREADS; t++) {
        assert_int_equal(got_len[t], e[t].len);
        assert_memory_equal(got[t], e[t].bytes, e[t].len);
        free(got[t]);
        free(e[t].bytes);
    }
    btc_timeline_close(&tl);
}

static uint8_t out[256];
static int expand_all(const uint8_t *in, size_t n, size_t *used, size_t *made)
{
    return btc_timeline_expand(in, n, used, out, sizeof out, made);
}

static void a_damaged_or_cut_record_is_refused(void **state)
{
    (void)state;
    size_t used, made;
    /* A begin (tag, srcloc, one-byte delta, extra and child count), a
     * leaf (tag, srcloc, one-byte deltas), the begin's end (tag, delta). */
    const uint8_t recs[] = {BTC_TL_TAG(BTC_TL_BEGIN, 1),
                            5,
                            0,
                            9,
                            0,
                            0,
                            0,
                            0,
                            1,
                            0,
                            0,
                            0,
                            BTC_TL_TAG(BTC_TL_LEAF, 1),
                            6,
                            0,
                            2,
                            3,
                            BTC_TL_TAG(BTC_TL_END, 1),
                            4};
    assert_int_equal(expand_all(recs, sizeof recs, &used, &made), BTC_OK);
    assert_int_equal(used, sizeof recs);
    assert_int_equal(made, 2 * BTC_TL_FILE_BEGIN_BYTES + 2 * BTC_TL_FILE_END_BYTES);
    const uint8_t file[] = {5, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* begin */
                            6, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* leaf */
                            3, 0, 0, 0, 0, 0, 0, 0,                               /* its end */
                            4, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(out, file, sizeof file);
    /* Cut anywhere: the whole records before the cut, nothing of the rest. */
    for (size_t cut = 0; cut < sizeof recs; cut++) {
        assert_int_equal(expand_all(recs, cut, &used, &made), BTC_OK);
        assert_int_equal(used, cut < 12 ? 0 : cut < 17 ? 12 : 17);
    }
    /* Too little room for the next record: it waits. */
    uint8_t small[BTC_TL_FILE_BEGIN_BYTES + 25];
    assert_int_equal(btc_timeline_expand(recs, sizeof recs, &used, small, sizeof small, &made),
                     BTC_OK);
    assert_int_equal(used, 12);
    assert_int_equal(made, BTC_TL_FILE_BEGIN_BYTES);
    /* Damaged tags: an end length on a begin or an end. */
    const uint8_t bad[][20] = {
        {BTC_TL_TAG(BTC_TL_BEGIN, 1) | 1u << 3},
        {BTC_TL_TAG(BTC_TL_END, 1) | 7u << 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(expand_all(bad[i], sizeof bad[i], &used, &made), BTC_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interleaved_threads_expand_to_the_file_encoding),
        cmocka_unit_test(a_damaged_or_cut_record_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
