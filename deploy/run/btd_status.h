/* A program's status as the board's shell reports it (128+N for a program
 * killed by signal N), in words: what the summary, the record and the
 * errors of run and live show. */
#ifndef BTD_STATUS_H
#define BTD_STATUS_H

#include <stddef.h>

/* "SIGSEGV" for a status that stands for a signal's death (139), else NULL. */
const char *btd_status_signal(int status);

/* "exit status 3", or "killed by SIGSEGV (exit status 139)". */
void btd_status_describe(int status, char *out, size_t size);

#endif
