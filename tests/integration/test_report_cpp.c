/* boardtrace-report over a C++ program's trace: bt_report_cpp runs as a
 * board would run it (TRACY_NO_EXIT=1), boardtrace-capture records it, and
 * the report shows its functions demangled (they reach the trace under their
 * mangled ELF symbol names) and its leaks with the function they came from. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

static const char *capture_bin, *report_bin, *program_bin;
static char tmpdir[] = "/tmp/bt-report-cpp-XXXXXX";
static char trace[4200];

/* Starts argv with stdout into out_path (NULL: inherited); its pid. */
static pid_t start(char *const *argv, const char *out_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (out_path)
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                         0600);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

static int finish(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* The report's stdout for args in a file of the test's folder; its whole
 * text in buf. */
static void report(const char *cmd, char *buf, size_t n)
{
    char out[4300];
    snprintf(out, sizeof out, "%s/%s.txt", tmpdir, cmd);
    char *argv[] = {(char *)report_bin, (char *)cmd, trace, NULL};
    assert_int_equal(finish(start(argv, out)), 0);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = 0;
    fclose(f);
}

/* Records the program once for all the tests. */
static int record(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(trace, sizeof trace, "%s/cpp.tracy", tmpdir);
    char port[16];
    snprintf(port, sizeof port, "%u", free_port());
    setenv("TRACY_NO_EXIT", "1", 1);
    setenv("TRACY_PORT", port, 1);
    setenv("TRACY_NO_BROADCAST", "1", 1); /* no packet leaves this machine */
    char *prog[] = {(char *)program_bin, NULL};
    pid_t p = start(prog, NULL);
    unsetenv("TRACY_NO_EXIT");
    unsetenv("TRACY_PORT");
    unsetenv("TRACY_NO_BROADCAST");
    char *cap[] = {(char *)capture_bin, "-o", trace, "-p", port, "--connect-timeout", "60", NULL};
    int crc = finish(start(cap, "/dev/null"));
    int prc = finish(p);
    return crc == 0 && prc == 0 ? 0 : -1;
}

/* frames: every function of the program by its C++ name, none mangled. */
static void frames_show_cpp_functions_demangled(void **state)
{
    (void)state;
    static char buf[1 << 20];
    report("frames", buf, sizeof buf);
    assert_non_null(strstr(buf, "\treport_demo::Fibonacci(int)\t"));
    assert_non_null(strstr(buf, "\treport_demo::LeakyAlloc(unsigned long)\t"));
    assert_null(strstr(buf, "_ZN11report_demo"));
}

/* stats: the pool's 4 allocations, 1 free, peak 364 bytes (3 x 100 + 64)
 * and 3 leaks of 100 bytes, all from LeakyAlloc, named demangled. */
static void stats_show_leaks_with_their_demangled_function(void **state)
{
    (void)state;
    static char buf[1 << 20];
    report("stats", buf, sizeof buf);
    assert_non_null(strstr(buf, "\nleaky-pool                                 4           1        "
                                "     364         3             300\n"));
    assert_non_null(strstr(buf, "\nreport_demo::LeakyAlloc(unsigned long)            leaky-pool   "
                                "                3             300\n"));
    assert_null(strstr(buf, "_ZN11report_demo"));
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s CAPTURE REPORT PROGRAM\n", argv[0]);
        return 2;
    }
    capture_bin = argv[1];
    report_bin = argv[2];
    program_bin = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_show_cpp_functions_demangled),
        cmocka_unit_test(stats_show_leaks_with_their_demangled_function),
    };
    return cmocka_run_group_tests(tests, record, remove_tmpdir);
}
