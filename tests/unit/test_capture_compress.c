/* The .tracy writer's block compression: with 1 to 4 streams, zstd or
 * LZ4, blocks come out in file order, block i in stream i mod S, and
 * decompress the way upstream's reader takes them (zstd: one
 * ZSTD_decompressStream call per block, a 64 KiB output, one stream context
 * each; LZ4: LZ4_decompress_safe_continue per block into two 64 KiB
 * buffers in turn, so a block may refer only to its stream's previous
 * block) back to what went in, however the blocks fall on the ring of
 * slots (short of one round, one exactly, several and a part, a short last
 * block). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <zstd.h>

#include <cmocka.h>

#include "boardtrace/wire.h"
#include "btc_compress.h"
#include "btc_format.h"

/* Block b's bytes: zone-like records with a counter, compressible but not
 * trivially (each block differs). */
static void fill(uint8_t *p, size_t n, unsigned b)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (b + 1);
    for (size_t i = 0; i < n; i++) {
        if (i % 26 == 0)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = i % 26 < 4 ? (uint8_t)(x >> (8 * (i % 26) + 32)) : (uint8_t)(i % 26);
    }
}

/* Compresses nblocks blocks (the last last_len bytes long) in `streams`
 * streams (LZ4 or zstd) and checks what comes back. */
static void round_trip_as(int lz4, unsigned streams, unsigned nblocks, size_t last_len)
{
    struct btc_compress *c = btc_compress_open(streams, lz4);
    assert_non_null(c);
    assert_int_equal(btc_compress_streams(c), streams);
    FILE *f = tmpfile();
    assert_non_null(f);
    uint64_t bytes = 0;
    for (unsigned b = 0; b < nblocks; b++) {
        size_t len = b + 1 == nblocks ? last_len : BTC_FILE_BLOCK_SIZE;
        fill(btc_compress_block(c), len, b);
        assert_int_equal(btc_compress_next(c, len, f, &bytes), 0);
    }
    assert_int_equal(btc_compress_flush(c, f, &bytes), 0);
    btc_compress_close(c);
    assert_int_equal((uint64_t)ftell(f), bytes);

    rewind(f);
    ZSTD_DStream *d[BTC_COMPRESS_MAX_STREAMS] = {NULL};
    LZ4_streamDecode_t *ld[BTC_COMPRESS_MAX_STREAMS] = {NULL};
    static uint8_t lz4buf[BTC_COMPRESS_MAX_STREAMS][2][BTC_FILE_BLOCK_SIZE];
    unsigned sel[BTC_COMPRESS_MAX_STREAMS] = {0};
    for (unsigned s = 0; s < streams; s++) {
        if (lz4)
            assert_non_null(ld[s] = LZ4_createStreamDecode());
        else
            assert_non_null(d[s] = ZSTD_createDStream());
    }
    static uint8_t in[BTC_FILE_BLOCK_SIZE * 2], out[BTC_FILE_BLOCK_SIZE], want[BTC_FILE_BLOCK_SIZE];
    for (unsigned b = 0; b < nblocks; b++) {
        uint8_t sz[4];
        assert_int_equal(fread(sz, 1, 4, f), 4);
        uint32_t n = bt_wire_get_u32(sz);
        assert_true(n > 0 && n <= sizeof in);
        assert_int_equal(fread(in, 1, n, f), n);
        size_t len = b + 1 == nblocks ? last_len : BTC_FILE_BLOCK_SIZE;
        const uint8_t *got = out;
        unsigned s = b % streams;
        if (lz4) {
            uint8_t *dst = lz4buf[s][sel[s]];
            sel[s] ^= 1;
            int k = LZ4_decompress_safe_continue(ld[s], (const char *)in, (char *)dst, (int)n,
                                                 BTC_FILE_BLOCK_SIZE);
            assert_int_equal(k, len);
            got = dst;
        } else {
            ZSTD_inBuffer zi = {in, n, 0};
            ZSTD_outBuffer zo = {out, sizeof out, 0};
            size_t r = ZSTD_decompressStream(d[s], &zo, &zi);
            assert_false(ZSTD_isError(r));
            assert_int_equal(zi.pos, n);
            assert_int_equal(zo.pos, len);
        }
        fill(want, len, b);
        assert_memory_equal(got, want, len);
    }
    assert_int_equal(fgetc(f), EOF);
    for (unsigned s = 0; s < streams; s++) {
        ZSTD_freeDStream(d[s]);
        if (ld[s])
            LZ4_freeStreamDecode(ld[s]);
    }
    fclose(f);
}

static void round_trip(unsigned streams, unsigned nblocks, size_t last_len)
{
    round_trip_as(0, streams, nblocks, last_len);
    round_trip_as(1, streams, nblocks, last_len);
}

static void one_stream_compresses_each_block_in_order(void **state)
{
    (void)state;
    round_trip(1, 5, 1000);
}

static void streams_take_blocks_in_turn_round_the_ring(void **state)
{
    (void)state;
    for (unsigned s = 2; s <= BTC_COMPRESS_MAX_STREAMS; s++) {
        round_trip(s, 3, 7);                       /* less than the ring holds */
        round_trip(s, 8 * s, BTC_FILE_BLOCK_SIZE); /* the ring, exactly */
        round_trip(s, 8 * s * 5 + 5, 12345);       /* round it five times and more */
    }
}

static void more_streams_than_allowed_are_capped(void **state)
{
    (void)state;
    struct btc_compress *c = btc_compress_open(BTC_COMPRESS_MAX_STREAMS + 5, 0);
    assert_non_null(c);
    assert_int_equal(btc_compress_streams(c), BTC_COMPRESS_MAX_STREAMS);
    btc_compress_close(c);
    unsigned d = btc_compress_default_streams();
    assert_true(d >= 1 && d <= BTC_COMPRESS_MAX_STREAMS);
}

static void a_failed_write_is_reported_and_drops_the_rest(void **state)
{
    (void)state;
    struct btc_compress *c = btc_compress_open(2, 0);
    assert_non_null(c);
    FILE *f = fopen("/dev/full", "w");
    assert_non_null(f);
    setvbuf(f, NULL, _IONBF, 0);
    uint64_t bytes = 0;
    int rc = 0;
    for (unsigned b = 0; b < 20 && rc == 0; b++) {
        fill(btc_compress_block(c), BTC_FILE_BLOCK_SIZE, b);
        rc = btc_compress_next(c, BTC_FILE_BLOCK_SIZE, f, &bytes);
    }
    assert_int_equal(rc, -1);
    assert_int_equal(btc_compress_flush(c, f, &bytes), -1);
    assert_int_equal(bytes, 0);
    btc_compress_close(c);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_stream_compresses_each_block_in_order),
        cmocka_unit_test(streams_take_blocks_in_turn_round_the_ring),
        cmocka_unit_test(more_streams_than_allowed_are_capped),
        cmocka_unit_test(a_failed_write_is_reported_and_drops_the_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
