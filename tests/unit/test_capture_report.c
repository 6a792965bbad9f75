/* boardtrace-report's computations over upstream's file of the recorded
 * session: the CSV statistics equal tracy-csvexport's rows, and the Chrome
 * export holds one complete event per zone plus thread names. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btr_report.h"

static const char *data_dir;

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits text into lines and sorts them (row order is a hash-map artefact
 * in upstream's output, so rows are compared as a set). */
static size_t sorted_lines(char *text, char **lines, size_t max)
{
    size_t n = 0;
    for (char *save, *l = strtok_r(text, "\n", &save); l && n < max;
         l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    qsort(lines, n, sizeof *lines, cmp_line);
    return n;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

static void stats_csv_equals_upstream_csvexport(void **state)
{
    (void)state;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/session.tracy", data_dir);
    struct btr_stats s;
    assert_int_equal(btr_stats_compute(&s, path, err, sizeof err), 0);
    char *ours = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&ours, &len);
    btr_stats_print_csv(&s, mem, ",");
    fclose(mem);
    btr_stats_free(&s);

    snprintf(path, sizeof path, "%s/session.csv", data_dir);
    char *theirs = read_text(path);
    assert_non_null(theirs);
    char *a[64], *b[64];
    size_t na = sorted_lines(ours, a, 64), nb = sorted_lines(theirs, b, 64);
    assert_int_equal(na, nb);
    assert_int_equal(na, 7);
    for (size_t i = 0; i < na; i++)
        assert_string_equal(a[i], b[i]);
    free(ours);
    free(theirs);
}

static void stats_table_lists_each_location_once(void **state)
{
    (void)state;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/session.tracy", data_dir);
    struct btr_stats s;
    assert_int_equal(btr_stats_compute(&s, path, err, sizeof err), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    btr_stats_print_table(&s, mem);
    fclose(mem);
    assert_int_equal(s.nzones, 6);
    assert_non_null(strstr(text, "with_callstack  peer-client.c:115"));
    assert_string_equal(s.zones[0].name, "outer"); /* largest total first */
    btr_stats_free(&s);
    free(text);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void chrome_export_has_a_complete_event_per_zone(void **state)
{
    (void)state;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/session.tracy", data_dir);
    char *json = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&json, &len);
    uint64_t zones = 0;
    assert_int_equal(btr_chrome_export(path, mem, &zones, err, sizeof err), 0);
    fclose(mem);
    assert_int_equal(zones, 8300);
    /* A complete event per zone and per frame (a track per frame set). */
    size_t frames = count(json, "\"name\":\"frame\"");
    assert_int_equal(count(json, "{\"ph\":\"X\""), 8300 + frames);
    assert_int_equal(frames, 300);
    assert_int_equal(count(json, "\"name\":\"with_callstack\""), 200);
    /* 4 threads, and 3 frame sets' tracks. */
    assert_int_equal(count(json, "\"name\":\"thread_name\""), 4 + 3);
    assert_int_equal(count(json, "\"Frames: default\""), 1);
    assert_int_equal(count(json, "{\"ph\":\"i\""), 24); /* the messages */
    assert_non_null(strstr(json, "\"name\":\"peer-client start\""));
    assert_non_null(strstr(json, "{\"name\":\"peer-worker-1\"}"));
    assert_true(len > 2 && strncmp(json, "{\"displayTimeUnit\"", 18) == 0);
    assert_string_equal(json + len - 4, "\n]}\n");
    free(json);
}

static char *json_of(const char *s)
{
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);
    btr_json_string(mem, s);
    fclose(mem);
    return out;
}

/* Names are bytes from the traced program; the export stays valid JSON. */
static void json_strings_escape_and_repair_utf8(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"plain", "\"plain\""},
        {"a\"b\\c\n\x01", "\"a\\\"b\\\\c\\u000a\\u0001\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"\xff", "\"\\ufffd\""},                                  /* never in UTF-8 */
        {"\xc3", "\"\\ufffd\""},                                  /* cut short by the end */
        {"\xc3(", "\"\\ufffd(\""},                                /* cut short by ASCII */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                       /* overlong '/' */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},            /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* past U+10FFFF */
        {"\xe2\x82", "\"\\ufffd\\ufffd\""},
        {"\x1b[2J\x7f\xc2\x9b", "\"\\u001b[2J\\u007f\\u009b\""}, /* C0, DEL, C1 */
        {"\xe2\x80\xae"
         "evil",
         "\"\\u202eevil\""}, /* a bidirectional override */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *j = json_of(cases[i][0]);
        assert_string_equal(j, cases[i][1]);
        free(j);
    }
}

/* Text reports print names as the terminal must not act on them: every
 * C0 control, DEL and C1 control (in UTF-8) becomes \xNN; the rest is kept,
 * and a cell's copy is cut at its buffer. */
static void text_for_a_terminal_escapes_control_characters(void **state)
{
    (void)state;
    const char *in = "zone\x1b]0;title\x07 caf\xc3\xa9\x7f\xc2\x9b"
                     "2J";
    const char *want = "zone\\x1b]0;title\\x07 caf\xc3\xa9\\x7f\\xc2\\x9b"
                       "2J";
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);
    btr_text_put(mem, in);
    fclose(mem);
    assert_string_equal(out, want);
    free(out);
    char buf[64];
    assert_string_equal(btr_text_safe(in, buf, sizeof buf), want);
    const char *plain = "plain";
    assert_ptr_equal(btr_text_safe(plain, buf, sizeof buf), plain);
    char small[8];
    assert_string_equal(btr_text_safe(in, small, sizeof small), "zone");
}

/* What is not well-formed UTF-8 is no text: a lone 0x9b (the 8-bit CSI, which
 * a terminal in a Latin-1 locale or with 8-bit controls acts on), a Latin-1
 * letter, an overlong form, a cut sequence; bidirectional overrides reorder
 * what is shown. Each of their bytes becomes \xNN. */
static void text_for_a_terminal_escapes_bytes_that_are_not_utf8(void **state)
{
    (void)state;
    const char *in = "csi\x9b"
                     "31m caf\xe9 \xc0\xaf \xe2\x80\xae"
                     "evil \xe6\x97";
    const char *want = "csi\\x9b31m caf\\xe9 \\xc0\\xaf \\xe2\\x80\\xaeevil \\xe6\\x97";
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);
    btr_text_put(mem, in);
    fclose(mem);
    assert_string_equal(out, want);
    free(out);
    char buf[128];
    assert_string_equal(btr_text_safe(in, buf, sizeof buf), want);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stats_csv_equals_upstream_csvexport),
        cmocka_unit_test(stats_table_lists_each_location_once),
        cmocka_unit_test(chrome_export_has_a_complete_event_per_zone),
        cmocka_unit_test(json_strings_escape_and_repair_utf8),
        cmocka_unit_test(text_for_a_terminal_escapes_control_characters),
        cmocka_unit_test(text_for_a_terminal_escapes_bytes_that_are_not_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
