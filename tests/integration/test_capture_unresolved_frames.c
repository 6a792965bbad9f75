/* A client that cannot resolve its callstack frames (a program uploaded
 * with its section headers stripped) answers each with zero subframes, as
 * upstream's clients do; upstream's own server asserts on that. A recording
 * replayed so, in the protocol given: the capture completes, every zone is
 * kept, and every frame is in both file layouts as one subframe naming its
 * address, ready for the host to name from the unstripped program. */
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

#include "btc_capture.h"
#include "btc_tracy.h"
#include "replay_capture.h"
#include "replay_client.h"

static struct replay_capture run;

struct frame_count {
    uint64_t frames, by_address;
};

static void count_frame(void *ctx, const struct btc_trace *t, uint64_t addr,
                        struct btc_rewrite_sub *sub, unsigned n)
{
    struct frame_count *c = ctx;
    c->frames++;
    /* The frame's id drops a kernel address's top bits; its name keeps
     * them: the low 32 bits agree. */
    const char *name = btc_trace_string(t, sub[0].name);
    char *end = NULL;
    uint64_t named = strncmp(name, "0x", 2) == 0 ? strtoull(name + 2, &end, 16) : 0;
    if (n == 1 && end && end > name + 2 && !*end && (uint32_t)named == (uint32_t)addr &&
        strcmp(btc_trace_string(t, sub[0].file), "[unknown]") == 0 && sub[0].line == 0)
        c->by_address++;
}

static void the_capture_completes_with_every_frame_answered(void **state)
{
    (void)state;
    assert_int_equal(run.capture_rc, BTC_OK);
    assert_int_equal(run.cap.end, BTC_END_COMPLETE);
    assert_int_equal(run.serve_rc, 0);
    assert_int_equal(btc_model_outstanding(&run.cap.model), 0);
    assert_true(run.cap.model.callstacks.frames_unresolved > 0);
    assert_int_equal(run.cap.model.callstacks.frames_unresolved,
                     run.cap.model.callstacks.frames_resolved);
}

static void file_keeps_each_frame_by_its_address(const char *path)
{
    struct btc_trace t;
    char err[512];
    int rc = btc_tracy_read(path, &t, NULL, NULL, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", path, err);
    assert_int_equal(rc, 0);
    assert_true(t.zones > 0);
    assert_int_equal(t.zones, run.cap.model.zone_count);
    assert_int_equal(t.callstack_frames, run.cap.model.callstacks.frames_unresolved);
    btc_trace_free(&t);
    struct frame_count c = {0};
    struct btc_rewrite rw = {.frame = count_frame, .ctx = &c};
    assert_int_equal(btc_tracy_rewrite(path, NULL, &rw, err, sizeof err), 0);
    assert_int_equal(c.frames, run.cap.model.callstacks.frames_unresolved);
    assert_int_equal(c.by_address, c.frames);
}

static void file_0_14_0_keeps_each_frame_by_its_address(void **state)
{
    (void)state;
    file_keeps_each_frame_by_its_address(run.path14);
}

static void file_0_11_1_keeps_each_frame_by_its_address(void **state)
{
    (void)state;
    file_keeps_each_frame_by_its_address(run.path11);
}

static void no_change(void *ctx, const struct btc_trace *t, uint64_t addr,
                      struct btc_rewrite_sub *sub, unsigned n)
{
    (void)ctx, (void)t, (void)addr, (void)sub, (void)n;
}

/* Naming frames rewrites the file: a 0.10.0 file keeps its single-stream
 * container (0.10's GUI and csvexport refused the newer one, "not a Tracy
 * dump", after run named a stripped program's frames), and its content. */
static void a_rewritten_0_10_file_keeps_its_container(void **state)
{
    (void)state;
    char in[4200], out[4200], err[512];
    snprintf(in, sizeof in, "%s/legacy-in.tracy", run.dir);
    snprintf(out, sizeof out, "%s/legacy-out.tracy", run.dir);
    assert_int_equal(
        btc_tracy_write(&run.cap.model, in, BTC_FILE_VERSION_0_10_0, NULL, err, sizeof err), 0);
    struct btc_rewrite rw = {.frame = no_change};
    assert_int_equal(btc_tracy_rewrite(in, out, &rw, err, sizeof err), 0);
    FILE *f = fopen(out, "rb");
    assert_non_null(f);
    uint8_t magic[4] = {0};
    assert_int_equal(fread(magic, 1, 4, f), 4);
    fclose(f);
    assert_memory_equal(magic, "tZst", 4);
    struct btc_trace t;
    assert_int_equal(btc_tracy_read(out, &t, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(t.zones, run.cap.model.zone_count);
    btc_trace_free(&t);
    unlink(in);
    unlink(out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR [PROTOCOL]\n", argv[0]);
        return 2;
    }
    struct bt_replay_opts ro = {
        .data_dir = argv[1], .protocol = argc > 2 ? argv[2] : NULL, .unresolved_frames = 1};
    if (replay_capture_run_with(&run, &ro, "replay-unresolved") < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_capture_completes_with_every_frame_answered),
        cmocka_unit_test(file_0_14_0_keeps_each_frame_by_its_address),
        cmocka_unit_test(file_0_11_1_keeps_each_frame_by_its_address),
        cmocka_unit_test(a_rewritten_0_10_file_keeps_its_container),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    replay_capture_free(&run);
    return failed;
}
