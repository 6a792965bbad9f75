/* boardtrace against boards that run a real distribution (tools/board/
 * debian.sh): Debian's own glibc, loader, libstdc++ and OpenSSH under qemu
 * user mode. A dynamic program and a C++ program run on the board's own
 * libraries (nothing brought), live goes through the board's own sshd, and a
 * program linked against a newer glibc than the aarch64 (bookworm) board has
 * is refused before anything is uploaded, naming both versions. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "deploy_support.h"

/* argv: boardtrace debian.sh riscv64-dir aarch64-dir demo-dynamic cpp-dynamic
 *       host-capture aarch64-gcc fake-capture.c */
static const char *aarch64_dir, *demo, *cpp, *host_capture, *aarch64_gcc, *fake_capture_src;
static struct board arm;

static struct result run_on(const struct board *b, const char *const *rest)
{
    const char *argv[32] = {boardtrace, "run"};
    int n = 2;
    board_args(b, argv + n);
    n += 6;
    for (; *rest && n < 31; rest++)
        argv[n++] = *rest;
    argv[n] = NULL;
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 300, &r), 0);
    return r;
}

static void check_names_the_boards_own_glibc_and_loader(void **state)
{
    (void)state;
    const char *argv[10] = {boardtrace, "check"};
    board_args(&board, argv + 2);
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "riscv64"));
    assert_non_null(strstr(r.out, "C library              glibc 2.41, loader "
                                  "/lib/ld-linux-riscv64-lp64d.so.1: dynamic programs use the "
                                  "board's own"));
    assert_non_null(strstr(r.out, "transfer               SFTP"));
    result_free(&r);
}

/* The demo linked as CMake links by default, against Debian 12's cross
 * glibc (2.36): it runs on trixie's 2.41 as it is, with no loader or
 * library brought; exact counts as the demo reports them. */
static void a_dynamic_program_runs_on_the_boards_own_glibc(void **state)
{
    (void)state;
    char out[600], record[640];
    snprintf(out, sizeof out, "%s/dynamic.tracy", work);
    snprintf(record, sizeof record, "%s.json", out);
    const char *rest[] = {"-o", out, demo, NULL};
    struct result r = run_on(&board, rest);
    assert_status(&r, 0);
    assert_null(strstr(r.err, "lacks the program's"));
    assert_non_null(strstr(r.out, "total=1550"));
    assert_non_null(strstr(r.out, " (1550 zones, 52 frames)\n"));
    assert_non_null(strstr(r.out, "  program   exit status 0\n"));
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_null(strstr(json, "\"loader\""));
    free(json);
    result_free(&r);
}

/* tracy/Tracy.hpp in a C++ program on the board's own libstdc++: every
 * macro's events arrive (23 zones, as test_runtime_session counts them). */
static void a_cpp_program_runs_on_the_boards_own_libstdcxx(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/cpp.tracy", work);
    const char *rest[] = {"-o", out, cpp, NULL};
    struct result r = run_on(&board, rest);
    assert_status(&r, 0);
    assert_null(strstr(r.err, "lacks the program's"));
    assert_non_null(strstr(r.out, " (24 zones, "));
    assert_non_null(strstr(r.out, "  program   exit status 0\n"));
    result_free(&r);
}

/* live: a capture on the host connects to the port forwarded through the
 * board's own sshd and gets the whole demo. */
static void live_goes_through_the_boards_own_openssh(void **state)
{
    (void)state;
    char out_path[600], err_path[600], trace[600];
    snprintf(out_path, sizeof out_path, "%s/live.out", work);
    snprintf(err_path, sizeof err_path, "%s/live.err", work);
    snprintf(trace, sizeof trace, "%s/live.tracy", work);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        execl(boardtrace, boardtrace, "live", "--host", board.target, "-i", board.key,
              "--known-hosts", board.known_hosts, "-L", "0", demo, (char *)NULL);
        _exit(127);
    }
    const char *line = "connect the Tracy GUI to 127.0.0.1:";
    assert_true(wait_for_text(out_path, line, 180, 100000));
    char *text = read_file(out_path, NULL);
    int port = atoi(strstr(text, line) + strlen(line));
    free(text);
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", port);
    const char *argv[] = {host_capture, "-o", trace, "-a", "127.0.0.1", "-p", port_s, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 180, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "complete, "));
    assert_non_null(strstr(r.out, " 1550 zones, 52 frames"));
    result_free(&r);
    /* The program exits once served; live follows it. */
    int st = 0;
    for (time_t end = time(NULL) + 120; time(NULL) < end;) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        usleep(100000);
    }
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* Runs a shell command line; its exit status. */
static int shell(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int run_dirs_in(const char *rootfs_tmp)
{
    return count_run_dirs(rootfs_tmp);
}

/* A program linked against trixie's glibc (it asks for GLIBC_2.38) on the
 * bookworm board (2.36): refused before the upload, naming both versions;
 * with bringing allowed, the cross sysroot's glibc (2.36) cannot help
 * either, and says so. */
static void a_glibc_older_than_the_programs_is_refused_before_the_upload(void **state)
{
    (void)state;
    char cmd[4096], newer[1024] = "", prog[600], cap[600], tmp[1100];
    snprintf(cmd, sizeof cmd, "sh '%s' --dir '%s' --arch aarch64 newer-libc", board_sh, arm.dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    if (!fgets(newer, sizeof newer, p))
        newer[0] = '\0';
    pclose(p);
    newer[strcspn(newer, "\n")] = '\0';
    assert_true(newer[0]); /* the message above names the setup that makes it */
    snprintf(prog, sizeof prog, "%s/needs-2.38", work);
    snprintf(cap, sizeof cap, "%s/capture-a64", work);
    static const char source[] = "#include <stdio.h>\n#include <stddef.h>\n"
                                 "size_t strlcpy(char *, const char *, size_t);\n"
                                 "int main(void)\n{\n    char b[8];\n"
                                 "    printf(\"%zu\\n\", strlcpy(b, \"hi\", sizeof b));\n"
                                 "    return 0;\n}\n";
    char src[640];
    snprintf(src, sizeof src, "%s.c", prog);
    assert_int_equal(write_file(src, source, sizeof source - 1), 0);
    /* Linked against trixie's libc.so.6 (and its loader, which that libc
     * was built with) instead of the cross toolchain's. */
    snprintf(cmd, sizeof cmd,
             "'%s' -o '%s' '%s' '%s/libc.so.6' '%s/ld-linux-aarch64.so.1' && "
             "'%s' -static -O2 -o '%s' '%s'",
             aarch64_gcc, prog, src, newer, newer, aarch64_gcc, cap, fake_capture_src);
    assert_int_equal(shell(cmd), 0);
    snprintf(tmp, sizeof tmp, "%s/tmp", arm.rootfs);
    int before = run_dirs_in(tmp);

    const char *bring[] = {"--capture", cap, "-o", "never.tracy", prog, NULL};
    struct result r = run_on(&arm, bring);
    assert_status(&r, 3);
    assert_non_null(strstr(r.err, "needs glibc 2.38 (it asks libc.so.6 for GLIBC_2.38"));
    assert_non_null(strstr(r.err, "has glibc 2.36, and no glibc 2.38 can be brought"));
    assert_non_null(strstr(r.err, "nothing was uploaded"));
    assert_null(strstr(r.err, "upload "));
    result_free(&r);

    const char *no_bring[] = {"--no-bring-libs", "--capture", cap, "-o", "never.tracy", prog, NULL};
    r = run_on(&arm, no_bring);
    assert_status(&r, 7);
    assert_non_null(strstr(r.err, "needs glibc 2.38"));
    assert_non_null(strstr(r.err, "has glibc 2.36; nothing was uploaded"));
    result_free(&r);
    assert_int_equal(run_dirs_in(tmp), before);
}

int main(int argc, char **argv)
{
    if (argc != 10) {
        fprintf(stderr,
                "usage: %s BOARDTRACE DEBIAN_SH RISCV64_DIR AARCH64_DIR DEMO_DYNAMIC CPP_DYNAMIC "
                "HOST_CAPTURE AARCH64_GCC FAKE_CAPTURE_C\n",
                argv[0]);
        return 2;
    }
    boardtrace = argv[1];
    board_sh = argv[2];
    board_dir = argv[3];
    aarch64_dir = argv[4];
    demo = argv[5];
    cpp = argv[6];
    host_capture = argv[7];
    aarch64_gcc = argv[8];
    fake_capture_src = argv[9];
    if (board_load(board_sh, aarch64_dir, &arm) != 0) {
        fprintf(stderr, "the aarch64 Debian board in %s is not running\n", aarch64_dir);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_names_the_boards_own_glibc_and_loader),
        cmocka_unit_test(a_dynamic_program_runs_on_the_boards_own_glibc),
        cmocka_unit_test(a_cpp_program_runs_on_the_boards_own_libstdcxx),
        cmocka_unit_test(live_goes_through_the_boards_own_openssh),
        cmocka_unit_test(a_glibc_older_than_the_programs_is_refused_before_the_upload),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
