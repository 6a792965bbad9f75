/* boardtrace against boards that run a real distribution (tools/board/
 * debian.sh): Debian's own glibc, loader, libstdc++ and OpenSSH under qemu
 * user mode. A dynamic program and a C++ program run on the board's own
 * libraries (nothing brought), live goes through the board's own sshd, and a
 * program linked against a newer glibc than the aarch64 (bookworm) board has
 * is refused before anything is uploaded, naming both versions. A Python
 * script runs on each board's own python3 (trixie's 3.13, bookworm's 3.11)
 * with exact counts. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
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

#include "btc_tracy.h"
#include "deploy_support.h"

/* argv: boardtrace debian.sh riscv64-dir aarch64-dir demo-dynamic cpp-dynamic
 *       host-capture aarch64-gcc fake-capture.c riscv64-python-folder report
 *       aarch64-build */
static const char *aarch64_dir, *demo, *cpp, *host_capture, *aarch64_gcc, *fake_capture_src,
    *python_dir, *report, *aarch64_build;
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
    assert_non_null(strstr(r.err, " (1550 zones, 52 frames)\n"));
    assert_non_null(strstr(r.err, "  program   exit status 0\n"));
    char *json = read_file(record, NULL);
    assert_non_null(json);
    assert_null(strstr(json, "\"loader\""));
    free(json);
    result_free(&r);
}

/* A client that behaves on the network as upstream's (the runtime's test
 * switch: [::1] alone under run's TRACY_ONLY_LOCALHOST, a broadcast that the
 * environment cannot stop) is captured whole on a board with its own
 * OpenSSH and glibc, and the summary names its UDP socket. */
static void an_upstream_like_client_on_ipv6_loopback_alone_is_captured(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/upstream-net.tracy", work);
    const char *rest[] = {"-o", out,   "--env", "BOARDTRACE_TEST_UPSTREAM_NET=1", demo, "--",
                          "-f", "200", NULL};
    struct result r = run_on(&board, rest);
    assert_status(&r, 0);
    assert_non_null(strstr(r.err, " (6200 zones, 202 frames)\n"));
    assert_non_null(strstr(r.err, "  capture   complete in "));
    assert_non_null(strstr(r.err, "  network   the program holds a UDP socket"));
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
    assert_non_null(strstr(r.err, " (24 zones, "));
    assert_non_null(strstr(r.err, "  program   exit status 0\n"));
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

/* The zones of function name whose source file ends with file. */
struct named_zones {
    const char *name, *file;
    long all, measured; /* every one; those of nonzero length */
};

static int count_named(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    struct named_zones *n = ctx;
    const struct btc_read_srcloc *loc = btc_trace_srcloc(t, z->srcloc);
    if (!loc)
        return 0;
    const char *name = btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function);
    const char *file = loc->file >= 0 ? btc_trace_string(t, loc->file) : NULL;
    size_t fl = file ? strlen(file) : 0, want = strlen(n->file);
    if (!name || strcmp(name, n->name) != 0 || fl < want || strcmp(file + fl - want, n->file) != 0)
        return 0;
    n->all++;
    n->measured += z->end > z->start;
    return 0;
}

/* The zone count of function name whose source file ends with file, read
 * from the trace file. boardtrace-report stats --csv (name,src_file,
 * src_line,...,counts,...) must say the same of the zones of nonzero length:
 * it leaves out, as upstream's csvexport does, zones that began and ended on
 * the same tick, which a short call does on the emulated boards, whose
 * timers tick in microseconds under qemu's user mode. */
static long zone_count(const char *trace, const char *name, const char *file)
{
    struct named_zones n = {name, file, 0, 0};
    struct btc_trace t;
    char err[512];
    if (btc_tracy_read(trace, &t, count_named, &n, err, sizeof err) < 0)
        fail_msg("%s: %s", trace, err);
    btc_trace_free(&t);
    const char *argv[] = {report, "stats", "--csv", trace, NULL};
    struct result r;
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    long reported = 0; /* no row: no zone of nonzero length */
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        char *f[6] = {line};
        int k = 1;
        for (char *c = line; *c && k < 6; c++)
            if (*c == ',') {
                *c = '\0';
                f[k++] = c + 1;
            }
        size_t fl = strlen(f[1] ? f[1] : ""), want = strlen(file);
        if (k == 6 && strcmp(f[0], name) == 0 && fl >= want && strcmp(f[1] + fl - want, file) == 0)
            reported += strtol(f[5], NULL, 10);
    }
    result_free(&r);
    assert_int_equal(reported, n.measured);
    return n.all;
}

/* The zones of python_program's functions per thread, read from the trace
 * file: by name, since each zone may carry its own source location. */
static const char *const python_functions[] = {"fib", "work",   "Shape.area", "builtins.sorted",
                                               "gen", "raiser", "middle",     "catcher"};
#define PYTHON_FUNCTIONS (sizeof python_functions / sizeof python_functions[0])
struct thread_zones {
    uint64_t thread[16];
    long count[16][PYTHON_FUNCTIONS];
    size_t threads;
    int too_many_threads;
};

static int count_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    struct thread_zones *tz = ctx;
    const struct btc_read_srcloc *loc = btc_trace_srcloc(t, z->srcloc);
    const char *name = loc ? btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function) : NULL;
    if (z->end < z->start || !name)
        return 0;
    size_t f = 0;
    while (f < PYTHON_FUNCTIONS && strcmp(python_functions[f], name) != 0)
        f++;
    if (f == PYTHON_FUNCTIONS)
        return 0;
    size_t i = 0;
    while (i < tz->threads && tz->thread[i] != z->thread_id)
        i++;
    if (i == sizeof tz->thread / sizeof tz->thread[0]) {
        tz->too_many_threads = 1;
        return 0;
    }
    if (i == tz->threads)
        tz->thread[tz->threads++] = z->thread_id;
    tz->count[i][f]++;
    return 0;
}

/* The zones of function name on the thread named thread. */
static long thread_zone_count(const struct btc_trace *t, const struct thread_zones *tz,
                              const char *thread, const char *name)
{
    size_t f = 0;
    while (f < PYTHON_FUNCTIONS && strcmp(python_functions[f], name) != 0)
        f++;
    assert_true(f < PYTHON_FUNCTIONS);
    long count = 0;
    for (size_t i = 0; i < t->threads.len; i++) {
        const struct btc_read_thread *th = btc_vec_at(&t->threads, i);
        if (th->name < 0 || strcmp(btc_trace_string(t, th->name), thread) != 0)
            continue;
        for (size_t j = 0; j < tz->threads; j++)
            if (tz->thread[j] == th->id)
                count += tz->count[j][f];
    }
    return count;
}

/* python_program's run on board b through run --python (capture and
 * python_path NULL: this build's riscv64 sub-build's), on the board's own
 * python3 (interpreter, Python version, extension's file name): the same
 * exact counts as on the host (test_python), per function and per thread,
 * the script's output and exit status kept, the record naming what ran it. */
static void python_program_runs_on(const struct board *b, const char *name, const char *capture,
                                   const char *python_path, const char *interpreter,
                                   const char *version, const char *extension)
{
    char script[600], out[600], said[64];
    snprintf(script, sizeof script, "%s/program.py", work);
    snprintf(out, sizeof out, "%s/%s.tracy", work, name);
    assert_int_equal(write_file(script, python_program, sizeof python_program - 1), 0);
    const char *rest[12] = {"-o", out};
    int n = 2;
    if (capture) {
        rest[n++] = "--capture";
        rest[n++] = capture;
    }
    if (python_path) {
        rest[n++] = "--python-path";
        rest[n++] = python_path;
    }
    rest[n++] = "--python";
    rest[n++] = script;
    rest[n++] = "--";
    rest[n++] = "0";
    rest[n] = NULL;
    struct result r = run_on(b, rest);
    assert_status(&r, 0);
    snprintf(said, sizeof said, "Python %s on ", version);
    assert_said(&r, said);
    assert_said(&r, extension);
    assert_non_null(strstr(r.out, "program output\n"));
    assert_non_null(strstr(r.err, "  program   exit status 0\n"));
    result_free(&r);
    /* The record says what ran the script. */
    char record[640], want[700];
    snprintf(record, sizeof record, "%s.json", out);
    char *json = read_file(record, NULL);
    assert_non_null(json);
    snprintf(want, sizeof want, "\"python\": {\n    \"script\": \"%s\",\n", script);
    assert_non_null(strstr(json, want));
    snprintf(want, sizeof want, "    \"interpreter\": \"%s\",\n    \"version\": \"%s\",\n",
             interpreter, version);
    assert_non_null(strstr(json, want));
    free(json);
    assert_int_equal(zone_count(out, "fib", "/program.py"), 177 + 15);
    assert_int_equal(zone_count(out, "work", "/program.py"), 1);
    assert_int_equal(zone_count(out, "Shape.area", "/program.py"), 4);
    assert_int_equal(zone_count(out, "builtins.sorted", "<built-in>"), 4);
    assert_int_equal(zone_count(out, "gen", "/program.py"), 4);
    assert_int_equal(zone_count(out, "raiser", "/program.py"), 1);
    assert_int_equal(zone_count(out, "middle", "/program.py"), 1);
    assert_int_equal(zone_count(out, "catcher", "/program.py"), 1);
    /* Each on its thread, named as Python names it. */
    struct btc_trace t;
    static struct thread_zones tz;
    char err[512];
    memset(&tz, 0, sizeof tz);
    if (btc_tracy_read(out, &t, count_zone, &tz, err, sizeof err) < 0)
        fail_msg("%s: %s", out, err);
    assert_false(tz.too_many_threads);
    assert_int_equal(thread_zone_count(&t, &tz, "MainThread", "fib"), 177);
    assert_int_equal(thread_zone_count(&t, &tz, "worker-1", "fib"), 15);
    assert_int_equal(thread_zone_count(&t, &tz, "worker-1", "work"), 1);
    assert_int_equal(thread_zone_count(&t, &tz, "MainThread", "Shape.area"), 4);
    assert_int_equal(thread_zone_count(&t, &tz, "MainThread", "builtins.sorted"), 4);
    assert_int_equal(thread_zone_count(&t, &tz, "MainThread", "gen"), 4);
    assert_int_equal(thread_zone_count(&t, &tz, "MainThread", "raiser"), 1);
    assert_int_equal(thread_zone_count(&t, &tz, "MainThread", "middle"), 1);
    assert_int_equal(thread_zone_count(&t, &tz, "MainThread", "catcher"), 1);
    btc_trace_free(&t);
}

/* run --python on the riscv64 board: the script runs on trixie's own
 * python3 (3.13) with the extension this build's riscv64 sub-build made
 * against trixie's Python headers, the trace captured and pulled as for any
 * program. */
static void a_python_script_runs_on_the_boards_own_python3(void **state)
{
    (void)state;
    python_program_runs_on(&board, "python", NULL, NULL, "/usr/bin/python3.13", "3.13",
                           "_boardtrace.cpython-313-riscv64-linux-gnu.so");
}

/* tt-metal's Python as its Tracy guide writes it, on the board's own
 * python3 through `run --python -p`: `from tracy import signpost,
 * Profiler`, signposts around a Profiler enable/disable, written for
 * tt-metal's 0.10 GUI. The signposts come out in boardtrace-report
 * signposts, only the enabled function's calls are zones, and the file
 * reads as 0.10.0. */
static void a_tt_metal_style_script_runs_as_its_guide_writes_it(void **state)
{
    (void)state;
    static const char script_text[] = "from tracy import signpost, Profiler\n"
                                      "def inside():\n"
                                      "    return sum(range(10))\n"
                                      "def outside():\n"
                                      "    return 1\n"
                                      "signpost('start', 'before the profiler')\n"
                                      "outside()\n"
                                      "profiler = Profiler()\n"
                                      "profiler.enable()\n"
                                      "for _ in range(3):\n"
                                      "    inside()\n"
                                      "profiler.disable()\n"
                                      "outside()\n"
                                      "signpost('end')\n"
                                      "print('tt-metal style done')\n";
    char script[600], out[600];
    snprintf(script, sizeof script, "%s/tt_style.py", work);
    snprintf(out, sizeof out, "%s/tt-style.tracy", work);
    assert_int_equal(write_file(script, script_text, sizeof script_text - 1), 0);
    const char *rest[] = {"-o", out, "--file-version", "0.10.0", "--python", "-p", script, NULL};
    struct result r = run_on(&board, rest);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "tt-metal style done\n"));
    assert_non_null(strstr(r.err, "opens in  Tracy 0.10.0 and later"));
    result_free(&r);
    const char *argv[] = {report, "signposts", out, NULL};
    assert_int_equal(run_command((char *const *)argv, work, 120, &r), 0);
    assert_status(&r, 0);
    assert_non_null(strstr(r.out, "start"));
    assert_non_null(strstr(r.out, "before the profiler"));
    assert_non_null(strstr(r.out, "end"));
    result_free(&r);
    struct named_zones in = {"inside", "tt_style.py", 0, 0},
                       outz = {"outside", "tt_style.py", 0, 0};
    struct btc_trace t;
    char err[512];
    assert_int_equal(btc_tracy_read(out, &t, count_named, &in, err, sizeof err), 0);
    assert_int_equal(t.version, BTC_FILE_VERSION_0_10_0);
    btc_trace_free(&t);
    assert_int_equal(btc_tracy_read(out, &t, count_named, &outz, err, sizeof err), 0);
    btc_trace_free(&t);
    assert_int_equal(in.all, 3);
    assert_int_equal(outz.all, 0);
}

/* The same on the arm64 board: bookworm's own python3 (3.11) with the
 * extension the aarch64 board build made against bookworm's headers, its
 * capture doing the capturing. A board build that lacks either fails here,
 * naming it. */
static void a_python_script_runs_on_the_arm64_boards_own_python3(void **state)
{
    (void)state;
    char capture[1200], pydir[1200], ext[1400];
    snprintf(capture, sizeof capture, "%s/tools/capture/boardtrace-capture", aarch64_build);
    snprintf(pydir, sizeof pydir, "%s/runtime/python", aarch64_build);
    snprintf(ext, sizeof ext, "%s/boardtrace/_boardtrace.cpython-311-aarch64-linux-gnu.so", pydir);
    const char *need[] = {capture, ext};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (access(need[i], R_OK) != 0)
            fail_msg("%s is missing (%s): the aarch64 board build makes it; build it with "
                     "`cmake --preset aarch64 && cmake --build --preset aarch64` once "
                     "tools/setup.sh --system has cached the arm64 userland (or point "
                     "BT_SYSTEM_AARCH64_BUILD at an aarch64 board build)",
                     need[i], strerror(errno));
    python_program_runs_on(&arm, "python-arm64", capture, pydir, "/usr/bin/python3.11", "3.11",
                           "_boardtrace.cpython-311-aarch64-linux-gnu.so");
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
    assert_non_null(strstr(r.err, "  program   exit status 1\n"));
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
    if (argc != 13) {
        fprintf(stderr,
                "usage: %s BOARDTRACE DEBIAN_SH RISCV64_DIR AARCH64_DIR DEMO_DYNAMIC CPP_DYNAMIC "
                "HOST_CAPTURE AARCH64_GCC FAKE_CAPTURE_C RISCV64_PYTHON_DIR REPORT AARCH64_BUILD\n",
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
    aarch64_build = argv[12];
    if (board_load(board_sh, aarch64_dir, &arm) != 0) {
        fprintf(stderr, "the aarch64 Debian board in %s is not running\n", aarch64_dir);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_names_the_boards_own_glibc_and_loader),
        cmocka_unit_test(a_dynamic_program_runs_on_the_boards_own_glibc),
        cmocka_unit_test(an_upstream_like_client_on_ipv6_loopback_alone_is_captured),
        cmocka_unit_test(a_cpp_program_runs_on_the_boards_own_libstdcxx),
        cmocka_unit_test(live_goes_through_the_boards_own_openssh),
        cmocka_unit_test(a_glibc_older_than_the_programs_is_refused_before_the_upload),
        cmocka_unit_test(a_python_script_runs_on_the_boards_own_python3),
        cmocka_unit_test(a_tt_metal_style_script_runs_as_its_guide_writes_it),
        cmocka_unit_test(a_python_script_runs_on_the_arm64_boards_own_python3),
        cmocka_unit_test(a_python_script_that_raises_fails_with_its_traceback_and_the_trace_kept),
        cmocka_unit_test(a_python_other_than_the_extensions_is_refused_before_the_upload),
    };
    return cmocka_run_group_tests(tests, deploy_group_setup, deploy_group_teardown);
}
