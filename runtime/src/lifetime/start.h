/* The runtime's lifetime (start.c): started once, by a constructor or the
 * first event, whichever comes first; stopped at exit or when the program
 * asks. */
#ifndef BT_START_H
#define BT_START_H

/* Starts the runtime once (constructor, or the first event, whichever comes
 * first). Returns 0 when the runtime is usable. */
int bt_runtime_start(void);

/* Ends tracing as at exit: the worker sends what is buffered (with
 * TRACY_NO_EXIT, once a capture has taken it) and stops. Idempotent. */
void bt_runtime_stop(void);
/* Whether the runtime is started and not stopped. */
int bt_runtime_running(void);

#endif
