/* Escaping board text in boardtrace's own output (see btd_escape.h). */
#define _GNU_SOURCE
#include "btd_escape.h"

#include <stdlib.h>

void btd_escape_write(FILE *f, const char *s, size_t n, bool keep_newlines)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 0x20 && c != 0x7f) || (c == '\n' && keep_newlines))
            continue;
        fwrite(s + start, 1, i - start, f);
        fprintf(f, "\\x%02x", c);
        start = i + 1;
    }
    fwrite(s + start, 1, n - start, f);
}

void btd_escape_vfprintf(FILE *f, const char *fmt, va_list ap)
{
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    if (n < 0)
        return;
    btd_escape_write(f, text, (size_t)n, true);
    free(text);
}

void btd_escape_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    btd_escape_vfprintf(stdout, fmt, ap);
    va_end(ap);
}
