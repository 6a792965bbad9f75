/* Callstack frame addresses and allocation pointers whose top bits are not
 * a sign extension (arm64 pointer authentication, top-byte tags, RISC-V
 * pointer masking, an unwinder's garbage) and allocation sizes of 2^48 - 1:
 * upstream's server asserts on each (PackPointer, MemEvent::SetSize), and
 * upstream's loader would on the sizes. A recording replayed with such
 * addresses, in the protocol given: the capture completes, and both file
 * layouts hold every zone, one frame per frame id, ids that give their
 * address back whole, and every allocation, an impossible size as 0. */
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
#include "btc_format.h"
#include "btc_tracy.h"
#include "btc_util.h"
#include "replay_capture.h"
#include "replay_client.h"

static struct replay_capture run;

/* What the replayed stream held, counted from the model's frame map. */
static uint64_t hostile_frames, distinct_ids;

static void count_asked_frames(void)
{
    const struct btc_tagmap *state = &run.cap.model.callstacks.frame_state;
    struct btc_tagmap ids;
    btc_tagmap_init(&ids);
    for (size_t i = 0; i < state->cap; i++) {
        if (!state->tags[i])
            continue;
        uint64_t a = state->keys[i];
        hostile_frames += !btc_frame_id_keeps(a);
        uint64_t id = btc_frame_id(a);
        if (!btc_tagmap_get(&ids, id)) {
            assert_int_equal(btc_tagmap_put(&ids, id, 1), 0);
            distinct_ids++;
        }
    }
    btc_tagmap_free(&ids);
}

static void the_capture_completes_and_says_what_it_refiled(void **state)
{
    (void)state;
    assert_int_equal(run.capture_rc, BTC_OK);
    assert_int_equal(run.cap.end, BTC_END_COMPLETE);
    assert_int_equal(run.serve_rc, 0);
    assert_int_equal(btc_model_outstanding(&run.cap.model), 0);
    count_asked_frames();
    /* The replay sent three addresses in four with top bits no frame id
     * keeps; the capture counted each it asked for. */
    assert_true(hostile_frames > 0);
    assert_int_equal(run.cap.model.callstacks.frames_retagged, hostile_frames);
    assert_true(run.cap.model.mem_sizes_unknown > 0);
}

struct frame_check {
    struct btc_tagmap seen;
    uint64_t frames, flagged, repeated;
};

static void check_frame(void *ctx, const struct btc_trace *t, uint64_t addr,
                        struct btc_rewrite_sub *sub, unsigned n)
{
    (void)t, (void)sub, (void)n;
    struct frame_check *c = ctx;
    c->frames++;
    /* An id's two flag bits stay clear: the loader takes bits 61 and 60
     * for the address's top, and upstream's asserts when sel is set. */
    c->flagged += (addr & ~BTC_FRAME_ID_MASK) != 0;
    if (btc_tagmap_get(&c->seen, addr))
        c->repeated++;
    else
        assert_int_equal(btc_tagmap_put(&c->seen, addr, 1), 0);
}

struct mem_check {
    uint64_t events, oversized, unknown;
};

static int check_mem(void *ctx, const struct btc_trace *t, const struct btc_read_mem *m)
{
    (void)t;
    struct mem_check *c = ctx;
    c->events++;
    c->oversized += m->size > BTC_MEM_SIZE_MAX;
    c->unknown += m->size == 0;
    return 0;
}

static void file_holds_it_all(const char *path)
{
    struct btc_trace t;
    char err[512];
    struct mem_check mc = {0};
    struct btc_read_more more = {.mem = check_mem};
    int rc = btc_tracy_read_more(path, &t, NULL, NULL, &more, &mc, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", path, err);
    assert_int_equal(rc, 0);
    assert_true(t.zones > 0);
    assert_int_equal(t.zones, run.cap.model.zone_count);
    assert_int_equal(t.callstack_frames, distinct_ids);
    uint64_t allocs = 0;
    for (size_t i = 0; i < run.cap.model.pools.len; i++)
        allocs += ((const struct btc_pool *)btc_vec_at(&run.cap.model.pools, i))->count;
    assert_int_equal(mc.events, allocs);
    assert_int_equal(mc.oversized, 0);
    assert_true(mc.unknown >= run.cap.model.mem_sizes_unknown);
    btc_trace_free(&t);

    struct frame_check fc = {0};
    btc_tagmap_init(&fc.seen);
    struct btc_rewrite rw = {.frame = check_frame, .ctx = &fc};
    assert_int_equal(btc_tracy_rewrite(path, NULL, &rw, err, sizeof err), 0);
    btc_tagmap_free(&fc.seen);
    assert_int_equal(fc.frames, distinct_ids);
    assert_int_equal(fc.flagged, 0);
    assert_int_equal(fc.repeated, 0);
}

static void file_0_14_0_holds_it_all(void **state)
{
    (void)state;
    file_holds_it_all(run.path14);
}

static void file_0_11_1_holds_it_all(void **state)
{
    (void)state;
    file_holds_it_all(run.path11);
}

/* 0.10's layout, in its single-stream container, too. */
static void file_0_10_0_holds_it_all(void **state)
{
    (void)state;
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/replay-hostile-0.10.0.tracy", run.dir);
    int rc = btc_tracy_write(&run.cap.model, path, BTC_FILE_VERSION_0_10_0, NULL, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", path, err);
    assert_int_equal(rc, 0);
    file_holds_it_all(path);
    if (!getenv("BT_KEEP_TEST_FILES"))
        unlink(path);
}

/* The address filed for each pattern: a tag or a bit 62 or 63 alone goes
 * (bits 56 to 63 copied from bit 55), a code in bits 48 to 54 stays, and a
 * kernel address keeps its sign. */
static void each_pattern_is_filed_as_an_address_loaders_keep(void **state)
{
    (void)state;
    const uint64_t user = 0x0000003f8a6b1200ull, kernel = 0xffffffff80a01200ull;
    for (uint64_t low = 0; low < 4; low++) {
        uint64_t u = bt_replay_hostile(user | low << 4);
        uint64_t k = bt_replay_hostile(kernel | low << 4);
        assert_true(btc_frame_id_keeps(btc_frame_address(u)));
        assert_true(btc_frame_id_keeps(btc_frame_address(k)));
        assert_int_equal(low == 0, btc_frame_id_keeps(u));
        assert_int_equal(low == 0, btc_frame_id_keeps(k));
    }
    assert_int_equal(btc_frame_address(0x8000003f8a6b1220ull), 0x0000003f8a6b1220ull);
    assert_int_equal(btc_frame_address(0x4000003f8a6b1230ull), 0x0000003f8a6b1230ull);
    assert_int_equal(btc_frame_address(0x9a3c003f8a6b1210ull), 0x003c003f8a6b1210ull);
    assert_int_equal(btc_frame_address(0x7fffffff80a01220ull), 0xffffffff80a01220ull);
    assert_int_equal(btc_frame_address(user), user);
    assert_int_equal(btc_frame_address(kernel), kernel);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR [PROTOCOL]\n", argv[0]);
        return 2;
    }
    struct bt_replay_opts ro = {
        .data_dir = argv[1], .protocol = argc > 2 ? argv[2] : NULL, .hostile_addresses = 1};
    if (replay_capture_run_with(&run, &ro, "replay-hostile") < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_capture_completes_and_says_what_it_refiled),
        cmocka_unit_test(file_0_14_0_holds_it_all),
        cmocka_unit_test(file_0_11_1_holds_it_all),
        cmocka_unit_test(file_0_10_0_holds_it_all),
        cmocka_unit_test(each_pattern_is_filed_as_an_address_loaders_keep),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    replay_capture_free(&run);
    return failed;
}
