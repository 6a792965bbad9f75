/* What boardtrace sends to a board's shell arrives literally: quoting checked
 * against a real POSIX shell, environment names, and [USER@]HOST[:PORT]. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "btd_quote.h"
#include "btd_ssh.h"

static void quoting_wraps_in_single_quotes(void **state)
{
    (void)state;
    struct btd_buf b = {0};
    btd_quote_append(&b, "two words");
    assert_string_equal(btd_buf_str(&b), "'two words'");
    btd_buf_clear(&b);
    btd_quote_append(&b, "it's");
    assert_string_equal(btd_buf_str(&b), "'it'\\''s'");
    btd_buf_clear(&b);
    btd_quote_append(&b, "");
    assert_string_equal(btd_buf_str(&b), "''");
    btd_buf_free(&b);
}

/* Runs `/bin/sh -c "printf %s QUOTED"` and returns what the shell printed. */
static char *through_shell(const char *arg)
{
    struct btd_buf cmd = {0};
    btd_buf_puts(&cmd, "printf %s ");
    btd_quote_append(&cmd, arg);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        execl("/bin/sh", "sh", "-c", btd_buf_str(&cmd), (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    struct btd_buf out = {0};
    char buf[256];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        btd_buf_append(&out, buf, (size_t)n);
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    btd_buf_free(&cmd);
    return out.data ? out.data : btd_xstrdup("");
}

static void quoted_arguments_reach_a_real_shell_unchanged(void **state)
{
    (void)state;
    static const char *const nasty[] = {
        "plain",
        "two words",
        "it's",
        "'",
        "''",
        "\"double\"",
        "$(touch /tmp/bt-q)",
        "`id`",
        "a;b",
        "a && b || c",
        "x | y > z < w",
        "line\nbreak",
        "tab\there",
        "$HOME ${PATH}",
        "\\",
        "*",
        "~",
        "#hash",
        "!bang",
        "-n",
    };
    for (size_t i = 0; i < sizeof nasty / sizeof *nasty; i++) {
        char *got = through_shell(nasty[i]);
        assert_string_equal(got, nasty[i]);
        free(got);
    }
    assert_int_equal(access("/tmp/bt-q", F_OK), -1);
}

static void environment_names_are_letters_digits_and_underscores(void **state)
{
    (void)state;
    assert_true(btd_env_name_valid("FOO", 3));
    assert_true(btd_env_name_valid("_x9", 3));
    assert_false(btd_env_name_valid("9X", 2));
    assert_false(btd_env_name_valid("A-B", 3));
    assert_false(btd_env_name_valid("A B", 3));
    assert_false(btd_env_name_valid("", 0));
    assert_false(btd_env_name_valid("$(x)", 4));
}

static void targets_parse_user_host_and_port(void **state)
{
    (void)state;
    struct btd_target t;
    char err[200];
    assert_int_equal(btd_target_parse("root@10.0.0.2:2222", &t, err, sizeof err), 0);
    assert_string_equal(t.user, "root");
    assert_string_equal(t.host, "10.0.0.2");
    assert_int_equal(t.port, 2222);
    assert_int_equal(btd_target_parse("myboard", &t, err, sizeof err), 0);
    assert_string_equal(t.user, "");
    assert_string_equal(t.host, "myboard");
    assert_int_equal(t.port, 0);
    assert_int_equal(btd_target_parse("me@[fe80::1]:22", &t, err, sizeof err), 0);
    assert_string_equal(t.host, "fe80::1");
    assert_int_equal(t.port, 22);
}

static void bad_targets_are_refused_with_a_reason(void **state)
{
    (void)state;
    struct btd_target t;
    char err[200];
    assert_int_equal(btd_target_parse("host:0", &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad port"));
    assert_int_equal(btd_target_parse("host:99999", &t, err, sizeof err), -1);
    assert_int_equal(btd_target_parse("host:22x", &t, err, sizeof err), -1);
    /* PORT is decimal digits only: what strtol would also take is refused. */
    static const char *const ports[] = {"host:+22", "host: 22", "host:0x16", "host:22.5",
                                        "host:-0",  "host:",    "host:2e1",  "host:nan"};
    for (size_t i = 0; i < sizeof ports / sizeof *ports; i++) {
        assert_int_equal(btd_target_parse(ports[i], &t, err, sizeof err), -1);
        assert_non_null(strstr(err, "bad port"));
    }
    assert_int_equal(btd_target_parse("@host", &t, err, sizeof err), -1);
    assert_int_equal(btd_target_parse("user@", &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "no host"));
    assert_int_equal(btd_target_parse("fe80::1", &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "IPv6"));
    assert_int_equal(btd_target_parse("[fe80::1", &t, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quoting_wraps_in_single_quotes),
        cmocka_unit_test(quoted_arguments_reach_a_real_shell_unchanged),
        cmocka_unit_test(environment_names_are_letters_digits_and_underscores),
        cmocka_unit_test(targets_parse_user_host_and_port),
        cmocka_unit_test(bad_targets_are_refused_with_a_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
