/* `boardtrace run` against the emulated riscv64 board, once with SFTP and once
 * on a board without it: the program and capture run there, their output
 * streams back, the trace arrives verified with its JSON record (and, with
 * --html, its HTML report beside it). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "deploy_support.h"

/* argv: boardtrace board.sh board-dir sftp|exec fake_program fake_capture
 * recorded.tracy */
static const char *mode, *program, *capture, *recorded;

static struct result run_program(const char *out, const char *extra_env, const char *arg)
{
    const char *argv[24] = {boardtrace, "run"};
    int n = 2;
    if (arg && strncmp(arg, "--ready-timeout=", 16) == 0) {
        argv[n++] = "--ready-timeout";
        argv[n++] = arg + 16;
        arg = NULL;
    } else if (arg && strcmp(arg, "-f") == 0) {
        argv[n++] = "-f";
        arg = NULL;
    }
    board_args(&board, argv + n);
    n += 6;
    argv[n++] = "--capture";
    argv[n++] = capture;
    argv[n++] = "-o";
    argv[n++] = out;
    if (extra_env) {
        argv[n++] = "--env";
        argv[n++] = extra_env;
    }
    argv[n++] = program;
    if (arg) {
        argv[n++] = "--";
        argv[n++] = arg;
    }
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    return r;
}

static void run_pulls_the_trace_verified_with_a_record(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/basic.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    struct result r = run_program(out, NULL, NULL);
    assert_status(&r, 0);

    /* The fake program serves "BTFAKE 1000" and 1000 event lines. */
    size_t len;
    char *trace = read_file(out, &len);
    assert_non_null(trace);
    assert_true(strncmp(trace, "BTFAKE 1000\nevent 0\n", 20) == 0);
    assert_non_null(strstr(trace, "\nevent 999\n"));
    assert_int_equal(file_size(out), 9902);
    free(trace);
    char part[700];
    snprintf(part, sizeof part, "%s.part", out);
    assert_int_equal(file_size(part), -1);

    /* Output of both sides streamed live, each recognizable. */
    assert_non_null(strstr(r.out, "TRACY_NO_EXIT=1\n"));
    assert_non_null(strstr(r.out, "TRACY_ONLY_LOCALHOST=1\n"));
    assert_non_null(strstr(r.out, "TRACY_NO_BROADCAST=1\n"));
    assert_non_null(strstr(r.err, "fake-program: a line on stderr\n"));
    assert_non_null(strstr(r.err, "[capture] Events: 1000\n"));
    /* The summary. */
    assert_non_null(strstr(r.err, "events    1000\n"));
    assert_non_null(strstr(r.err, "9902 bytes, SHA-256 verified"));

    char *json = read_file(record, NULL);
    assert_non_null(json);
    char transfer[64];
    snprintf(transfer, sizeof transfer, "\"transfer\": \"%s\"", mode);
    assert_non_null(strstr(json, transfer));
    assert_non_null(strstr(json, "\"arch\": \"riscv64\""));
    assert_non_null(strstr(json, "\"Events\": \"1000\""));
    assert_non_null(strstr(json, "\"program_exit_status\": 0"));
    assert_non_null(strstr(json, "\"exit_status\": 0,\n  \"exit_step\": \"ok\""));
    /* The fake program reads TRACY_NO_EXIT and has no boardtrace note, as a
     * program built with upstream Tracy's client: it travels with its
     * symbols, since that client names its frames on the board from them
     * (stripped, an assert-enabled build aborts when asked to). */
    assert_non_null(strstr(r.err, "is sent with its symbols: upstream Tracy's client"));
    char sizes[160];
    snprintf(sizes, sizeof sizes,
             "\"size\": %lld,\n    \"uploaded_size\": %lld,\n    "
             "\"uploaded_without_symbols\": false",
             (long long)file_size(program), (long long)file_size(program));
    assert_non_null(strstr(json, sizes));
    free(json);
    result_free(&r);
}

/* run --html with the words of rest after the board's. */
static struct result run_html(const char *const *rest)
{
    const char *argv[32] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    int n = 8;
    argv[n++] = "--html";
    for (; *rest; rest++)
        argv[n++] = *rest;
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    return r;
}

static void run_html_writes_the_report_beside_the_trace(void **state)
{
    (void)state;
    char out[600], html[640], record[640];
    snprintf(out, sizeof out, "%s/html.tracy", work);
    snprintf(html, sizeof html, "%s.html", out);
    snprintf(record, sizeof record, "%s.json", out);
    /* The program serves a recorded trace: a real one arrives. */
    const char *rest[] = {"--capture", capture,  "-o",    out,
                          "--upload",  recorded, "--env", "BT_TEST_SERVE_FILE=session.tracy",
                          program,     NULL};
    struct result r = run_html(rest);
    assert_status(&r, 0);
    assert_int_equal(file_size(out), file_size(recorded));
    char *page = read_file(html, NULL);
    assert_non_null(page);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(page, "<table id=\"zones\">"));
    assert_non_null(strstr(page, "<svg id=\"timeline\""));
    free(page);
    char said[700];
    snprintf(said, sizeof said, "  report    %s\n", html);
    assert_non_null(strstr(r.err, said));
    char *json = read_file(record, NULL);
    assert_non_null(json);
    char key[700];
    snprintf(key, sizeof key, "\"html\": \"%s\"", html);
    assert_non_null(strstr(json, key));
    free(json);
    result_free(&r);
}

static void run_html_that_fails_warns_and_keeps_the_trace(void **state)
{
    (void)state;
    char out[600], html[640], record[640];
    snprintf(out, sizeof out, "%s/not-a-tracy.tracy", work);
    snprintf(html, sizeof html, "%s.html", out);
    snprintf(record, sizeof record, "%s.json", out);
    /* The fake stream is no .tracy file: boardtrace-report refuses it. */
    const char *rest[] = {"--capture", capture, "-o", out, program, NULL};
    struct result r = run_html(rest);
    assert_status(&r, 0);
    assert_int_equal(file_size(out), 9902);
    assert_int_equal(file_size(html), -1);
    assert_non_null(strstr(r.err, "writing the HTML report"));
    assert_non_null(strstr(r.err, "the trace "));
    assert_null(strstr(r.err, "  report    "));
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"html\": null"));
    assert_non_null(strstr(json, "\"exit_status\": 0,"));
    free(json);
    result_free(&r);
}

static void run_names_a_failing_program_but_still_pulls_the_trace(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/failing.tracy", work);
    struct result r = run_program(out, "BT_TEST_EXIT=3", NULL);
    assert_status(&r, 13);
    assert_int_equal(file_size(out), 9902);
    assert_non_null(strstr(r.err, "program   exit status 3"));
    result_free(&r);
}

static void run_gives_up_on_a_program_that_never_opens_its_port(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/untraced.tracy", work);
    time_t start = time(NULL);
    struct result r = run_program(out, "BT_TEST_NO_LISTEN=1", "--ready-timeout=1");
    assert_status(&r, 9);
    assert_said(&r, "did not open its tracing port");
    /* Bounded: the ready timeout, then the program and capture are stopped
     * (a run that never gave up would not end at all; the bound is loose
     * for a busy machine). */
    assert_true(time(NULL) - start < 300);
    assert_int_equal(file_size(out), -1);
    result_free(&r);
}

/* A program built without tracing is named as such before the upload, and
 * again when it runs without opening its port. */
static void run_says_tracing_is_off_in_a_program_without_it(void **state)
{
    (void)state;
    char out[600], plain[600];
    snprintf(out, sizeof out, "%s/plain.tracy", work);
    snprintf(plain, sizeof plain, "%s", program);
    snprintf(strrchr(plain, '/') + 1, sizeof plain - (size_t)(strrchr(plain, '/') + 1 - plain),
             "plain_program");
    const char *argv[24] = {boardtrace, "run", "--ready-timeout", "1"};
    int n = 4;
    board_args(&board, argv + n);
    n += 6;
    const char *rest[] = {"--capture", capture, "-o", out, plain, NULL};
    for (int i = 0; rest[i]; i++)
        argv[n++] = rest[i];
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    assert_status(&r, 9);
    const char *warn = strstr(r.err, "holds no tracing (no boardtrace note, no Tracy client)");
    const char *upload = strstr(r.err, "uploads verified");
    assert_non_null(warn);
    assert_non_null(upload);
    assert_true(warn < upload);
    assert_said(&r, "ran but did not open its tracing port");
    assert_said(&r, "tracing is off in that binary");
    assert_int_equal(file_size(out), -1);
    result_free(&r);
}

/* A program that ends before it opens its port is named with its status at
 * once, not after the ready timeout as if it were slow to start. */
static void run_names_a_program_that_exits_before_tracing(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/early-exit.tracy", work);
    time_t start = time(NULL);
    /* A ready timeout far longer than the run may take, even on a busy
     * machine: ending well before it shows the exit was seen at once. */
    struct result r = run_program(out, "BT_TEST_FAIL_AT_START=3", "--ready-timeout=900");
    assert_status(&r, 9);
    assert_non_null(strstr(r.err, "fake-program: cannot start\n"));
    /* Its last lines on stderr come with the error, whatever scrolled by. */
    assert_non_null(strstr(r.err, "exited with status 3 before it opened its tracing port"));
    assert_non_null(strstr(r.err, "its last lines on stderr:\n  | fake-program: a line on stderr\n"
                                  "  | fake-program: cannot start\n"));
    assert_null(strstr(r.err, "within"));
    assert_true(time(NULL) - start < 450);
    assert_int_equal(file_size(out), -1);
    result_free(&r);
}

/* Without --capture the board's architecture picks one; the first place
 * searched is $BOARDTRACE_CAPTURE_DIR/<arch>/boardtrace-capture. */
static void run_finds_the_default_capture_for_the_boards_architecture(void **state)
{
    (void)state;
    char dir[600], arch_dir[640], path[700], out[600];
    snprintf(dir, sizeof dir, "%s/captures", work);
    snprintf(arch_dir, sizeof arch_dir, "%s/riscv64", dir);
    snprintf(path, sizeof path, "%s/boardtrace-capture", arch_dir);
    snprintf(out, sizeof out, "%s/default.tracy", work);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(mkdir(arch_dir, 0700), 0);
    assert_int_equal(symlink(capture, path), 0);
    setenv("BOARDTRACE_CAPTURE_DIR", dir, 1);
    const char *argv[16] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    argv[8] = "-o";
    argv[9] = out;
    argv[10] = program;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    unsetenv("BOARDTRACE_CAPTURE_DIR");
    assert_status(&r, 0);
    assert_int_equal(file_size(out), 9902);
    char *json = read_file(strcat(out, ".json"), NULL);
    assert_non_null(strstr(json, path));
    free(json);
    result_free(&r);
}

/* -s N: the capture stops after N seconds and so does the program, at once
 * and as asked: the run succeeds with the trace, and its summary says the
 * program was stopped. */
static void seconds_stop_the_program_and_the_run_succeeds(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/seconds.tracy", work);
    const char *argv[24] = {boardtrace, "run"};
    int n = 2;
    board_args(&board, argv + n);
    n += 6;
    const char *rest[] = {"--capture",          capture, "-o", out, "-s", "2", "--env",
                          "BT_TEST_LINGER=900", program, NULL};
    for (int i = 0; rest[i]; i++)
        argv[n++] = rest[i];
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    assert_status(&r, 0);
    /* Stopped when the capture ended, not after the 10 s grace a program
     * gets that outlives a capture which ended by itself. */
    assert_non_null(strstr(r.err, "the capture's time is up (-s)"));
    assert_null(strstr(r.err, "did not exit after tracing ended"));
    assert_non_null(strstr(r.err, "program   stopped as asked"));
    assert_null(strstr(r.out, "fake-program: exiting"));
    assert_int_equal(file_size(out), 9902);
    result_free(&r);
}

/* Ctrl-C once: the board stops the program, and what was captured is still
 * pulled and verified. */
static void ctrl_c_stops_the_program_and_keeps_the_trace(void **state)
{
    (void)state;
    char out[600], log[600];
    snprintf(out, sizeof out, "%s/interrupted.tracy", work);
    snprintf(log, sizeof log, "%s/interrupted.out", work);
    const char *argv[] = {boardtrace,
                          "run",
                          "--host",
                          board.target,
                          "-i",
                          board.key,
                          "--known-hosts",
                          board.known_hosts,
                          "--capture",
                          capture,
                          "-o",
                          out,
                          "--env",
                          "BT_TEST_LINGER=900",
                          program,
                          NULL};
    pid_t pid = spawn_logged((char *const *)argv, log);
    time_t start = time(NULL);
    assert_true(wait_for_text(log, "fake-program: sent 1000 events", 60, 100000));
    kill(pid, SIGINT);
    int st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0 && time(NULL) - start < 600)
        usleep(100000);
    if (!WIFEXITED(st))
        kill(pid, SIGKILL);
    char *text = read_file(log, NULL);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 0)
        fprintf(stderr, "%s\n", text);
    assert_int_equal(WEXITSTATUS(st), 0);
    /* Well before the program's own end (it lingers 900 s). */
    assert_true(time(NULL) - start < 450);
    assert_non_null(strstr(text, "stopping the program on the board"));
    assert_null(strstr(text, "fake-program: exiting"));
    assert_int_equal(file_size(out), 9902);
    free(text);
}

/* The capture's memory is bounded on the board unless asked otherwise: it
 * gets -m 50 (half the board's memory) by default, --capture-memory N
 * changes it and 0 lifts it. */
static void the_capture_gets_a_memory_limit_by_default(void **state)
{
    (void)state;
    const char *values[] = {NULL, "20", "0"};
    const char *shown[] = {"[capture] Memory limit: 50%", "[capture] Memory limit: 20%",
                           "[capture] Memory limit: none"};
    for (int i = 0; i < 3; i++) {
        char out[600];
        snprintf(out, sizeof out, "%s/memory%d.tracy", work, i);
        const char *argv[24] = {boardtrace, "run"};
        board_args(&board, argv + 2);
        int n = 8;
        if (values[i]) {
            argv[n++] = "--capture-memory";
            argv[n++] = values[i];
        }
        const char *rest[] = {"--capture", capture, "-o", out, program, NULL};
        for (int k = 0; rest[k]; k++)
            argv[n++] = rest[k];
        argv[n] = NULL;
        struct result r;
        assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
        assert_status(&r, 0);
        if (!strstr(r.err, shown[i]))
            result_print(&r);
        assert_non_null(strstr(r.err, shown[i]));
        result_free(&r);
    }
}

/* --file-version reaches the capture, for the GUI that opens the file;
 * anything but a release number is refused before connecting. */
static void the_file_version_goes_to_the_capture(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/version.tracy", work);
    const char *argv[24] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    int n = 8;
    const char *rest[] = {"--file-version", "0.11.2", "--capture", capture, "-o", out,
                          program,          NULL};
    for (int k = 0; rest[k]; k++)
        argv[n++] = rest[k];
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    assert_status(&r, 0);
    if (!strstr(r.err, "[capture] File version: 0.11.2\n"))
        result_print(&r);
    assert_non_null(strstr(r.err, "[capture] File version: 0.11.2\n"));
    result_free(&r);
    argv[9] = "0.11.2;reboot";
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    assert_status(&r, 2);
    assert_non_null(strstr(r.err, "--file-version 0.11.2;reboot: expected a Tracy release"));
    result_free(&r);
}

/* --upload puts a file beside the program, verified like it, where the
 * program finds it by its name; --cwd runs the program in another folder
 * (here one of the emulated board's, which shares the host's files). */
static void uploads_go_beside_the_program_and_cwd_is_where_it_runs(void **state)
{
    (void)state;
    char data[600], elsewhere[600], out[600];
    snprintf(data, sizeof data, "%s/image.jpg", work);
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", work);
    assert_int_equal(write_file(data, "not really a jpeg\n", 18), 0);
    assert_int_equal(mkdir(elsewhere, 0700), 0);
    char there[640];
    snprintf(there, sizeof there, "%s/note.txt", elsewhere);
    assert_int_equal(write_file(there, "found in elsewhere\n", 19), 0);
    for (int i = 0; i < 2; i++) {
        snprintf(out, sizeof out, "%s/upload%d.tracy", work, i);
        const char *argv[32] = {boardtrace, "run"};
        board_args(&board, argv + 2);
        int n = 8;
        const char *rest[] = {"--capture", capture, "-o", out, "--upload", data, NULL};
        for (int k = 0; rest[k]; k++)
            argv[n++] = rest[k];
        if (i == 0) {
            argv[n++] = "--env";
            argv[n++] = "BT_TEST_READ_FILE=image.jpg";
        } else {
            argv[n++] = "--cwd";
            argv[n++] = elsewhere;
            argv[n++] = "--env";
            argv[n++] = "BT_TEST_READ_FILE=note.txt";
        }
        argv[n++] = program;
        argv[n] = NULL;
        struct result r;
        assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
        assert_status(&r, 0);
        assert_non_null(strstr(r.err, "upload image.jpg"));
        const char *said = i == 0 ? "; read image.jpg: not really a jpeg\n"
                                  : "; read note.txt: found in elsewhere\n";
        if (!strstr(r.out, said))
            result_print(&r);
        assert_non_null(strstr(r.out, said));
        if (i == 1) {
            char cwd[700];
            snprintf(cwd, sizeof cwd, "cwd %s;", elsewhere);
            assert_non_null(strstr(r.out, cwd));
        }
        result_free(&r);
    }
    /* A name the run's folder uses itself is refused before connecting. */
    char reserved[600];
    snprintf(reserved, sizeof reserved, "%s/trace.tracy", work);
    assert_int_equal(write_file(reserved, "x", 1), 0);
    snprintf(out, sizeof out, "%s/refused.tracy", work);
    const char *argv[20] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    const char *rest[] = {"--capture", capture, "-o", out, "--upload", reserved, program, NULL};
    for (int k = 0; rest[k]; k++)
        argv[8 + k] = rest[k];
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    assert_status(&r, 3);
    assert_non_null(strstr(r.err, "is one of boardtrace's own files; rename the file"));
    result_free(&r);
}

/* The board's folder goes after a successful run, or stays with --keep. */
static void run_removes_its_folder_unless_kept(void **state)
{
    (void)state;
    char remote[600], out[600];
    snprintf(remote, sizeof remote, "%s/folders", work);
    snprintf(out, sizeof out, "%s/folders.tracy", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    for (int keep = 0; keep < 2; keep++) {
        const char *argv[20] = {boardtrace, "run"};
        board_args(&board, argv + 2);
        int n = 8;
        argv[n++] = "--remote-dir";
        argv[n++] = remote;
        argv[n++] = "--capture";
        argv[n++] = capture;
        argv[n++] = "-f"; /* the second run replaces the first's trace */
        argv[n++] = "-o";
        argv[n++] = out;
        if (keep)
            argv[n++] = "--keep";
        argv[n++] = program;
        struct result r;
        assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
        assert_status(&r, 0);
        assert_int_equal(count_run_dirs(remote), keep);
        result_free(&r);
    }
}

static void run_refuses_an_unreadable_program_before_connecting(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/none.tracy", work);
    const char *argv[] = {boardtrace, "run", "--host", "nobody@127.0.0.1:9", "--capture",
                          capture,    "-o",  out,      "/nonexistent/prog",  NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 30, &r), 0);
    assert_status(&r, 3);
    assert_non_null(strstr(r.err, "/nonexistent/prog"));
    result_free(&r);
}

/* An output that is an input would replace it with the trace: refused
 * before connecting, however it is named. */
/* An existing trace is not replaced unless -f says so: refused before
 * connecting, the file untouched; with -f the run writes it. */
static void run_refuses_an_existing_output_without_force(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/existing.tracy", work);
    assert_int_equal(write_file(out, "keep me", 7), 0);
    const char *argv[] = {boardtrace,  "run",   "--host", "nobody@127.0.0.1:9",
                          "--capture", capture, "-o",     out,
                          program,     NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 30, &r), 0);
    assert_status(&r, 2);
    assert_non_null(strstr(r.err, "exists; add -f to replace it"));
    assert_null(strstr(r.err, "connect"));
    result_free(&r);
    assert_int_equal(file_size(out), 7);
    r = run_program(out, NULL, "-f");
    assert_status(&r, 0);
    assert_int_equal(file_size(out), 9902);
    result_free(&r);
}

static void run_refuses_an_output_that_is_the_program(void **state)
{
    (void)state;
    char copy[600], link[600], dotted[620];
    snprintf(copy, sizeof copy, "%s/prog-copy", work);
    snprintf(link, sizeof link, "%s/prog-link", work);
    snprintf(dotted, sizeof dotted, "%s/./prog-copy", work);
    size_t len = 0;
    char *bytes = read_file(program, &len);
    assert_non_null(bytes);
    assert_int_equal(write_file(copy, bytes, len), 0);
    assert_int_equal(chmod(copy, 0755), 0);
    assert_int_equal(symlink(copy, link), 0);
    const char *outs[] = {copy, link, dotted};
    for (int i = 0; i < 3; i++) {
        const char *argv[] = {boardtrace,  "run",   "--host", "nobody@127.0.0.1:9",
                              "--capture", capture, "-o",     outs[i],
                              copy,        NULL};
        struct result r;
        assert_int_equal(run_command((char *const *)argv, work, 30, &r), 0);
        assert_status(&r, 2);
        assert_non_null(strstr(r.err, "is the program itself"));
        result_free(&r);
        size_t now = 0;
        char *still = read_file(copy, &now);
        assert_int_equal(now, len);
        assert_memory_equal(still, bytes, len);
        free(still);
    }
    free(bytes);
}

/* NAME.part and NAME.json must fit the folder's name limit: a name that
 * cannot is refused at once, not after the whole run. */
static void run_refuses_an_output_name_too_long_for_its_part_file(void **state)
{
    (void)state;
    char out[900];
    int n = snprintf(out, sizeof out, "%s/", work);
    memset(out + n, 'a', 252);
    out[n + 252] = 0;
    const char *argv[] = {boardtrace,  "run",   "--host", "nobody@127.0.0.1:9",
                          "--capture", capture, "-o",     out,
                          program,     NULL};
    time_t start = time(NULL);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 30, &r), 0);
    assert_status(&r, 2);
    assert_non_null(strstr(r.err, "the name is too long"));
    assert_true(time(NULL) - start < 10);
    result_free(&r);
}

/* run CMD line for a board that is never reached (127.0.0.1:9): what is
 * refused is refused before connecting. */
static struct result run_unreached(const char *out, const char *prog, bool force)
{
    const char *argv[16] = {boardtrace,  "run",   "--host", "nobody@127.0.0.1:9",
                            "--capture", capture, "-o",     out};
    int n = 8;
    if (force)
        argv[n++] = "-f";
    argv[n++] = prog;
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 30, &r), 0);
    return r;
}

/* The record OUT.json and the part file OUT.part are the user's files as
 * much as OUT: an existing one is refused without -f, and one that is the
 * program itself is refused even with -f; nothing is touched. */
static void run_refuses_to_replace_an_existing_record_or_part_file(void **state)
{
    (void)state;
    char out[600], record[640], part[640], prog[640];
    snprintf(out, sizeof out, "%s/guarded.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    snprintf(part, sizeof part, "%s.part", out);
    snprintf(prog, sizeof prog, "%s.json", out);

    /* The program named OUT.json. */
    size_t len = 0;
    char *bytes = read_file(program, &len);
    assert_non_null(bytes);
    assert_int_equal(write_file(prog, bytes, len), 0);
    assert_int_equal(chmod(prog, 0755), 0);
    for (int force = 0; force < 2; force++) {
        struct result r = run_unreached(out, prog, force);
        assert_status(&r, 2);
        assert_non_null(strstr(r.err, "is the input"));
        result_free(&r);
        size_t now = 0;
        char *still = read_file(prog, &now);
        assert_int_equal(now, len);
        assert_memory_equal(still, bytes, len);
        free(still);
    }
    free(bytes);
    assert_int_equal(unlink(prog), 0);

    /* An unrelated OUT.part, then an unrelated OUT.json. */
    const char *files[] = {part, record};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(write_file(files[i], "mine", 4), 0);
        struct result r = run_unreached(out, program, false);
        assert_status(&r, 2);
        assert_non_null(strstr(r.err, files[i]));
        assert_non_null(strstr(r.err, "exists; add -f to replace it"));
        result_free(&r);
        char *still = read_file(files[i], NULL);
        assert_string_equal(still, "mine");
        free(still);
        assert_int_equal(unlink(files[i]), 0);
    }
    assert_int_equal(file_size(out), -1);

    /* The record of an earlier run that failed (no OUT) is replaced: the
     * run goes on to connect. */
    const char *failed = "{\n  \"record\": \"boardtrace run\",\n  \"exit_status\": 4\n}\n";
    assert_int_equal(write_file(record, failed, strlen(failed)), 0);
    struct result r = run_unreached(out, program, false);
    assert_status(&r, 4);
    result_free(&r);
}

/* Two runs with one -o: the second is refused while the first holds the
 * output, and the first's trace arrives whole. A claim whose holder died
 * (killed) blocks nothing. */
static void a_second_run_with_the_same_output_is_refused_while_the_first_runs(void **state)
{
    (void)state;
    char out[600], log[600], part[640];
    snprintf(out, sizeof out, "%s/claimed.tracy", work);
    snprintf(part, sizeof part, "%s.part", out);
    snprintf(log, sizeof log, "%s/claimed.out", work);
    const char *argv[] = {boardtrace,
                          "run",
                          "--host",
                          board.target,
                          "-i",
                          board.key,
                          "--known-hosts",
                          board.known_hosts,
                          "--capture",
                          capture,
                          "-o",
                          out,
                          "--env",
                          "BT_TEST_LINGER=900",
                          program,
                          NULL};
    pid_t first = spawn_logged((char *const *)argv, log);
    assert_true(wait_for_text(log, "fake-program: sent 1000 events", 60, 100000));
    struct result r = run_program(out, NULL, "-f");
    kill(first, SIGINT);
    int st = 0;
    time_t start = time(NULL);
    while (waitpid(first, &st, WNOHANG) == 0 && time(NULL) - start < 600)
        usleep(100000);
    if (!WIFEXITED(st))
        kill(first, SIGKILL);
    assert_status(&r, 2);
    assert_non_null(strstr(r.err, "another boardtrace command is writing this trace now"));
    result_free(&r);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(file_size(out), 9902);
    assert_int_equal(file_size(part), -1);

    /* A holder killed with the claim held: the kernel dropped its lock. */
    assert_int_equal(unlink(out), 0);
    char fresh[640];
    snprintf(fresh, sizeof fresh, "%s.json", out);
    assert_int_equal(unlink(fresh), 0);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t holder = fork();
    if (holder == 0) {
        int fd = open(part, O_RDWR | O_CREAT, 0644);
        if (fd >= 0 && flock(fd, LOCK_EX) == 0)
            (void)!write(ready[1], "l", 1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    r = run_unreached(out, program, false);
    assert_status(&r, 4); /* it went on to connect */
    result_free(&r);
    assert_int_equal(file_size(part), 0);
}

/* The capture's closing line is the board's text: the summary's "capture"
 * and "Tracy" fields copied from it show its escapes as \xNN, and the
 * record keeps them as JSON escapes, not as raw control bytes. */
static void the_summary_shows_the_captures_words_escaped(void **state)
{
    (void)state;
    char hostile[600], out[600], record[640];
    snprintf(hostile, sizeof hostile, "%s/hostile-capture", work);
    snprintf(out, sizeof out, "%s/hostile.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    size_t len;
    char *bin = read_file(capture, &len);
    assert_non_null(bin);
    assert_int_equal(write_file(hostile, bin, len), 0);
    free(bin);
    assert_int_equal(chmod(hostile, 0755), 0);
    const char *argv[16] = {boardtrace, "run"};
    board_args(&board, argv + 2);
    const char *rest[] = {"--capture", hostile, "-o", out, program, NULL};
    for (int i = 0; rest[i]; i++)
        argv[8 + i] = rest[i];
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 600, &r), 0);
    assert_status(&r, 0);
    const char *summary = strstr(r.err, "boardtrace run summary");
    assert_non_null(summary);
    bool raw = false;
    for (const unsigned char *p = (const unsigned char *)summary; *p; p++)
        raw |= (*p < 0x20 && *p != '\n') || (*p >= 0x7f && *p <= 0x9f);
    if (raw)
        result_print(&r);
    assert_false(raw);
    assert_non_null(strstr(summary, "  capture   complete\\x1b[2J\\x9b31m in 1.25 s\n"));
    assert_non_null(
        strstr(summary, "  Tracy     protocol 72 (\\x1b]0;owned\\x07\\xc2\\x9b2J), as the"));
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_null(strchr(json, '\x1b'));
    assert_null(strchr(json, '\x9b'));
    free(json);
    result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: %s BOARDTRACE BOARD_SH BOARD_DIR sftp|exec PROGRAM CAPTURE TRACE\n",
                argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    mode = argv[4];
    program = argv[5];
    capture = argv[6];
    recorded = argv[7];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_pulls_the_trace_verified_with_a_record),
        cmocka_unit_test(the_summary_shows_the_captures_words_escaped),
        cmocka_unit_test(run_names_a_failing_program_but_still_pulls_the_trace),
        cmocka_unit_test(run_html_writes_the_report_beside_the_trace),
        cmocka_unit_test(run_html_that_fails_warns_and_keeps_the_trace),
        cmocka_unit_test(run_gives_up_on_a_program_that_never_opens_its_port),
        cmocka_unit_test(run_names_a_program_that_exits_before_tracing),
        cmocka_unit_test(run_says_tracing_is_off_in_a_program_without_it),
        cmocka_unit_test(run_finds_the_default_capture_for_the_boards_architecture),
        cmocka_unit_test(ctrl_c_stops_the_program_and_keeps_the_trace),
        cmocka_unit_test(seconds_stop_the_program_and_the_run_succeeds),
        cmocka_unit_test(run_removes_its_folder_unless_kept),
        cmocka_unit_test(uploads_go_beside_the_program_and_cwd_is_where_it_runs),
        cmocka_unit_test(the_capture_gets_a_memory_limit_by_default),
        cmocka_unit_test(the_file_version_goes_to_the_capture),
        cmocka_unit_test(run_refuses_an_unreadable_program_before_connecting),
        cmocka_unit_test(run_refuses_an_existing_output_without_force),
        cmocka_unit_test(run_refuses_an_output_that_is_the_program),
        cmocka_unit_test(run_refuses_an_output_name_too_long_for_its_part_file),
        cmocka_unit_test(run_refuses_to_replace_an_existing_record_or_part_file),
        cmocka_unit_test(a_second_run_with_the_same_output_is_refused_while_the_first_runs),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
