/* The crash handler (see crash.h). It runs on the crashing thread in a
 * signal handler: it only formats into static memory, writes the thread's
 * ring without allocating or waiting for room, and waits for the worker
 * with a deadline, so that a crash anywhere (even in malloc) ends. */
#define _GNU_SOURCE
#include "crash.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/ring.h"
#include "core/runtime.h"
#include "symbols/callstack.h"

/* How long a crashing program waits for the worker to send what it holds
 * and finish its session: bounded, so that a crash with no capture (or a
 * worker stuck behind a lock the crashed thread held) still ends. */
#define CRASH_WAIT_NS 2000000000ll
#define CRASH_POLL_NS 5000000l
#define CRASH_FRAMES  60

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

static atomic_int crashing;
static char crash_text[160]; /* the report's text: its address is its string key */

/* The names `boardtrace run` also shows for a program's status. */
static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGILL:
        return "SIGILL";
    case SIGFPE:
        return "SIGFPE";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "a fatal signal";
    }
}

static size_t put_text(char *out, size_t at, size_t size, const char *s)
{
    while (*s && at + 1 < size)
        out[at++] = *s++;
    out[at] = 0;
    return at;
}

static size_t put_hex(char *out, size_t at, size_t size, uint64_t v)
{
    char digits[19] = "0x";
    int n = 0;
    char rev[16];
    do {
        rev[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    for (int i = 0; i < n; i++)
        digits[2 + i] = rev[n - 1 - i];
    digits[2 + n] = 0;
    return put_text(out, at, size, digits);
}

/* The program counter where the signal struck: where the program's frames
 * begin in the unwinder's walk (which starts inside this handler). */
static uintptr_t fault_pc(const void *context)
{
    const ucontext_t *uc = context;
    if (!uc)
        return 0;
#if defined(__riscv)
    return (uintptr_t)uc->uc_mcontext.__gregs[REG_PC];
#elif defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    return 0;
#endif
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Until the worker has sent everything and its session is over, or the
 * deadline: polled, since nothing else is safe to wait on in a handler. */
static void wait_for_worker(void)
{
    int64_t deadline = monotonic_ns() + CRASH_WAIT_NS;
    struct timespec step = {0, CRASH_POLL_NS};
    while (atomic_load(&bt_rt.worker_alive) && monotonic_ns() < deadline)
        nanosleep(&step, NULL);
}

static void crash_handler(int sig, siginfo_t *info, void *context)
{
    if (atomic_exchange(&crashing, 1) == 0) {
        size_t n = put_text(crash_text, 0, sizeof crash_text, "the program was killed by ");
        n = put_text(crash_text, n, sizeof crash_text, signal_name(sig));
        if (info && info->si_code > 0 && sig != SIGABRT) { /* a fault, not a kill */
            n = put_text(crash_text, n, sizeof crash_text, " at address ");
            put_hex(crash_text, n, sizeof crash_text, (uint64_t)(uintptr_t)info->si_addr);
        }
        uint64_t frames[CRASH_FRAMES];
        int depth = bt_callstack_capture(frames, CRASH_FRAMES, fault_pc(context));
        bt_crash_record(crash_text, frames, depth);
        /* The worker sends the rings (the crash last on its thread), then
         * Terminate, answers the capture's queries and ends its session. */
        atomic_store(&bt_rt.shutdown, 1);
        wait_for_worker();
    } else {
        /* A second thread crashing meanwhile waits for the first's end. */
        wait_for_worker();
    }
    signal(sig, SIG_DFL);
    raise(sig); /* delivered, with the default action, as the handler returns */
}

void bt_crash_install(void)
{
#ifndef TRACY_NO_CRASH_HANDLER
    const char *off = getenv("BOARDTRACE_NO_CRASH_HANDLER");
    if (off && off[0] == '1')
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            sigaction(fatal_signals[i], &sa, NULL);
    }
#endif
}
