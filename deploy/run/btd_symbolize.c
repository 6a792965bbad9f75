/* After the pull of a run whose program travelled without symbols: the
 * trace's frames are named from the program on the host, by
 * `boardtrace-report symbolize` (found beside boardtrace, installed or in
 * its build tree). */
#define _GNU_SOURCE
#include "btd_symbolize.h"
#include "btd_msg.h"

#include <errno.h>
#include <libgen.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef BTD_BINARY_DIR
#define BTD_BINARY_DIR ""
#endif

extern char **environ;

static bool find_report(char *out, size_t outlen)
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

int btd_symbolize_trace(const char *trace, const char *program, char *summary, size_t len)
{
    summary[0] = '\0';
    char report[1100];
    if (!find_report(report, sizeof report)) {
        btd_warn("boardtrace-report is not beside boardtrace: the trace's frames stay unnamed; "
                 "name them with boardtrace-report symbolize %s %s",
                 trace, program);
        return -1;
    }
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    char *argv[] = {report, "symbolize", (char *)trace, (char *)program, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, report, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        btd_warn("cannot start %s: %s", report, strerror(rc));
        return -1;
    }
    size_t have = 0;
    ssize_t n;
    while (have + 1 < len && (n = read(pipefd[0], summary + have, len - 1 - have)) > 0)
        have += (size_t)n;
    summary[have] = '\0';
    summary[strcspn(summary, "\n")] = '\0';
    close(pipefd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        btd_warn("naming the trace's frames failed (see above); the trace is as captured");
        return -1;
    }
    return 0;
}
