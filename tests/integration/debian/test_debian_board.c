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
 *       host-capture aarch64-gcc fake-capture.c riscv64-python-folder report */
static const char *aarch64_dir, *demo, *cpp, *host_capture, *aarch64_gcc, *fake_capture_src,
    *python_dir, *report;
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
    assert_non_null(strstr(r.out, "Python                 3.13 (/usr/bin/python3.13)"));
    result_free(&r);
    /* bookworm's Python is 3.11. */
    board_args(&arm, argv + 2);
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "Python                 3.11 (/usr/bin/python3.11)"));
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

/* test_python.py's known-counts program: a thread, recursion, a method, a
 * generator, an exception caught two frames up; exits with argv[1]. */
static const char python_program[] = "import sys, threading\n"
                                     "def fib(n):\n"
                                     "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
                                     "class Shape:\n"
                                     "    def area(self, x):\n"
                                     "        return sorted([3, 1, 2])[0] + x\n"
                                     "def gen():\n"
                                     "    for i in range(3):\n"
                                     "        yield i\n"
                                     "def raiser():\n"
                                     "    raise ValueError('caught two frames up')\n"
                                     "def middle():\n"
                                     "    raiser()\n"
                                     "def catcher():\n"
                                     "    try:\n"
                                     "        middle()\n"
                                     "    except ValueError:\n"
                                     "        pass\n"
                                     "def work():\n"
                                     "    fib(5)\n"
                                     "t = threading.Thread(target=work, name='worker-1')\n"
                                     "t.start()\n"
                                     "t.join()\n"
                                     "fib(10)\n"
                                     "s = Shape()\n"
                                     "for i in range(4):\n"
                                     "    s.area(i)\n"
                                     "list(gen())\n"
                                     "catcher()\n"
                                     "print('program output')\n"
                                     "sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)\n";

/* The zone count of function name whose source file ends with file, from
 * boardtrace-report stats --csv (name,src_file,src_line,...,counts,...);
 * -1 when there is no such row. */
static long zone_count(const char *trace, const char *name, const char *file)
{
    const char *argv[] = {report, "stats", "--csv", trace, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    long count = -1;
    for (char *line = strtok(r.out, "\n"); line && count < 0; line = strtok(NULL, "\n")) {
        char *f[6] = {line};
        int n = 1;
        for (char *c = line; *c && n < 6; c++)
            if (*c == ',') {
                *c = '\0';
                f[n++] = c + 1;
            }
        size_t fl = strlen(f[1] ? f[1] : ""), want = strlen(file);
        if (n == 6 && strcmp(f[0], name) == 0 && fl >= want && strcmp(f[1] + fl - want, file) == 0)
            count = strtol(f[5], NULL, 10);
    }
    result_free(&r);
    return count;
}

/* run --python: the script runs on trixie's own python3 (3.13) with the
 * extension this build made against trixie's Python headers, the trace is
 * captured and pulled as for any program: the same exact counts as on the
 * host (test_python), the script's output and exit status kept. */
static void a_python_script_runs_on_the_boards_own_python3(void **state)
{
    (void)state;
    char script[600], out[600];
    snprintf(script, sizeof script, "%s/program.py", work);
    snprintf(out, sizeof out, "%s/python.tracy", work);
    assert_int_equal(write_file(script, python_program, sizeof python_program - 1), 0);
    const char *rest[] = {"-o", out, "--python", script, "--", "0", NULL};
    struct result r = run_on(&board, rest);
    assert_status(&r, 0);
    assert_said(&r, "Python 3.13 on ");
    assert_said(&r, "_boardtrace.cpython-313-riscv64-linux-gnu.so");
    assert_non_null(strstr(r.out, "program output\n"));
    assert_non_null(strstr(r.out, "  program   exit status 0\n"));
    result_free(&r);
    /* The record says what ran the script. */
    char record[640], want[700];
    snprintf(record, sizeof record, "%s.json", out);
    char *json = read_file(record, NULL);
    assert_non_null(json);
    snprintf(want, sizeof want, "\"python\": {\n    \"script\": \"%s\",\n", script);
    assert_non_null(strstr(json, want));
    assert_non_null(strstr(json, "    \"interpreter\": \"/usr/bin/python3.13\",\n"
                                 "    \"version\": \"3.13\",\n"));
    free(json);
    assert_int_equal(zone_count(out, "fib", "/program.py"), 177 + 15);
    assert_int_equal(zone_count(out, "work", "/program.py"), 1);
    assert_int_equal(zone_count(out, "Shape.area", "/program.py"), 4);
    assert_int_equal(zone_count(out, "builtins.sorted", "<built-in>"), 4);
    assert_int_equal(zone_count(out, "gen", "/program.py"), 4);
    assert_int_equal(zone_count(out, "raiser", "/program.py"), 1);
    assert_int_equal(zone_count(out, "middle", "/program.py"), 1);
    assert_int_equal(zone_count(out, "catcher", "/program.py"), 1);
}

/* A script that raises: Python's exit status 1 and its traceback come back,
 * the run fails as a program's failure (13), and the trace is kept with
 * what ran before. */
static void a_python_script_that_raises_fails_with_its_traceback_and_the_trace_kept(void **state)
{
    (void)state;
    char script[600], out[600];
    snprintf(script, sizeof script, "%s/raises.py", work);
    snprintf(out, sizeof out, "%s/raises.tracy", work);
    static const char text[] = "def fib(n):\n"
                               "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
                               "fib(6)\n"
                               "raise ValueError('the script failed')\n";
    assert_int_equal(write_file(script, text, sizeof text - 1), 0);
    const char *rest[] = {"-o", out, "--python", script, NULL};
    struct result r = run_on(&board, rest);
    assert_status(&r, 13);
    assert_said(&r, "Traceback (most recent call last)");
    assert_said(&r, "ValueError: the script failed");
    assert_non_null(strstr(r.out, "  program   exit status 1\n"));
    result_free(&r);
    assert_int_equal(zone_count(out, "fib", "/raises.py"), 25);
}

/* The extension built for trixie's Python 3.13 on bookworm (3.11): refused
 * before anything is uploaded, naming both versions. */
static void a_python_other_than_the_extensions_is_refused_before_the_upload(void **state)
{
    (void)state;
    char script[600], tmp[1100];
    snprintf(script, sizeof script, "%s/program.py", work);
    assert_int_equal(write_file(script, python_program, sizeof python_program - 1), 0);
    snprintf(tmp, sizeof tmp, "%s/tmp", arm.rootfs);
    int before = run_dirs_in(tmp);
    const char *rest[] = {"-o",   "never.tracy", "--python-path", python_dir, "--python",
                          script, NULL};
    struct result r = run_on(&arm, rest);
    assert_status(&r, 7);
    assert_said(&r, "has Python 3.11 (/usr/bin/python3.11), but the extension ");
    assert_said(&r, "_boardtrace.cpython-313-riscv64-linux-gnu.so is built for Python 3.13");
    assert_said(&r, "nothing was uploaded");
    assert_null(strstr(r.err, "upload "));
    result_free(&r);
    assert_int_equal(run_dirs_in(tmp), before);
}

int main(int argc, char **argv)
{
    if (argc != 12) {
        fprintf(stderr,
                "usage: %s BOARDTRACE DEBIAN_SH RISCV64_DIR AARCH64_DIR DEMO_DYNAMIC CPP_DYNAMIC "
                "HOST_CAPTURE AARCH64_GCC FAKE_CAPTURE_C RISCV64_PYTHON_DIR REPORT\n",
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
    python_dir = argv[10];
    report = argv[11];
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
        cmocka_unit_test(a_python_script_runs_on_the_boards_own_python3),
        cmocka_unit_test(a_python_script_that_raises_fails_with_its_traceback_and_the_trace_kept),
        cmocka_unit_test(a_python_other_than_the_extensions_is_refused_before_the_upload),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
