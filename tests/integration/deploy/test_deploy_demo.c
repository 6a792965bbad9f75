/* End to end with the real parts, on the emulated riscv64 board: the
 * cross-built boardtrace-demo traced by the cross-built boardtrace-capture
 * (found by the default search, as `boardtrace run` without --capture), and
 * the pulled trace read by the host's boardtrace-report. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <boardtrace/config.h>

#include "deploy_support.h"

/* argv: boardtrace board.sh board-dir boardtrace-demo boardtrace-report
 * boardtrace-demo-dynamic boardtrace-demo-callstacks
 * boardtrace-demo-dynamic-callstacks bt_crashing */
static const char *demo, *report, *demo_dynamic, *demo_callstacks, *demo_dynamic_callstacks,
    *crashing;

static void the_demo_is_traced_on_the_board_and_its_zones_reported(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/demo.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    const char *argv[16] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    argv[8] = "-o";
    argv[9] = out;
    argv[10] = demo;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    assert_status(&r, 0);
    const char *events = strstr(r.err, "  events    ");
    assert_non_null(events);
    assert_true(atoll(events + 12) > 1000);
    assert_non_null(strstr(r.err, "  capture   complete in "));
    assert_non_null(strstr(r.err, " s (the trace's span)\n"));
    /* boardtrace's runtime under run announces itself to nobody. */
    assert_null(strstr(r.err, "holds a UDP socket"));
    assert_true(file_size(out) > 1000);
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"end\": \"complete\""));
    assert_non_null(strstr(json, "/cross/riscv64/tools/capture/boardtrace-capture"));
    /* The program's own build, from its boardtrace ELF note. */
    char want[64];
    snprintf(want, sizeof want, "\"tracing_mode\": %d", BT_TRACING_MODE);
    assert_non_null(strstr(json, "\"boardtrace_version\": \"" BT_VERSION_STRING "\""));
    assert_non_null(strstr(json, want));
    free(json);
    result_free(&r);

    const char *stats[] = {report, "stats", out, NULL};
    assert_int_equal(run_command((char *const *)stats, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "matmul"));
    result_free(&r);
}

/* argv of `boardtrace run` on the board with the words of rest (NULL-ended
 * lists, at most 24 words in all). */
static void run_argv(const char **argv, const char *const *rest, const char *const *more)
{
    argv[0] = boardtrace;
    argv[1] = "run";
    board_args(&board, argv + 2);
    int n = 8;
    for (; rest && *rest; rest++)
        argv[n++] = *rest;
    for (; more && *more; more++)
        argv[n++] = *more;
    argv[n] = NULL;
}

/* Runs the dynamically linked demo for 50 frames with extra options. */
static void run_dynamic(const char *out, const char *const *extra, struct result *r)
{
    const char *argv[24];
    const char *head[] = {"-f", "-o", out, NULL};
    const char *tail[] = {demo_dynamic, "--", "-f", "50", NULL};
    const char *opts[12];
    int n = 0;
    for (const char *const *p = head; *p; p++)
        opts[n++] = *p;
    for (; *extra; extra++)
        opts[n++] = *extra;
    opts[n] = NULL;
    run_argv(argv, opts, tail);
    assert_int_equal(run_command((char *const *)argv, work, 300, r), 0);
}

/* A client as upstream's behaves on the network (the runtime's test
 * switch): under run's TRACY_ONLY_LOCALHOST it listens on [::1] alone and
 * broadcasts whatever TRACY_NO_BROADCAST says. The capture reaches it there
 * and the summary names the broadcast. */
static void an_upstream_like_client_on_ipv6_loopback_alone_is_captured(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/upstream-net.tracy", work);
    /* 200 frames: some seconds, so the program is still there when the
     * board is looked at (a look starts processes, slow under emulation). */
    const char *argv[24];
    const char *rest[] = {"-f", "-o", out,  "--env", "BOARDTRACE_TEST_UPSTREAM_NET=1",
                          demo, "--", "-f", "200",   NULL};
    run_argv(argv, rest, NULL);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, " (6200 zones, 202 frames)\n"));
    assert_non_null(strstr(r.err, "  capture   complete in "));
    assert_non_null(strstr(r.err, "  network   the program holds a UDP socket: a client built "
                                  "with upstream Tracy announces itself"));
    result_free(&r);
}

/* The board is a static busybox: no loader, no libc. The loader and the
 * libraries come from the cross toolchain's sysroot, into the board's cache. */
static void a_dynamic_program_runs_with_the_loader_and_libraries_brought(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/dynamic.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    const char *none[] = {NULL};
    struct result r;
    run_dynamic(out, none, &r);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, "lacks the program's loader: it runs through the loader and 2 "
                                  "libraries from "));
    /* Exact counts: 50 frames of 31 zones, 50 inference frames beside the
     * default ones, as the demo printed them. */
    assert_non_null(strstr(r.out, "total=1550"));
    assert_non_null(strstr(r.err, "  events    "));
    assert_non_null(strstr(r.err, " (1550 zones, 52 frames)\n"));
    assert_non_null(strstr(r.err, "  program   exit status 0\n"));
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"loader\": \"/lib/ld-linux-riscv64-lp64d.so.1\""));
    assert_non_null(strstr(json, "\"libc.so.6\""));
    free(json);
    result_free(&r);

    const char *stats[] = {report, "stats", out, NULL};
    assert_int_equal(run_command((char *const *)stats, work, 60, &r), 0);
    assert_status(&r, 0);
    const char *matmul = strstr(r.out, "matmul ");
    assert_non_null(matmul);
    int count = 0;
    assert_int_equal(sscanf(matmul, "matmul %*s %d", &count), 1);
    assert_int_equal(count, 750);
    result_free(&r);

    /* A second run finds every file in the board's cache. */
    run_dynamic(out, none, &r);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, "all from the board's cache"));
    assert_null(strstr(r.err, "upload libc.so.6"));
    assert_non_null(strstr(r.err, " (1550 zones, 52 frames)\n"));
    result_free(&r);
}

static void no_bring_libs_refuses_naming_the_missing_loader(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/refused.tracy", work);
    const char *refuse[] = {"--no-bring-libs", NULL};
    struct result r;
    run_dynamic(out, refuse, &r);
    assert_status(&r, 7);
    assert_non_null(strstr(r.err, "the loader /lib/ld-linux-riscv64-lp64d.so.1 (the program's "
                                  "interpreter) is not on the board"));
    assert_non_null(strstr(r.err, "drop --no-bring-libs"));
    assert_int_equal(file_size(out), -1);
    result_free(&r);

    /* A sysroot without the program's libraries is named in the error. */
    const char *empty[] = {"--sysroot", work, NULL};
    run_dynamic(out, empty, &r);
    assert_status(&r, 3);
    assert_non_null(strstr(r.err, "is not in the sysroot"));
    result_free(&r);
}

/* The zones the report counted for NAME in TRACE, -1 when absent. */
static int report_count(const char *trace, const char *name)
{
    const char *stats[] = {report, "stats", trace, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)stats, work, 60, &r), 0);
    assert_status(&r, 0);
    char key[64];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *at = strstr(r.out, key);
    int count = -1;
    if (at)
        assert_int_equal(sscanf(at + 1, "%*s %*s %d", &count), 1);
    result_free(&r);
    return count;
}

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The SSH connection is cut mid-run the way a network failure cuts it (the
 * board's sshd processes serving it are killed): the run goes on on the
 * board, boardtrace connects again, follows it from where it was, and the
 * trace is complete, every line of output shown once. */
static void a_run_survives_its_ssh_connection_being_cut(void **state)
{
    (void)state;
    char out[600], log[600];
    snprintf(out, sizeof out, "%s/cut.tracy", work);
    snprintf(log, sizeof log, "%s/cut.log", work);
    const char *argv[24];
    const char *rest[] = {"-f", "-o", out, demo, "--", "-f", "400", NULL};
    run_argv(argv, rest, NULL);
    pid_t pid = spawn_logged((char *const *)argv, log);
    assert_true(wait_for_text(log, "program is tracing on the board's port", 120, 50000));
    assert_true(kill_ssh_server_side(pid, board.port) >= 1);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char *text = read_file(log, NULL);
    assert_non_null(text);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "%s\n", text);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_non_null(strstr(text, "lost the connection to "));
    assert_non_null(strstr(text, "again; following the run from where it was"));
    /* 400 frames of 31 zones, complete; the demo's report once. */
    assert_non_null(strstr(text, " (12400 zones, 402 frames)\n"));
    assert_non_null(strstr(text, "  capture   complete in "));
    assert_int_equal(count_of(text, "total=12400"), 1);
    assert_int_equal(count_of(text, "boardtrace-demo: tracing on"), 1);
    free(text);
    assert_int_equal(report_count(out, "matmul"), 6000);
}

/* run --detach returns while the program runs; status lists the run;
 * fetch --stop ends it, pulls its trace and removes its folder, and gives
 * what run would have: the frames of the program (sent without its
 * symbols) named here, and the record. */
static void a_detached_run_is_listed_stopped_and_fetched(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/detached.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    const char *argv[24];
    const char *rest[] = {"--detach", "-f", "-o", out, demo_callstacks, "--", "-f", "100000", NULL};
    run_argv(argv, rest, NULL);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    assert_status(&r, 0);
    const char *in = strstr(r.out, "detached: boardtrace-demo-callstacks runs on ");
    assert_non_null(in);
    in = strstr(in, " in ");
    assert_non_null(in);
    char dir[600];
    assert_int_equal(sscanf(in + 4, "%599s", dir), 1);
    assert_non_null(strstr(r.out, "boardtrace fetch --host "));
    result_free(&r);

    const char *status[12] = {boardtrace, "status"};
    board_args(&board, status + 2);
    assert_int_equal(run_command((char *const *)status, work, 60, &r), 0);
    assert_status(&r, 0);
    const char *row = strstr(r.out, dir);
    assert_non_null(row);
    assert_non_null(strstr(row, " running "));
    assert_non_null(strstr(row, "boardtrace-demo"));
    result_free(&r);

    const char *fetch[16] = {boardtrace, "fetch"};
    board_args(&board, fetch + 2);
    fetch[8] = "--stop";
    fetch[9] = "-o";
    fetch[10] = out;
    fetch[11] = dir;
    assert_int_equal(run_command((char *const *)fetch, work, 300, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, "asked the run in "));
    assert_non_null(strstr(r.out, "SHA-256 "));
    assert_non_null(strstr(r.err, "removed "));
    assert_non_null(strstr(r.err, " named from the binaries ("));
    result_free(&r);
    assert_true(report_count(out, "inference") > 0);
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"record\": \"boardtrace fetch\""));
    assert_non_null(strstr(json, "\"program_host\": \""));
    assert_non_null(strstr(json, "\"pulled_sha256\": \""));
    assert_null(strstr(json, "\"symbolized\": null"));
    free(json);
    const char *frames[] = {report, "frames", out, NULL};
    assert_int_equal(run_command((char *const *)frames, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "\tworker\t"));
    assert_null(strstr(r.out, "[build-id "));
    result_free(&r);

    assert_int_equal(run_command((char *const *)status, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_null(strstr(r.out, dir));
    result_free(&r);
}

/* The program travels without its symbols (the default): its frames are
 * recorded on the board as IMAGE+0xOFFSET with its build-id, and named on
 * the host from the file given, with source files and lines. */
static void a_stripped_upload_has_its_frames_named_on_the_host(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/stripped.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    const char *argv[24];
    const char *rest[] = {"-f", "-o", out, demo_callstacks, "--", "-f", "20", NULL};
    run_argv(argv, rest, NULL);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, " (620 zones, 22 frames)\n"));
    assert_non_null(strstr(r.err, "frames named here)"));
    const char *named = strstr(r.err, " recorded unnamed, ");
    assert_non_null(named);
    unsigned long long unnamed = 0, done = 0, lines = 0;
    const char *line = named;
    while (line > r.err && line[-1] != ' ')
        line--;
    assert_int_equal(sscanf(line, "%llu recorded unnamed, %llu named from the binaries (%llu with",
                            &unnamed, &done, &lines),
                     3);
    assert_true(unnamed > 0);
    assert_int_equal(done, unnamed);
    assert_true(lines > 0);
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"uploaded_without_symbols\": true"));
    assert_non_null(strstr(json, "\"pulled_sha256\": \""));
    free(json);
    result_free(&r);

    /* The demo's worker threads and their source lines, by name. */
    const char *frames[] = {report, "frames", out, NULL};
    assert_int_equal(run_command((char *const *)frames, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "\tworker\t"));
    assert_non_null(strstr(r.out, "/runtime/demo/demo.c:"));
    assert_null(strstr(r.out, "[build-id "));
    result_free(&r);
}

/* Runs the dynamic demo with callstacks (through the loader boardtrace
 * brings, as the board has none) with extra options, and checks that
 * `boardtrace-report frames` names the program's frames after the program:
 * its functions, demo.c lines, never the loader. */
static void dynamic_frames_are_named_after_the_program(const char *name, const char *extra)
{
    char out[600];
    snprintf(out, sizeof out, "%s/%s.tracy", work, name);
    const char *argv[24];
    const char *rest[] = {"-f", "-o", out, extra, NULL};
    const char *tail[] = {demo_dynamic_callstacks, "--", "-f", "20", NULL};
    run_argv(argv, rest, tail); /* without extra, rest ends at its NULL */
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, " (620 zones, 22 frames)\n"));
    result_free(&r);

    const char *frames[] = {report, "frames", out, NULL};
    assert_int_equal(run_command((char *const *)frames, work, 60, &r), 0);
    assert_status(&r, 0);
    fprintf(stderr, "frames of %s:\n%s\n", name, r.out);
    assert_non_null(strstr(r.out, "\tworker\t"));
    assert_non_null(strstr(r.out, "\tmain\t"));
    assert_non_null(strstr(r.out, "/runtime/demo/demo.c:"));
    assert_null(strstr(r.out, "ld-linux"));
    assert_null(strstr(r.out, "\t_dl_"));
    /* every frame left unnamed is in the brought libc (stripped in the
     * sysroot), none in the program */
    for (const char *line = r.out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
        const char *hex = strstr(line, "+0x");
        const char *eol = strchr(line, '\n');
        if (hex && (!eol || hex < eol))
            assert_true(hex - line > 9 && strncmp(hex - 9, "libc.so.6", 9) == 0);
    }
    result_free(&r);
}

static void a_dynamic_program_has_its_frames_named_after_itself(void **state)
{
    (void)state;
    dynamic_frames_are_named_after_the_program("dynamic-stripped", NULL);
}

static void a_dynamic_program_uploaded_whole_names_its_frames_on_the_board(void **state)
{
    (void)state;
    dynamic_frames_are_named_after_the_program("dynamic-whole", "--no-strip");
}

/* A program that crashes inside a zone after the capture connected: the
 * trace holds the zone and the crash with its callstack, and run names the
 * signal in its error, summary and record, and exits 13 (the program). */
static void a_crash_keeps_the_trace_and_is_named_by_its_signal(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/crash.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    const char *argv[24];
    const char *rest[] = {"-f", "-o", out, crashing, "--", "wait", NULL};
    run_argv(argv, rest, NULL);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    assert_status(&r, 13);
    assert_non_null(strstr(r.err, "the program was killed by SIGSEGV; the trace holds"));
    assert_non_null(strstr(r.err, "  program   killed by SIGSEGV (exit status 139)\n"));
    assert_non_null(strstr(r.err, "  capture   complete in "));
    /* the zone the crash left open is in the trace */
    assert_non_null(strstr(r.err, " (1 zones, "));
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"program_exit_status\": 139"));
    assert_non_null(strstr(json, "\"program_signal\": \"SIGSEGV\""));
    free(json);
    result_free(&r);

    const char *stats[] = {report, "stats", out, NULL};
    assert_int_equal(run_command((char *const *)stats, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, ": the program was killed by SIGSEGV at address 0x0\n"));
    assert_null(strstr(r.out, "(no callstack)"));
    result_free(&r);
    /* the crash's callstack and the allocation's, named */
    const char *frames[] = {report, "frames", out, NULL};
    assert_int_equal(run_command((char *const *)frames, work, 60, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "\tcrashing_step\t"));
    assert_non_null(strstr(r.out, "/tests/integration/bt_crashing.c:"));
    result_free(&r);
}

/* A program that dies as a capture connects, before it received anything
 * (its crash handler off, so that it dies at once), is reported as the
 * program's death by its signal, not as a capture that left no trace (10):
 * exit 13, or 9 when the board's supervisor had not yet seen the port open
 * (on a busy machine it may look after the program is gone). */
static void a_crash_before_the_capture_connected_is_the_programs_death(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/early-crash.tracy", work);
    const char *argv[24];
    const char *rest[] = {"-f",     "-o", out,     "--env", "BOARDTRACE_NO_CRASH_HANDLER=1",
                          crashing, "--", "early", NULL};
    run_argv(argv, rest, NULL);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    if (r.status != 13 && r.status != 9)
        result_print(&r);
    assert_true(r.status == 13 || r.status == 9);
    assert_non_null(strstr(r.err, "killed by SIGSEGV"));
    assert_null(strstr(r.err, "the capture left no trace"));
    result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc != 10) {
        fprintf(stderr,
                "usage: %s BOARDTRACE BOARD_SH BOARD_DIR DEMO REPORT DEMO_DYNAMIC "
                "DEMO_CALLSTACKS DEMO_DYNAMIC_CALLSTACKS CRASHING\n",
                argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    demo = argv[4];
    report = argv[5];
    demo_dynamic = argv[6];
    demo_callstacks = argv[7];
    demo_dynamic_callstacks = argv[8];
    crashing = argv[9];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_demo_is_traced_on_the_board_and_its_zones_reported),
        cmocka_unit_test(a_dynamic_program_runs_with_the_loader_and_libraries_brought),
        cmocka_unit_test(an_upstream_like_client_on_ipv6_loopback_alone_is_captured),
        cmocka_unit_test(no_bring_libs_refuses_naming_the_missing_loader),
        cmocka_unit_test(a_run_survives_its_ssh_connection_being_cut),
        cmocka_unit_test(a_detached_run_is_listed_stopped_and_fetched),
        cmocka_unit_test(a_stripped_upload_has_its_frames_named_on_the_host),
        cmocka_unit_test(a_dynamic_program_has_its_frames_named_after_itself),
        cmocka_unit_test(a_dynamic_program_uploaded_whole_names_its_frames_on_the_board),
        cmocka_unit_test(a_crash_keeps_the_trace_and_is_named_by_its_signal),
        cmocka_unit_test(a_crash_before_the_capture_connected_is_the_programs_death),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
