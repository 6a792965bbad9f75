/* Spool files, written in the caller or by a background writer: what is
 * appended and patched (in the buffer, in the file, in the buffer being
 * written) reads back exactly, and a failed background write comes out
 * at a later flush or read instead of being lost. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "btc_spool.h"
#include "btc_util.h"

#define BUF   4096u
#define TOTAL (BUF * 200u + 123u)

/* Byte i of the expected stream before patches. */
static uint8_t byte_at(size_t i)
{
    return (uint8_t)(i * 31u + (i >> 8));
}

/* Writes TOTAL bytes in uneven pieces through a spool with a BUF-byte
 * buffer, patching as it goes: 4 bytes just written (in the buffer), 4
 * bytes two buffers back (in the file), 4 bytes of the buffer flushed last
 * (perhaps still being written), then reads it all back. */
static void round_trip(int background)
{
    struct btc_spool s;
    char err[256];
    assert_int_equal(btc_spool_open_sized(&s, "/tmp", 1, BUF, err, sizeof err), BTC_OK);
    if (background) {
        btc_spool_background(&s);
        assert_non_null(s.bg);
    }
    uint8_t *want = malloc(TOTAL);
    assert_non_null(want);
    uint8_t piece[1000];
    size_t len = 0, step = 1, patches = 0;
    while (len < TOTAL) {
        size_t n = step % sizeof piece;
        if (n > TOTAL - len)
            n = TOTAL - len;
        for (size_t i = 0; i < n; i++)
            want[len + i] = piece[i] = byte_at(len + i);
        assert_int_equal(btc_spool_write(&s, piece, n), BTC_OK);
        len += n;
        step = step * 7 + 3;
        uint64_t at[3] = {len >= 4 ? len - 4 : 0, len > 2 * BUF ? len - 2 * BUF : 0,
                          s.flushed >= 4 ? s.flushed - 4 : 0};
        for (int k = 0; k < 3; k++) {
            /* A patch lies wholly in the file or wholly in the buffer, as
             * the spool's users keep it (a record never straddles a flush). */
            if (at[k] + 4 > len || (at[k] < s.flushed && at[k] + 4 > s.flushed))
                continue;
            uint8_t v[4] = {(uint8_t)patches, 0xA5, (uint8_t)k, (uint8_t)(patches >> 8)};
            assert_int_equal(btc_spool_patch(&s, at[k], 0, v, sizeof v), BTC_OK);
            memcpy(want + at[k], v, sizeof v);
            patches++;
        }
    }
    assert_int_equal(btc_spool_bytes(&s), TOTAL);

    struct btc_byte_reader r;
    assert_int_equal(btc_byte_reader_open(&r, &s, 777), BTC_OK);
    size_t got = 0;
    while (got < TOTAL) {
        size_t n = TOTAL - got < 500 ? TOTAL - got : 500;
        assert_int_equal(btc_byte_reader_fill(&r, n), 1);
        assert_memory_equal(r.buf + r.pos, want + got, n);
        r.pos += n;
        got += n;
    }
    assert_int_equal(btc_byte_reader_fill(&r, 1), 0);
    btc_byte_reader_close(&r);
    btc_spool_close(&s);
    free(want);
}

static void caller_written_spool_reads_back_patched(void **state)
{
    (void)state;
    round_trip(0);
}

static void background_written_spool_reads_back_patched(void **state)
{
    (void)state;
    round_trip(1);
}

static void a_failed_background_write_is_reported(void **state)
{
    (void)state;
    struct btc_spool s;
    char err[256];
    assert_int_equal(btc_spool_open_sized(&s, "/tmp", 1, BUF, err, sizeof err), BTC_OK);
    btc_spool_background(&s);
    assert_non_null(s.bg);
    /* The spool's file becomes one that cannot be written. */
    int ro = open("/dev/null", O_RDONLY);
    assert_true(ro >= 0);
    assert_true(dup2(ro, s.fd) == s.fd);
    close(ro);
    uint8_t piece[BUF];
    memset(piece, 7, sizeof piece);
    int rc = BTC_OK;
    for (int i = 0; i < 4 && rc == BTC_OK; i++)
        rc = btc_spool_write(&s, piece, sizeof piece);
    if (rc == BTC_OK)
        rc = btc_spool_flush(&s);
    assert_int_equal(rc, BTC_ERR_IO);
    assert_int_equal(errno, EBADF); /* the thread's reason, for the caller's message */
    struct btc_byte_reader r;
    assert_int_equal(btc_byte_reader_open(&r, &s, 64), BTC_ERR_IO);
    btc_byte_reader_close(&r);
    btc_spool_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(caller_written_spool_reads_back_patched),
        cmocka_unit_test(background_written_spool_reads_back_patched),
        cmocka_unit_test(a_failed_background_write_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
