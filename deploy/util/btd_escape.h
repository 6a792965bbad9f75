/* Text from the board in what boardtrace itself prints (uname, paths, error
 * messages, the capture's summary): every byte that is not printable text is
 * shown as \xNN, so a board cannot move the cursor, retitle or otherwise
 * drive the user's terminal. The program's and the capture's own output
 * lines are not boardtrace's and stay raw. */
#ifndef BTD_ESCAPE_H
#define BTD_ESCAPE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence of 2 to 4 bytes at s (n bytes
 * left: no overlong form, surrogate or code point past U+10FFFF), its code
 * point in *cp; 0 if none starts there (ASCII included). */
size_t btd_utf8_sequence(const unsigned char *s, size_t n, unsigned *cp);

/* How many bytes at s (n of them left) form one printable character: 1 for
 * ASCII 0x20..0x7e, 2 to 4 for a well-formed UTF-8 sequence (no overlong
 * form, surrogate or code point past U+10FFFF) that is neither a C1 control
 * (U+0080..U+009F) nor a bidirectional override or isolate (U+202A..U+202E,
 * U+2066..U+2069, which reorder what the terminal shows). 0 when the
 * character is to be escaped; *len then says how many bytes it has (1 for a
 * byte that is not part of well-formed UTF-8, so a lone 0x9b, the 8-bit
 * CSI, is one). */
size_t btd_escape_printable(const unsigned char *s, size_t n, size_t *len);

/* Writes s[0..n) to f with every byte of what is not printable (above) as
 * \xNN, except '\n' when keep_newlines; a backslash stays as it is. */
void btd_escape_write(FILE *f, const char *s, size_t n, bool keep_newlines);

/* s escaped as btd_escape_write does, newlines too (a field of a table or a
 * line), into buf; cut at a whole character when it does not fit. Returns
 * buf. */
const char *btd_escape_field(const char *s, char *buf, size_t size);

/* vfprintf/printf whose result goes through btd_escape_write, newlines kept
 * (boardtrace's messages span lines). */
void btd_escape_vfprintf(FILE *f, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void btd_escape_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
