/* After the pull of a run whose program travelled without symbols: the
 * trace's frames are named from the program on the host, by
 * `boardtrace-report symbolize` (found beside boardtrace, installed or in
 * its build tree: btd_report.c). */
#define _GNU_SOURCE
#include "btd_symbolize.h"
#include "btd_msg.h"
#include "btd_report.h"

#include <errno.h>
#include <libgen.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int btd_symbolize_trace(const char *trace, const char *program, char *summary, size_t len)
{
    summary[0] = '\0';
    char report[1100];
    if (!btd_report_find(report, sizeof report)) {
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
