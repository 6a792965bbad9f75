/* The capture journal: frames written as received replay into the same
 * model, and a journal cut inside a frame (the capture was killed while
 * writing it) replays every complete frame before the cut. */
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

#include "btc_journal.h"

static const char *data_dir;
static uint8_t *rec; /* client-to-server.bin of the recorded session */
static size_t rec_len;

/* Writes a journal of the recording's welcome and its first nframes frames,
 * in place of any file at path (a journal is only ever created, never
 * overwritten); returns the journal's size. */
static long write_journal(const char *path, int nframes)
{
    struct btc_journal j;
    char err[256];
    unlink(path);
    assert_int_equal(btc_journal_open(&j, path, NULL, rec + 1, BT_WELCOME_SIZE, err, sizeof err),
                     0);
    size_t off = 1 + BT_WELCOME_SIZE;
    for (int f = 0; f < nframes; f++) {
        uint32_t n = bt_wire_get_u32(rec + off);
        btc_journal_frames(&j, rec + off, 4 + (size_t)n);
        off += 4 + n;
    }
    assert_false(j.failed);
    btc_journal_close(&j);
    FILE *fp = fopen(path, "rb");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    return size;
}

static void journal_replays_every_frame(void **state)
{
    (void)state;
    char path[] = "/tmp/bt-journal-XXXXXX";
    close(mkstemp(path));
    write_journal(path, 6);
    struct btc_decoder d;
    struct btc_model m;
    char err[512];
    uint64_t frames;
    assert_int_equal(btc_journal_replay(path, "/tmp", &d, &m, &frames, err, sizeof err), 0);
    assert_int_equal(frames, 6);
    assert_int_equal(m.zone_count, 8300);
    assert_true(m.terminated);
    btc_model_free(&m);
    btc_decoder_free(&d);
    unlink(path);
}

static void journal_cut_inside_a_frame_keeps_the_frames_before(void **state)
{
    (void)state;
    char path[] = "/tmp/bt-journal-XXXXXX";
    close(mkstemp(path));
    long two = write_journal(path, 2);
    long three = write_journal(path, 3);
    assert_int_equal(truncate(path, (two + three) / 2), 0);
    struct btc_decoder d;
    struct btc_model m;
    char err[512];
    uint64_t frames;
    assert_int_equal(btc_journal_replay(path, "/tmp", &d, &m, &frames, err, sizeof err), 0);
    assert_int_equal(frames, 2);
    assert_true(m.event_count > 0);
    btc_model_free(&m);
    btc_decoder_free(&d);
    unlink(path);
}

static void a_journal_already_there_is_never_overwritten(void **state)
{
    (void)state;
    char path[] = "/tmp/bt-journal-XXXXXX";
    close(mkstemp(path));
    long size = write_journal(path, 2);
    struct btc_journal j;
    char err[512];
    assert_int_equal(btc_journal_open(&j, path, NULL, rec + 1, BT_WELCOME_SIZE, err, sizeof err),
                     BTC_ERR_IO);
    assert_non_null(strstr(err, "File exists"));
    FILE *fp = fopen(path, "rb");
    fseek(fp, 0, SEEK_END);
    assert_int_equal(ftell(fp), size);
    fclose(fp);
    unlink(path);
}

static void file_that_is_no_journal_is_refused(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/session.tracy", data_dir);
    struct btc_decoder d = {0};
    struct btc_model m;
    char err[512];
    uint64_t frames;
    assert_int_equal(btc_journal_replay(path, "/tmp", &d, &m, &frames, err, sizeof err),
                     BTC_ERR_FORMAT);
    assert_non_null(strstr(err, "is not a boardtrace capture journal"));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    char path[4200];
    snprintf(path, sizeof path, "%s/client-to-server.bin", data_dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    rec_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    rec = malloc(rec_len);
    if (!rec || fread(rec, 1, rec_len, f) != rec_len)
        return 1;
    fclose(f);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(journal_replays_every_frame),
        cmocka_unit_test(journal_cut_inside_a_frame_keeps_the_frames_before),
        cmocka_unit_test(a_journal_already_there_is_never_overwritten),
        cmocka_unit_test(file_that_is_no_journal_is_refused),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(rec);
    return failed;
}
