/* Naming a pulled trace's frames on the host (btd_symbolize.c). */
#ifndef BTD_SYMBOLIZE_H
#define BTD_SYMBOLIZE_H

#include <stddef.h>

/* Names the frames of TRACE from PROGRAM (unstripped) with
 * boardtrace-report symbolize; its summary line into summary. Returns 0, or
 * -1 after a warning (the trace stays as it was). */
int btd_symbolize_trace(const char *trace, const char *program, char *summary, size_t len);

#endif
