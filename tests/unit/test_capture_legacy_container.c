/* The legacy container of .tracy files before 0.11.0 (what a 0.10 GUI and
 * tenstorrent's fork read): "tZst", then u32-sized blocks of one zstd stream
 * flushed at every 64 KiB and never ended. Their reader reads another block
 * after every full one, so a payload of whole blocks must end with an empty
 * block; any other payload must not. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <zstd.h>

#include "btc_format.h"
#include "btc_tracy_file.h"

/* Writes n payload bytes in a legacy container; returns the blocks' sizes
 * after decompression (at most 8) through sizes, their count as result. */
static int write_and_walk(size_t n, size_t *sizes)
{
    char path[] = "/tmp/bt-legacy-XXXXXX", tmp[4200], err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct fw w = {.legacy = 1};
    assert_int_equal(btc_fw_begin(&w, path, tmp, sizeof tmp, err, sizeof err), 0);
    uint8_t *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)(i * 31 + (i >> 8));
    btc_fw_put(&w, data, n);
    assert_int_equal(btc_fw_end(&w, path, tmp, 0, NULL, err, sizeof err), 0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t magic[4];
    assert_int_equal(fread(magic, 1, 4, f), 4);
    assert_memory_equal(magic, "tZst", 4);
    ZSTD_DStream *z = ZSTD_createDStream();
    static uint8_t in[1 << 20], out[65536];
    int count = 0;
    uint8_t sz[4];
    size_t total = 0;
    while (fread(sz, 1, 4, f) == 4) {
        uint32_t len = sz[0] | sz[1] << 8 | sz[2] << 16 | (uint32_t)sz[3] << 24;
        assert_true(len <= sizeof in);
        assert_int_equal(fread(in, 1, len, f), len);
        ZSTD_inBuffer ib = {in, len, 0};
        ZSTD_outBuffer ob = {out, sizeof out, 0};
        size_t ret = ZSTD_decompressStream(z, &ob, &ib);
        assert_false(ZSTD_isError(ret));
        assert_true(ret > 0); /* the frame is never ended, as the 0.10 reader asserts */
        assert_true(count < 8);
        sizes[count++] = ob.pos;
        total += ob.pos;
    }
    assert_int_equal(total, n);
    ZSTD_freeDStream(z);
    fclose(f);
    unlink(path);
    free(data);
    return count;
}

static void a_payload_of_whole_blocks_ends_with_an_empty_block(void **state)
{
    (void)state;
    size_t sizes[8];
    assert_int_equal(write_and_walk(2 * BTC_FILE_BLOCK_SIZE, sizes), 3);
    assert_int_equal(sizes[0], BTC_FILE_BLOCK_SIZE);
    assert_int_equal(sizes[1], BTC_FILE_BLOCK_SIZE);
    assert_int_equal(sizes[2], 0);
}

static void any_other_payload_ends_with_its_partial_block(void **state)
{
    (void)state;
    size_t sizes[8];
    assert_int_equal(write_and_walk(BTC_FILE_BLOCK_SIZE + 100, sizes), 2);
    assert_int_equal(sizes[0], BTC_FILE_BLOCK_SIZE);
    assert_int_equal(sizes[1], 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_payload_of_whole_blocks_ends_with_an_empty_block),
        cmocka_unit_test(any_other_payload_ends_with_its_partial_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
