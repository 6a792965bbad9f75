/* The .tracy writer's head start (btc_tracy_prewrite.h): a model fed
 * through the decoder as a capture feeds it, with the head start watching
 * its timeline, is written twice, once splicing the blocks made early and
 * once encoding everything at the end. Both files are decompressed here
 * block by block, as upstream's reader does, and must hold the same
 * payload but for the filler string, which must bring the head start's
 * timeline to a block boundary. Zones open across flushes (a zone open for
 * the whole capture, deep nesting), zone texts, a second thread, both
 * codecs, and a head start that gives up. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <lz4.h>
#include <zstd.h>

#include "btc_format.h"
#include "btc_model.h"
#include "btc_tracy.h"
#include "btc_tracy_prewrite.h"

static struct btc_decoder dec;
static struct btc_model model;
static char err[512], dir[64];
static uint8_t *buf; /* events to feed */
static size_t len;
/* Times: now, and what the next event's delta is taken against (a
 * thread switch starts it again from 0, as the wire does). */
static int64_t now, ref;

#define FEED_CHUNK (256u * 1024u)

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/bt-prewrite-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    struct btc_welcome w = {.timer_mul = 1.0};
    if (btc_decoder_init(&dec, &w) < 0)
        return -1;
    dec.zones = btc_model_zone_fast(&model);
    buf = malloc(FEED_CHUNK + 4096);
    len = 0;
    now = ref = 0;
    return buf ? btc_model_init(&model, &w, dir, err, sizeof err) : -1;
}

static int teardown(void **state)
{
    (void)state;
    btc_prewrite_free(model.prewrite, &model.zones);
    model.prewrite = NULL;
    btc_model_free(&model);
    btc_decoder_free(&dec);
    free(buf);
    rmdir(dir);
    return 0;
}

static void flush_events(void)
{
    int rc = btc_decoder_events(&dec, buf, len, btc_model_event, &model, err, sizeof err);
    if (rc < 0)
        fail_msg("%s", err);
    len = 0;
}

static void room(void)
{
    if (len >= FEED_CHUNK)
        flush_events();
}

static void thread_ctx(uint32_t tid)
{
    room();
    buf[len] = BT_EV_THREAD_CONTEXT;
    bt_wire_put_u32(buf + len + 1, tid);
    len += 5;
    ref = 0;
}

/* A zone event's time in its compact form (protocol notes 4.3): wide
 * is the base type, then 32 and 16 bits. */
static void put_time(uint8_t wide, int64_t step)
{
    now += step;
    int64_t d = now - ref;
    ref = now;
    if (d >= 0 && d < BT_WIRE_OFF16) {
        buf[len] = (uint8_t)(wide + 2);
        bt_wire_put_u16(buf + len + 1, (uint16_t)d);
        len += 3;
    } else if (d >= 0 && d < BT_WIRE_OFF32) {
        buf[len] = (uint8_t)(wide + 1);
        bt_wire_put_u32(buf + len + 1, (uint32_t)(d - BT_WIRE_OFF16));
        len += 5;
    } else {
        buf[len] = wide;
        bt_wire_put_u64(buf + len + 1, (uint64_t)(d - BT_WIRE_OFF32));
        len += 9;
    }
}

static void zone_begin(int64_t step, uint64_t srcloc)
{
    room();
    put_time(BT_EV_ZONE_BEGIN, step);
    bt_wire_put_u64(buf + len, srcloc);
    len += 8;
}

static void zone_text(const char *s)
{
    room();
    size_t n = strlen(s);
    buf[len] = BT_EV_SINGLE_STRING_DATA8;
    buf[len + 1] = (uint8_t)n;
    memcpy(buf + len + 2, s, n);
    buf[len + 2 + n] = BT_EV_ZONE_TEXT;
    len += 3 + n;
}

static void zone_end(int64_t step)
{
    room();
    put_time(BT_EV_ZONE_END, step);
}

/* ---- Reading a file's payload back -------------------------------- */

struct payload {
    uint8_t *p;
    size_t len;
    unsigned blocks_zstd_frames; /* blocks that are whole zstd frames */
};

/* Decompresses a (0.11+ container) file as upstream's reader does: block
 * i through stream i mod S, one call per block into 64 KiB. */
static void read_payload(const char *path, struct payload *out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t head[6];
    assert_int_equal(fread(head, 1, 6, f), 6);
    int lz4 = head[4] == BTC_FILE_COMPRESS_LZ4;
    unsigned streams = head[5];
    assert_true(streams >= 1 && streams <= 4);
    ZSTD_DStream *z[4] = {0};
    LZ4_streamDecode_t *l[4] = {0};
    static uint8_t ring[4][2][BTC_FILE_BLOCK_SIZE];
    int sel[4] = {0};
    for (unsigned s = 0; s < streams; s++) {
        if (lz4)
            assert_non_null(l[s] = LZ4_createStreamDecode());
        else
            assert_non_null(z[s] = ZSTD_createDStream());
    }
    size_t cap = 64u << 20;
    memset(out, 0, sizeof *out);
    out->p = malloc(cap);
    assert_non_null(out->p);
    static uint8_t cbuf[BTC_FILE_BLOCK_SIZE * 2];
    uint8_t szb[4];
    for (unsigned i = 0; fread(szb, 1, 4, f) == 4; i++) {
        uint32_t sz = bt_wire_get_u32(szb);
        assert_true(sz > 0 && sz <= sizeof cbuf);
        assert_int_equal(fread(cbuf, 1, sz, f), sz);
        unsigned s = i % streams;
        uint8_t *dst = ring[s][sel[s]];
        sel[s] ^= 1;
        size_t n;
        if (lz4) {
            int k = LZ4_decompress_safe_continue(l[s], (const char *)cbuf, (char *)dst, (int)sz,
                                                 BTC_FILE_BLOCK_SIZE);
            assert_true(k >= 0);
            n = (size_t)k;
        } else {
            ZSTD_inBuffer in = {cbuf, sz, 0};
            ZSTD_outBuffer o = {dst, BTC_FILE_BLOCK_SIZE, 0};
            size_t r = ZSTD_decompressStream(z[s], &o, &in);
            assert_false(ZSTD_isError(r));
            assert_int_equal(in.pos, sz);
            out->blocks_zstd_frames += r == 0;
            n = o.pos;
        }
        assert_true(out->len + n <= cap);
        memcpy(out->p + out->len, dst, n);
        out->len += n;
    }
    fclose(f);
    for (unsigned s = 0; s < streams; s++) {
        if (l[s])
            LZ4_freeStreamDecode(l[s]);
        ZSTD_freeDStream(z[s]);
    }
}

/* Writes the model with the head start and without; checks the two
 * payloads (see the top). Returns the filler's length, or -1 when the
 * two files are the same (no head start used). */
static long write_both(int lz4, struct payload *a)
{
    char with[128], without[128];
    snprintf(with, sizeof with, "%s/with.tracy", dir);
    snprintf(without, sizeof without, "%s/without.tracy", dir);
    assert_int_equal(btc_model_finish(&model), 0);
    assert_int_equal(btc_tracy_write_compressed(&model, with, BTC_FILE_VERSION(0, 14, 0), lz4, NULL,
                                                err, sizeof err),
                     0);
    struct btc_prewrite *pre = model.prewrite;
    model.prewrite = NULL;
    assert_int_equal(btc_tracy_write_compressed(&model, without, BTC_FILE_VERSION(0, 14, 0), lz4,
                                                NULL, err, sizeof err),
                     0);
    model.prewrite = pre;
    struct payload b;
    read_payload(with, a);
    read_payload(without, &b);
    unlink(with);
    unlink(without);
    long fill = -1;
    size_t i = 0;
    while (i < b.len && a->p[i] == b.p[i])
        i++;
    if (i == b.len && a->len == b.len) {
        free(b.p);
        return -1;
    }
    /* The string count, one more: the first difference lies in it, not
     * always in its first byte. */
    size_t c = i;
    while (bt_wire_get_u64(a->p + c) != bt_wire_get_u64(b.p + c) + 1) {
        assert_true(c > 0 && i - c < 7);
        c--;
    }
    i = c + 8;
    /* Then the same strings, up to the filler: key, length, spaces. */
    size_t k = i;
    while (k < b.len && a->p[k] == b.p[k])
        k++;
    uint64_t key = bt_wire_get_u64(a->p + k), n = bt_wire_get_u64(a->p + k + 8);
    assert_true(key > 0);
    assert_int_equal(a->len, b.len + 16 + n);
    for (uint64_t j = 0; j < n; j++)
        assert_int_equal(a->p[k + 16 + j], ' ');
    assert_memory_equal(a->p + k + 16 + n, b.p + k, b.len - k);
    fill = (long)n;
    free(b.p);
    return fill;
}

/* Thread 1: a zone open from start to end, holding runs of deep nesting
 * (zones open at every flush), leaves, zones with a text, zones that end
 * with nothing inside after others came between; thread 2 interleaved. */
static void feed_mixed(unsigned rounds)
{
    thread_ctx(1);
    zone_begin(1, 0xA);
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned d = 0; d < 40; d++)
            zone_begin(1, 0xB);
        for (unsigned k = 0; k < 200; k++) {
            zone_begin(1, 0xC);
            if (k % 50 == 0) {
                char t[32];
                snprintf(t, sizeof t, "text %u.%u", r, k);
                zone_text(t);
            }
            zone_end(2);
        }
        for (unsigned d = 0; d < 40; d++)
            zone_end(3);
        if (r % 7 == 0) {
            zone_begin(1, 0xD); /* ends empty, but not as a leaf */
            thread_ctx(2);
            zone_begin(1, 0xE);
            zone_end(1);
            thread_ctx(1);
            zone_end(1);
        }
    }
    thread_ctx(2);
    zone_begin(1, 0xE); /* open at the end, as thread 1's outer zone */
    zone_end(1);
    zone_begin(1, 0xE);
    flush_events();
}

static void zstd_blocks_made_early_are_spliced_at_a_block_boundary(void **state)
{
    (void)state;
    model.prewrite = btc_prewrite_start(&model.zones, dir, 0);
    assert_non_null(model.prewrite);
    feed_mixed(4000); /* 1.1 M zones, some 30 MB in the file's encoding */
    struct payload a;
    long fill = write_both(0, &a);
    assert_true(fill >= 0 && fill < BTC_FILE_BLOCK_SIZE);
    uint32_t thread;
    uint64_t blocks;
    assert_int_equal(btc_prewrite_finish(model.prewrite, &model.zones, 0, &thread, &blocks), 1);
    assert_int_equal(thread, 0);
    assert_true(blocks > 350); /* of some 380 */
    /* Every block a whole frame (those made early, and the writer's). */
    assert_int_equal(a.blocks_zstd_frames, (a.len + BTC_FILE_BLOCK_SIZE - 1) / BTC_FILE_BLOCK_SIZE);
    free(a.p);
}

static void lz4_blocks_made_early_are_spliced_too(void **state)
{
    (void)state;
    model.prewrite = btc_prewrite_start(&model.zones, dir, 1);
    assert_non_null(model.prewrite);
    feed_mixed(1500);
    struct payload a;
    assert_true(write_both(1, &a) >= 0);
    free(a.p);
}

/* Blocks made for the other codec are not used: the file is as without. */
static void a_head_start_for_the_other_codec_is_left_unused(void **state)
{
    (void)state;
    model.prewrite = btc_prewrite_start(&model.zones, dir, 1);
    assert_non_null(model.prewrite);
    feed_mixed(500);
    struct payload a;
    assert_int_equal(write_both(0, &a), -1);
    free(a.p);
}

/* Nesting 300 deep with 80 KiB of zones at every level: each level's
 * block waits for its zone's end, and past 256 waiting the head start
 * gives up; the file is then written as without it. */
static void too_many_waiting_blocks_switch_the_head_start_off(void **state)
{
    (void)state;
    model.prewrite = btc_prewrite_start(&model.zones, dir, 0);
    assert_non_null(model.prewrite);
    thread_ctx(1);
    for (unsigned d = 0; d < 300; d++) {
        zone_begin(1, 0xB);
        for (unsigned k = 0; k < 3200; k++) {
            zone_begin(1, 0xC);
            zone_end(1);
        }
    }
    for (unsigned d = 0; d < 300; d++)
        zone_end(1);
    flush_events();
    struct payload a;
    assert_int_equal(write_both(0, &a), -1);
    uint32_t thread;
    uint64_t blocks;
    assert_int_equal(btc_prewrite_finish(model.prewrite, &model.zones, 0, &thread, &blocks), 0);
    free(a.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(zstd_blocks_made_early_are_spliced_at_a_block_boundary,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(lz4_blocks_made_early_are_spliced_too, setup, teardown),
        cmocka_unit_test_setup_teardown(a_head_start_for_the_other_codec_is_left_unused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(too_many_waiting_blocks_switch_the_head_start_off, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
