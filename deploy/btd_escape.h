/* Text from the board in what boardtrace itself prints (uname, paths, error
 * messages): control characters are shown as \xNN, so a board cannot move
 * the cursor, retitle or otherwise drive the user's terminal. The program's
 * and the capture's own output lines are not boardtrace's and stay raw. */
#ifndef BTD_ESCAPE_H
#define BTD_ESCAPE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) to f with every control character (below 0x20 and 0x7f,
 * except '\n' when keep_newlines) as \xNN; a backslash stays as it is. */
void btd_escape_write(FILE *f, const char *s, size_t n, bool keep_newlines);

/* vfprintf/printf whose result goes through btd_escape_write, newlines kept
 * (boardtrace's messages span lines). */
void btd_escape_vfprintf(FILE *f, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void btd_escape_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
