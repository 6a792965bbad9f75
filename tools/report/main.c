/* boardtrace-report: host reports over a .tracy file written by
 * boardtrace-capture (or upstream): zone statistics as a table or CSV, and
 * Chrome trace-event JSON for the Perfetto UI; and over a folder of them,
 * one per board (boards). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boardtrace/config.h>

#include "btc_tracy.h"
#include "btr_diff.h"
#include "btr_report.h"
#include "btr_symbolize.h"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_READ = 2, EXIT_WRITE = 3, EXIT_REGRESSION = 4 };

static void usage(FILE *to)
{
    fprintf(
        to,
        "boardtrace-report %s: reports over .tracy trace files\n"
        "\n"
        "Usage: boardtrace-report stats [--csv] [--sep S] [--max-memory SIZE] TRACE.tracy\n"
        "       boardtrace-report diff [--csv|--json] [--fail-above PCT] [--fail-above-total PCT]\n"
        "                              [--min-change PCT] [--confidence PCT] [--max-memory SIZE]\n"
        "                              BASE.tracy NEW.tracy\n"
        "       boardtrace-report boards [--csv] [--top N] [--max-memory SIZE] DIR\n"
        "       boardtrace-report html [-o OUT.html] [--max-memory SIZE] TRACE.tracy [BASE.tracy]\n"
        "       boardtrace-report chrome [-o OUT] [--format json|perfetto] [--max-memory SIZE]\n"
        "                                TRACE.tracy\n"
        "       boardtrace-report collapsed [-o OUT] [--max-memory SIZE] TRACE.tracy\n"
        "       boardtrace-report speedscope [-o OUT.json] [--max-memory SIZE] TRACE.tracy\n"
        "       boardtrace-report symbolize [-o OUT.tracy] TRACE.tracy BINARY...\n"
        "       boardtrace-report frames TRACE.tracy\n"
        "       boardtrace-report signposts TRACE.tracy\n"
        "\n"
        "  stats    zone statistics per source location: name, file, line, count, total,\n"
        "           mean, min and max ns; an aligned table, or with --csv the columns\n"
        "           of tracy-csvexport (name,src_file,src_line,total_ns,total_perc,\n"
        "           counts,mean_ns,min_ns,max_ns,std_ns). Rows by total time. The table\n"
        "           goes on with frames (count, mean and p99 frame time per set),\n"
        "           memory (per pool: allocations, frees, peak, leaks and where they\n"
        "           were allocated), locks (wait time), messages (by severity, the\n"
        "           first errors), plots (min, max, mean), GPU zones, CPU samples and\n"
        "           system tracing. C++ names are shown demangled, except in --csv,\n"
        "           which keeps them as stored, as tracy-csvexport does\n"
        "  diff     BASE against NEW: per zone (name and source location) count, total,\n"
        "           mean, p50 and p99 ns in each and the change in %%, rows by the change of\n"
        "           total time; zones in one trace only say new or gone. A change is real\n"
        "           (slower, faster) when the Mann-Whitney rank test of the durations\n"
        "           rejects no change at --confidence (default 99, Bonferroni-corrected over\n"
        "           the rows tested; 8 durations a side at least) and the median moved by\n"
        "           --min-change %% (default 5); otherwise same, or untested. Then frames\n"
        "           (frame times per set, tested alike), memory (peak bytes per pool) and\n"
        "           the time in zones in all (each thread's outermost zones summed).\n"
        "           --csv, --json: the same for machines. --fail-above PCT: exit 4 when a\n"
        "           zone or frame set is really slower and its mean or p99 grew by more\n"
        "           than PCT %%. --fail-above-total PCT: exit 4 when the time in zones\n"
        "           grew by more than PCT %% (one number a trace: no test, so PCT must\n"
        "           stand above the runs' noise). Keeps every zone's duration (8 bytes)\n"
        "           within --max-memory\n"
        "  boards   the traces of a board farm, DIR/<board>.tracy (boardtrace farm run\n"
        "           writes one per board), compared per zone (name and source location):\n"
        "           each board's count, mean and p99 ns, then the spread across the\n"
        "           boards of the means and of the p99s ((slowest - fastest) / fastest\n"
        "           in %%) and the slowest board; rows by total time over every board.\n"
        "           --csv: name,src_file,src_line,board,counts,mean_ns,p99_ns,\n"
        "           mean_spread_perc,p99_spread_perc, a row per zone and board (a board\n"
        "           without the zone: counts 0). --top N: only the N zones with the most\n"
        "           total time. Keeps one trace's durations (8 bytes a zone) within\n"
        "           --max-memory\n"
        "  html     one self-contained HTML page (nothing loaded from anywhere): the top\n"
        "           zones, a flame graph of zones by call path per thread (click zooms,\n"
        "           a field highlights names; paths under 1/5000 of their thread's time\n"
        "           left out), a per-thread timeline of the busiest zones, frame-time\n"
        "           histograms, memory pools and their bytes in use over time, the plots'\n"
        "           curves (timeline and curves in 400 slices of the trace), messages,\n"
        "           locks and plots; with BASE, diff's table of the zones against it and\n"
        "           the time in zones. stdout unless -o is given\n"
        "  chrome   the trace for the Perfetto UI (https://ui.perfetto.dev): Perfetto's\n"
        "           own protobuf format (compact; the default for OUT.perfetto-trace\n"
        "           and OUT.pftrace) or Chrome trace-event JSON (other names, stdout);\n"
        "           --format chooses. To stdout unless -o is given. OUT is written\n"
        "           beside itself and renamed once complete: a failed export leaves an\n"
        "           existing OUT as it was; an OUT that is the trace itself is refused\n"
        "  collapsed  the zones as collapsed stacks for flame graphs (flamegraph.pl,\n"
        "           inferno, speedscope): a line per call path of zones in a thread,\n"
        "           'THREAD;OUTER;...;INNER N', N the path's self time in ns (its zones'\n"
        "           time less their children's) summed over the trace; paths without\n"
        "           self time are left out; a ';' in a name is written \\x3b\n"
        "  speedscope  the zones in speedscope's JSON format (https://www.speedscope.app):\n"
        "           an evented profile per thread on the trace's timeline in ns, the\n"
        "           source locations as frames (name, file, line); zones that never\n"
        "           ended or last 0 ns are left out, as stats leaves them out. It keeps\n"
        "           every zone's times (24 bytes a zone) within --max-memory\n"
        "           collapsed and speedscope write stdout unless -o is given, as chrome\n"
        "  symbolize  names the callstack frames a stripped program recorded as\n"
        "           IMAGE+0xOFFSET with its build-id, from the unstripped BINARY files\n"
        "           (matched by build-id): function, source file and line; rewrites\n"
        "           TRACE in place (replaced once complete) or into -o OUT; an OUT\n"
        "           that is one of the BINARY files is refused\n"
        "  frames   the callstack frames of the trace: address, function, file:line\n"
        "  signposts  the signposts of a Python program (boardtrace.signpost) as CSV:\n"
        "           time_ns,header,message,since_previous_ns,top_zones (the zones that\n"
        "           took most time until the next signpost)\n"
        "\n"
        "  --max-memory SIZE  what the report may hold of the trace's strings and\n"
        "           tables (zones stream through), e.g. 512M, 2G (default 1G); a\n"
        "           file that needs more is refused with a message saying so\n"
        "\n"
        "Exit status: 0 success, 1 bad arguments, 2 the trace cannot be read,\n"
        "3 the output cannot be written, 4 (diff --fail-above, --fail-above-total) a\n"
        "regression above the limit.\n",
        BT_VERSION_STRING);
}

/* --max-memory's value: a whole number of bytes in decimal digits with an
 * optional K, M or G (powers of 1024); 0 when it is none (strtoull alone
 * would also take leading spaces, a sign, and wrap "-1" around). */
static uint64_t parse_size(const char *v)
{
    if (!strspn(v, "0123456789"))
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno)
        return 0;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift)
        end++;
    if (*end || n > (UINT64_MAX >> shift))
        return 0;
    return (uint64_t)n << shift;
}

/* Takes a --max-memory option at argv[*i]; 1 taken, 0 not it, -1 bad. */
static int memory_option(int argc, char **argv, int *i, const char *cmd)
{
    if (strcmp(argv[*i], "--max-memory") != 0)
        return 0;
    uint64_t bytes = *i + 1 < argc ? parse_size(argv[*i + 1]) : 0;
    if (!bytes) {
        fprintf(stderr, "boardtrace-report %s: --max-memory takes a size such as 512M or 2G\n",
                cmd);
        return -1;
    }
    btc_tracy_read_set_memory_limit(bytes);
    (*i)++;
    return 1;
}

/* The reader's message, with the way out when the limit was the cause. */
static void read_failed(const char *path, const char *err)
{
    fprintf(stderr, "boardtrace-report: %s: %s%s\n", path, err,
            strstr(err, "memory limit") ? "; raise it with --max-memory" : "");
}

static int cmd_stats(int argc, char **argv)
{
    int csv = 0;
    const char *sep = ",", *path = NULL;
    for (int i = 0; i < argc; i++) {
        int m = memory_option(argc, argv, &i, "stats");
        if (m < 0)
            return EXIT_USAGE;
        if (m)
            continue;
        if (!strcmp(argv[i], "--csv")) {
            csv = 1;
        } else if (!strcmp(argv[i], "--sep") && i + 1 < argc) {
            sep = argv[++i];
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "boardtrace-report stats: unexpected argument '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "boardtrace-report stats: a trace file is required\n");
        return EXIT_USAGE;
    }
    struct btr_stats s;
    char err[512] = "";
    if (btr_stats_compute(&s, path, err, sizeof err) < 0) {
        read_failed(path, err);
        btr_stats_free(&s);
        return EXIT_READ;
    }
    if (csv)
        btr_stats_print_csv(&s, stdout, sep);
    else {
        btr_stats_print_table(&s, stdout);
        btr_print_sections(&s.sections, &s.trace, stdout);
        btr_print_gpu(&s.trace, stdout);
        btr_print_samples(&s.trace, stdout, 20);
        btr_print_system(&s.trace, stdout);
        btr_print_code(&s.trace, stdout);
        btr_print_crash(&s.trace, stdout);
    }
    btr_stats_free(&s);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "boardtrace-report: cannot write stdout\n");
        return EXIT_WRITE;
    }
    return EXIT_OK;
}

/* Whether out names the same file as in (through a link, another path). */
static int same_file(const char *in, const char *out)
{
    struct stat a, b;
    return stat(in, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Where the export goes: a private temporary file beside out_path, renamed
 * over it once complete, so a failed export never truncates an existing
 * file; a FIFO or device is written in place. tmp[0] is 0 for in place. */
static FILE *open_output(const char *out_path, char *tmp, size_t size)
{
    tmp[0] = 0;
    struct stat st;
    if (stat(out_path, &st) == 0 && !S_ISREG(st.st_mode))
        return fopen(out_path, "w");
    const char *slash = strrchr(out_path, '/');
    int dirlen = slash ? (int)(slash - out_path + 1) : 0;
    if ((size_t)snprintf(tmp, size, "%.*s.%s.XXXXXX", dirlen, out_path,
                         slash ? slash + 1 : out_path) >= size) {
        tmp[0] = 0;
        errno = ENAMETOOLONG;
        return NULL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        tmp[0] = 0;
        return NULL;
    }
    /* As an ordinary new file would be (mkstemp makes it 0600). */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        tmp[0] = 0;
    }
    return f;
}

/* Whether name ends with suffix. */
static int ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

typedef int (*export_fn)(const char *path, FILE *out, uint64_t *count, char *err, size_t errlen);

/* Runs an export of the trace at path into out_path (stdout when NULL):
 * written beside it and renamed once complete. what names the count the
 * export gives, said on stderr when a file is written. */
static int run_export(const char *cmd, const char *path, const char *out_path, export_fn fn,
                      const char *what)
{
    if (out_path && same_file(path, out_path)) {
        fprintf(stderr, "boardtrace-report %s: -o %s is the trace %s itself; name another file\n",
                cmd, out_path, path);
        return EXIT_USAGE;
    }
    FILE *out = stdout;
    char tmp[4200] = "";
    if (out_path && !(out = open_output(out_path, tmp, sizeof tmp))) {
        fprintf(stderr, "boardtrace-report: cannot open %s for writing: %s\n", out_path,
                strerror(errno));
        return EXIT_WRITE;
    }
    char err[512] = "";
    uint64_t count = 0;
    int rc = fn(path, out, &count, err, sizeof err);
    int werr = ferror(out) != 0 || fflush(out) != 0;
    if (out != stdout) {
        if (!werr && tmp[0] && fsync(fileno(out)) != 0)
            werr = 1;
        if (fclose(out) != 0)
            werr = 1;
    }
    if (rc < 0 || werr) {
        if (tmp[0])
            unlink(tmp);
        if (rc < 0) {
            read_failed(path, err);
            return EXIT_READ;
        }
        fprintf(stderr, "boardtrace-report: cannot write %s\n", out_path ? out_path : "stdout");
        return EXIT_WRITE;
    }
    if (tmp[0] && rename(tmp, out_path) != 0) {
        fprintf(stderr, "boardtrace-report: cannot move %s to %s: %s\n", tmp, out_path,
                strerror(errno));
        unlink(tmp);
        return EXIT_WRITE;
    }
    if (out_path)
        fprintf(stderr, "%s: %llu %s\n", out_path, (unsigned long long)count, what);
    return EXIT_OK;
}

static int cmd_chrome(int argc, char **argv)
{
    const char *path = NULL, *out_path = NULL, *format = NULL;
    for (int i = 0; i < argc; i++) {
        int m = memory_option(argc, argv, &i, "chrome");
        if (m < 0)
            return EXIT_USAGE;
        if (m)
            continue;
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            format = argv[++i];
            if (strcmp(format, "json") != 0 && strcmp(format, "perfetto") != 0) {
                fprintf(stderr,
                        "boardtrace-report chrome: --format %s: expected json or perfetto\n",
                        format);
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "boardtrace-report chrome: unexpected argument '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "boardtrace-report chrome: a trace file is required\n");
        return EXIT_USAGE;
    }
    /* Perfetto's own format for its file names, JSON otherwise. */
    if (!format)
        format =
            out_path && (ends_with(out_path, ".perfetto-trace") || ends_with(out_path, ".pftrace"))
                ? "perfetto"
                : "json";
    return run_export("chrome", path, out_path,
                      strcmp(format, "perfetto") == 0 ? btr_perfetto_export : btr_chrome_export,
                      "zones");
}

/* html's BASE, for the export function's fixed arguments. */
static const char *html_base;

static int html_export(const char *path, FILE *out, uint64_t *count, char *err, size_t errlen)
{
    return btr_html_export(path, html_base, out, count, err, errlen);
}

/* collapsed, speedscope and html: [-o OUT] [--max-memory SIZE] TRACE
 * (html: [BASE] too). */
static int cmd_flame(const char *cmd, int argc, char **argv, export_fn fn, const char *what)
{
    const char *path = NULL, *out_path = NULL;
    for (int i = 0; i < argc; i++) {
        int m = memory_option(argc, argv, &i, cmd);
        if (m < 0)
            return EXIT_USAGE;
        if (m)
            continue;
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (argv[i][0] == '-' || (path && (fn != html_export || html_base))) {
            fprintf(stderr, "boardtrace-report %s: unexpected argument '%s'\n", cmd, argv[i]);
            return EXIT_USAGE;
        } else if (path) {
            html_base = argv[i];
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "boardtrace-report %s: a trace file is required\n", cmd);
        return EXIT_USAGE;
    }
    if (html_base && out_path && same_file(html_base, out_path)) {
        fprintf(stderr, "boardtrace-report html: -o %s is the base %s itself; name another file\n",
                out_path, html_base);
        return EXIT_USAGE;
    }
    return run_export(cmd, path, out_path, fn, what);
}

/* A percentage option's value: a finite number within [lo, hi]. */
static int parse_pct(const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

static int cmd_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int npaths = 0, csv = 0, json = 0;
    double confidence = 99;
    struct btr_diff_options opt = {
        .min_change_pct = 5, .fail_above_pct = -1, .fail_above_total_pct = -1};
    for (int i = 0; i < argc; i++) {
        int m = memory_option(argc, argv, &i, "diff");
        if (m < 0)
            return EXIT_USAGE;
        if (m)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--csv")) {
            csv = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--fail-above")) {
            bad = !v || parse_pct(v, 0, 1e9, &opt.fail_above_pct) < 0;
            i++;
        } else if (!strcmp(a, "--fail-above-total")) {
            bad = !v || parse_pct(v, 0, 1e9, &opt.fail_above_total_pct) < 0;
            i++;
        } else if (!strcmp(a, "--min-change")) {
            bad = !v || parse_pct(v, 0, 1e9, &opt.min_change_pct) < 0;
            i++;
        } else if (!strcmp(a, "--confidence")) {
            bad = !v || parse_pct(v, 50, 99.9999, &confidence) < 0;
            i++;
        } else if (a[0] == '-' || npaths == 2) {
            fprintf(stderr, "boardtrace-report diff: unexpected argument '%s'\n", a);
            return EXIT_USAGE;
        } else {
            paths[npaths++] = a;
        }
        if (bad) {
            fprintf(stderr, "boardtrace-report diff: %s takes a percentage%s\n", a,
                    strcmp(a, "--confidence") ? "" : " from 50 to 99.9999");
            return EXIT_USAGE;
        }
    }
    if (npaths != 2 || (csv && json)) {
        fprintf(stderr, "boardtrace-report diff: expected BASE.tracy NEW.tracy and at most one "
                        "of --csv, --json\n");
        return EXIT_USAGE;
    }
    opt.confidence = confidence / 100;
    struct btr_diff d;
    char err[600] = "";
    if (btr_diff_compute(&d, paths[0], paths[1], &opt, err, sizeof err) < 0) {
        fprintf(stderr, "boardtrace-report diff: %s%s\n", err,
                strstr(err, "memory limit") ? "; raise it with --max-memory" : "");
        btr_diff_free(&d);
        return EXIT_READ;
    }
    if (csv)
        btr_diff_print_csv(&d, stdout);
    else if (json)
        btr_diff_print_json(&d, stdout);
    else
        btr_diff_print_table(&d, stdout);
    uint64_t over = d.over_limit;
    int total_over = d.total_over;
    double total_pct = btr_diff_pct(d.zones_ns[0], d.zones_ns[1]);
    btr_diff_free(&d);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "boardtrace-report: cannot write stdout\n");
        return EXIT_WRITE;
    }
    if (over)
        fprintf(stderr,
                "boardtrace-report diff: %llu real regression%s of mean or p99 above %g %%\n",
                (unsigned long long)over, over == 1 ? "" : "s", opt.fail_above_pct);
    if (total_over)
        fprintf(stderr, "boardtrace-report diff: the time in zones grew %+.1f %%, above %g %%\n",
                total_pct, opt.fail_above_total_pct);
    if (over || total_over)
        return EXIT_REGRESSION;
    return EXIT_OK;
}

static int cmd_symbolize(int argc, char **argv)
{
    const char *out = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "boardtrace-report symbolize: unexpected argument '%s'\n", argv[i]);
            free(files);
            return EXIT_USAGE;
        } else {
            files[n++] = argv[i];
        }
    }
    if (n < 2) {
        fprintf(stderr, "boardtrace-report symbolize: a trace and at least one binary are "
                        "required (symbolize [-o OUT] TRACE BINARY...)\n");
        free(files);
        return EXIT_USAGE;
    }
    const char *trace = files[0];
    if (!out)
        out = trace;
    for (int i = 1; i < n; i++) {
        if (same_file(files[i], out)) {
            fprintf(stderr,
                    "boardtrace-report symbolize: -o %s is the binary %s itself; name another "
                    "file\n",
                    out, files[i]);
            free(files);
            return EXIT_USAGE;
        }
    }
    struct btr_symbolize_result res;
    char err[600] = "";
    int rc = btr_symbolize(trace, out, files + 1, n - 1, &res, err, sizeof err);
    free(files);
    if (rc < 0) {
        fprintf(stderr, "boardtrace-report symbolize: %s\n", err);
        return EXIT_READ;
    }
    printf("%s: %llu frames, %llu recorded unnamed, %llu named from the binaries (%llu with a "
           "source line)\n",
           out, (unsigned long long)res.frames, (unsigned long long)res.unresolved,
           (unsigned long long)res.named, (unsigned long long)res.with_line);
    return EXIT_OK;
}

static void print_frame(void *ctx, const struct btc_trace *t, uint64_t addr,
                        struct btc_rewrite_sub *sub, unsigned n)
{
    (void)ctx;
    for (unsigned k = 0; k < n; k++) {
        const char *name =
            sub[k].name == UINT32_MAX ? "" : btr_demangle(btc_trace_string(t, sub[k].name));
        const char *file = sub[k].file == UINT32_MAX ? "" : btc_trace_string(t, sub[k].file);
        printf("0x%llx\t", (unsigned long long)addr);
        btr_text_put(stdout, name);
        putchar('\t');
        btr_text_put(stdout, file);
        printf(":%u\n", sub[k].line);
    }
}

/* A count option's value: whole decimal digits, 1 to max. */
static int parse_count(const char *v, unsigned long max, size_t *out)
{
    if (!v || !*v || strspn(v, "0123456789") != strlen(v))
        return -1;
    errno = 0;
    unsigned long n = strtoul(v, NULL, 10);
    if (errno || n < 1 || n > max)
        return -1;
    *out = n;
    return 0;
}

static int cmd_boards(int argc, char **argv)
{
    int csv = 0;
    size_t top = 0;
    const char *dir = NULL;
    for (int i = 0; i < argc; i++) {
        int m = memory_option(argc, argv, &i, "boards");
        if (m < 0)
            return EXIT_USAGE;
        if (m)
            continue;
        if (!strcmp(argv[i], "--csv")) {
            csv = 1;
        } else if (!strcmp(argv[i], "--top")) {
            if (parse_count(i + 1 < argc ? argv[i + 1] : NULL, 1000000, &top) < 0) {
                fprintf(stderr, "boardtrace-report boards: --top takes a count from 1 to "
                                "1000000\n");
                return EXIT_USAGE;
            }
            i++;
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "boardtrace-report boards: unexpected argument '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        fprintf(stderr, "boardtrace-report boards: a folder of traces is required\n");
        return EXIT_USAGE;
    }
    char err[4600] = "";
    if (btr_boards_print(dir, csv, top, stdout, err, sizeof err) < 0) {
        fprintf(stderr, "boardtrace-report boards: %s%s\n", err,
                strstr(err, "memory limit") ? "; raise it with --max-memory" : "");
        return EXIT_READ;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "boardtrace-report: cannot write stdout\n");
        return EXIT_WRITE;
    }
    return EXIT_OK;
}

static int cmd_signposts(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "boardtrace-report signposts: expected one trace file\n");
        return EXIT_USAGE;
    }
    char err[512] = "";
    if (btr_signposts_print(argv[0], stdout, err, sizeof err) < 0) {
        read_failed(argv[0], err);
        return EXIT_READ;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "boardtrace-report: cannot write stdout\n");
        return EXIT_WRITE;
    }
    return EXIT_OK;
}

static int cmd_frames(int argc, char **argv)
{
    if (argc != 1 || argv[0][0] == '-') {
        fprintf(stderr, "boardtrace-report frames: expected one trace file\n");
        return EXIT_USAGE;
    }
    struct btc_rewrite rw = {.frame = print_frame};
    char err[600] = "";
    if (btc_tracy_rewrite(argv[0], NULL, &rw, err, sizeof err) < 0) {
        read_failed(argv[0], err);
        return EXIT_READ;
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    atexit(btr_demangle_free);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("boardtrace-report %s\n", BT_VERSION_STRING);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "stats"))
        return cmd_stats(argc - 2, argv + 2);
    if (!strcmp(argv[1], "chrome"))
        return cmd_chrome(argc - 2, argv + 2);
    if (!strcmp(argv[1], "symbolize"))
        return cmd_symbolize(argc - 2, argv + 2);
    if (!strcmp(argv[1], "frames"))
        return cmd_frames(argc - 2, argv + 2);
    if (!strcmp(argv[1], "signposts"))
        return cmd_signposts(argc - 2, argv + 2);
    if (!strcmp(argv[1], "diff"))
        return cmd_diff(argc - 2, argv + 2);
    if (!strcmp(argv[1], "boards"))
        return cmd_boards(argc - 2, argv + 2);
    if (!strcmp(argv[1], "html"))
        return cmd_flame("html", argc - 2, argv + 2, html_export, "call paths drawn");
    if (!strcmp(argv[1], "collapsed"))
        return cmd_flame("collapsed", argc - 2, argv + 2, btr_collapsed_export, "call paths");
    if (!strcmp(argv[1], "speedscope"))
        return cmd_flame("speedscope", argc - 2, argv + 2, btr_speedscope_export, "zones");
    fprintf(stderr,
            "boardtrace-report: unknown command '%s' (expected stats, diff, boards, html, "
            "chrome, collapsed, speedscope, symbolize, frames or signposts)\n",
            argv[1]);
    return EXIT_USAGE;
}
