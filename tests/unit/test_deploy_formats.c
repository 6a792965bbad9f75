/* The formats boardtrace reads and writes: ELF headers (which machine),
 * SHA-256 (what sha256sum on the board prints), the board probe's answer,
 * the capture's "Key: value" statistics and the JSON record's strings. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "btd_board.h"
#include "btd_elf.h"
#include "btd_escape.h"
#include "btd_json.h"
#include "btd_session.h"
#include "btd_sha256.h"

/* e_ident + e_type + e_machine of a little-endian ELF. */
static void header(unsigned char *h, int cls, int data, uint16_t machine)
{
    memset(h, 0, 64);
    memcpy(h, "\177ELF", 4);
    h[4] = (unsigned char)cls;
    h[5] = (unsigned char)data;
    h[6] = 1;
    if (data == 1) {
        h[16] = 2;
        h[18] = (unsigned char)(machine & 0xff);
        h[19] = (unsigned char)(machine >> 8);
    } else {
        h[17] = 2;
        h[19] = (unsigned char)(machine & 0xff);
        h[18] = (unsigned char)(machine >> 8);
    }
}

static void elf_headers_name_their_architecture(void **state)
{
    (void)state;
    unsigned char h[64];
    struct btd_elf_info info;
    char err[200];
    header(h, 2, 1, 243);
    assert_int_equal(btd_elf_parse(h, sizeof h, &info, err, sizeof err), 0);
    assert_string_equal(btd_elf_arch(&info), "riscv64");
    header(h, 1, 1, 243);
    assert_int_equal(btd_elf_parse(h, sizeof h, &info, err, sizeof err), 0);
    assert_string_equal(btd_elf_arch(&info), "riscv32");
    header(h, 2, 1, 183);
    assert_int_equal(btd_elf_parse(h, sizeof h, &info, err, sizeof err), 0);
    assert_string_equal(btd_elf_arch(&info), "aarch64");
    header(h, 2, 2, 62);
    assert_int_equal(btd_elf_parse(h, sizeof h, &info, err, sizeof err), 0);
    assert_int_equal(info.machine, 62);
    assert_string_equal(btd_elf_arch(&info), "x86_64");
    header(h, 2, 1, 9999);
    assert_int_equal(btd_elf_parse(h, sizeof h, &info, err, sizeof err), 0);
    assert_null(btd_elf_arch(&info));
}

static void non_elf_and_truncated_files_are_refused(void **state)
{
    (void)state;
    struct btd_elf_info info;
    char err[200];
    assert_int_equal(
        btd_elf_parse((const unsigned char *)"#!/bin/sh\n", 10, &info, err, sizeof err), -1);
    assert_non_null(strstr(err, "not an ELF file"));
    unsigned char h[64];
    header(h, 2, 1, 243);
    assert_int_equal(btd_elf_parse(h, 12, &info, err, sizeof err), -1);
    assert_non_null(strstr(err, "truncated"));
    h[4] = 7;
    assert_int_equal(btd_elf_parse(h, sizeof h, &info, err, sizeof err), -1);
    assert_non_null(strstr(err, "offset 4"));
}

static void this_test_binary_reads_as_the_host_with_its_toolchain(void **state)
{
    (void)state;
    struct btd_elf_info info;
    char err[300], comment[256];
    assert_int_equal(btd_elf_read("/proc/self/exe", &info, err, sizeof err), 0);
#if defined(__x86_64__)
    assert_string_equal(btd_elf_arch(&info), "x86_64");
#elif defined(__aarch64__)
    assert_string_equal(btd_elf_arch(&info), "aarch64");
#endif
    assert_int_equal(btd_elf_comment("/proc/self/exe", comment, sizeof comment), 0);
    assert_int_equal(btd_elf_has_symbols("/proc/self/exe"), 1);
    assert_non_null(strstr(comment, "GCC") ? strstr(comment, "GCC") : strstr(comment, "clang"));
}

static void uname_answers_normalize_to_elf_names(void **state)
{
    (void)state;
    assert_string_equal(btd_arch_normalize("riscv64"), "riscv64");
    assert_string_equal(btd_arch_normalize("arm64"), "aarch64");
    assert_string_equal(btd_arch_normalize("armv7l"), "arm");
    assert_string_equal(btd_arch_normalize("i686"), "i386");
    assert_string_equal(btd_arch_normalize("amd64"), "x86_64");
}

static void sha256_matches_the_standard_vectors(void **state)
{
    (void)state;
    struct btd_sha256 s;
    char hex[65];
    btd_sha256_init(&s);
    btd_sha256_hex(&s, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    btd_sha256_init(&s);
    btd_sha256_update(&s, "abc", 3);
    btd_sha256_hex(&s, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* One million 'a' in uneven pieces, across block boundaries. */
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    btd_sha256_init(&s);
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t n = step < 1000000 - done ? step : 1000000 - done;
        btd_sha256_update(&s, a + done, n);
        done += n;
        step = step * 3 % 1031 + 1;
    }
    btd_sha256_hex(&s, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static void the_board_probe_answer_is_understood(void **state)
{
    (void)state;
    struct btd_board b;
    memset(&b, 0, sizeof b);
    btd_board_parse("arch riscv64\n"
                    "uname Linux board 6.6.0 #1 SMP riscv64 GNU/Linux\n"
                    "dir /tmp/boardtrace.Ab12Cd\n"
                    "exec 1\n"
                    "df /dev/mmcblk0p2 7654321 1234 500000 1% /\n"
                    "port 1F96 0000\nport 0016 C350\n"
                    "maps 1\nexe 1\n"
                    /* sysctls come as grep -H prints them */
                    "/proc/sys/net/ipv4/ip_local_port_range:32768\t60999\n"
                    "/proc/sys/kernel/perf_event_paranoid:-1\n"
                    "python /usr/bin/python3.13 /usr/bin/python3\n",
                    &b);
    assert_string_equal(b.python, "/usr/bin/python3");
    assert_string_equal(b.python_real, "/usr/bin/python3.13");
    assert_string_equal(b.python_version, "3.13");
    assert_string_equal(b.arch, "riscv64");
    assert_string_equal(b.uname, "Linux board 6.6.0 #1 SMP riscv64 GNU/Linux");
    assert_string_equal(b.dir, "/tmp/boardtrace.Ab12Cd");
    assert_int_equal(b.exec_ok, 1);
    assert_true(b.free_known);
    assert_int_equal(b.free_bytes, 500000ull * 1024);
    assert_int_equal(b.nports, 3);
    assert_int_equal(b.ports[0], 8086);
    assert_int_equal(b.ports[1], 22);
    assert_int_equal(b.ports[2], 50000);
    assert_true(b.maps_readable);
    assert_true(b.exe_link);
    assert_string_equal(b.perf_paranoid, "-1");
    assert_int_equal(b.ephemeral_lo, 32768);
    assert_int_equal(b.ephemeral_hi, 60999);
    /* A python3 that leads to no versioned file: found, version unknown. */
    struct btd_board w;
    memset(&w, 0, sizeof w);
    btd_board_parse("arch aarch64\npython /opt/py/bin/python3 /opt/py/bin/python3\n", &w);
    assert_string_equal(w.python, "/opt/py/bin/python3");
    assert_string_equal(w.python_version, "");
    for (int i = 0; i < 50; i++) {
        int p = btd_board_free_port(&b);
        assert_true((p >= 10000 && p < 32768) || (p > 60999 && p <= 65535));
    }
}

/* The tracing port stays out of the board's ephemeral range, where an
 * outgoing connection could take it first; ports seen in use are skipped. */
static void the_tracing_port_avoids_ephemeral_and_used_ports(void **state)
{
    (void)state;
    struct btd_board b;
    memset(&b, 0, sizeof b);
    /* Everything but 10000..10009 and 65530..65535 is ephemeral; 10000..10008
     * and 65530..65535 are in use: 10009 is the only answer. */
    btd_board_parse("arch riscv64\nephemeral 10010 65529\n", &b);
    for (int p = 10000; p < 10009; p++)
        b.ports[b.nports++] = p;
    for (int p = 65530; p <= 65535; p++)
        b.ports[b.nports++] = p;
    for (int i = 0; i < 20; i++)
        assert_int_equal(btd_board_free_port(&b), 10009);
    /* An unreadable range means Linux's default. */
    memset(&b, 0, sizeof b);
    btd_board_parse("arch riscv64\nephemeral \n", &b);
    assert_int_equal(b.ephemeral_lo, 0);
    int seen_high = 0;
    for (int i = 0; i < 2000; i++) {
        int p = btd_board_free_port(&b);
        assert_true((p >= 10000 && p < 32768) || (p > 60999 && p <= 65535));
        seen_high |= p > 60999;
    }
    assert_true(seen_high);
}

static void a_failed_folder_is_reported_not_guessed(void **state)
{
    (void)state;
    struct btd_board b;
    memset(&b, 0, sizeof b);
    btd_board_parse("arch aarch64\ndirerror cannot create /ro/x: Read-only file system\n"
                    "df \n",
                    &b);
    assert_string_equal(b.dir, "");
    assert_non_null(strstr(b.dir_error, "Read-only"));
    assert_false(b.free_known);
}

static void capture_statistics_take_the_last_value_after_carriage_returns(void **state)
{
    (void)state;
    const char *log = "Connecting to 127.0.0.1:8086...\n"
                      "\rZones: 10\rZones: 20\n"
                      "Time span: 1.5 s\n"
                      "  Zones: 1234\n";
    char v[64];
    assert_non_null(btd_capture_stat(log, "Zones", v, sizeof v));
    assert_string_equal(v, "1234");
    assert_non_null(btd_capture_stat(log, "Time span", v, sizeof v));
    assert_string_equal(v, "1.5 s");
    assert_null(btd_capture_stat(log, "Frames", v, sizeof v));
}

static void capture_summaries_read_both_capture_formats(void **state)
{
    (void)state;
    struct btd_capture_summary sum;
    btd_capture_summarize("trace.tracy: complete, 22374 events, 1550 zones, 50 frames, span "
                          "0.71 s, captured in 0.79 s, received 116.6 KiB, wrote 62.0 KiB, "
                          "memory 12.0 MiB\n",
                          &sum);
    assert_string_equal(sum.events, "22374");
    assert_string_equal(sum.zones, "1550");
    assert_string_equal(sum.frames, "50");
    assert_string_equal(sum.duration, "0.71 s");
    assert_string_equal(sum.capture_time, "0.79 s");
    assert_string_equal(sum.end, "complete");
    /* Upstream tracy-capture. */
    btd_capture_summarize("Connecting to 127.0.0.1:8086...\n\nFrames: 12\nTime span: 3.2 s\n"
                          "Zones: 4,321\nElapsed time: 3.4 s\nSaving trace... done!\n",
                          &sum);
    assert_string_equal(sum.events, "");
    assert_string_equal(sum.zones, "4,321");
    assert_string_equal(sum.frames, "12");
    assert_string_equal(sum.duration, "3.2 s");
    assert_string_equal(sum.capture_time, "3.4 s");
}

/* What the board says reaches the terminal only as printable text: C0, DEL,
 * C1 controls (raw, as the 8-bit CSI 0x9b, or in UTF-8), bytes that are not
 * well-formed UTF-8 and bidirectional overrides become \xNN; letters of
 * any script stay as they are. */
static char *escaped(const char *s, bool keep_newlines)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    btd_escape_write(f, s, strlen(s), keep_newlines);
    fclose(f);
    return text;
}

static void board_text_shows_every_byte_that_is_not_printable_text_as_hex(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain /tmp/boardtrace.x", "plain /tmp/boardtrace.x"},
        {"\x1b[2J\x1b]0;owned\x07", "\\x1b[2J\\x1b]0;owned\\x07"},
        {"csi \x9b"
         "31m",
         "csi \\x9b31m"},
        {"c1 \xc2\x9b"
         "31m",
         "c1 \\xc2\\x9b31m"},
        {"del \x7f tab\t", "del \\x7f tab\\x09"},
        {"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5"},
        {"latin1 caf\xe9!", "latin1 caf\\xe9!"},
        {"overlong \xc0\xaf", "overlong \\xc0\\xaf"},
        {"surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80"},
        {"cut \xe6\x97", "cut \\xe6\\x97"},
        {"bidi \xe2\x80\xae"
         "evil",
         "bidi \\xe2\\x80\\xaeevil"},
        {"line\nnext", "line\\x0anext"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *text = escaped(cases[i].in, false);
        assert_string_equal(text, cases[i].out);
        free(text);
        char field[256];
        assert_string_equal(btd_escape_field(cases[i].in, field, sizeof field), cases[i].out);
    }
    char *text = escaped("line\nnext\x9b", true);
    assert_string_equal(text, "line\nnext\\x9b");
    free(text);
    /* A field cut to its buffer is cut at a whole escape. */
    char small[7];
    assert_string_equal(btd_escape_field("ab\x1b[2J", small, sizeof small), "ab\\x1b");
}

static void json_strings_keep_only_well_formed_utf8_and_escape_c1(void **state)
{
    (void)state;
    struct btd_buf b = {0};
    btd_json_escape(&b, "\x9b"
                        "1 \xc2\x9b"
                        "2 caf\xc3\xa9 \xe2\x80\xae \xff");
    assert_string_equal(btd_buf_str(&b), "\"\\ufffd1 \\u009b2 caf\xc3\xa9 \\u202e \\ufffd\"");
    btd_buf_free(&b);
}

static void json_strings_escape_quotes_controls_and_newlines(void **state)
{
    (void)state;
    struct btd_json j = {0};
    btd_json_begin_object(&j, NULL);
    btd_json_string(&j, "a\"b", "line\n\"q\" \\ \x01");
    btd_json_int(&j, "n", -5);
    btd_json_begin_array(&j, "list");
    btd_json_string(&j, NULL, "x");
    btd_json_end_array(&j);
    btd_json_end_object(&j);
    assert_string_equal(btd_buf_str(&j.out), "{\n  \"a\\\"b\": \"line\\n\\\"q\\\" \\\\ \\u0001\",\n"
                                             "  \"n\": -5,\n  \"list\": [\n    \"x\"\n  ]\n}\n");
    btd_buf_free(&j.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elf_headers_name_their_architecture),
        cmocka_unit_test(non_elf_and_truncated_files_are_refused),
        cmocka_unit_test(this_test_binary_reads_as_the_host_with_its_toolchain),
        cmocka_unit_test(uname_answers_normalize_to_elf_names),
        cmocka_unit_test(sha256_matches_the_standard_vectors),
        cmocka_unit_test(the_board_probe_answer_is_understood),
        cmocka_unit_test(the_tracing_port_avoids_ephemeral_and_used_ports),
        cmocka_unit_test(a_failed_folder_is_reported_not_guessed),
        cmocka_unit_test(capture_statistics_take_the_last_value_after_carriage_returns),
        cmocka_unit_test(capture_summaries_read_both_capture_formats),
        cmocka_unit_test(json_strings_escape_quotes_controls_and_newlines),
        cmocka_unit_test(board_text_shows_every_byte_that_is_not_printable_text_as_hex),
        cmocka_unit_test(json_strings_keep_only_well_formed_utf8_and_escape_c1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
