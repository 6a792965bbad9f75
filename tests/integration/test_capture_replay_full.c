/* The rich upstream recording (tests/data/tracy-0.14.0-full: system tracing,
 * code transfer, GPU C API, fibers, locks, frame image) replayed over a real
 * socket by the fake client: the capture completes, asks what upstream's
 * capture asked for the kinds it keeps, and the counts of its README hold in
 * the model and in both file layouts, read back by our reader. */
#define _GNU_SOURCE
#include <pthread.h>
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
#include "replay_capture.h"
#include "replay_client.h"

static struct replay_capture run;

static void capture_completes(void **state)
{
    (void)state;
    assert_int_equal(run.capture_rc, BTC_OK);
    assert_int_equal(run.cap.end, BTC_END_COMPLETE);
    assert_int_equal(run.serve_rc, 0);
    assert_int_equal(btc_model_outstanding(&run.cap.model), 0);
}

/* README "Queries the capture sent": the deterministic rows. */
static void capture_asks_what_upstream_asked(void **state)
{
    (void)state;
    const uint64_t *q = bt_replay_query_counts(run.replay);
    assert_int_equal(q[BT_QUERY_STRING], 40);
    assert_int_equal(q[BT_QUERY_THREAD_STRING], 10); /* sampled threads named too */
    assert_int_equal(q[BT_QUERY_EXTERNAL_NAME], 117);
    assert_true(q[BT_QUERY_SOURCE_CODE] > 0 && q[BT_QUERY_SYMBOL_CODE] > 0);
    assert_int_equal(q[BT_QUERY_SOURCE_LOCATION], 24);
    assert_int_equal(q[BT_QUERY_PLOT_NAME], 4);
    assert_int_equal(q[BT_QUERY_FRAME_NAME], 2);
    assert_int_equal(q[BT_QUERY_FIBER_NAME], 2);
    assert_int_equal(q[BT_QUERY_TERMINATE], 1);
}

static void every_cpu_zone_is_kept(void **state)
{
    (void)state;
    assert_int_equal(run.cap.model.zone_count, 5127);
}

/* README "GPU": one OpenGL context with calibration, 70 zones on one
 * timeline, depth 2, 20 with a callstack, and exact synthetic durations. */
static void gpu_context_and_zones_are_kept(void **state)
{
    (void)state;
    const struct btc_gpu *g = &run.cap.model.gpu;
    assert_int_equal(g->ctxs.len, 1);
    const struct btc_gpu_ctx *c = btc_vec_at(&g->ctxs, 0);
    assert_int_equal(c->type, 1);
    assert_int_equal(c->calibration, 1);
    assert_true(c->period == 1.0f);
    assert_int_equal(c->count, 70);
    assert_int_equal(c->timelines.len, 1);
    assert_true(c->calibration_mod == 1.0);
    assert_string_equal(btc_strtab_get(&run.cap.model.strings, (uint32_t)c->name, NULL),
                        "full-gpu-ctx");
    assert_int_equal(g->zone_count, 70);
    assert_int_equal(g->child_lists, 10); /* each gpu_static holds a gpu_child */

    /* Durations on the GPU (ns) -> zones: README's table. */
    const struct {
        int64_t ns;
        int zones;
    } want[] = {{2500, 10}, {1200, 10}, {800, 10}, {900, 10}, {3500, 2}, {3900, 2},
                {2000, 2},  {2400, 2},  {1500, 4}, {1600, 3}, {1700, 3}};
    int got[sizeof want / sizeof want[0]] = {0};
    int with_callstack = 0, unended = 0, zones = 0;
    struct btc_spool_reader r;
    assert_int_equal(btc_spool_reader_open(&r, (struct btc_spool *)&g->zones), 0);
    const uint8_t *p;
    while (btc_spool_reader_next(&r, &p) > 0) {
        struct btc_gpu_zone_rec z;
        memcpy(&z, p, sizeof z);
        zones++;
        with_callstack += z.callstack != 0;
        unended += z.cpu_end < z.cpu_start || z.gpu_end < z.gpu_start || z.gpu_start < 0;
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            got[i] += z.gpu_end - z.gpu_start == want[i].ns;
    }
    btc_spool_reader_close(&r);
    assert_int_equal(zones, 70);
    assert_int_equal(with_callstack, 20);
    assert_int_equal(unended, 0);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (got[i] != want[i].zones)
            fprintf(stderr, "GPU duration %lld ns: %d zones, want %d\n", (long long)want[i].ns,
                    got[i], want[i].zones);
        assert_int_equal(got[i], want[i].zones);
    }
}

/* README "Frames": 1 frame image, 64x32, 1,024 bytes of DXT1, attached to
 * the default set's frame 11. */
static void the_frame_image_is_kept(void **state)
{
    (void)state;
    const struct btc_frame_images *f = &run.cap.model.frame_images;
    assert_int_equal(f->images.len, 1);
    assert_int_equal(f->dropped, 0);
    const struct btc_frame_image *img = btc_vec_at(&f->images, 0);
    assert_int_equal(img->w, 64);
    assert_int_equal(img->h, 32);
    uint64_t *at = btc_map_get(&f->by_frame, 11);
    assert_non_null(at);
    assert_int_equal(*at, 0);
}

static int by_free_time(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* README "Plots": upstream's loader rebuilds each pool's memory plot from
 * its events as they stand in the file (allocations in file order, frees
 * sorted by time, an allocation first only when strictly earlier), and the
 * plots of upstream's file peak at 256 (default pool), 128 (full-pool), 512
 * (full-pool-cs) and 16,384 bytes (full-discard-pool). The same rebuild of
 * what this capture writes must peak the same. */
static void memory_plots_peak_as_upstreams(void **state)
{
    (void)state;
    const struct btc_model *m = &run.cap.model;
    for (size_t pool = 0; pool < m->pools.len; pool++) {
        struct btc_vec allocs, frees; /* i64 time, i64 size / i64 time, i64 size */
        btc_vec_init(&allocs, 2 * sizeof(int64_t));
        btc_vec_init(&frees, 2 * sizeof(int64_t));
        struct btc_spool_reader r;
        assert_int_equal(btc_spool_reader_open(&r, (struct btc_spool *)&m->mem), 0);
        const uint8_t *p;
        while (btc_spool_reader_next(&r, &p) > 0) {
            struct btc_mem_rec e;
            memcpy(&e, p, sizeof e);
            if (e.pool != pool)
                continue;
            int64_t *a = btc_vec_push(&allocs);
            a[0] = e.time_alloc;
            a[1] = (int64_t)e.size;
            if (e.time_free >= 0) {
                int64_t *f = btc_vec_push(&frees);
                f[0] = e.time_free;
                f[1] = (int64_t)e.size;
            }
        }
        btc_spool_reader_close(&r);
        qsort(frees.data, frees.len, 2 * sizeof(int64_t), by_free_time);
        int64_t usage = 0, peak = 0;
        size_t ai = 0, fi = 0;
        while (ai < allocs.len || fi < frees.len) {
            const int64_t *a = ai < allocs.len ? btc_vec_at(&allocs, ai) : NULL;
            const int64_t *f = fi < frees.len ? btc_vec_at(&frees, fi) : NULL;
            if (a && (!f || a[0] < f[0])) {
                usage += a[1];
                ai++;
            } else {
                usage -= f[1];
                fi++;
            }
            if (usage > peak)
                peak = usage;
        }
        btc_vec_free(&allocs);
        btc_vec_free(&frees);
        const struct btc_pool *pl = btc_vec_at(&m->pools, pool);
        const char *name = "";
        uint64_t *si = pl->name ? btc_map_get(&m->key_strings, pl->name) : NULL;
        if (si)
            name = btc_strtab_get(&m->strings, (uint32_t)*si, NULL);
        int64_t want = !pl->name                                ? 256
                       : strcmp(name, "full-pool") == 0         ? 128
                       : strcmp(name, "full-pool-cs") == 0      ? 512
                       : strcmp(name, "full-discard-pool") == 0 ? 16384
                                                                : -1;
        if (peak != want)
            fprintf(stderr, "pool %zu %s: peak %lld, upstream's %lld\n", pool, name,
                    (long long)peak, (long long)want);
        assert_int_equal(peak, want);
    }
}

static void file_holds_the_counts(const char *path)
{
    struct btc_trace t;
    char err[512];
    int rc = btc_tracy_read(path, &t, NULL, NULL, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", path, err);
    assert_int_equal(rc, 0);
    assert_int_equal(t.zones, 5127);
    assert_int_equal(t.gpu_contexts, 1);
    assert_int_equal(t.gpu_zones, 70);
    assert_int_equal(t.gpu_zones_timed, 70);
    assert_int_equal(t.gpu_zones_with_callstack, 20);
    /* README "Timing-dependent results", equal here since the replay is
     * byte-exact: 6,965 samples, 5,200 of them at context switches; per
     * thread (samples / at context switches / kernel top frame), from
     * session-stats.txt. */
    assert_int_equal(t.samples, 6965);
    assert_int_equal(t.ctx_samples, 5200);
    const struct {
        const char *name;
        uint64_t samples, ctx, kernel;
    } per[] = {{"Main thread", 515, 513, 514},         {"full-worker-1", 1682, 922, 938},
               {"full-worker-2", 1684, 924, 938},      {"Tracy Sampling", 2129, 2111, 2127},
               {"Tracy Symbol Worker", 472, 286, 368}, {"full-gpu", 4, 4, 4}};
    for (size_t i = 0; i < sizeof per / sizeof per[0]; i++) {
        const struct btc_read_thread *th = NULL;
        for (size_t k = 0; k < t.threads.len; k++) {
            const struct btc_read_thread *c = btc_vec_at(&t.threads, k);
            if (strcmp(btc_trace_string(&t, c->name), per[i].name) == 0)
                th = c;
        }
        assert_non_null(th);
        assert_int_equal(th->samples, per[i].samples);
        assert_int_equal(th->ctx_samples, per[i].ctx);
        assert_int_equal(th->kernel_samples, per[i].kernel);
    }
    /* Context switches: 5,272 regions on the program's threads and fibers
     * (82 of them fiber regions), 8,080 on the CPUs; 117 threads seen on
     * the CPUs, each named through a query. */
    assert_int_equal(t.ctx_switches, 5272);
    assert_int_equal(t.cpu_ctx_switches, 8080);
    assert_int_equal(t.external_threads, 117);
    assert_int_equal(t.external_names, 117);
    /* README: CPU-clock samples at the top of a stack, hot_loop_b 752 and
     * hot_loop_a 735 of 1,765; the reader's sampling summary says so. */
    assert_int_equal(t.timer_samples, 1765);
    uint64_t hot_a = 0, hot_b = 0;
    for (size_t i = 0; i < t.sampled.len; i++) {
        const struct btc_read_sampled *f = btc_vec_at(&t.sampled, i);
        const char *name = btc_trace_string(&t, f->name);
        if (strcmp(name, "hot_loop_a") == 0)
            hot_a = f->self;
        if (strcmp(name, "hot_loop_b") == 0)
            hot_b = f->self;
    }
    assert_int_equal(hot_a, 735);
    assert_int_equal(hot_b, 752);
    /* GPU statistics per source location: 7 kinds, 10 zones each. */
    assert_int_equal(t.gpu_stats.len, 7);
    for (size_t i = 0; i < t.gpu_stats.len; i++)
        assert_int_equal(((const struct btc_read_gpu_stat *)btc_vec_at(&t.gpu_stats, i))->count,
                         10);
    /* README "Locks": 2 locks, 2,405 + 583 events, 9 marks each. */
    assert_int_equal(t.locks, 2);
    assert_int_equal(t.lock_events, 2405 + 583);
    assert_int_equal(t.lock_events_marked, 18);
    btc_trace_free(&t);
}

/* The file upstream's capture wrote of the same session, read by our
 * reader: the counts ours must equal. */
static struct btc_trace upstream;

static void file_holds_upstreams_counts(const char *path)
{
    struct btc_trace t;
    char err[512];
    assert_int_equal(btc_tracy_read(path, &t, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(t.ctx_switches, upstream.ctx_switches);
    assert_int_equal(t.cpu_ctx_switches, upstream.cpu_ctx_switches);
    assert_int_equal(t.external_threads, upstream.external_threads);
    assert_int_equal(t.external_names, upstream.external_names);
    assert_int_equal(t.cpu_thread_data, upstream.cpu_thread_data);
    assert_int_equal(t.cpu_regions, upstream.cpu_regions);
    assert_int_equal(t.cpu_migrations, upstream.cpu_migrations);
    assert_int_equal(t.samples, upstream.samples);
    assert_int_equal(t.ctx_samples, upstream.ctx_samples);
    assert_int_equal(t.gpu_zones, upstream.gpu_zones);
    assert_int_equal(t.gpu_zones_timed, upstream.gpu_zones_timed);
    assert_int_equal(t.lock_events_marked, upstream.lock_events_marked);
    assert_int_equal(t.frame_images, upstream.frame_images);
    /* Code transfer: the two names of the program's source (30,438 bytes
     * each), and the code of 672 symbols, as in upstream's file; with a
     * frame asked per instruction of that code (and per direct branch
     * target), as upstream's server does, the same frames and symbols. */
    assert_int_equal(t.source_files, upstream.source_files);
    assert_int_equal(t.source_file_bytes, upstream.source_file_bytes);
    fprintf(stderr,
            "symbol code %llu/%llu (%llu/%llu bytes), frames %llu/%llu, symbols %llu/%llu\n",
            (unsigned long long)t.symbol_code, (unsigned long long)upstream.symbol_code,
            (unsigned long long)t.symbol_code_bytes, (unsigned long long)upstream.symbol_code_bytes,
            (unsigned long long)t.callstack_frames, (unsigned long long)upstream.callstack_frames,
            (unsigned long long)t.symbols, (unsigned long long)upstream.symbols);
    assert_int_equal(t.symbol_code, upstream.symbol_code);
    assert_int_equal(t.symbol_code_bytes, upstream.symbol_code_bytes);
    assert_int_equal(t.callstack_frames, upstream.callstack_frames);
    assert_int_equal(t.symbols, upstream.symbols);
    btc_trace_free(&t);
}

static void files_hold_upstreams_counts(void **state)
{
    (void)state;
    file_holds_upstreams_counts(run.path14);
    file_holds_upstreams_counts(run.path11);
}

static void file_0_14_0_holds_the_counts(void **state)
{
    (void)state;
    file_holds_the_counts(run.path14);
}

static void file_0_11_1_holds_the_counts(void **state)
{
    (void)state;
    file_holds_the_counts(run.path11);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    char err[512], upath[4200];
    snprintf(upath, sizeof upath, "%s/session.tracy", argv[1]);
    if (btc_tracy_read(upath, &upstream, NULL, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", upath, err);
        return 1;
    }
    if (replay_capture_run(&run, argv[1], "replay-full", NULL) < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capture_completes),
        cmocka_unit_test(capture_asks_what_upstream_asked),
        cmocka_unit_test(every_cpu_zone_is_kept),
        cmocka_unit_test(gpu_context_and_zones_are_kept),
        cmocka_unit_test(the_frame_image_is_kept),
        cmocka_unit_test(memory_plots_peak_as_upstreams),
        cmocka_unit_test(file_0_14_0_holds_the_counts),
        cmocka_unit_test(file_0_11_1_holds_the_counts),
        cmocka_unit_test(files_hold_upstreams_counts),
    };
    int failed = cmocka_run_group_tests_name("replay_full", tests, NULL, NULL);
    int wrc = run.write_rc;
    replay_capture_free(&run);
    btc_trace_free(&upstream);
    return failed || wrc < 0;
}
