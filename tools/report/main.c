/* boardtrace-report: host reports over a .tracy file written by
 * boardtrace-capture (or upstream): zone statistics as a table or CSV, and
 * Chrome trace-event JSON for the Perfetto UI. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <boardtrace/config.h>

#include "btr_report.h"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_READ = 2, EXIT_WRITE = 3 };

static void usage(FILE *to)
{
    fprintf(to,
            "boardtrace-report %s: reports over a .tracy trace file\n"
            "\n"
            "Usage: boardtrace-report stats [--csv] [--sep S] TRACE.tracy\n"
            "       boardtrace-report chrome [-o OUT.json] TRACE.tracy\n"
            "\n"
            "  stats    zone statistics per source location: name, file, line, count, total,\n"
            "           mean, min and max ns; an aligned table, or with --csv the columns\n"
            "           of tracy-csvexport (name,src_file,src_line,total_ns,total_perc,\n"
            "           counts,mean_ns,min_ns,max_ns,std_ns). Rows by total time.\n"
            "  chrome   Chrome trace-event JSON (open it in https://ui.perfetto.dev);\n"
            "           to stdout unless -o is given\n"
            "\n"
            "Exit status: 0 success, 1 bad arguments, 2 the trace cannot be read,\n"
            "3 the output cannot be written.\n",
            BT_VERSION_STRING);
}

static int cmd_stats(int argc, char **argv)
{
    int csv = 0;
    const char *sep = ",", *path = NULL;
    for (int i = 0; i < argc; i++) {
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
        fprintf(stderr, "boardtrace-report: %s: %s\n", path, err);
        btr_stats_free(&s);
        return EXIT_READ;
    }
    if (csv)
        btr_stats_print_csv(&s, stdout, sep);
    else
        btr_stats_print_table(&s, stdout);
    btr_stats_free(&s);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "boardtrace-report: cannot write stdout\n");
        return EXIT_WRITE;
    }
    return EXIT_OK;
}

static int cmd_chrome(int argc, char **argv)
{
    const char *path = NULL, *out_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
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
    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "boardtrace-report: cannot open %s for writing: %s\n", out_path,
                strerror(errno));
        return EXIT_WRITE;
    }
    char err[512] = "";
    uint64_t zones = 0;
    int rc = btr_chrome_export(path, out, &zones, err, sizeof err);
    int werr = ferror(out) || (out != stdout ? fclose(out) : fflush(out)) != 0;
    if (rc < 0) {
        fprintf(stderr, "boardtrace-report: %s: %s\n", path, err);
        return EXIT_READ;
    }
    if (werr) {
        fprintf(stderr, "boardtrace-report: cannot write %s\n", out_path ? out_path : "stdout");
        return EXIT_WRITE;
    }
    if (out_path)
        fprintf(stderr, "%s: %llu zones\n", out_path, (unsigned long long)zones);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
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
    fprintf(stderr, "boardtrace-report: unknown command '%s' (expected stats or chrome)\n",
            argv[1]);
    return EXIT_USAGE;
}
