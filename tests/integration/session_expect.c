/* Counts of a .tracy file, per zone name, thread, frame set, pool and plot,
 * gathered with the capture core's reader. */
#include "session_expect.h"

#include <stdio.h>
#include <string.h>

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    struct session_counts *c = ctx;
    const struct btc_read_srcloc *s = btc_trace_srcloc(t, z->srcloc);
    const char *name = "?";
    if (s)
        name = s->name >= 0 ? btc_trace_string(t, s->name) : btc_trace_string(t, s->function);
    unsigned i = 0;
    while (i < c->nzone_names && strcmp(c->zone_name[i], name) != 0)
        i++;
    if (i == c->nzone_names && i < SESSION_MAX_NAMES) {
        snprintf(c->zone_name[i], sizeof c->zone_name[i], "%s", name);
        c->nzone_names++;
    }
    if (i < SESSION_MAX_NAMES)
        c->zone_count[i]++;
    if (z->end < 0)
        c->zones_unended++;
    else if (z->end > z->start)
        c->zones_positive++;
    return 0;
}

int session_counts_read(struct session_counts *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    return btc_tracy_read(path, &c->trace, on_zone, c, err, errlen);
}

void session_counts_free(struct session_counts *c)
{
    btc_trace_free(&c->trace);
}

uint64_t session_zones_named(const struct session_counts *c, const char *name)
{
    for (unsigned i = 0; i < c->nzone_names; i++)
        if (!strcmp(c->zone_name[i], name))
            return c->zone_count[i];
    return 0;
}

uint64_t session_thread_zones(const struct session_counts *c, const char *name)
{
    for (size_t i = 0; i < c->trace.threads.len; i++) {
        const struct btc_read_thread *t = btc_vec_at(&c->trace.threads, i);
        if (!strcmp(btc_trace_string(&c->trace, t->name), name))
            return t->zones;
    }
    return UINT64_MAX;
}

const struct btc_read_frameset *session_frameset(const struct session_counts *c, const char *name)
{
    for (size_t i = 0; i < c->trace.framesets.len; i++) {
        const struct btc_read_frameset *f = btc_vec_at(&c->trace.framesets, i);
        if (name ? !strcmp(btc_trace_string(&c->trace, f->name), name) : f->name < 0)
            return f;
    }
    return NULL;
}

const struct btc_read_pool *session_pool(const struct session_counts *c, const char *name)
{
    for (size_t i = 0; i < c->trace.pools.len; i++) {
        const struct btc_read_pool *p = btc_vec_at(&c->trace.pools, i);
        if (name ? !strcmp(btc_trace_string(&c->trace, p->name), name) : p->name < 0)
            return p;
    }
    return NULL;
}

const struct btc_read_plot *session_plot(const struct session_counts *c, const char *name)
{
    for (size_t i = 0; i < c->trace.plots.len; i++) {
        const struct btc_read_plot *p = btc_vec_at(&c->trace.plots, i);
        if (!strcmp(btc_trace_string(&c->trace, p->name), name))
            return p;
    }
    return NULL;
}

/* ---- the README's expected counts, one behaviour per test ------------- */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

static const char *session_expect_path;

static int session_expect_setup(void **state)
{
    static struct session_counts c;
    char err[512];
    int rc = session_counts_read(&c, session_expect_path, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", session_expect_path, err);
        return -1;
    }
    *state = &c;
    return 0;
}

static int session_expect_teardown(void **state)
{
    session_counts_free(*state);
    return 0;
}

static void zones_have_the_recorded_names_and_counts(void **state)
{
    const struct session_counts *c = *state;
    assert_int_equal(session_zones_named(c, "outer"), 2000);
    assert_int_equal(session_zones_named(c, "inner"), 2000);
    assert_int_equal(session_zones_named(c, "dyn_named"), 2000);
    assert_int_equal(session_zones_named(c, "dyn_func"), 2000);
    assert_int_equal(session_zones_named(c, "with_callstack"), 200);
    assert_int_equal(session_zones_named(c, "main_frame"), 100);
    assert_int_equal(c->nzone_names, 6);
    assert_int_equal(c->trace.zones, 8300);
    assert_int_equal(c->zones_unended, 0);
}

static void zones_sit_on_the_threads_that_ran_them(void **state)
{
    const struct session_counts *c = *state;
    assert_int_equal(session_thread_zones(c, "Main thread"), 100);
    assert_int_equal(session_thread_zones(c, "peer-worker-1"), 4100);
    assert_int_equal(session_thread_zones(c, "peer-worker-2"), 4100);
    /* Clients before 0.14 never name their symbol worker. */
    assert_int_equal(session_thread_zones(c, "Tracy Symbol Worker"),
                     session_expect_old_client ? -1 : 0);
}

static void frame_sets_have_the_recorded_frames(void **state)
{
    const struct session_counts *c = *state;
    const struct btc_read_frameset *def = session_frameset(c, NULL);
    const struct btc_read_frameset *named = session_frameset(c, "peer-named-frame");
    const struct btc_read_frameset *disc = session_frameset(c, "peer-discontinuous");
    assert_non_null(def);
    assert_non_null(named);
    assert_non_null(disc);
    assert_int_equal(def->frames, 102);
    assert_true(def->continuous);
    assert_int_equal(named->frames, 100);
    assert_true(named->continuous);
    assert_int_equal(disc->frames, 100);
    assert_false(disc->continuous);
    assert_int_equal(c->trace.framesets.len, 3);
}

static void memory_pools_balance(void **state)
{
    const struct session_counts *c = *state;
    const struct btc_read_pool *def = session_pool(c, NULL);
    const struct btc_read_pool *pool = session_pool(c, "peer-pool");
    assert_non_null(def);
    assert_non_null(pool);
    assert_int_equal(def->events, 2200);
    assert_int_equal(def->freed, 2200);
    assert_int_equal(def->active, 0);
    assert_int_equal(def->allocs_with_callstack, 200);
    assert_int_equal(def->frees_with_callstack, 200);
    assert_int_equal(pool->events, 2000);
    assert_int_equal(pool->freed, 2000);
    assert_int_equal(pool->active, 0);
}

static void plot_has_its_points_and_range(void **state)
{
    const struct session_counts *c = *state;
    const struct btc_read_plot *p = session_plot(c, "peer-plot");
    assert_non_null(p);
    assert_int_equal(p->points, 100);
    assert_true(p->min == 0.0);
    assert_true(p->max == 49.5);
}

static void messages_and_app_info_are_kept(void **state)
{
    const struct session_counts *c = *state;
    /* Clients before 0.14 send none of their own two messages. */
    int own = session_expect_old_client ? 0 : 2;
    assert_int_equal(c->trace.messages, 22 + own);
    if (c->trace.version >= BTC_FILE_VERSION_0_14_0 && !session_expect_no_message_sources) {
        assert_int_equal(c->trace.messages_user, 22);
        assert_int_equal(c->trace.messages_colored, 11);
        assert_int_equal(c->trace.messages_tracy, 2);
    } else {
        /* 0.11.1 records no message source, nor does a protocol before 82
         * send one: the client's own two count as user messages. */
        assert_int_equal(c->trace.messages_user, 22 + own);
        assert_int_equal(c->trace.messages_colored, 11);
    }
    assert_int_equal(c->trace.app_info.len, 1);
    /* the release of the client it was built with */
    const char *info = btc_trace_string(&c->trace, ((uint32_t *)c->trace.app_info.data)[0]);
    if (session_expect_old_client)
        assert_true(strncmp(info, "peer-client v0.1", 16) == 0);
    else
        assert_string_equal(info, "peer-client v0.14.0");
}

static void callstacks_are_resolved(void **state)
{
    const struct session_counts *c = *state;
    assert_int_equal(c->trace.callstack_frames, 8);
    /* 0.10's client names two frames fewer symbols */
    assert_true(c->trace.symbols == 11 || (session_expect_old_client && c->trace.symbols == 9));
    assert_true(c->trace.callstacks >= 2 && c->trace.callstacks <= 3);
}

int session_expect_no_message_sources;
int session_expect_old_client;

int session_expect_run(const char *group_name, const char *path)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zones_have_the_recorded_names_and_counts),
        cmocka_unit_test(zones_sit_on_the_threads_that_ran_them),
        cmocka_unit_test(frame_sets_have_the_recorded_frames),
        cmocka_unit_test(memory_pools_balance),
        cmocka_unit_test(plot_has_its_points_and_range),
        cmocka_unit_test(messages_and_app_info_are_kept),
        cmocka_unit_test(callstacks_are_resolved),
    };
    session_expect_path = path;
    return _cmocka_run_group_tests(group_name, tests, sizeof tests / sizeof *tests,
                                   session_expect_setup, session_expect_teardown);
}
