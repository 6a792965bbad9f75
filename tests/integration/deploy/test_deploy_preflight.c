/* What boardtrace refuses or reports before anything runs on the emulated
 * board: host keys (unknown, changed), a program for the wrong architecture,
 * unwritable and full remote folders; that arguments arrive literally; and
 * the check report, also through an ~/.ssh/config style alias. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "deploy_support.h"

/* argv: boardtrace board.sh board-dir fake_program fake_capture */
static const char *program, *capture;

/* boardtrace CMD with the board's options, then the NULL-terminated rest. */
static struct result boardtrace_with(const char *cmd, const char *known_hosts, const char **rest)
{
    const char *argv[32] = {boardtrace, cmd};
    int n = 2;
    board_args(&board, argv + n);
    if (known_hosts)
        argv[n + 5] = known_hosts;
    n += 6;
    for (; *rest && n < 31; rest++)
        argv[n++] = *rest;
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 180, &r), 0);
    return r;
}

static void an_unknown_host_key_is_refused_with_its_fingerprint(void **state)
{
    (void)state;
    char kh[600];
    snprintf(kh, sizeof kh, "%s/empty_known_hosts", work);
    assert_int_equal(write_file(kh, "", 0), 0);
    const char *rest[] = {NULL};
    struct result r = boardtrace_with("check", kh, rest);
    assert_status(&r, 5);
    assert_non_null(strstr(r.err, "is unknown"));
    assert_non_null(strstr(r.err, "SHA256:"));
    assert_non_null(strstr(r.err, "--accept-new-host-key"));
    assert_int_equal(file_size(kh), 0);
    result_free(&r);
}

static void accept_new_host_key_records_an_unknown_key(void **state)
{
    (void)state;
    char kh[600];
    snprintf(kh, sizeof kh, "%s/new_known_hosts", work);
    const char *rest[] = {"--accept-new-host-key", NULL};
    struct result r = boardtrace_with("check", kh, rest);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, "accepted new host key"));
    char *text = read_file(kh, NULL);
    assert_non_null(text);
    char entry[64];
    snprintf(entry, sizeof entry, "[127.0.0.1]:%d ssh-ed25519 ", board.port);
    assert_non_null(strstr(text, entry));
    free(text);
    result_free(&r);

    /* Now known: accepted without the option. */
    const char *none[] = {NULL};
    r = boardtrace_with("check", kh, none);
    assert_status(&r, 0);
    result_free(&r);
}

/* Writes into KH a known_hosts line for the board holding a key of the
 * board's type that is not the board's (made under NAME in work). */
static void write_impostor_known_hosts(const char *name, const char *kh, char *line, size_t linelen)
{
    char key[600];
    snprintf(key, sizeof key, "%s/%s", work, name);
    char *argv[] = {"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key, NULL};
    struct result g;
    assert_int_equal(run_command(argv, work, 30, &g), 0);
    assert_status(&g, 0);
    result_free(&g);
    char pub[640];
    snprintf(pub, sizeof pub, "%s.pub", key);
    char *text = read_file(pub, NULL);
    assert_non_null(text);
    char *space = strchr(strchr(text, ' ') + 1, ' ');
    *space = '\0';
    snprintf(line, linelen, "[127.0.0.1]:%d %s\n", board.port, text);
    free(text);
    assert_int_equal(write_file(kh, line, strlen(line)), 0);
}

static void a_changed_host_key_is_refused_even_with_accept_new(void **state)
{
    (void)state;
    char kh[600], line[1200];
    snprintf(kh, sizeof kh, "%s/changed_known_hosts", work);
    write_impostor_known_hosts("impostor", kh, line, sizeof line);

    const char *rest[] = {"--accept-new-host-key", "--capture", capture, program, NULL};
    struct result r = boardtrace_with("run", kh, rest);
    assert_status(&r, 5);
    assert_non_null(strstr(r.err, "CHANGED"));
    assert_non_null(strstr(r.err, "SHA256:"));
    char hint[64];
    snprintf(hint, sizeof hint, "-R '[127.0.0.1]:%d'", board.port);
    assert_non_null(strstr(r.err, hint));
    char *after = read_file(kh, NULL);
    assert_string_equal(after, line);
    free(after);
    result_free(&r);
}

/* `StrictHostKeyChecking no` in the user's SSH config makes libssh call any
 * key known; boardtrace checks known_hosts itself: a changed key is refused
 * by check and by run (nothing uploaded), an unknown one without
 * --accept-new-host-key. */
static void strict_host_key_checking_no_in_the_config_does_not_turn_the_check_off(void **state)
{
    (void)state;
    char cfg[600], kh[600], empty[600], line[1200], remote[600];
    snprintf(cfg, sizeof cfg, "%s/lax_ssh_config", work);
    snprintf(kh, sizeof kh, "%s/lax_changed_known_hosts", work);
    snprintf(empty, sizeof empty, "%s/lax_empty_known_hosts", work);
    snprintf(remote, sizeof remote, "%s/remote-lax", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    const char *lax = "Host *\n  StrictHostKeyChecking no\n";
    assert_int_equal(write_file(cfg, lax, strlen(lax)), 0);
    write_impostor_known_hosts("lax-impostor", kh, line, sizeof line);
    assert_int_equal(write_file(empty, "", 0), 0);

    const char *check[] = {"-F", cfg, NULL};
    struct result r = boardtrace_with("check", kh, check);
    assert_status(&r, 5);
    assert_non_null(strstr(r.err, "CHANGED"));
    assert_null(strstr(r.out, "matches known_hosts"));
    result_free(&r);

    const char *run[] = {"-F", cfg, "--remote-dir", remote, "--capture", capture, program, NULL};
    r = boardtrace_with("run", kh, run);
    assert_status(&r, 5);
    assert_non_null(strstr(r.err, "CHANGED"));
    assert_int_equal(count_run_dirs(remote), 0);
    char *after = read_file(kh, NULL);
    assert_string_equal(after, line);
    free(after);
    result_free(&r);

    r = boardtrace_with("check", empty, check);
    assert_status(&r, 5);
    assert_non_null(strstr(r.err, "is unknown"));
    assert_int_equal(file_size(empty), 0);
    result_free(&r);
}

static void a_key_the_board_does_not_accept_is_refused(void **state)
{
    (void)state;
    char key[600];
    snprintf(key, sizeof key, "%s/stranger", work);
    char *argv[] = {"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key, NULL};
    struct result g;
    assert_int_equal(run_command(argv, work, 30, &g), 0);
    result_free(&g);
    /* Without an agent, only this key and the default files can be tried. */
    const char *bt[] = {boardtrace, "check",         "--host",          board.target, "-i",
                        key,        "--known-hosts", board.known_hosts, NULL};
    unsetenv("SSH_AUTH_SOCK");
    struct result r;
    assert_int_equal(run_command((char *const *)bt, work, 60, &r), 0);
    assert_status(&r, 6);
    assert_non_null(strstr(r.err, "authentication"));
    assert_non_null(strstr(r.err, key));
    assert_non_null(strstr(r.err, "never takes passwords"));
    result_free(&r);
}

static void a_key_held_by_ssh_agent_is_used(void **state)
{
    (void)state;
    char sock[600];
    snprintf(sock, sizeof sock, "%s/agent.sock", work);
    pid_t agent = fork();
    if (agent == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl("/usr/bin/ssh-agent", "ssh-agent", "-D", "-a", sock, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && access(sock, F_OK) != 0; i++)
        usleep(50000);
    setenv("SSH_AUTH_SOCK", sock, 1);
    char *add[] = {"/usr/bin/ssh-add", board.key, NULL};
    struct result r;
    assert_int_equal(run_command(add, work, 30, &r), 0);
    assert_status(&r, 0);
    result_free(&r);
    /* No -i: only the agent (and default files the board does not know). */
    const char *bt[] = {boardtrace,      "check",           "--host", board.target,
                        "--known-hosts", board.known_hosts, NULL};
    assert_int_equal(run_command((char *const *)bt, work, 60, &r), 0);
    unsetenv("SSH_AUTH_SOCK");
    kill(agent, SIGTERM);
    waitpid(agent, NULL, 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "authentication         ok (public key)"));
    result_free(&r);
}

static void an_x86_64_program_is_refused_before_upload_naming_both(void **state)
{
    (void)state;
    char remote[600];
    snprintf(remote, sizeof remote, "%s/remote-arch", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    /* This test binary is an x86-64 (host) ELF. */
    char self[600];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    const char *rest[] = {"--remote-dir", remote, "--capture", capture, self, NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    assert_status(&r, 7);
    assert_non_null(strstr(r.err, "riscv64"));
    assert_non_null(strstr(r.err, "x86_64"));
    assert_non_null(strstr(r.err, "nothing was uploaded"));
    assert_int_equal(count_run_dirs(remote), 0);
    result_free(&r);
}

static void arguments_and_environment_arrive_literally(void **state)
{
    (void)state;
    static const char *const nasty[] = {
        "two words",
        "it's \"quoted\"",
        "$(touch /tmp/bt-pwned)",
        "a;b && c | d",
        "line one\nline two",
        "`id` $HOME \\ *",
        "",
    };
    char out[600];
    snprintf(out, sizeof out, "%s/args.tracy", work);
    const char *rest[20] = {"--capture", capture, "-o",
                            out,         "--env", "BT_TEST_VALUE=$(id); 'x' \"y\"\nz",
                            program,     "--"};
    int k = 8;
    for (size_t i = 0; i < sizeof nasty / sizeof *nasty; i++)
        rest[k++] = nasty[i];
    rest[k] = NULL;
    unlink("/tmp/bt-pwned");
    struct result r = boardtrace_with("run", NULL, rest);
    assert_status(&r, 0);
    char expect[256];
    snprintf(expect, sizeof expect, "fake-program argc %zu\n", sizeof nasty / sizeof *nasty);
    assert_non_null(strstr(r.out, expect));
    for (size_t i = 0; i < sizeof nasty / sizeof *nasty; i++) {
        int m = snprintf(expect, sizeof expect, "arg%zu ", i + 1);
        for (const unsigned char *p = (const unsigned char *)nasty[i]; *p; p++)
            m += snprintf(expect + m, sizeof expect - (size_t)m, "%02x", *p);
        snprintf(expect + m, sizeof expect - (size_t)m, "\n");
        assert_non_null(strstr(r.out, expect));
    }
    const char *env = "BT_TEST_VALUE=$(id); 'x' \"y\"\nz";
    int m = snprintf(expect, sizeof expect, "env ");
    for (const unsigned char *p = (const unsigned char *)env; *p; p++)
        m += snprintf(expect + m, sizeof expect - (size_t)m, "%02x", *p);
    assert_non_null(strstr(r.out, expect));
    assert_int_equal(access("/tmp/bt-pwned", F_OK), -1);
    result_free(&r);
}

/* A read-only filesystem when we may mount one (root, as in CI), else a
 * folder without write permission. */
static void an_unwritable_remote_folder_gives_a_clear_error(void **state)
{
    (void)state;
    char dir[600], target[640];
    snprintf(dir, sizeof dir, "%s/readonly", work);
    assert_int_equal(mkdir(dir, 0700), 0);
    bool mounted = mount("tmpfs", dir, "tmpfs", MS_RDONLY, "size=1m") == 0;
    if (!mounted)
        assert_int_equal(chmod(dir, 0500), 0);
    snprintf(target, sizeof target, "%s", dir);
    const char *rest[] = {"--remote-dir", target, "--capture", capture, program, NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    if (mounted)
        umount(dir);
    assert_status(&r, 7);
    assert_non_null(strstr(r.err, target));
    assert_non_null(strstr(r.err, mounted ? "Read-only file system" : "Permission denied"));
    result_free(&r);
}

/* A program cut short (an interrupted copy) has a good header but segments
 * past its end: refused before anything reaches the board. */
static void a_truncated_program_is_refused_before_upload(void **state)
{
    (void)state;
    char remote[600], cut[600];
    snprintf(remote, sizeof remote, "%s/remote-cut", work);
    snprintf(cut, sizeof cut, "%s/cut-program", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    size_t len;
    char *whole = read_file(program, &len);
    assert_non_null(whole);
    assert_int_equal(write_file(cut, whole, len / 2), 0);
    free(whole);
    assert_int_equal(chmod(cut, 0755), 0);
    const char *rest[] = {"--remote-dir", remote, "--capture", capture, cut, NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    assert_status(&r, 3);
    assert_non_null(strstr(r.err, cut));
    assert_non_null(strstr(r.err, "truncated ELF file"));
    assert_int_equal(count_run_dirs(remote), 0);
    result_free(&r);
}

/* A file that is no ELF at all (a script, a text file given by mistake) is
 * named as such, and the last line names the step that failed. */
static void a_program_that_is_not_elf_is_named_with_the_failed_step(void **state)
{
    (void)state;
    char text[600];
    snprintf(text, sizeof text, "%s/not-a-program", work);
    assert_int_equal(write_file(text, "#!/bin/sh\necho hi\n", 18), 0);
    const char *rest[] = {"--capture", capture, text, NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    assert_status(&r, 3);
    char want[700];
    snprintf(want, sizeof want, "program %s is not an ELF executable (", text);
    assert_non_null(strstr(r.err, want));
    assert_non_null(strstr(r.err, "failed at step: local files (exit status 3)\n"));
    result_free(&r);
}

/* A port where something other than SSH answers (here a web server's
 * reply, with a terminal escape in it) is named as such, not as a reset. */
static void a_server_that_is_not_ssh_is_named(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    pid_t server = fork();
    assert_true(server >= 0);
    if (server == 0) {
        static const char reply[] = "HTTP/1.1 400 Bad\x1b[31mRequest\r\n\r\n";
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c >= 0) {
                (void)!write(c, reply, sizeof reply - 1);
                close(c);
            }
        }
    }
    close(fd);
    char target[64];
    snprintf(target, sizeof target, "root@127.0.0.1:%d", ntohs(a.sin_port));
    const char *argv[] = {boardtrace, "check", "--host", target, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 60, &r), 0);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    assert_status(&r, 4);
    char want[200];
    snprintf(want, sizeof want,
             "127.0.0.1:%d answered but is not an SSH server (it sent \"HTTP/1.1 400 "
             "Bad\\x1b[31mRequest\")",
             ntohs(a.sin_port));
    assert_non_null(strstr(r.err, want));
    result_free(&r);
}

/* --remote-dir names a folder that must be there: a missing one is a
 * preflight error, and boardtrace creates nothing outside its own folder. */
static void a_missing_remote_folder_is_refused_and_not_created(void **state)
{
    (void)state;
    char missing[640];
    snprintf(missing, sizeof missing, "%s/no-such/folder", work);
    const char *rest[] = {"--remote-dir", missing, "--capture", capture, program, NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    assert_status(&r, 7);
    assert_non_null(strstr(r.err, "there is no folder"));
    assert_non_null(strstr(r.err, missing));
    struct stat st;
    snprintf(missing, sizeof missing, "%s/no-such", work);
    assert_int_equal(stat(missing, &st), -1);
    result_free(&r);
}

/* What boardtrace prints from the board (here a folder name in the board's
 * error) reaches the terminal with its control characters escaped. */
static void board_text_with_terminal_escapes_is_printed_escaped(void **state)
{
    (void)state;
    char missing[640];
    snprintf(missing, sizeof missing, "%s/esc\x1b]0;owned\x07/folder", work);
    const char *rest[] = {"--remote-dir", missing, "--capture", capture, program, NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    assert_status(&r, 7);
    assert_non_null(strstr(r.err, "esc\\x1b]0;owned\\x07/folder"));
    assert_null(strchr(r.err, '\x1b'));
    assert_null(strchr(r.err, '\x07'));
    result_free(&r);
}

static void a_full_remote_folder_gives_a_clear_error(void **state)
{
    (void)state;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/full", work);
    assert_int_equal(mkdir(dir, 0700), 0);
    if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") != 0)
        skip(); /* needs root (CI runs as root) */
    const char *rest[] = {"--remote-dir", dir, "--capture", capture, program, NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    int left = count_run_dirs(dir);
    umount(dir);
    assert_status(&r, 7);
    assert_non_null(strstr(r.err, "not enough space"));
    assert_non_null(strstr(r.err, "1.0 MiB free"));
    assert_int_equal(left, 0);
    result_free(&r);
}

static void check_reports_the_board(void **state)
{
    (void)state;
    const char *rest[] = {NULL};
    struct result r = boardtrace_with("check", NULL, rest);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "architecture           riscv64"));
    assert_non_null(strstr(r.out, "free disk"));
    assert_non_null(strstr(r.out, "/proc/self/exe resolves"));
    /* A busybox board: no loader of its own (the host's i386 one is no
     * riscv64 board's). */
    assert_non_null(strstr(r.out, "C library              none (no dynamic loader)"));
    assert_non_null(strstr(r.out, "Python                 none (no python3 on PATH)"));
    assert_non_null(strstr(r.out, "ready for boardtrace run"));
    result_free(&r);
}

/* run --python on a board without python3: refused in the preflight,
 * naming what is missing, with nothing uploaded and no folder left. */
static void a_python_script_on_a_board_without_python3_is_refused(void **state)
{
    (void)state;
    char script[600], remote[600];
    snprintf(script, sizeof script, "%s/hello.py", work);
    assert_int_equal(write_file(script, "print('hello')\n", 15), 0);
    snprintf(remote, sizeof remote, "%s/remote-python", work);
    assert_int_equal(mkdir(remote, 0700), 0);
    const char *rest[] = {"--remote-dir", remote,     "--capture", capture, "-o",
                          "never.tracy",  "--python", script,      NULL};
    struct result r = boardtrace_with("run", NULL, rest);
    assert_status(&r, 7);
    assert_said(&r, "has no python3 on its PATH; the script runs on the board's own Python 3");
    assert_said(&r, "install python3 there; nothing was uploaded");
    assert_null(strstr(r.err, "upload "));
    assert_int_equal(count_run_dirs(remote), 0);
    result_free(&r);
}

static void an_ssh_config_alias_supplies_host_port_user_and_key(void **state)
{
    (void)state;
    char cfg[600], text[3000];
    snprintf(cfg, sizeof cfg, "%s/ssh_config", work);
    int n = snprintf(text, sizeof text,
                     "Host emulated-board\n  HostName 127.0.0.1\n  Port %d\n  User %s\n"
                     "  IdentityFile %s\n  UserKnownHostsFile %s\n",
                     board.port, getpwuid(getuid())->pw_name, board.key, board.known_hosts);
    assert_int_equal(write_file(cfg, text, (size_t)n), 0);
    const char *argv[] = {boardtrace, "check", "-F", cfg, "--host", "emulated-board", NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 60, &r), 0);
    assert_status(&r, 0);
    char where[64];
    snprintf(where, sizeof where, "@127.0.0.1:%d", board.port);
    assert_non_null(strstr(r.out, where));
    result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s BOARDTRACE BOARD_SH BOARD_DIR PROGRAM CAPTURE\n", argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    program = argv[4];
    capture = argv[5];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_unknown_host_key_is_refused_with_its_fingerprint),
        cmocka_unit_test(accept_new_host_key_records_an_unknown_key),
        cmocka_unit_test(a_changed_host_key_is_refused_even_with_accept_new),
        cmocka_unit_test(strict_host_key_checking_no_in_the_config_does_not_turn_the_check_off),
        cmocka_unit_test(a_key_the_board_does_not_accept_is_refused),
        cmocka_unit_test(a_key_held_by_ssh_agent_is_used),
        cmocka_unit_test(an_x86_64_program_is_refused_before_upload_naming_both),
        cmocka_unit_test(arguments_and_environment_arrive_literally),
        cmocka_unit_test(an_unwritable_remote_folder_gives_a_clear_error),
        cmocka_unit_test(a_missing_remote_folder_is_refused_and_not_created),
        cmocka_unit_test(board_text_with_terminal_escapes_is_printed_escaped),
        cmocka_unit_test(a_truncated_program_is_refused_before_upload),
        cmocka_unit_test(a_program_that_is_not_elf_is_named_with_the_failed_step),
        cmocka_unit_test(a_server_that_is_not_ssh_is_named),
        cmocka_unit_test(a_full_remote_folder_gives_a_clear_error),
        cmocka_unit_test(check_reports_the_board),
        cmocka_unit_test(a_python_script_on_a_board_without_python3_is_refused),
        cmocka_unit_test(an_ssh_config_alias_supplies_host_port_user_and_key),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
