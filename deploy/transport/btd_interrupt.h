/* Ctrl-C (SIGINT) and SIGTERM for the CLI. While the program runs, the first
 * one asks the board to stop it and the second gives up; a step that only
 * moves data (the upload, the pull) gives up on the first. Giving up shuts
 * the SSH socket down from the handler, so whatever libssh call is blocked
 * on it returns at once, whatever the link does. */
#ifndef BTD_INTERRUPT_H
#define BTD_INTERRUPT_H

#include <signal.h>
#include <stdbool.h>

/* Signals received: 1 once (stop gently), 2 twice (give up). */
extern volatile sig_atomic_t btd_interrupted;

/* Installs the handlers for SIGINT and SIGTERM (and ignores SIGPIPE). */
void btd_install_signals(void);

/* The socket to shut down when giving up (-1: none); a new connection's
 * socket replaces the one before. */
void btd_interrupt_watch_fd(int fd);

/* Enters STEP (a static string: "preflight", "upload", "run", "pull").
 * With abort_now, a signal from now on gives up at once, as a second one
 * always does; one that came before (the gentle stop of the run) does not
 * count. */
void btd_interrupt_step(const char *step, bool abort_now);

/* The step last entered, for messages. */
const char *btd_interrupt_step_name(void);

/* Whether the current step was given up by a signal. */
bool btd_interrupt_gave_up(void);

/* Whether the watched socket was shut down: the connection is gone. */
bool btd_interrupt_cut(void);

#endif
