/* The capture's event model: zone nesting rules, query budget and order,
 * source-location answers matched in order, and the end-of-capture rule. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "btc_model.h"
#include "btc_tracy.h"

static struct btc_decoder dec;
static struct btc_model model;
static char err[512];

static int setup(void **state)
{
    (void)state;
    struct btc_welcome w = {.timer_mul = 1.0};
    err[0] = 0;
    if (btc_decoder_init(&dec, &w) < 0)
        return -1;
    /* As the capture decodes: zones through the fast path, whose refusals
     * must reach the model's full checks and messages. */
    dec.zones = btc_model_zone_fast(&model);
    return btc_model_init(&model, &w, "/tmp", err, sizeof err);
}

static int teardown(void **state)
{
    (void)state;
    btc_model_free(&model);
    btc_decoder_free(&dec);
    return 0;
}

static int feed(const uint8_t *b, size_t n)
{
    return btc_decoder_events(&dec, b, n, btc_model_event, &model, err, sizeof err);
}

static size_t thread_ctx(uint8_t *p, uint32_t tid)
{
    p[0] = BT_EV_THREAD_CONTEXT;
    bt_wire_put_u32(p + 1, tid);
    return 5;
}

static size_t zone_begin(uint8_t *p, uint16_t delta, uint64_t srcloc)
{
    p[0] = BT_EV_ZONE_BEGIN16;
    bt_wire_put_u16(p + 1, delta);
    bt_wire_put_u64(p + 3, srcloc);
    return 11;
}

static size_t zone_end(uint8_t *p, uint16_t delta)
{
    p[0] = BT_EV_ZONE_END16;
    bt_wire_put_u16(p + 1, delta);
    return 3;
}

static size_t srcloc_answer(uint8_t *p, uint32_t line)
{
    memset(p, 0, 32);
    p[0] = BT_EV_SOURCE_LOCATION;
    bt_wire_put_u64(p + 9, 0x900);  /* function */
    bt_wire_put_u64(p + 17, 0x901); /* file */
    bt_wire_put_u32(p + 25, line);
    return 32;
}

static void zone_end_with_nothing_open_names_the_thread(void **state)
{
    (void)state;
    uint8_t b[16];
    size_t n = thread_ctx(b, 9);
    n += zone_end(b + n, 5);
    assert_int_equal(feed(b, n), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "stream offset 5: event ZoneEnd16 (27)"));
    assert_non_null(strstr(err, "no zone open on thread 9"));
}

static void zone_validation_mismatch_is_an_error(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = thread_ctx(b, 1);
    b[n] = BT_EV_ZONE_VALIDATION;
    bt_wire_put_u32(b + n + 1, 11);
    n += 5;
    n += zone_begin(b + n, 1, 0x100);
    b[n] = BT_EV_ZONE_VALIDATION;
    bt_wire_put_u32(b + n + 1, 12);
    n += 5;
    n += zone_end(b + n, 1);
    assert_int_equal(feed(b, n), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "validation id 12 does not match the open zone's 11"));
}

static void queries_wait_for_budget(void **state)
{
    (void)state;
    uint8_t b[64], out[16 * BT_QUERY_SIZE];
    btc_model_set_budget(&model, 1);
    size_t n = thread_ctx(b, 3);
    n += zone_begin(b + n, 1, 0x100);
    n += zone_end(b + n, 1);
    assert_int_equal(feed(b, n), 0);
    /* Source location and thread name are queued; the budget lets one go. */
    assert_int_equal(btc_model_take_queries(&model, out, 16), 1);
    assert_int_equal(out[0], BT_QUERY_SOURCE_LOCATION);
    assert_int_equal(bt_wire_get_u64(out + 1), 0x100);
    assert_int_equal(btc_model_take_queries(&model, out, 16), 0);
    n = srcloc_answer(b, 7); /* its answer gives the budget back */
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(btc_model_take_queries(&model, out, 16), 1);
    assert_int_equal(out[0], BT_QUERY_THREAD_STRING);
    assert_int_equal(bt_wire_get_u64(out + 1), 3);
    assert_int_equal(btc_model_take_queries(&model, out, 16), 0);
}

static void source_location_answers_match_queries_in_order(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = thread_ctx(b, 1);
    n += zone_begin(b + n, 1, 0xA);
    n += zone_begin(b + n, 1, 0xB);
    n += zone_end(b + n, 1);
    n += zone_end(b + n, 1);
    n += srcloc_answer(b + n, 10);
    n += srcloc_answer(b + n, 20);
    assert_int_equal(feed(b, n), 0);
    const struct btc_srcloc *a = btc_vec_at(&model.srclocs, 0), *c = btc_vec_at(&model.srclocs, 1);
    assert_int_equal(a->key, 0xA);
    assert_int_equal(a->line, 10);
    assert_int_equal(c->key, 0xB);
    assert_int_equal(c->line, 20);
    n = srcloc_answer(b, 30);
    assert_int_equal(feed(b, n), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "no query outstanding"));
}

static void capture_completes_after_terminate_with_nothing_pending(void **state)
{
    (void)state;
    uint8_t b[128], out[16 * BT_QUERY_SIZE];
    size_t n = thread_ctx(b, 2);
    n += zone_begin(b + n, 1, 0xA);
    b[n++] = BT_EV_TERMINATE;
    assert_int_equal(feed(b, n), 0);
    btc_model_take_queries(&model, out, 16);
    assert_false(btc_model_complete(&model, &dec)); /* zone open, queries unanswered */
    n = zone_end(b, 1);
    n += srcloc_answer(b + n, 1);
    b[n] = BT_EV_THREAD_NAME;
    bt_wire_put_u64(b + n + 1, 2);
    bt_wire_put_u16(b + n + 9, 0);
    n += 11;
    assert_int_equal(feed(b, n), 0);
    assert_false(btc_model_complete(&model, &dec)); /* the srcloc's strings are asked now */
    btc_model_take_queries(&model, out, 16);
    n = 0;
    for (uint64_t key = 0x900; key <= 0x901; key++) {
        b[n] = BT_EV_STRING_DATA;
        bt_wire_put_u64(b + n + 1, key);
        bt_wire_put_u16(b + n + 9, 1);
        b[n + 11] = 's';
        n += 12;
    }
    assert_int_equal(feed(b, n), 0);
    assert_true(btc_model_complete(&model, &dec));
}

static void zones_open_at_the_end_are_kept_unended(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = thread_ctx(b, 4);
    n += zone_begin(b + n, 1, 0xA);
    n += zone_begin(b + n, 1, 0xA);
    n += zone_end(b + n, 1);
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(btc_model_finish(&model), 0);
    /* The thread's timeline, one fragment, expanded to the file's
     * encoding: outer begin, inner begin, inner end, outer end (-1: never
     * ended). */
    struct btc_timeline_reader r;
    uint32_t thread, len;
    const uint8_t *f;
    assert_int_equal(btc_timeline_reader_open(&r, &model.zones), 0);
    assert_int_equal(btc_timeline_reader_next(&r, &thread, &f, &len), 1);
    uint8_t p[2 * BTC_TL_FILE_BEGIN_BYTES + 2 * BTC_TL_FILE_END_BYTES];
    size_t used, made;
    assert_int_equal(btc_timeline_expand(f, len, &used, p, sizeof p, &made), 0);
    assert_int_equal(used, len);
    assert_int_equal(made, sizeof p);
    assert_int_equal(((struct btc_thread *)btc_vec_at(&model.threads, thread))->tid, 4);
    int64_t outer_start = (int64_t)bt_wire_get_u64(p + 2);
    const uint8_t *inner = p + BTC_TL_FILE_BEGIN_BYTES;
    int64_t inner_start = outer_start + (int64_t)bt_wire_get_u64(inner + 2);
    int64_t inner_end = inner_start + (int64_t)bt_wire_get_u64(inner + BTC_TL_FILE_BEGIN_BYTES);
    int64_t outer_end = inner_end + (int64_t)bt_wire_get_u64(inner + BTC_TL_FILE_BEGIN_BYTES +
                                                             BTC_TL_FILE_END_BYTES);
    assert_int_equal(bt_wire_get_u32(p + 14), 1); /* children */
    assert_int_equal(bt_wire_get_u32(inner + 14), 0);
    assert_int_equal(inner_end, inner_start + 1);
    assert_int_equal(outer_end, -1);
    /* Spooled: the outer begin with its patch field; the inner zone as a
     * leaf (tag, srcloc, one-byte deltas of its start and end); the outer
     * end (tag, a negative delta: 8 bytes). */
    assert_int_equal(BTC_TL_KIND(f[0]), BTC_TL_BEGIN);
    size_t outer = 3 + BTC_TL_LEN(f[0]) + 8;
    assert_int_equal(f[outer], BTC_TL_TAG(BTC_TL_LEAF, 1));
    assert_int_equal(f[outer + 5], BTC_TL_TAG(BTC_TL_END, 8));
    assert_int_equal(len, outer + 5 + 9);
    assert_int_equal(btc_timeline_reader_next(&r, &thread, &f, &len), 0);
    btc_timeline_reader_close(&r);
}

/* The fast path (runs of zones, leaves at once) and the full path model
 * the same stream alike, refusals and errors included. */
static size_t wide_event(uint8_t *p, uint8_t type, uint64_t v)
{
    p[0] = type;
    bt_wire_put_u64(p + 1, v);
    return bt_wire_event_size[type];
}

struct side {
    struct btc_decoder dec;
    struct btc_model model;
    char err[512];
    int rc;
};

static void feed_side(struct side *x, int fast, const uint8_t *b, size_t n)
{
    struct btc_welcome w = {.timer_mul = 1.0};
    assert_int_equal(btc_decoder_init(&x->dec, &w), 0);
    assert_int_equal(btc_model_init(&x->model, &w, "/tmp", x->err, sizeof x->err), 0);
    if (fast)
        x->dec.zones = btc_model_zone_fast(&x->model);
    x->err[0] = 0;
    x->rc = btc_decoder_events(&x->dec, b, n, btc_model_event, &x->model, x->err, sizeof x->err);
    if (x->rc == 0)
        assert_int_equal(btc_model_finish(&x->model), 0);
}

/* A thread's timeline (thread index 0) in the file's encoding. */
static size_t expanded_timeline(struct btc_model *m, uint8_t *out, size_t cap)
{
    struct btc_timeline_reader r;
    uint32_t thread, len;
    const uint8_t *f;
    size_t total = 0;
    int rc;
    assert_int_equal(btc_timeline_reader_open(&r, &m->zones), 0);
    while ((rc = btc_timeline_reader_next(&r, &thread, &f, &len)) > 0) {
        size_t used, made;
        assert_int_equal(btc_timeline_expand(f, len, &used, out + total, cap - total, &made), 0);
        assert_int_equal(used, len);
        total += made;
    }
    assert_int_equal(rc, 0);
    btc_timeline_reader_close(&r);
    return total;
}

/* Returns the status both paths ended with. */
static int both_paths_agree(const uint8_t *b, size_t n)
{
    static struct side fast, full;
    feed_side(&fast, 1, b, n);
    feed_side(&full, 0, b, n);
    assert_int_equal(fast.rc, full.rc);
    assert_string_equal(fast.err, full.err);
    assert_int_equal(fast.model.zone_count, full.model.zone_count);
    assert_int_equal(fast.model.event_count, full.model.event_count);
    assert_int_equal(fast.model.last_time, full.model.last_time);
    assert_int_equal(fast.model.threads.len, full.model.threads.len);
    for (size_t i = 0; i < fast.model.threads.len; i++) {
        struct btc_thread *a = btc_vec_at(&fast.model.threads, i);
        struct btc_thread *c = btc_vec_at(&full.model.threads, i);
        assert_int_equal(a->zones, c->zones);
        assert_int_equal(a->top_zones, c->top_zones);
        assert_int_equal(a->child_lists, c->child_lists);
        assert_int_equal(a->stack.len, c->stack.len);
    }
    assert_int_equal(fast.model.srcloc_zone_counts.len, full.model.srcloc_zone_counts.len);
    for (size_t i = 0; i < fast.model.srcloc_zone_counts.len; i++)
        assert_int_equal(*(uint64_t *)btc_vec_at(&fast.model.srcloc_zone_counts, i),
                         *(uint64_t *)btc_vec_at(&full.model.srcloc_zone_counts, i));
    static uint8_t a[1 << 16], c[1 << 16];
    size_t alen = expanded_timeline(&fast.model, a, sizeof a);
    assert_int_equal(alen, expanded_timeline(&full.model, c, sizeof c));
    assert_memory_equal(a, c, alen);
    for (struct side *x = &fast; x; x = x == &fast ? &full : NULL) {
        btc_model_free(&x->model);
        btc_decoder_free(&x->dec);
    }
    return fast.rc;
}

static void the_fast_path_models_zones_as_the_full_path_does(void **state)
{
    (void)state;
    static uint8_t b[8192];
    size_t n = thread_ctx(b, 4);
    /* Leaves at the top and under a parent, a leaf whose end carries a
     * validation id set before its begin, a decorated leaf, a second
     * source location, deltas of all three widths. */
    n += zone_begin(b + n, 5, 0xA);
    for (int i = 0; i < 40; i++) {
        n += zone_begin(b + n, (uint16_t)(i * 7), 0xA);
        n += zone_end(b + n, (uint16_t)i);
    }
    n += wide_event(b + n, BT_EV_ZONE_VALIDATION, 3); /* a u32 id */
    n += zone_begin(b + n, 1, 0xA);
    n += wide_event(b + n, BT_EV_ZONE_VALIDATION, 3);
    n += zone_end(b + n, 1);
    n += zone_begin(b + n, 1, 0xA);
    b[n] = BT_EV_ZONE_COLOR;
    b[n + 1] = 1, b[n + 2] = 2, b[n + 3] = 3;
    n += bt_wire_event_size[BT_EV_ZONE_COLOR];
    n += zone_end(b + n, 2);
    n += zone_begin(b + n, 1, 0xB);
    n += wide_event(b + n, BT_EV_ZONE_END, (uint64_t)1 << 40);
    n += zone_end(b + n, 9); /* the parent */
    for (int i = 0; i < 40; i++) {
        n += zone_begin(b + n, 60000, 0xA);
        n += zone_end(b + n, 60000);
    }
    assert_true(n < sizeof b - 64);
    assert_int_equal(both_paths_agree(b, n), 0);
    /* A leaf that ends before it begins: the same refusal. */
    size_t bad = n;
    bad += zone_begin(b + bad, 1, 0xA);
    bad += wide_event(b + bad, BT_EV_ZONE_END, (uint64_t)-5);
    assert_int_equal(both_paths_agree(b, bad), BTC_ERR_PROTOCOL);
    /* A leaf whose validation id came before its begin: the same refusal. */
    bad = n;
    bad += wide_event(b + bad, BT_EV_ZONE_VALIDATION, 3);
    bad += zone_begin(b + bad, 1, 0xA);
    bad += zone_end(b + bad, 1);
    assert_int_equal(both_paths_agree(b, bad), BTC_ERR_PROTOCOL);
    /* A leaf beginning before its parent did: the same refusal. */
    bad = n;
    bad += zone_begin(b + bad, 1, 0xA);
    bad += wide_event(b + bad, BT_EV_ZONE_BEGIN, (uint64_t)-5) - 8;
    bt_wire_put_u64(b + bad, 0xA);
    bad += 8;
    bad += zone_end(b + bad, 1);
    assert_int_equal(both_paths_agree(b, bad), BTC_ERR_PROTOCOL);
}

static size_t lock_event(uint8_t *p, uint8_t type, uint32_t thread, uint32_t id, uint64_t t)
{
    p[0] = type;
    if (type == BT_EV_LOCK_RELEASE || type == BT_EV_LOCK_TERMINATE) {
        bt_wire_put_u32(p + 1, id);
        bt_wire_put_u64(p + 5, t);
        return 13;
    }
    bt_wire_put_u32(p + 1, thread);
    bt_wire_put_u32(p + 5, id);
    bt_wire_put_u64(p + 9, t);
    return 17;
}

/* Writes the model in a file of the given layout and reads it back into t. */
static void read_back(uint32_t version, struct btc_trace *t)
{
    char path[] = "/tmp/bt-model-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(btc_tracy_write(&model, path, version, NULL, err, sizeof err), 0);
    assert_int_equal(btc_tracy_read(path, t, NULL, NULL, err, sizeof err), 0);
    if (getenv("BT_KEEP_TEST_FILES"))
        fprintf(stderr, "kept %s\n", path);
    else
        unlink(path);
}

/* A lock's announce, name, wait/obtain/release and terminate reach the
 * file: upstream's loader reads them back as one lock with three events. */
static void locks_are_written_with_their_events(void **state)
{
    (void)state;
    uint8_t b[256];
    size_t n = 0;
    b[n] = BT_EV_LOCK_ANNOUNCE;
    bt_wire_put_u32(b + n + 1, 5);
    bt_wire_put_u64(b + n + 5, 100);
    bt_wire_put_u64(b + n + 13, 0x700);
    b[n + 21] = BT_LOCK_TYPE_LOCKABLE;
    n += 22;
    b[n++] = BT_EV_SINGLE_STRING_DATA8;
    b[n++] = 4;
    memcpy(b + n, "qlck", 4);
    n += 4;
    b[n] = BT_EV_LOCK_NAME;
    bt_wire_put_u32(b + n + 1, 5);
    n += 5;
    n += lock_event(b + n, BT_EV_LOCK_WAIT, 11, 5, 200);
    n += lock_event(b + n, BT_EV_LOCK_OBTAIN, 11, 5, 10);
    n += lock_event(b + n, BT_EV_LOCK_RELEASE, 0, 5, 30);
    n += lock_event(b + n, BT_EV_LOCK_TERMINATE, 0, 5, 900);
    n += srcloc_answer(b + n, 33);
    assert_int_equal(feed(b, n), 0);
    const struct btc_lock *l = btc_vec_at(&model.locks, 0);
    assert_int_equal(model.locks.len, 1);
    assert_int_equal(l->events, 3);
    assert_int_equal(l->nthreads, 1);
    assert_int_equal(l->tids[0], 11);
    assert_int_equal(l->terminate, 900);
    assert_int_equal(btc_model_finish(&model), 0);
    struct btc_trace t;
    read_back(BTC_FILE_VERSION_0_14_0, &t);
    assert_int_equal(t.locks, 1);
    assert_int_equal(t.lock_events, 3);
    btc_trace_free(&t);
}

static size_t fiber_enter(uint8_t *p, uint64_t fiber, uint32_t thread)
{
    p[0] = BT_EV_FIBER_ENTER;
    bt_wire_put_u64(p + 1, 0); /* THR delta */
    bt_wire_put_u64(p + 9, fiber);
    bt_wire_put_u32(p + 17, thread);
    bt_wire_put_u32(p + 21, 0);
    return 25;
}

/* Zones of two fibers interleave on one OS thread; each fiber keeps its
 * own nesting, as upstream routes them, and is a thread of the file. */
static void fibers_keep_their_own_zone_stacks(void **state)
{
    (void)state;
    uint8_t b[256], out[16 * BT_QUERY_SIZE];
    size_t n = thread_ctx(b, 5);
    n += fiber_enter(b + n, 0xF1, 5);
    n += zone_begin(b + n, 1, 0xA);
    n += fiber_enter(b + n, 0xF2, 5);
    n += zone_begin(b + n, 1, 0xA);
    n += zone_end(b + n, 1);
    n += fiber_enter(b + n, 0xF1, 5);
    n += zone_end(b + n, 1);
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(model.threads.len, 3); /* the OS thread and two fibers */
    const struct btc_thread *f1 = btc_vec_at(&model.threads, 1),
                            *f2 = btc_vec_at(&model.threads, 2);
    assert_true(f1->is_fiber && f2->is_fiber);
    assert_int_equal(f1->zones, 1);
    assert_int_equal(f2->zones, 1);
    assert_int_equal(f1->stack.len + f2->stack.len, 0);
    size_t q = btc_model_take_queries(&model, out, 16);
    int fiber_names = 0;
    for (size_t i = 0; i < q; i++)
        fiber_names += out[i * BT_QUERY_SIZE] == BT_QUERY_FIBER_NAME;
    assert_int_equal(fiber_names, 2);
    assert_int_equal(btc_model_finish(&model), 0);
    struct btc_trace t;
    read_back(BTC_FILE_VERSION_0_14_0, &t);
    assert_int_equal(t.threads.len, 3);
    assert_int_equal(t.zones, 2);
    btc_trace_free(&t);
}

/* System-wide events the file has room for: CPU usage reports become
 * upstream's implicit "CPU usage" plot, the CPU topology and the thread to
 * process map get their sections; both layouts read back. */

static void cpu_usage_topology_and_pids_are_written(void **state)
{
    (void)state;
    uint8_t b[256];
    size_t n = 0;
    float usage[2] = {12.5f, 50.0f};
    for (int i = 0; i < 2; i++) {
        b[n] = BT_EV_SYS_TIME_REPORT;
        bt_wire_put_u64(b + n + 1, (uint64_t)(100 + i));
        uint32_t bits;
        memcpy(&bits, &usage[i], 4);
        bt_wire_put_u32(b + n + 9, bits);
        n += 13;
    }
    uint32_t cpus[3][4] = {{0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 1, 2}};
    for (int i = 0; i < 3; i++) {
        b[n] = BT_EV_CPU_TOPOLOGY;
        for (int k = 0; k < 4; k++)
            bt_wire_put_u32(b + n + 1 + 4 * k, cpus[i][k]);
        n += 17;
    }
    b[n] = BT_EV_TID_TO_PID;
    bt_wire_put_u64(b + n + 1, 77);
    bt_wire_put_u64(b + n + 9, 70);
    n += 17;
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(btc_model_finish(&model), 0);
    uint32_t versions[2] = {BTC_FILE_VERSION_0_14_0, BTC_FILE_VERSION_0_11_1};
    for (int v = 0; v < 2; v++) {
        struct btc_trace t;
        read_back(versions[v], &t);
        assert_int_equal(t.plots.len, 1);
        const struct btc_read_plot *p = btc_vec_at(&t.plots, 0);
        assert_int_equal(p->type, BTC_PLOT_TYPE_SYSTIME);
        assert_int_equal(p->points, 2);
        assert_true(p->min == 12.5 && p->max == 50.0);
        assert_int_equal(t.cpu_threads, 3);
        assert_int_equal(t.tid_pids, 1);
        btc_trace_free(&t);
    }
}

/* Hardware samples land per address and counter; power reports become a
 * Watt plot from the second report on (uJ over ns, as upstream). */
static void hardware_samples_and_power_are_written(void **state)
{
    (void)state;
    uint8_t b[512];
    size_t n = 0;
    const struct {
        uint8_t type;
        uint64_t ip, t;
    } hw[] = {{BT_EV_HW_SAMPLE_CPU_CYCLE, 0x1000, 10},
              {BT_EV_HW_SAMPLE_CPU_CYCLE, 0x1000, 20},
              {BT_EV_HW_SAMPLE_CACHE_MISS, 0x1000, 15},
              {BT_EV_HW_SAMPLE_BRANCH_MISS, 0x2000, 30}};
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++) {
        b[n] = hw[i].type;
        bt_wire_put_u64(b + n + 1, hw[i].ip);
        bt_wire_put_u64(b + n + 9, hw[i].t);
        n += 17;
    }
    for (int i = 0; i < 3; i++) {
        b[n] = BT_EV_SYS_POWER_REPORT;
        bt_wire_put_u64(b + n + 1, 1000000u * (uint64_t)(i + 1)); /* time, ns */
        bt_wire_put_u64(b + n + 9, 2000);                         /* uJ */
        bt_wire_put_u64(b + n + 17, 0x700);                       /* name key */
        n += 25;
    }
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(model.hw_samples.count[0], 2);
    assert_int_equal(btc_model_finish(&model), 0);
    uint32_t versions[2] = {BTC_FILE_VERSION_0_14_0, BTC_FILE_VERSION_0_11_1};
    for (int v = 0; v < 2; v++) {
        struct btc_trace t;
        read_back(versions[v], &t);
        assert_int_equal(t.hw_sample_addresses, 2);
        assert_int_equal(t.hw_samples[0], 2);
        assert_int_equal(t.hw_samples[3], 1);
        assert_int_equal(t.hw_samples[5], 1);
        assert_int_equal(t.plots.len, 1);
        const struct btc_read_plot *p = btc_vec_at(&t.plots, 0);
        assert_int_equal(p->type, BTC_PLOT_TYPE_POWER);
        assert_int_equal(p->points, 2);
        /* 2000 uJ in 1 ms: 2 W */
        assert_true(p->min == 2.0 && p->max == 2.0);
        btc_trace_free(&t);
    }
}

static size_t staged(uint8_t *p, const char *text)
{
    size_t n = strlen(text);
    p[0] = BT_EV_SINGLE_STRING_DATA8;
    p[1] = (uint8_t)n;
    memcpy(p + 2, text, n);
    return 2 + n;
}

/* Sections: one entered then left, one left before it was entered (the
 * enter completes it), one still open at the end, and a category named by
 * SectionSetup; the 0.14.0 file has them, the 0.11.1 one has no such
 * section. */
static void sections_are_written(void **state)
{
    (void)state;
    uint8_t b[512];
    size_t n = thread_ctx(b, 5);
    const struct {
        uint8_t type;
        uint32_t id;
        uint16_t category;
        const char *text;
    } ev[] = {{BT_EV_SECTION_ENTER, 1, 7, "load"},
              {BT_EV_SECTION_LEAVE, 1, 0, NULL},
              {BT_EV_SECTION_LEAVE, 2, 0, NULL},
              {BT_EV_SECTION_ENTER, 2, 7, "late"},
              {BT_EV_SECTION_ENTER, 3, 8, "open"}};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        if (ev[i].text)
            n += staged(b + n, ev[i].text);
        b[n] = ev[i].type;
        bt_wire_put_u64(b + n + 1, 10); /* thread-relative delta */
        bt_wire_put_u32(b + n + 9, ev[i].id);
        if (ev[i].type == BT_EV_SECTION_ENTER)
            bt_wire_put_u16(b + n + 13, ev[i].category);
        n += ev[i].type == BT_EV_SECTION_ENTER ? 15 : 13;
    }
    n += staged(b + n, "Loading");
    b[n] = BT_EV_SECTION_SETUP;
    bt_wire_put_u16(b + n + 1, 9);
    n += 3;
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(model.sections.open.len, 1);
    assert_int_equal(model.sections.left_early.len, 0);
    assert_int_equal(btc_model_finish(&model), 0);
    struct btc_trace t;
    read_back(BTC_FILE_VERSION_0_14_0, &t);
    assert_int_equal(t.sections, 3);
    assert_int_equal(t.section_categories, 3);
    btc_trace_free(&t);
    read_back(BTC_FILE_VERSION_0_11_1, &t);
    assert_int_equal(t.sections, 0);
    btc_trace_free(&t);
}

static size_t message(uint8_t *p, const char *text, uint64_t t)
{
    size_t n = strlen(text);
    p[0] = BT_EV_SINGLE_STRING_DATA8;
    p[1] = (uint8_t)n;
    memcpy(p + 2, text, n);
    p[2 + n] = BT_EV_MESSAGE;
    bt_wire_put_u64(p + 3 + n, t);
    p[11 + n] = 0x20;
    return 12 + n;
}

static int check_order(void *ctx, const struct btc_trace *t, const struct btc_read_message *m)
{
    (void)t;
    int64_t *last = ctx;
    if (m->time < *last)
        return -1;
    *last = m->time;
    return 0;
}

/* A staged second string (a subframe's file name). */
static size_t staged_second(uint8_t *p, const char *text)
{
    size_t n = staged(p, text);
    p[0] = BT_EV_SECOND_STRING_DATA8;
    return n;
}

static size_t callstack_payload(uint8_t *p, const uint64_t *addrs, unsigned n)
{
    p[0] = BT_EV_CALLSTACK_PAYLOAD;
    bt_wire_put_u64(p + 1, 0x7000);
    size_t at = 9, len = 8 * (size_t)n;
    if (bt_wire_event_has_long_length(BT_EV_CALLSTACK_PAYLOAD)) {
        bt_wire_put_u32(p + at, (uint32_t)len);
        at += 4;
    } else {
        bt_wire_put_u16(p + at, (uint16_t)len);
        at += 2;
    }
    for (unsigned i = 0; i < n; i++)
        bt_wire_put_u64(p + at + 8 * i, addrs[i]);
    return at + len;
}

static size_t frame_size(uint8_t *p, uint64_t addr, uint8_t subframes)
{
    size_t n = staged(p, "/usr/bin/app");
    p[n] = BT_EV_CALLSTACK_FRAME_SIZE;
    bt_wire_put_u64(p + n + 1, addr);
    p[n + 9] = subframes;
    return n + 10;
}

static size_t subframe(uint8_t *p, const char *name, const char *file, uint32_t line, uint64_t sym)
{
    size_t n = staged(p, name);
    n += staged_second(p + n, file);
    p[n] = BT_EV_CALLSTACK_FRAME;
    bt_wire_put_u32(p + n + 1, line);
    bt_wire_put_u64(p + n + 5, sym);
    bt_wire_put_u32(p + n + 13, 64);
    return n + 17;
}

/* Frames go to the frame spool as their last subframe arrives: a resolved
 * frame is written with its subframes (an intrinsic header's innermost one
 * dropped, as upstream does), one cut short or never answered as unknown,
 * each once; an answer nobody asked for is an error. */
static void callstack_frames_are_written_once_each(void **state)
{
    (void)state;
    uint8_t b[1024], out[16 * BT_QUERY_SIZE];
    const uint64_t addrs[3] = {0x1000, 0x2000, 0x3000};
    size_t n = callstack_payload(b, addrs, 3);
    n += callstack_payload(b + n, addrs, 2); /* the same frames: no new queries */
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(btc_model_take_queries(&model, out, 16), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(out[i * BT_QUERY_SIZE], BT_QUERY_CALLSTACK_FRAME);
        assert_int_equal(bt_wire_get_u64(out + i * BT_QUERY_SIZE + 1), addrs[i]);
    }
    n = frame_size(b, 0x1000, 3);
    n += subframe(b + n, "_mm_add_ps", "/usr/lib/gcc/include/xmmintrin.h", 5, 0);
    n += subframe(b + n, "inlined", "/src/a.c", 10, 0x900);
    n += subframe(b + n, "outer", "/src/a.c", 20, 0x800);
    assert_int_equal(feed(b, n), 0);
    n = frame_size(b, 0x1000, 1);
    assert_int_equal(feed(b, n), BTC_ERR_PROTOCOL);
    assert_non_null(strstr(err, "answer for frame 0x1000, which was not asked for"));
    n = frame_size(b, 0x2000, 2);
    n += subframe(b + n, "cut", "/src/b.c", 30, 0x700);
    assert_int_equal(feed(b, n), 0);
    assert_int_equal(btc_model_outstanding(&model), 1 + 3); /* frame 0x3000, three symbols */
    assert_int_equal(btc_model_complete(&model, &dec), 0);

    struct btc_trace t;
    read_back(BTC_FILE_VERSION_0_14_0, &t);
    assert_int_equal(t.callstacks, 2);
    assert_int_equal(t.callstack_frames, 3);
    btc_trace_free(&t);
}

/* Messages of two threads that arrive out of time order are written in
 * time order, each thread keeping its own; in-order ones stream as they are. */
static void messages_are_written_in_time_order(void **state)
{
    (void)state;
    uint8_t b[256];
    size_t n = thread_ctx(b, 1);
    n += message(b + n, "late", 500);
    n += thread_ctx(b + n, 2);
    n += message(b + n, "early", 100);
    n += message(b + n, "later", 900);
    assert_int_equal(feed(b, n), 0);
    assert_true(model.msgs_unsorted);
    char path[] = "/tmp/bt-model-msg-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(btc_tracy_write(&model, path, BTC_FILE_VERSION_0_14_0, NULL, err, sizeof err),
                     0);
    struct btc_trace t;
    int64_t last = INT64_MIN;
    assert_int_equal(btc_tracy_read_messages(path, &t, NULL, check_order, &last, err, sizeof err),
                     0);
    assert_int_equal(t.messages, 3);
    assert_int_equal(last, 900);
    const struct btc_read_thread *t1 = btc_vec_at(&t.threads, 0), *t2 = btc_vec_at(&t.threads, 1);
    assert_int_equal(t1->messages, 1);
    assert_int_equal(t2->messages, 2);
    btc_trace_free(&t);
    unlink(path);
}

/* An on-demand client's default frame set gets a third frame, at the time
 * the capture connected (upstream adds it from the on-demand payload). */
static void on_demand_connection_adds_a_frame(void **state)
{
    (void)state;
    struct btc_welcome w = {.timer_mul = 1.0,
                            .init_end = 10,
                            .flags = BT_WELCOME_FLAG_ON_DEMAND,
                            .on_demand_frames = 7,
                            .on_demand_time = 500};
    struct btc_model od;
    assert_int_equal(btc_model_init(&od, &w, "/tmp", err, sizeof err), 0);
    uint8_t b[32] = {BT_EV_FRAME_MARK_MSG};
    bt_wire_put_u64(b + 1, 600);
    assert_int_equal(btc_decoder_events(&dec, b, 17, btc_model_event, &od, err, sizeof err), 0);
    char path[] = "/tmp/bt-model-od-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(btc_tracy_write(&od, path, BTC_FILE_VERSION_0_14_0, NULL, err, sizeof err), 0);
    struct btc_trace t;
    assert_int_equal(btc_tracy_read(path, &t, NULL, NULL, err, sizeof err), 0);
    const struct btc_read_frameset *def = btc_vec_at(&t.framesets, 0);
    assert_int_equal(def->frames, 4); /* 0, initEnd, connection, the mark */
    btc_trace_free(&t);
    btc_model_free(&od);
    unlink(path);
}

/* A context switch spool that cannot be written (its file is /dev/full
 * here) ends the capture with a message that says why, not just which. */
static void a_context_switch_spool_that_cannot_be_written_says_why(void **state)
{
    (void)state;
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (full < 0)
        skip();
    assert_true(dup2(full, model.ctxswitch.regions.fd) >= 0);
    close(full);
    int rc = 0;
    for (uint32_t i = 0; i < 1000000 && rc >= 0; i++) {
        /* time, old thread u32 @9, new thread u32 @13, cpu @17, reason
         * @18, state @19 (23 bytes on the wire): two threads take turns
         * on CPU 0. */
        uint8_t b[23] = {BT_EV_CONTEXT_SWITCH};
        bt_wire_put_u64(b + 1, 1000 + (uint64_t)i * 10);
        bt_wire_put_u32(b + 9, i ? (i % 2 ? 1 : 2) : 0);
        bt_wire_put_u32(b + 13, i % 2 ? 2 : 1);
        rc = feed(b, sizeof b);
    }
    assert_true(rc < 0);
    assert_non_null(strstr(err, "cannot write the context switch spool: No space left on device"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(zone_end_with_nothing_open_names_the_thread, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(zone_validation_mismatch_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(queries_wait_for_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(a_context_switch_spool_that_cannot_be_written_says_why,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(source_location_answers_match_queries_in_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(capture_completes_after_terminate_with_nothing_pending,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(zones_open_at_the_end_are_kept_unended, setup, teardown),
        cmocka_unit_test(the_fast_path_models_zones_as_the_full_path_does),
        cmocka_unit_test_setup_teardown(locks_are_written_with_their_events, setup, teardown),
        cmocka_unit_test_setup_teardown(on_demand_connection_adds_a_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(fibers_keep_their_own_zone_stacks, setup, teardown),
        cmocka_unit_test_setup_teardown(cpu_usage_topology_and_pids_are_written, setup, teardown),
        cmocka_unit_test_setup_teardown(messages_are_written_in_time_order, setup, teardown),
        cmocka_unit_test_setup_teardown(callstack_frames_are_written_once_each, setup, teardown),
        cmocka_unit_test_setup_teardown(hardware_samples_and_power_are_written, setup, teardown),
        cmocka_unit_test_setup_teardown(sections_are_written, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
