/* boardtrace-report as a program: an output that is the input is refused,
 * a failed export leaves an existing output as it was, a folder is named as
 * such, the memory limit refuses a file that needs more, saying so, and
 * bounds what the export of many memory events holds; under UBSan the
 * reports find nothing undefined. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "btc_model.h"
#include "btc_tracy.h"

extern char **environ;

static const char *data_dir, *report_bin, *report_ubsan;
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
    /* Decimal digits and a unit only: what strtoull would also read is a
     * usage error, not a limit it happens to mean. */
    static const char *const sizes[] = {" 64M", "+64M", "0x40M", "64.5M",
                                        "1e9",  "nan",  "inf",   "64MB",
                                        "-1",   "",     "0",     "99999999999999999999"};
    for (size_t i = 0; i < 2 * sizeof sizes / sizeof *sizes; i++) {
        bad[0] = i % 2 ? "chrome" : "stats";
        bad[2] = sizes[i / 2];
        assert_int_equal(run_report(bad, err, sizeof err), 1);
        assert_non_null(strstr(err, "--max-memory"));
    }
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

/* A copy of the file at src at path. */
static void copy_file(const char *src, const char *path)
{
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

/* symbolize -o BIN TRACE BIN would write the trace over the program it
 * reads its names from: refused, also through a link, the binary kept. */
static void symbolize_refuses_an_output_that_is_one_of_the_binaries(void **state)
{
    (void)state;
    char trace[4200], bin[4200], link[4200], err[4096];
    copy_session("sym.tracy", trace, sizeof trace);
    snprintf(bin, sizeof bin, "%s/program", tmpdir);
    snprintf(link, sizeof link, "%s/program-link", tmpdir);
    copy_file(report_bin, bin);
    assert_int_equal(symlink(bin, link), 0);
    const char *outs[] = {bin, link};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"symbolize", "-o", outs[i], trace, bin, NULL};
        assert_int_equal(run_report(args, err, sizeof err), 1);
        assert_non_null(strstr(err, "is the binary"));
        assert_true(same_content(bin, report_bin));
    }
    unlink(link);
    unlink(bin);
}

/* A trace of n allocations in the default pool (times 1..n, sizes 1..5 in
 * turn), freed in the reverse order (times n+1..2n): the frees reach the
 * export in allocation order, the reverse of their time order. */
static size_t string_data(uint8_t *p, uint64_t key, const char *text)
{
    size_t n = strlen(text);
    p[0] = BT_EV_STRING_DATA;
    bt_wire_put_u64(p + 1, key);
    bt_wire_put_u16(p + 9, (uint16_t)n);
    memcpy(p + 11, text, n);
    return 11 + n;
}

/* Before the memory events, when zone is not NULL: one zone on thread 7
 * whose source location has that name, function and file. */
static void write_trace(const char *path, uint32_t n, const char *zone)
{
    struct btc_welcome w = {.timer_mul = 1.0};
    struct btc_decoder dec;
    static struct btc_model model;
    char err[512] = "";
    assert_int_equal(btc_decoder_init(&dec, &w), 0);
    dec.zones = btc_model_zone_fast(&model);
    assert_int_equal(btc_model_init(&model, &w, tmpdir, err, sizeof err), 0);
    enum { BATCH = 4096 };
    uint8_t *b = malloc(BATCH * 27);
    assert_non_null(b);
    if (zone) {
        size_t len = 0;
        b[len] = BT_EV_THREAD_CONTEXT;
        bt_wire_put_u32(b + len + 1, 7);
        len += 5;
        b[len] = BT_EV_ZONE_BEGIN16;
        bt_wire_put_u16(b + len + 1, 10);
        bt_wire_put_u64(b + len + 3, 0x800);
        len += 11;
        b[len] = BT_EV_ZONE_END16;
        bt_wire_put_u16(b + len + 1, 5);
        len += 3;
        memset(b + len, 0, 32);
        b[len] = BT_EV_SOURCE_LOCATION;
        bt_wire_put_u64(b + len + 1, 0x902);  /* name */
        bt_wire_put_u64(b + len + 9, 0x900);  /* function */
        bt_wire_put_u64(b + len + 17, 0x901); /* file */
        bt_wire_put_u32(b + len + 25, 12);
        len += 32;
        for (uint64_t key = 0x900; key <= 0x902; key++)
            len += string_data(b + len, key, zone);
        assert_int_equal(btc_decoder_events(&dec, b, len, btc_model_event, &model, err, sizeof err),
                         0);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < n;) {
            size_t len = 0;
            for (int k = 0; k < BATCH && i < n; k++, i++) {
                uint8_t *p = b + len;
                p[0] = pass ? BT_EV_MEM_FREE : BT_EV_MEM_ALLOC;
                bt_wire_put_u64(p + 1, 1); /* a delta on the serial time */
                bt_wire_put_u32(p + 9, 7);
                bt_wire_put_u64(p + 13, pass ? n - i : i + 1);
                if (!pass) {
                    bt_wire_put_u32(p + 21, i % 5 + 1);
                    bt_wire_put_u16(p + 25, 0);
                }
                len += pass ? 21 : 27;
            }
            assert_int_equal(
                btc_decoder_events(&dec, b, len, btc_model_event, &model, err, sizeof err), 0);
        }
    }
    free(b);
    assert_int_equal(btc_tracy_write(&model, path, BTC_FILE_VERSION_0_14_0, NULL, err, sizeof err),
                     0);
    btc_model_free(&model);
    btc_decoder_free(&dec);
}

/* 2 M memory events under --max-memory 4M: the export holds a bounded
 * part of them (sorted runs merged from a temporary file), and still
 * writes every point in time order with the pool's usage at that time. */
static void memory_events_export_within_the_memory_limit(void **state)
{
    (void)state;
    enum { N = 1000000 };
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/memory.tracy", tmpdir);
    /* In a process of its own: a child's peak RSS counts this process's
     * from before its exec, and the model's tables would be in it. */
    pid_t writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        write_trace(trace, N, NULL);
        _exit(0);
    }
    int wst;
    while (waitpid(writer, &wst, 0) < 0 && errno == EINTR)
        ;
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *argv[] = {(char *)report_bin, "chrome", "--max-memory", "4M", trace, NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    assert_non_null(in);
    char line[512];
    uint64_t points = 0, usage = 0, bad = 0;
    while (fgets(line, sizeof line, in)) {
        if (!strstr(line, "\"name\":\"Memory: default\""))
            continue;
        const char *ts = strstr(line, "\"ts\":"), *bytes = strstr(line, "\"bytes\":");
        assert_non_null(ts);
        assert_non_null(bytes);
        uint64_t i = points++; /* the point at time i + 1 */
        usage = i < N ? usage + i % 5 + 1 : usage - ((2 * N - 1 - i) % 5 + 1);
        if (llround(strtod(ts + 5, NULL) * 1000.0) != (long long)(i + 1) ||
            strtoull(bytes + 8, NULL, 10) != usage)
            bad++;
    }
    fclose(in);
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(points, 2 * N);
    assert_int_equal(bad, 0);
    assert_int_equal(usage, 0);
    /* Against the same export of a trace without memory events (under an
     * emulator its own memory is in both): 2 M changes held at once would
     * be 48 MB more. */
    char empty[4200];
    snprintf(empty, sizeof empty, "%s/memory-none.tracy", tmpdir);
    writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        write_trace(empty, 0, NULL);
        _exit(0);
    }
    while (waitpid(writer, &wst, 0) < 0 && errno == EINTR)
        ;
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    char *base_argv[] = {(char *)report_bin, "chrome", "--max-memory", "4M", empty, NULL};
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    assert_int_equal(posix_spawn(&pid, base_argv[0], &fa, NULL, base_argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    struct rusage base;
    while (wait4(pid, &st, 0, &base) < 0 && errno == EINTR)
        ;
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    fprintf(stderr,
            "chrome --max-memory 4M: peak RSS %ld KiB with %d memory events, %ld KiB with none\n",
            ru.ru_maxrss, 2 * N, base.ru_maxrss);
    assert_true(ru.ru_maxrss < base.ru_maxrss + 16 * 1024);
}

/* The reports built with UBSan (stopping at the first finding) over a
 * trace without memory events (the export once sorted none from NULL) and
 * one with everything. */
static void reports_do_nothing_undefined(void **state)
{
    (void)state;
    if (!strcmp(report_ubsan, "-"))
        skip();
    char plain[4200], full[4096], out[4200], err[4096];
    snprintf(plain, sizeof plain, "%s/no-memory.tracy", tmpdir);
    write_trace(plain, 0, NULL);
    snprintf(full, sizeof full, "%s/../tracy-0.14.0-full/session.tracy", data_dir);
    snprintf(out, sizeof out, "%s/ubsan.json", tmpdir);
    const char *saved = report_bin;
    report_bin = report_ubsan;
    const char *traces[] = {plain, full};
    for (int i = 0; i < 2; i++) {
        const char *chrome[] = {"chrome", "-o", out, traces[i], NULL};
        const char *stats[] = {"stats", traces[i], NULL};
        const char *frames[] = {"frames", traces[i], NULL};
        const char *const *runs[] = {chrome, stats, frames};
        for (int r = 0; r < 3; r++) {
            int rc = run_report(runs[r], err, sizeof err);
            if (rc != 0)
                fprintf(stderr, "%s %s: exit %d\n%s\n", runs[r][0], traces[i], rc, err);
            assert_int_equal(rc, 0);
            assert_null(strstr(err, "runtime error"));
        }
    }
    report_bin = saved;
}

/* Whether the bytes of path hold a control character or are not UTF-8:
 * C0 but newlines, DEL, C1 (in UTF-8 or as a lone byte such as 0x9b, the
 * 8-bit CSI), or any byte outside a well-formed sequence. */
static int unprintable_bytes_in(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, len, f), len);
    b[len] = 0;
    fclose(f);
    int bad = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = b[i];
        size_t n = c < 0x80                 ? 1
                   : c >= 0xc2 && c <= 0xdf ? 2
                   : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4
                                            : 0;
        for (size_t k = 1; n && k < n; k++)
            if (i + k >= len || (b[i + k] & 0xc0) != 0x80)
                n = 0;
        if (!n || (c < 0x20 && c != '\n') || c == 0x7f || (c == 0xc2 && b[i + 1] <= 0x9f)) {
            bad++;
            i++;
        } else {
            i += n;
        }
    }
    free(b);
    return bad;
}

/* A zone named with terminal escapes (clear the screen, set the title, a
 * C1 CSI in UTF-8 and the lone 8-bit CSI byte 0x9b): stats (table and CSV)
 * and the JSON on stdout print them escaped, no control byte reaches the
 * terminal. */
static void reports_print_no_control_character_from_the_trace(void **state)
{
    (void)state;
    const char *evil = "zone\x1b[2J\x1b]0;owned\x07\xc2\x9b"
                       "31m\x9b"
                       "1m";
    char trace[4200], out[4200];
    snprintf(trace, sizeof trace, "%s/escapes.tracy", tmpdir);
    snprintf(out, sizeof out, "%s/escapes.txt", tmpdir);
    write_trace(trace, 0, evil);
    const char *table[] = {"stats", trace, NULL};
    const char *csv[] = {"stats", "--csv", trace, NULL};
    const char *json[] = {"chrome", trace, NULL};
    const char *const *runs[] = {table, csv, json};
    for (int r = 0; r < 3; r++) {
        assert_int_equal(run_to_file(runs[r], out), 0);
        assert_int_equal(unprintable_bytes_in(out), 0);
    }
    const char *escaped = "zone\\x1b[2J\\x1b]0;owned\\x07\\xc2\\x9b31m\\x9b1m";
    assert_int_equal(run_to_file(table, out), 0);
    assert_int_equal(count_in(out, escaped), 2); /* name and file */
    assert_int_equal(run_to_file(csv, out), 0);
    assert_int_equal(count_in(out, escaped), 2);
    assert_int_equal(run_to_file(json, out), 0);
    assert_int_equal(count_in(out, "zone\\u001b[2J\\u001b]0;owned\\u0007\\u009b31m\\ufffd1m"), 2);
}

static int remove_tmpdir(void **state)
{
    (void)state;
    if (getenv("BT_KEEP_TEST_FILES")) {
        fprintf(stderr, "kept %s\n", tmpdir);
        return 0;
    }
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DATA_DIR REPORT REPORT_UBSAN|-\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    report_bin = argv[2];
    report_ubsan = argv[3];
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
        cmocka_unit_test(symbolize_refuses_an_output_that_is_one_of_the_binaries),
        cmocka_unit_test(memory_events_export_within_the_memory_limit),
        cmocka_unit_test(reports_do_nothing_undefined),
        cmocka_unit_test(reports_print_no_control_character_from_the_trace),
    };
    return cmocka_run_group_tests(tests, NULL, remove_tmpdir);
}
