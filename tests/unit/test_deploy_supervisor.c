/* The board-side supervisor script, run by a real POSIX shell (/bin/sh) in a
 * temporary folder: a corrupt upload is reported and nothing is started; the
 * run's reports are kept in its folder's log whether or not the host still
 * listens, and a follower picks them up from any byte. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "btd_supervisor.h"

/* Runs SCRIPT with INPUT on stdin; returns what it wrote to stderr. */
static char *run_sh(const char *script, const char *input)
{
    int in[2], err[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(err), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(err[1], 2);
        close(in[1]);
        close(err[0]);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(err[1]);
    assert_int_equal(write(in[1], input, strlen(input)), (ssize_t)strlen(input));
    close(in[1]);
    struct btd_buf out = {0};
    char buf[512];
    ssize_t n;
    while ((n = read(err[0], buf, sizeof buf)) > 0)
        btd_buf_append(&out, buf, (size_t)n);
    close(err[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return out.data ? out.data : btd_xstrdup("");
}

static void make_folder(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/bt-supervisor.XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/prog", dir);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    assert_int_equal(write(fd, "abc", 3), 3);
    close(fd);
}

static char *folder_file(const char *dir, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct btd_buf b = {0};
    char buf[512];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        btd_buf_append(&b, buf, (size_t)n);
    close(fd);
    return b.data ? b.data : btd_xstrdup("");
}

static void remove_folder(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void a_corrupt_upload_is_reported_and_nothing_starts(void **state)
{
    (void)state;
    char dir[64];
    make_folder(dir, sizeof dir);
    struct btd_supervisor sup = {
        .dir = dir,
        .token = "@bt-test",
        .program = "prog",
        .program_sha = "0000000000000000000000000000000000000000000000000000000000000000",
        .port = 45678,
        .ready_timeout = 1,
    };
    struct btd_buf script = {0};
    btd_supervisor_script(&script, &sup);
    char *err = run_sh(btd_buf_str(&script), "");
    /* sha256("abc") */
    const char *corrupt = "@bt-test corrupt prog "
                          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n";
    assert_non_null(strstr(err, corrupt));
    assert_non_null(strstr(err, "@bt-test finished\n"));
    assert_null(strstr(err, "program-started"));
    /* The folder stays for the host, with the run's end marked and its
     * reports logged as the channel got them. */
    char *log = folder_file(dir, "err.log");
    assert_non_null(log);
    /* The channel got the log, then the question for the verdict; EOF for
     * an answer keeps the folder. */
    struct btd_buf want = {0};
    btd_buf_printf(&want, "%s@bt-test await\n", log);
    assert_string_equal(err, btd_buf_str(&want));
    btd_buf_free(&want);
    char *marker = folder_file(dir, "finished");
    assert_non_null(marker);
    char *name = folder_file(dir, "program.name");
    assert_string_equal(name, "prog\n");
    free(log);
    free(marker);
    free(name);
    free(err);
    btd_buf_free(&script);

    /* The same, answered "clean": the folder goes. */
    btd_supervisor_script(&script, &sup);
    err = run_sh(btd_buf_str(&script), "clean\n");
    assert_non_null(strstr(err, "@bt-test cleaned\n"));
    struct stat st;
    assert_int_equal(stat(dir, &st), -1);
    free(err);
    btd_buf_free(&script);
}

/* The host went away before the run began: its channel takes nothing (the
 * reading end is closed), yet the run goes on and err.log holds every
 * report; a follower started later from any byte streams the rest. */
static void a_lost_host_misses_nothing_that_the_logs_keep(void **state)
{
    (void)state;
    char dir[64];
    make_folder(dir, sizeof dir);
    struct btd_supervisor sup = {
        .dir = dir,
        .token = "@bt-test",
        .program = "prog",
        .program_sha = "bad",
        .port = 45678,
        .ready_timeout = 1,
    };
    struct btd_buf script = {0};
    btd_supervisor_script(&script, &sup);
    int err[2];
    assert_int_equal(pipe(err), 0);
    close(err[0]);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(err[1], 2);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        signal(SIGPIPE, SIG_DFL);
        execl("/bin/sh", "sh", "-c", btd_buf_str(&script), (char *)NULL);
        _exit(127);
    }
    close(err[1]);
    int st;
    waitpid(pid, &st, 0);
    char *log = folder_file(dir, "err.log");
    assert_non_null(log);
    assert_non_null(strstr(log, "@bt-test corrupt prog "));
    assert_non_null(strstr(log, "@bt-test finished\n"));
    char *marker = folder_file(dir, "finished");
    assert_non_null(marker);

    /* Followed from the 10th byte: exactly the rest, and it ends. */
    struct btd_buf follow = {0};
    btd_follower_script(&follow, dir, 0, 9);
    char *rest = run_sh(btd_buf_str(&follow), "");
    assert_string_equal(rest, log + 9);
    free(rest);
    free(log);
    free(marker);
    btd_buf_free(&follow);
    btd_buf_free(&script);
    remove_folder(dir);
}

static void arguments_and_values_are_quoted_in_the_script(void **state)
{
    (void)state;
    char *const args[] = {"a b", "$(x)", "it's"};
    const char *const env[] = {"NAME=v;w"};
    struct btd_supervisor sup = {
        .dir = "/tmp/d'x",
        .token = "@bt-t",
        .program = "prog",
        .program_sha = "00",
        .args = args,
        .arg_count = 3,
        .env = env,
        .env_count = 1,
        .port = 8086,
        .ready_timeout = 1,
    };
    struct btd_buf script = {0};
    btd_supervisor_script(&script, &sup);
    const char *t = btd_buf_str(&script);
    assert_non_null(strstr(t, "D='/tmp/d'\\''x'\n"));
    assert_non_null(strstr(t, " NAME='v;w' ./'prog' 'a b' '$(x)' 'it'\\''s' < /dev/null 3>&- &\n"));
    assert_non_null(
        strstr(t, "TRACY_NO_EXIT=1 TRACY_ONLY_LOCALHOST=1 TRACY_NO_BROADCAST=1 TRACY_PORT=8086"));
    btd_buf_free(&script);
}

/* run --python: -p and -l go to python3 -m boardtrace before the script,
 * or before -m and the module (no script then); the program's arguments
 * after. */
static void python_options_come_before_the_script_or_module(void **state)
{
    (void)state;
    char *const args[] = {"-l", "a b"};
    struct btd_supervisor sup = {
        .dir = "/tmp/d",
        .token = "@bt-t",
        .program = "_boardtrace.so",
        .program_sha = "00",
        .args = args,
        .arg_count = 2,
        .port = 8086,
        .ready_timeout = 1,
        .python = "python3",
        .python_script = "app.py",
        .python_partial = true,
        .python_lines = true,
    };
    struct btd_buf script = {0};
    btd_supervisor_script(&script, &sup);
    assert_non_null(
        strstr(btd_buf_str(&script),
               " 'python3' -m boardtrace -p -l \"$D\"/'app.py' '-l' 'a b' < /dev/null"));
    assert_non_null(strstr(btd_buf_str(&script),
                           "mkdir -p bt-python/boardtrace bt-python/boardtrace/_boot "
                           "bt-python/tracy bt-python/tracy_client && "));
    btd_buf_free(&script);
    sup.python_script = NULL;
    sup.python_partial = false;
    sup.python_module = "pytest";
    btd_supervisor_script(&script, &sup);
    assert_non_null(strstr(btd_buf_str(&script),
                           " 'python3' -m boardtrace -l -m 'pytest' '-l' 'a b' < /dev/null"));
    btd_buf_free(&script);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_corrupt_upload_is_reported_and_nothing_starts),
        cmocka_unit_test(a_lost_host_misses_nothing_that_the_logs_keep),
        cmocka_unit_test(arguments_and_values_are_quoted_in_the_script),
        cmocka_unit_test(python_options_come_before_the_script_or_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
