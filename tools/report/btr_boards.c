/* boardtrace-report boards: a folder of traces, one per board
 * (DIR/<board>.tracy, as boardtrace farm run writes them), compared per zone
 * (name and source location): each board's count, mean and p99, and the
 * spread of the means and p99s across the boards, so a slow board shows. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

/* A zone of one board: what its durations give. */
struct board_stat {
    uint64_t count; /* 0: the board has no such zone */
    int64_t total_ns, mean_ns, p99_ns;
};

/* A zone across the boards, matched by name, file and line. */
struct zone_row {
    char *name, *file;
    uint32_t line;
    int64_t total_ns;         /* over every board: the rows' order */
    struct board_stat *board; /* one per board, in the boards' order */
};

struct boards {
    char **names; /* the boards: the traces' file names without .tracy, sorted */
    size_t nboards;
    struct zone_row *rows;
    size_t nrows, cap;
    size_t shown;          /* the rows printed: the first, by total time */
    uint64_t bytes, limit; /* durations kept while one trace is read */
};

/* Durations per source location of the trace being read. */
struct board_read {
    struct btc_vec by_static, by_payload; /* struct btc_vec of int64_t */
    struct boards *b;
    int over;
};

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)t;
    struct board_read *r = ctx;
    int64_t d = (int64_t)((uint64_t)z->end - (uint64_t)z->start);
    if (z->end < 0 || z->end <= z->start || d <= 0 || z->srcloc == 0)
        return 0;
    struct btc_vec *list = z->srcloc > 0 ? &r->by_static : &r->by_payload;
    size_t at = z->srcloc > 0 ? (size_t)z->srcloc : (size_t)(-(int)z->srcloc);
    while (list->len <= at) {
        struct btc_vec *v = btc_vec_push(list);
        if (!v)
            return BTC_ERR_NOMEM;
        btc_vec_init(v, sizeof(int64_t));
    }
    r->b->bytes += sizeof(int64_t);
    if (r->b->bytes > r->b->limit) {
        r->over = 1;
        return BTC_ERR_STOPPED;
    }
    int64_t *slot = btc_vec_push(btc_vec_at(list, at));
    if (!slot)
        return BTC_ERR_NOMEM;
    *slot = d;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The row of a zone, added for every board when new; NULL out of memory. */
static struct zone_row *row_of(struct boards *b, const char *name, const char *file, uint32_t line)
{
    for (size_t i = 0; i < b->nrows; i++)
        if (b->rows[i].line == line && !strcmp(b->rows[i].name, name) &&
            !strcmp(b->rows[i].file, file))
            return &b->rows[i];
    if (b->nrows == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        struct zone_row *rows = realloc(b->rows, cap * sizeof *rows);
        if (!rows)
            return NULL;
        b->rows = rows;
        b->cap = cap;
    }
    struct zone_row *r = &b->rows[b->nrows];
    *r = (struct zone_row){.name = strdup(name),
                           .file = strdup(file),
                           .line = line,
                           .board = calloc(b->nboards, sizeof *r->board)};
    if (!r->name || !r->file || !r->board) {
        free(r->name);
        free(r->file);
        free(r->board);
        return NULL;
    }
    b->nrows++;
    return r;
}

/* Board k's durations, sorted, into the rows. */
static int add_board(struct boards *b, size_t k, struct board_read *r, const struct btc_trace *t)
{
    struct btc_vec *lists[2] = {&r->by_static, &r->by_payload};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->len; i++) {
            struct btc_vec *d = btc_vec_at(lists[l], i);
            if (!d->len)
                continue;
            qsort(d->data, d->len, sizeof(int64_t), cmp_i64);
            const int64_t *v = d->data;
            int16_t srcloc = l == 0 ? (int16_t)i : (int16_t)(-(int)i);
            const struct btc_read_srcloc *loc = btc_trace_srcloc(t, srcloc);
            struct zone_row *row = row_of(
                b, loc ? btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function) : "?",
                loc ? btc_trace_string(t, loc->file) : "", loc ? loc->line : 0);
            if (!row)
                return BTC_ERR_NOMEM;
            struct board_stat *s = &row->board[k];
            /* Two source locations of one name, file and line add up (their
             * p99: the larger of the two). */
            for (size_t n = 0; n < d->len; n++)
                s->total_ns = (int64_t)((uint64_t)s->total_ns + (uint64_t)v[n]);
            size_t rank = (d->len * 99 + 99) / 100; /* nearest rank */
            if (!s->count || v[rank - 1] > s->p99_ns)
                s->p99_ns = v[rank - 1];
            s->count += d->len;
            s->mean_ns = s->total_ns / (int64_t)s->count;
            row->total_ns = (int64_t)((uint64_t)row->total_ns + (uint64_t)s->total_ns);
        }
    }
    return 0;
}

static void read_free(struct board_read *r)
{
    struct btc_vec *lists[2] = {&r->by_static, &r->by_payload};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->len; i++)
            btc_vec_free(btc_vec_at(lists[l], i));
        btc_vec_free(lists[l]);
    }
}

static int read_board(struct boards *b, size_t k, const char *path, char *err, size_t errlen)
{
    struct board_read r = {.b = b};
    btc_vec_init(&r.by_static, sizeof(struct btc_vec));
    btc_vec_init(&r.by_payload, sizeof(struct btc_vec));
    struct btc_trace t;
    memset(&t, 0, sizeof t);
    b->bytes = 0;
    char why[400] = "";
    int rc = btc_tracy_read(path, &t, on_zone, &r, why, sizeof why);
    if (r.over)
        snprintf(why, sizeof why,
                 "its zones' durations need more than the memory limit of %llu bytes (8 bytes a "
                 "zone)",
                 (unsigned long long)b->limit);
    if (rc >= 0)
        rc = add_board(b, k, &r, &t);
    if (rc == BTC_ERR_NOMEM && !why[0])
        snprintf(why, sizeof why, "out of memory");
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", path, why[0] ? why : "cannot be read");
    read_free(&r);
    btc_trace_free(&t);
    return rc;
}

/* The boards of DIR: every NAME.tracy in it, sorted by name. */
static int list_boards(struct boards *b, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n <= 6 || strcmp(e->d_name + n - 6, ".tracy") != 0 || e->d_name[0] == '.')
            continue;
        if (b->nboards == cap) {
            cap = cap ? cap * 2 : 16;
            char **names = realloc(b->names, cap * sizeof *names);
            if (!names)
                break;
            b->names = names;
        }
        if (!(b->names[b->nboards] = strndup(e->d_name, n - 6)))
            break;
        b->nboards++;
    }
    int failed = e != NULL;
    closedir(d);
    if (failed) {
        snprintf(err, errlen, "%s: out of memory listing its traces", dir);
        return -1;
    }
    if (b->nboards < 1) {
        snprintf(err, errlen, "%s: no traces (NAME.tracy, one per board)", dir);
        return -1;
    }
    qsort(b->names, b->nboards, sizeof *b->names, cmp_str);
    return 0;
}

static int by_total(const void *a, const void *b)
{
    const struct zone_row *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->file, y->file);
}

static void boards_free(struct boards *b)
{
    for (size_t i = 0; i < b->nrows; i++) {
        free(b->rows[i].name);
        free(b->rows[i].file);
        free(b->rows[i].board);
    }
    free(b->rows);
    for (size_t i = 0; i < b->nboards; i++)
        free(b->names[i]);
    free(b->names);
}

/* The spread of a zone's means (p99 0) or p99s (1) across the boards that
 * have it: (max - min) / min in %, the slowest board in *slowest; -1 with
 * fewer than two boards. */
static double spread(const struct boards *b, const struct zone_row *r, int p99, size_t *slowest)
{
    int64_t lo = 0, hi = 0;
    size_t have = 0;
    for (size_t k = 0; k < b->nboards; k++) {
        const struct board_stat *s = &r->board[k];
        if (!s->count)
            continue;
        int64_t v = p99 ? s->p99_ns : s->mean_ns;
        if (!have || v < lo)
            lo = v;
        if (!have || v > hi) {
            hi = v;
            *slowest = k;
        }
        have++;
    }
    return have < 2 || lo <= 0 ? -1 : 100.0 * (double)(hi - lo) / (double)lo;
}

/* Fields quoted when they hold a comma or a quote (as stats --csv). */
static void csv_field(FILE *out, const char *s)
{
    if (!strchr(s, '"') && !strchr(s, ',')) {
        btr_text_put(out, s);
        return;
    }
    fputc('"', out);
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        btr_text_write(out, s, (size_t)(q - s));
        fputs("\"\"", out);
    }
    btr_text_put(out, s);
    fputc('"', out);
}

static void print_csv(const struct boards *b, FILE *out)
{
    fputs("name,src_file,src_line,board,counts,mean_ns,p99_ns,mean_spread_perc,"
          "p99_spread_perc\n",
          out);
    for (size_t i = 0; i < b->shown; i++) {
        const struct zone_row *r = &b->rows[i];
        size_t slowest = 0;
        double ms = spread(b, r, 0, &slowest), ps = spread(b, r, 1, &slowest);
        for (size_t k = 0; k < b->nboards; k++) {
            const struct board_stat *s = &r->board[k];
            csv_field(out, r->name);
            fputc(',', out);
            csv_field(out, r->file);
            fprintf(out, ",%u,", r->line);
            csv_field(out, b->names[k]);
            if (s->count)
                fprintf(out, ",%llu,%lld,%lld,", (unsigned long long)s->count,
                        (long long)s->mean_ns, (long long)s->p99_ns);
            else
                fputs(",0,,,", out);
            if (ms >= 0)
                fprintf(out, "%.2f,%.2f\n", ms, ps);
            else
                fputs(",\n", out);
        }
    }
}

static void print_table(const struct boards *b, FILE *out)
{
    fprintf(out, "%zu boards:", b->nboards);
    for (size_t k = 0; k < b->nboards; k++) {
        fputc(' ', out);
        btr_text_put(out, b->names[k]);
    }
    if (b->shown < b->nrows)
        fprintf(out, "\nthe %zu zones with the most total time, of %zu", b->shown, b->nrows);
    fprintf(out, "\n\n%-48s %-16s %10s %14s %14s\n", "zone (file:line)", "board", "count",
            "mean ns", "p99 ns");
    for (size_t i = 0; i < b->shown; i++) {
        const struct zone_row *r = &b->rows[i];
        char zone[600], safe[600];
        snprintf(zone, sizeof zone, "%s (%s:%u)", btr_demangle(r->name), r->file, r->line);
        for (size_t k = 0; k < b->nboards; k++) {
            const struct board_stat *s = &r->board[k];
            fprintf(out, "%-48s ", k ? "" : btr_text_safe(zone, safe, sizeof safe));
            fprintf(out, "%-16s ", btr_text_safe(b->names[k], safe, sizeof safe));
            if (s->count)
                fprintf(out, "%10llu %14lld %14lld\n", (unsigned long long)s->count,
                        (long long)s->mean_ns, (long long)s->p99_ns);
            else
                fprintf(out, "%10s %14s %14s\n", "-", "-", "-");
        }
        size_t slow_mean = 0, slow_p99 = 0;
        double ms = spread(b, r, 0, &slow_mean), ps = spread(b, r, 1, &slow_p99);
        if (ms >= 0) {
            fprintf(out, "%-48s spread: mean %.1f %% (slowest ", "", ms);
            btr_text_put(out, b->names[slow_mean]);
            fprintf(out, "), p99 %.1f %% (slowest ", ps);
            btr_text_put(out, b->names[slow_p99]);
            fputs(")\n", out);
        }
    }
}

int btr_boards_print(const char *dir, int csv, size_t top, FILE *out, char *err, size_t errlen)
{
    struct boards b = {.limit = btc_tracy_read_memory_limit()};
    int rc = list_boards(&b, dir, err, errlen);
    for (size_t k = 0; rc >= 0 && k < b.nboards; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.tracy", dir, b.names[k]);
        rc = read_board(&b, k, path, err, errlen);
    }
    if (rc >= 0) {
        qsort(b.rows, b.nrows, sizeof *b.rows, by_total);
        b.shown = top && top < b.nrows ? top : b.nrows;
        if (csv)
            print_csv(&b, out);
        else
            print_table(&b, out);
        rc = (int)b.nboards;
    }
    boards_free(&b);
    return rc;
}
