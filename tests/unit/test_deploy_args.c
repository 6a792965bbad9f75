/* The boardtrace command line: what each command accepts, where PROGRAM's
 * own arguments begin, and the usage errors (exit status 2) for the rest. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "btd_args.h"
#include "btd_decimal.h"
#include "btd_msg.h"

static int parse(struct btd_options *o, const char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return btd_args_parse(argc, (char **)argv, o);
}

static void run_takes_options_then_program_then_its_arguments(void **state)
{
    (void)state;
    struct btd_options o;
    const char *argv[] = {"boardtrace", "run",    "--host", "root@b:2", "-s", "5",      "--env",
                          "A=1 2",      "--keep", "prog",   "--",       "-x", "--host", NULL};
    assert_int_equal(parse(&o, argv), 0);
    assert_int_equal(o.command, BTD_CMD_RUN);
    assert_string_equal(o.host, "root@b:2");
    assert_int_equal(o.seconds, 5);
    assert_int_equal(o.env_count, 1);
    assert_string_equal(o.env[0], "A=1 2");
    assert_true(o.keep);
    assert_string_equal(o.program, "prog");
    assert_int_equal(o.arg_count, 2);
    assert_string_equal(o.args[0], "-x");
    assert_string_equal(o.args[1], "--host");
    btd_args_free(&o);
}

static void the_host_comes_from_the_environment_when_not_given(void **state)
{
    (void)state;
    struct btd_options o;
    setenv("BOARDTRACE_HOST", "envboard", 1);
    const char *argv[] = {"boardtrace", "check", NULL};
    assert_int_equal(parse(&o, argv), 0);
    assert_string_equal(o.host, "envboard");
    btd_args_free(&o);
    unsetenv("BOARDTRACE_HOST");
    assert_int_equal(parse(&o, argv), BTD_EXIT_USAGE);
    btd_args_free(&o);
}

static void the_file_version_comes_from_the_environment_unless_given(void **state)
{
    (void)state;
    struct btd_options o;
    setenv("BOARDTRACE_FILE_VERSION", "0.11.2", 1);
    const char *plain[] = {"boardtrace", "run", "--host", "b", "prog", NULL};
    assert_int_equal(parse(&o, plain), 0);
    assert_string_equal(o.file_version, "0.11.2");
    btd_args_free(&o);
    const char *given[] = {"boardtrace",     "run",    "--host", "b",
                           "--file-version", "0.10.0", "prog",   NULL};
    assert_int_equal(parse(&o, given), 0);
    assert_string_equal(o.file_version, "0.10.0");
    btd_args_free(&o);
    setenv("BOARDTRACE_FILE_VERSION", "latest", 1);
    assert_int_equal(parse(&o, plain), BTD_EXIT_USAGE);
    btd_args_free(&o);
    unsetenv("BOARDTRACE_FILE_VERSION");
    assert_int_equal(parse(&o, plain), 0);
    assert_null(o.file_version);
    btd_args_free(&o);
}

/* python3 -m boardtrace's -p, -l and -m MODULE come before the script or
 * module; what follows it is the program's, flags included. */
static void run_python_takes_p_l_and_m_before_the_script(void **state)
{
    (void)state;
    struct btd_options o;
    const char *script[] = {"boardtrace", "run",    "--host", "b",  "--python", "-p",
                            "-l",         "app.py", "-l",     "-m", "x",        NULL};
    assert_int_equal(parse(&o, script), 0);
    assert_true(o.python_partial && o.python_lines);
    assert_null(o.python_module);
    assert_string_equal(o.program, "app.py");
    assert_int_equal(o.arg_count, 3);
    assert_string_equal(o.args[0], "-l");
    assert_string_equal(o.args[1], "-m");
    btd_args_free(&o);
    const char *module[] = {"boardtrace", "run",    "--host", "b",  "--python", "-pl",
                            "-m",         "pytest", "-q",     "-p", "x",        NULL};
    assert_int_equal(parse(&o, module), 0);
    assert_true(o.python_partial && o.python_lines);
    assert_string_equal(o.python_module, "pytest");
    assert_int_equal(o.arg_count, 3);
    assert_string_equal(o.args[0], "-q");
    assert_string_equal(o.args[2], "x");
    btd_args_free(&o);
    const char *bare[] = {"boardtrace", "run", "--host", "b", "--python", "-m", "pytest", NULL};
    assert_int_equal(parse(&o, bare), 0);
    assert_string_equal(o.python_module, "pytest");
    assert_int_equal(o.arg_count, 0);
    btd_args_free(&o);
    /* Without --python, or for live: refused. */
    const char *no_python[] = {"boardtrace", "run", "--host", "b", "-l", "prog", NULL};
    assert_int_equal(parse(&o, no_python), BTD_EXIT_USAGE);
    btd_args_free(&o);
    const char *live[] = {"boardtrace", "live", "--host", "b", "-p", "prog", NULL};
    assert_int_equal(parse(&o, live), BTD_EXIT_USAGE);
    btd_args_free(&o);
}

static void usage_errors_exit_with_status_2(void **state)
{
    (void)state;
    struct btd_options o;
    const char *no_program[] = {"boardtrace", "run", "--host", "b", NULL};
    const char *bad_env[] = {"boardtrace", "run", "--host", "b", "--env", "1X=2", "p", NULL};
    const char *no_equals[] = {"boardtrace", "run", "--host", "b", "--env", "X", "p", NULL};
    const char *bad_seconds[] = {"boardtrace", "run", "--host", "b", "-s", "0", "p", NULL};
    const char *wrong_cmd[] = {"boardtrace", "fetch", "--host", "b", "--capture", "c", NULL};
    const char *unknown[] = {"boardtrace", "check", "--host", "b", "--password", "x", NULL};
    const char *no_cmd[] = {"boardtrace", "upload", NULL};
    const char *own_port[] = {"boardtrace", "run",          "--host", "b",
                              "--env",      "TRACY_PORT=1", "p",      NULL};
    const char **all[] = {no_program, bad_env, no_equals, bad_seconds,
                          wrong_cmd,  unknown, no_cmd,    own_port};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        assert_int_equal(parse(&o, all[i]), BTD_EXIT_USAGE);
        btd_args_free(&o);
    }
}

/* --html is run's: the report of the trace run pulls, so a detached run
 * (which pulls none) and the other commands refuse it. */
static void html_is_for_run_without_detach(void **state)
{
    (void)state;
    struct btd_options o;
    const char *run[] = {"boardtrace", "run", "--host", "b", "--html", "p", NULL};
    assert_int_equal(parse(&o, run), 0);
    assert_true(o.html);
    btd_args_free(&o);
    const char *plain[] = {"boardtrace", "run", "--host", "b", "p", NULL};
    assert_int_equal(parse(&o, plain), 0);
    assert_false(o.html);
    btd_args_free(&o);
    const char *detached[] = {"boardtrace", "run", "--host", "b", "--detach", "--html", "p", NULL};
    const char *fetch[] = {"boardtrace", "fetch", "--host", "b", "--html", NULL};
    const char *live[] = {"boardtrace", "live", "--host", "b", "--html", "p", NULL};
    const char **refused[] = {detached, fetch, live};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        assert_int_equal(parse(&o, refused[i]), BTD_EXIT_USAGE);
        btd_args_free(&o);
    }
}

/* Every number of every command is decimal digits only, whole, in range:
 * what strtol or strtod would take besides (a sign, spaces, hexadecimal, a
 * fraction, an exponent, nan, inf, a value past a long) is a usage error,
 * never a number it happens to read as. */
static void numbers_are_whole_decimal_and_in_range_for_every_command(void **state)
{
    (void)state;
    static const struct {
        const char *cmd, *opt, *good;
    } options[] = {
        {"run", "-s", "5"},
        {"run", "--seconds", "5"},
        {"run", "--ready-timeout", "30"},
        {"run", "--stall-timeout", "60"},
        {"run", "--capture-memory", "50"},
        {"run", "--reconnect", "3"},
        {"live", "-L", "8086"},
        {"live", "--local-port", "0"},
        {"live", "--ready-timeout", "30"},
        {"live", "--stall-timeout", "60"},
        {"fetch", "--stall-timeout", "60"},
        {"status", "--stall-timeout", "60"},
        {"check", "--stall-timeout", "60"},
    };
    static const char *const bad[] = {
        "nan",  "inf",  "-inf", " 5", "5 ", "+5",       "-0",
        "0x10", "80.5", "1e1",  "",   "5s", "\xd9\xa5", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        bool program = strcmp(options[i].cmd, "run") == 0 || strcmp(options[i].cmd, "live") == 0;
        const char *argv[] = {"boardtrace",    options[i].cmd,       "--host", "b", options[i].opt,
                              options[i].good, program ? "p" : NULL, NULL};
        struct btd_options o;
        assert_int_equal(parse(&o, argv), 0);
        btd_args_free(&o);
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            argv[5] = bad[k];
            int rc = parse(&o, argv);
            if (rc != BTD_EXIT_USAGE)
                fprintf(stderr, "%s %s '%s' was taken\n", options[i].cmd, options[i].opt, bad[k]);
            assert_int_equal(rc, BTD_EXIT_USAGE);
            btd_args_free(&o);
        }
    }
    long v;
    assert_int_equal(btd_parse_decimal("0080", &v), 0);
    assert_int_equal(v, 80);
}

static void fetch_takes_an_optional_remote_path(void **state)
{
    (void)state;
    struct btd_options o;
    const char *with[] = {"boardtrace", "fetch", "--host", "b", "-o", "t.tracy", "/tmp/x", NULL};
    assert_int_equal(parse(&o, with), 0);
    assert_string_equal(o.remote_path, "/tmp/x");
    assert_string_equal(o.output, "t.tracy");
    btd_args_free(&o);
    const char *without[] = {"boardtrace", "fetch", "--host", "b", NULL};
    assert_int_equal(parse(&o, without), 0);
    assert_null(o.remote_path);
    btd_args_free(&o);
}

static void help_lists_every_option_and_exit_status(void **state)
{
    (void)state;
    struct btd_options o;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    FILE *saved = stdout;
    stdout = mem;
    const char *argv[] = {"boardtrace", "--help", NULL};
    int rc = parse(&o, argv);
    stdout = saved;
    fclose(mem);
    assert_int_equal(rc, 1);
    static const char *const options[] = {
        "--host",
        "--identity",
        "--ssh-config",
        "--known-hosts",
        "--accept-new-host-key",
        "--no-sftp",
        "--verbose",
        "--quiet",
        "--capture",
        "--output",
        "--seconds",
        "--env",
        "--remote-dir",
        "--keep",
        "--ready-timeout",
        "--stall-timeout",
        "--local-port",
        "--html",
        "13 the program exited",
        "130 interrupted",
    };
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        assert_non_null(strstr(text, options[i]));
    free(text);
    btd_args_free(&o);
}

/* Each command's own help: its usage and options, an example, nothing of
 * the others' options. */
static void each_command_has_its_own_help(void **state)
{
    (void)state;
    static const struct {
        const char *argv[4];
        const char *has[5]; /* NULL-ended when fewer */
        const char *lacks;
    } cases[] = {
        {{"boardtrace", "run", "--help", NULL},
         {"Usage: boardtrace run", "--capture-memory", "Example:", "--known-hosts", "--html"},
         "--local-port"},
        {{"boardtrace", "live", "-h", NULL},
         {"Usage: boardtrace live", "--local-port", "Example:", "--host"},
         "--capture-memory"},
        {{"boardtrace", "fetch", "--help", NULL},
         {"Usage: boardtrace fetch", "--recover", "--stop", "Exit status"},
         "--detach"},
        {{"boardtrace", "status", "--help", NULL},
         {"Usage: boardtrace status", "--remote-dir", "Example:", "Exit status"},
         "--output"},
        {{"boardtrace", "help", "check", NULL},
         {"Usage: boardtrace check", "C library", "Example:", "--ssh-config"},
         "--seconds"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        struct btd_options o;
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        FILE *saved = stdout;
        stdout = mem;
        const char *argv[4] = {cases[c].argv[0], cases[c].argv[1], cases[c].argv[2], NULL};
        int rc = parse(&o, argv);
        stdout = saved;
        fclose(mem);
        assert_int_equal(rc, 1);
        for (int i = 0; i < 5 && cases[c].has[i]; i++)
            assert_non_null(strstr(text, cases[c].has[i]));
        assert_null(strstr(text, cases[c].lacks));
        free(text);
        btd_args_free(&o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_takes_options_then_program_then_its_arguments),
        cmocka_unit_test(the_host_comes_from_the_environment_when_not_given),
        cmocka_unit_test(the_file_version_comes_from_the_environment_unless_given),
        cmocka_unit_test(run_python_takes_p_l_and_m_before_the_script),
        cmocka_unit_test(usage_errors_exit_with_status_2),
        cmocka_unit_test(html_is_for_run_without_detach),
        cmocka_unit_test(numbers_are_whole_decimal_and_in_range_for_every_command),
        cmocka_unit_test(fetch_takes_an_optional_remote_path),
        cmocka_unit_test(help_lists_every_option_and_exit_status),
        cmocka_unit_test(each_command_has_its_own_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
