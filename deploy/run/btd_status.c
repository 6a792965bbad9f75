/* A program's status in words (see btd_status.h). The signal numbers are
 * Linux's generic ones, which the boards' architectures (RISC-V, ARM64,
 * x86) share. */
#include "btd_status.h"

#include <stdio.h>

static const char *const signal_names[] = {
    NULL,        "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
    "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
    "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
    "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS",
};

const char *btd_status_signal(int status)
{
    int sig = status - 128;
    if (sig <= 0 || sig >= (int)(sizeof signal_names / sizeof signal_names[0]))
        return NULL;
    return signal_names[sig];
}

void btd_status_describe(int status, char *out, size_t size)
{
    const char *sig = btd_status_signal(status);
    if (sig)
        snprintf(out, size, "killed by %s (exit status %d)", sig, status);
    else
        snprintf(out, size, "exit status %d", status);
}
