/* A copy of a program without what only the host needs: everything after
 * the last byte a segment loads (symbol table, DWARF, .comment) and the
 * section headers. The loader reads only segments, so the copy runs the
 * same; its build-id note (in a segment) still names it, and the host names
 * its frames from the original (boardtrace-report symbolize). */
#ifndef BTD_STRIP_H
#define BTD_STRIP_H

#include <stddef.h>
#include <stdint.h>

/* Writes the copy of PATH into a private temporary file (its name into out,
 * outlen bytes; the caller unlinks it). Returns 1 when written, 0 when
 * there is nothing to drop (upload PATH itself), -1 with err. */
int btd_strip_copy(const char *path, char *out, size_t outlen, uint64_t *size, char *err,
                   size_t errlen);

#endif
