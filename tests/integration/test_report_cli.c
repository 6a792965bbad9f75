/* boardtrace-report as a program: an output that is the input is refused,
 * a failed export leaves an existing output as it was, a folder is named as
 * such, and the memory limit refuses a file that needs more, saying so. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "btc_tracy.h"

extern char **environ;

static const char *data_dir, *report_bin;
static char tmpdir[] = "/tmp/bt-report-XXXXXX";

/* Runs the report with args, its stdout into out_path and its stderr into
 * err_path; the exit status. */
static int spawn_report(const char *const *args, const char *out_path, const char *err_path)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)report_bin;
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs the report with args; its stderr (first 4 KiB) in err. */
static int run_report(const char *const *args, char *err, size_t errlen)
{
    char errfile[4200];
    snprintf(errfile, sizeof errfile, "%s/stderr", tmpdir);
    int rc = spawn_report(args, "/dev/null", errfile);
    err[0] = 0;
    FILE *f = fopen(errfile, "r");
    if (f) {
        size_t k = fread(err, 1, errlen - 1, f);
        err[k] = 0;
        fclose(f);
    }
    return rc;
}

/* A copy of the recorded session's trace at name in the test's folder. */
static void copy_session(const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tmpdir, name);
    char src[4096];
    snprintf(src, sizeof src, "%s/session.tracy", data_dir);
    FILE *in = fopen(src, "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, k, out), k);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static int same_content(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb)
            same = 0;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

static void an_output_that_is_the_input_is_refused(void **state)
{
    (void)state;
    char trace[4200], link[4200], dotted[4200], err[4096], src[4096];
    copy_session("in.tracy", trace, sizeof trace);
    snprintf(src, sizeof src, "%s/session.tracy", data_dir);
    snprintf(link, sizeof link, "%s/link.json", tmpdir);
    snprintf(dotted, sizeof dotted, "%s/./in.tracy", tmpdir);
    assert_int_equal(symlink(trace, link), 0);
    const char *outs[] = {trace, link, dotted};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {"chrome", "-o", outs[i], trace, NULL};
        assert_int_equal(run_report(args, err, sizeof err), 1);
        assert_non_null(strstr(err, "is the trace"));
        assert_true(same_content(trace, src));
    }
    unlink(link);
}

static void a_failed_export_leaves_an_existing_output_as_it_was(void **state)
{
    (void)state;
    char trace[4200], cut[4200], out[4200], err[4096];
    copy_session("whole.tracy", trace, sizeof trace);
    snprintf(cut, sizeof cut, "%s/cut.tracy", tmpdir);
    snprintf(out, sizeof out, "%s/out.json", tmpdir);
    FILE *f = fopen(cut, "wb");
    FILE *in = fopen(trace, "rb");
    char buf[3000];
    size_t k = fread(buf, 1, sizeof buf, in);
    fclose(in);
    fwrite(buf, 1, k, f);
    fclose(f);
    f = fopen(out, "w");
    fputs("an earlier export", f);
    fclose(f);
    const char *args[] = {"chrome", "-o", out, cut, NULL};
    assert_int_equal(run_report(args, err, sizeof err), 2);
    char got[64] = "";
    f = fopen(out, "r");
    assert_non_null(fgets(got, sizeof got, f));
    fclose(f);
    assert_string_equal(got, "an earlier export");
    const char *ok[] = {"chrome", "-o", out, trace, NULL};
    assert_int_equal(run_report(ok, err, sizeof err), 0);
    assert_non_null(strstr(err, "8300 zones"));
    f = fopen(out, "r");
    assert_non_null(fgets(got, sizeof got, f));
    fclose(f);
    assert_memory_equal(got, "{\"displayTimeUnit\"", 18);
}

static void a_folder_is_said_to_be_a_folder(void **state)
{
    (void)state;
    char err[4096];
    const char *args[] = {"stats", tmpdir, NULL};
    assert_int_equal(run_report(args, err, sizeof err), 2);
    assert_non_null(strstr(err, "is a folder, not a .tracy file"));
}

/* The limit on what a report holds: a file whose strings and tables need
 * more is refused with a message naming the limit and the option. */
static void a_file_needing_more_than_the_memory_limit_is_refused(void **state)
{
    (void)state;
    char trace[4200], err[4096];
    copy_session("limited.tracy", trace, sizeof trace);
    const char *tight[] = {"stats", "--max-memory", "16K", trace, NULL};
    assert_int_equal(run_report(tight, err, sizeof err), 2);
    assert_non_null(strstr(err, "memory limit of 16 KiB"));
    assert_non_null(strstr(err, "--max-memory"));
    const char *roomy[] = {"stats", "--max-memory", "64M", trace, NULL};
    assert_int_equal(run_report(roomy, err, sizeof err), 0);
    const char *bad[] = {"stats", "--max-memory", "lots", trace, NULL};
    assert_int_equal(run_report(bad, err, sizeof err), 1);
}

/* Occurrences of needle in the file at path. */
static uint64_t count_in(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    uint64_t c = 0;
    for (const char *p = buf; (p = strstr(p, needle)); p++)
        c++;
    free(buf);
    return c;
}

/* The rich upstream session (tests/data/tracy-0.14.0-full): the export has
 * its 70 GPU zones in a GPU process, 300 frames on per-set tracks (101 + 99
 * continuous, 100 discontinuous), a counter event per plot point (4 plots
 * of 100 and 21 CPU-usage points) and per allocation and free of each
 * memory pool; stats lists GPU zones and the hottest sampled functions. */
/* Runs the report with args, its stdout into path; the exit status. */
static int run_to_file(const char *const *args, const char *path)
{
    return spawn_report(args, path, "/dev/null");
}

static void gpu_zones_frames_and_plots_are_exported(void **state)
{
    (void)state;
    char src[4096], json[4200];
    snprintf(src, sizeof src, "%s/../tracy-0.14.0-full/session.tracy", data_dir);
    snprintf(json, sizeof json, "%s/full.json", tmpdir);
    const char *args[] = {"chrome", "-o", json, src, NULL};
    char err[4096];
    assert_int_equal(run_report(args, err, sizeof err), 0);
    assert_int_equal(count_in(json, "\"pid\":4026531840,\"tid\":0,"), 70);
    assert_int_equal(count_in(json, "\"name\":\"frame\""), 300);
    assert_int_equal(count_in(json, "\"args\":{\"value\":"), 421);
    assert_int_equal(count_in(json, "\"ph\":\"C\""), 421 + 1760 + 1600 + 160 + 24);
    assert_int_equal(count_in(json, "\"GPU: full-gpu-ctx\""), 1);
    /* A memory counter point per allocation and free of each pool. */
    assert_int_equal(count_in(json, "\"name\":\"Memory: default\""), 1760);
    assert_int_equal(count_in(json, "\"name\":\"Memory: full-pool-cs\""), 160);
    assert_int_equal(count_in(json, "\"bytes\":16384}"), 1); /* the discard pool's peak */
    char out[4200];
    snprintf(out, sizeof out, "%s/stats.txt", tmpdir);
    const char *stats[] = {"stats", src, NULL};
    assert_int_equal(run_to_file(stats, out), 0);
    assert_int_equal(count_in(out, "GPU context 0 \"full-gpu-ctx\": 70 zones"), 1);
    assert_int_equal(
        count_in(out,
                 "Code transfer: 2 source files (60876 bytes), code of 672 symbols (351198 bytes)"),
        1);
    assert_int_equal(count_in(out, "CPU samples: 6965 (1765 at timer ticks"), 1);
    assert_int_equal(count_in(out, "hot_loop_b                                               752"),
                     1);
}

/* The discontinuous frame set's frame times, read independently of the
 * report: its 99th percentile by nearest rank, and the mean. */
struct frame_times {
    int64_t d[4][256]; /* per frame set (the recording has 3) */
    size_t n[4];
};

static int on_frame(void *ctx, const struct btc_trace *t, const struct btc_read_frame *f)
{
    (void)t;
    struct frame_times *ft = ctx;
    if (f->set < 4 && f->end >= 0 && ft->n[f->set] < 256)
        ft->d[f->set][ft->n[f->set]++] = f->end - f->start;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void discontinuous_frame_times(const char *path, int64_t *mean, int64_t *p99)
{
    struct btc_trace t;
    char err[512];
    static struct frame_times ft;
    struct btc_read_more more = {.frame = on_frame};
    assert_int_equal(btc_tracy_read_more(path, &t, NULL, NULL, &more, &ft, err, sizeof err), 0);
    size_t set = 4;
    for (size_t i = 0; i < t.framesets.len && i < 4; i++) {
        const struct btc_read_frameset *fs = btc_vec_at(&t.framesets, i);
        if (!strcmp(btc_trace_string(&t, fs->name), "full-discontinuous"))
            set = i;
    }
    btc_trace_free(&t);
    assert_true(set < 4);
    assert_int_equal(ft.n[set], 100);
    qsort(ft.d[set], 100, sizeof ft.d[set][0], cmp_i64);
    int64_t sum = 0;
    for (size_t i = 0; i < 100; i++)
        sum += ft.d[set][i];
    *mean = sum / 100;
    *p99 = ft.d[set][98]; /* nearest rank: the 99th of 100 */
}

/* stats after the zone table, on the rich upstream session, against the
 * counts upstream's loader read (tests/data/tracy-0.14.0-full/README.md):
 * frames per set with mean and p99 frame time, memory per pool with its
 * peak (the chrome export's counter peaks at 16384 in the discard pool) and
 * no leaks, each lock's waits that ended in an obtain (full-mutex: 801
 * waits; full-rwlock: 33 exclusive and 160 shared), messages by severity
 * with the first errors, and each plot's min, max and mean. */
static void stats_show_frames_memory_locks_messages_and_plots(void **state)
{
    (void)state;
    char src[4096], out[4200], row[256];
    snprintf(src, sizeof src, "%s/../tracy-0.14.0-full/session.tracy", data_dir);
    snprintf(out, sizeof out, "%s/sections.txt", tmpdir);
    const char *stats[] = {"stats", src, NULL};
    assert_int_equal(run_to_file(stats, out), 0);

    assert_int_equal(count_in(out, "\n(default)                                102  "), 1);
    assert_int_equal(count_in(out, "\nfull-named-frame                         100  "), 1);
    int64_t mean, p99;
    discontinuous_frame_times(src, &mean, &p99);
    snprintf(row, sizeof row, "\nfull-discontinuous                       100  %14lld  %14lld  ",
             (long long)mean, (long long)p99);
    assert_int_equal(count_in(out, row), 1);

    assert_int_equal(count_in(out, "\ndefault                                  880         880  "
                                   "           256         0               0\n"),
                     1);
    assert_int_equal(count_in(out, "\nfull-pool                                800         800"),
                     1);
    assert_int_equal(count_in(out, "\nfull-pool-cs                              80          80"),
                     1);
    assert_int_equal(count_in(out, "\nfull-discard-pool                         12          12  "
                                   "         16384         0               0\n"),
                     1);
    assert_int_equal(count_in(out, "leaked from"), 0);

    assert_int_equal(
        count_in(out,
                 "\nfull-mutex                        lockable        3        2405         801"),
        1);
    assert_int_equal(
        count_in(out,
                 "\nfull-rwlock                       shared          3         583         193"),
        1);

    assert_int_equal(count_in(out, "\nMessages: 57\n"), 1);
    assert_int_equal(
        count_in(out,
                 "\nprogram        33  trace 2  debug 2  info 23  warning 2  error 2  fatal 2\n"),
        1);
    assert_int_equal(count_in(out, "first errors (4 error and fatal messages):\n"), 1);
    assert_int_equal(count_in(out, " s  error    log error\n"), 1);
    assert_int_equal(count_in(out, " s  fatal    log literal fatal\n"), 1);

    assert_int_equal(count_in(out, "\nfull-plot-double                  user            100  "
                                   "             0           24.75          12.375\n"),
                     1);
    assert_int_equal(count_in(out, "\nfull-plot-int                     user            100  "
                                   "             0          101376           50688\n"),
                     1);
    assert_int_equal(count_in(out, "\nfull-plot-watt                    user            100  "
                                   "            10              19            14.5\n"),
                     1);
}

/* Symbolizing copies the whole file: an upstream recording (LZ4, every
 * section) with nothing to name comes out showing the same zones and the
 * same 84344 frames; wrong arguments are refused by name. */
static void symbolizing_rewrites_every_section_it_does_not_change_as_it_was(void **state)
{
    (void)state;
    char src[4096], copy[4200], a[4200], b[4200];
    snprintf(src, sizeof src, "%s/../tracy-0.14.0-full/session.tracy", data_dir);
    snprintf(copy, sizeof copy, "%s/symbolized.tracy", tmpdir);
    snprintf(a, sizeof a, "%s/a.txt", tmpdir);
    snprintf(b, sizeof b, "%s/b.txt", tmpdir);
    const char *sym[] = {"symbolize", "-o", copy, src, report_bin, NULL};
    assert_int_equal(run_to_file(sym, a), 0);
    assert_int_equal(count_in(a, ": 84344 frames, 0 recorded unnamed, 0 named"), 1);
    const char *stats_src[] = {"stats", src, NULL}, *stats_copy[] = {"stats", copy, NULL};
    assert_int_equal(run_to_file(stats_src, a), 0);
    assert_int_equal(run_to_file(stats_copy, b), 0);
    assert_true(same_content(a, b));
    const char *frames_src[] = {"frames", src, NULL}, *frames_copy[] = {"frames", copy, NULL};
    assert_int_equal(run_to_file(frames_src, a), 0);
    assert_int_equal(run_to_file(frames_copy, b), 0);
    assert_true(same_content(a, b));
    assert_int_equal(count_in(a, "\n"), 96095); /* 84344 frames, with their inlined calls */

    char err[4096];
    const char *not_elf[] = {"symbolize", "-o", copy, src, src, NULL};
    assert_int_equal(run_report(not_elf, err, sizeof err), 2);
    assert_non_null(strstr(err, "not a 64-bit little-endian ELF file"));
    const char *alone[] = {"symbolize", src, NULL};
    assert_int_equal(run_report(alone, err, sizeof err), 1);
    assert_non_null(strstr(err, "a trace and at least one binary are required"));
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s DATA_DIR REPORT\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    report_bin = argv[2];
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_output_that_is_the_input_is_refused),
        cmocka_unit_test(a_failed_export_leaves_an_existing_output_as_it_was),
        cmocka_unit_test(a_folder_is_said_to_be_a_folder),
        cmocka_unit_test(a_file_needing_more_than_the_memory_limit_is_refused),
        cmocka_unit_test(symbolizing_rewrites_every_section_it_does_not_change_as_it_was),
        cmocka_unit_test(gpu_zones_frames_and_plots_are_exported),
        cmocka_unit_test(stats_show_frames_memory_locks_messages_and_plots),
    };
    return cmocka_run_group_tests(tests, NULL, remove_tmpdir);
}
