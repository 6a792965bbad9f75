/* boardtrace-report collapsed over every recorded trace of tests/data: per
 * zone name, the self times of its lines are the zones' durations less
 * their direct children's (computed here from the zones as read), and the
 * lines through it add up to the total time stats reports. */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btc_tracy.h"
#include "btr_report.h"

static const char *data_dir;

#define MAX_NAMES 256
#define MAX_DEPTH 256

struct per_name {
    char name[200];
    int64_t self_read;   /* from the zones, here */
    int64_t self_lines;  /* from the collapsed lines ending in it */
    int64_t total_stats; /* stats' total */
    int64_t total_lines; /* collapsed lines through it */
    int recursive;       /* on some path twice: its lines count its time twice */
};

struct names {
    struct per_name v[MAX_NAMES];
    int n;
};

static struct per_name *find(struct names *ns, const char *name)
{
    for (int i = 0; i < ns->n; i++)
        if (!strcmp(ns->v[i].name, name))
            return &ns->v[i];
    assert_true(ns->n < MAX_NAMES);
    struct per_name *p = &ns->v[ns->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

/* Self time straight from the stream: each zone's duration (ended, longer
 * than 0 ns) less the durations of the zones one level below it that ended
 * since the last zone at its depth. */
struct self_read {
    struct names *ns;
    int64_t below[MAX_DEPTH + 1];
};

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    struct self_read *s = ctx;
    assert_true(z->depth < MAX_DEPTH);
    int64_t children = s->below[z->depth + 1];
    s->below[z->depth + 1] = 0;
    int ended = z->end >= 0 && z->end > z->start;
    int64_t d = ended ? z->end - z->start : children;
    s->below[z->depth] += d;
    if (!ended)
        return 0;
    (void)t;
    /* Names are read after the stream: keyed by source location for now. */
    char key[16];
    snprintf(key, sizeof key, "#%d", z->srcloc);
    find(s->ns, key)->self_read += d > children ? d - children : 0;
    return 0;
}

static void check_trace(const char *path)
{
    static struct names ns, by_loc;
    memset(&ns, 0, sizeof ns);
    memset(&by_loc, 0, sizeof by_loc);

    struct self_read sr = {.ns = &by_loc};
    struct btc_trace t;
    char err[512] = "";
    assert_int_equal(btc_tracy_read(path, &t, on_zone, &sr, err, sizeof err), 0);
    for (int i = 0; i < by_loc.n; i++) {
        int16_t srcloc = (int16_t)atoi(by_loc.v[i].name + 1);
        const struct btc_read_srcloc *loc = btc_trace_srcloc(&t, srcloc);
        const char *name =
            loc ? btr_demangle(btc_trace_string(&t, loc->name >= 0 ? loc->name : loc->function))
                : "?";
        find(&ns, name)->self_read += by_loc.v[i].self_read;
    }
    btc_trace_free(&t);

    struct btr_stats st;
    assert_int_equal(btr_stats_compute(&st, path, err, sizeof err), 0);
    for (size_t i = 0; i < st.nzones; i++)
        find(&ns, btr_demangle(st.zones[i].name))->total_stats += st.zones[i].total_ns;
    btr_stats_free(&st);

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    uint64_t lines = 0;
    assert_int_equal(btr_collapsed_export(path, out, &lines, err, sizeof err), 0);
    fclose(out);
    assert_true(lines > 0);

    uint64_t seen = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        seen++;
        char *space = strrchr(line, ' ');
        assert_non_null(space);
        *space = 0;
        char *end;
        long long w = strtoll(space + 1, &end, 10);
        assert_true(*end == 0 && w > 0);
        /* The first frame is the thread; then the zones, outermost first. */
        char *frames[MAX_DEPTH];
        int n = 0;
        for (char *f = strtok_r(line, ";", &end); f; f = strtok_r(NULL, ";", &end)) {
            assert_true(n < MAX_DEPTH);
            frames[n++] = f;
        }
        assert_true(n >= 2);
        find(&ns, frames[n - 1])->self_lines += w;
        for (int i = 1; i < n; i++) {
            int again = 0;
            for (int k = 1; k < i; k++)
                again |= !strcmp(frames[k], frames[i]);
            struct per_name *p = find(&ns, frames[i]);
            if (again)
                p->recursive = 1;
            else
                p->total_lines += w;
        }
    }
    free(text);
    assert_int_equal(seen, lines);

    int checked = 0;
    for (int i = 0; i < ns.n; i++) {
        const struct per_name *p = &ns.v[i];
        if (p->self_read != p->self_lines || (!p->recursive && p->total_lines != p->total_stats))
            fail_msg("%s: zone %s: self %lld from the zones, %lld in the lines; total %lld in "
                     "stats, %lld in the lines",
                     path, p->name, (long long)p->self_read, (long long)p->self_lines,
                     (long long)p->total_stats, (long long)p->total_lines);
        checked += p->total_stats > 0;
    }
    assert_true(checked > 0);
}

static void test_collapsed_matches_stats_in_every_recording(void **state)
{
    (void)state;
    DIR *d = opendir(data_dir);
    assert_non_null(d);
    int traces = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/session.tracy", data_dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fclose(f);
        check_trace(path);
        traces++;
    }
    closedir(d);
    assert_true(traces >= 5);
}

/* A file that cannot be read fails the export, naming the file. */
static void test_collapsed_of_a_missing_file_names_it(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    char err[512] = "";
    uint64_t lines = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/no-such-trace.tracy", data_dir);
    assert_true(btr_collapsed_export(path, out, &lines, err, sizeof err) < 0);
    fclose(out);
    assert_non_null(strstr(err, "no-such-trace"));
    free(text);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TESTS_DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collapsed_matches_stats_in_every_recording),
        cmocka_unit_test(test_collapsed_of_a_missing_file_names_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
