/* A capture that could not write its trace (a full disk) keeps what it
 * received in trace.tracy.journal: `run` then leaves the run's folder on the
 * board, and `fetch --recover` rebuilds the trace there with the capture's
 * own --recover before pulling it. */
#ifndef BTD_RECOVER_H
#define BTD_RECOVER_H

#include "btd_ssh.h"

/* Whether DIR holds the capture's journal; if so, records the capture's
 * file name there (capture.name) for a later --recover. 1 yes, 0 no, -1 the
 * board could not be asked. */
int btd_recover_kept(struct btd_conn *c, const char *dir, const char *capture_name);

/* Runs the capture's --recover in DIR (trace.tracy.journal into
 * trace.tracy). Returns BTD_EXIT_OK, or the exit status after saying why. */
int btd_recover_trace(struct btd_conn *c, const char *dir);

#endif
