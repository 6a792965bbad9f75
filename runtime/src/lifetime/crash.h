/* The crash handler: a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT) is recorded as Tracy's crash report with the crashing thread's
 * callstack, what was emitted before it is handed to the capture (a bounded
 * wait), then the signal is re-raised with its default action. */
#ifndef BT_CRASH_H
#define BT_CRASH_H

/* Installs the handler for each fatal signal whose action is still the
 * default (a handler the program installed is kept, and one it installs
 * later replaces ours); nothing with BOARDTRACE_NO_CRASH_HANDLER=1 or
 * TRACY_NO_CRASH_HANDLER defined. Called once, at the runtime's start. */
void bt_crash_install(void);

#endif
