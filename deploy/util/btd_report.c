/* boardtrace-report run by boardtrace on a pulled trace: found beside
 * boardtrace, installed or in its build tree, as a child process whose
 * failure is a warning, never the run's: the trace is what a run is for.
 * run --html writes a trace's HTML report with it; farm run compares its
 * boards' traces. */
#define _GNU_SOURCE
#include "btd_report.h"
#include "btd_msg.h"

#include <errno.h>
#include <libgen.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef BTD_BINARY_DIR
#define BTD_BINARY_DIR ""
#endif

extern char **environ;

bool btd_report_find(char *out, size_t outlen)
{
    char exe[1024] = "";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", exe);
    const char *dir = dirname(copy);
    snprintf(out, outlen, "%s/boardtrace-report", dir);
    if (access(out, X_OK) == 0)
        return true;
    if (BTD_BINARY_DIR[0] && strcmp(exe, BTD_BINARY_DIR "/deploy/boardtrace") == 0) {
        snprintf(out, outlen, "%s/tools/report/boardtrace-report", BTD_BINARY_DIR);
        return access(out, X_OK) == 0;
    }
    return false;
}

/* Runs boardtrace-report with argv (argv[0] its path): its stdout and
 * messages are ours. 0 when it exited 0. */
static int run_report(char **argv)
{
    fflush(stdout);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        btd_warn("cannot start %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int btd_report_html(const char *trace, const char *html)
{
    char report[1100];
    if (!btd_report_find(report, sizeof report)) {
        btd_warn("boardtrace-report is not beside boardtrace: no HTML report; the trace %s is "
                 "kept; write the report with boardtrace-report html -o %s %s",
                 trace, html, trace);
        return -1;
    }
    /* Its stdout (nothing with -o) and its messages go to ours: a report
     * that fails says why. */
    char *argv[] = {report, "html", "-o", (char *)html, (char *)trace, NULL};
    if (run_report(argv) != 0) {
        btd_warn("writing the HTML report %s failed (see above); the trace %s is kept", html,
                 trace);
        return -1;
    }
    return 0;
}

int btd_report_boards(const char *dir, int top)
{
    char report[1100], top_s[16];
    if (!btd_report_find(report, sizeof report)) {
        btd_warn("boardtrace-report is not beside boardtrace: for the spread across the boards, "
                 "run boardtrace-report boards %s",
                 dir);
        return -1;
    }
    snprintf(top_s, sizeof top_s, "%d", top);
    char *argv[] = {report, "boards", "--top", top_s, (char *)dir, NULL};
    if (run_report(argv) != 0) {
        btd_warn("comparing the boards' traces failed (see above); the traces in %s are kept", dir);
        return -1;
    }
    return 0;
}
