/* Escaping board text in boardtrace's own output (see btd_escape.h). */
#define _GNU_SOURCE
#include "btd_escape.h"

#include <stdlib.h>
#include <string.h>

size_t btd_utf8_sequence(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned char c = s[0];
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (!len || len > n)
        return 0;
    /* The second byte's range excludes overlong forms, surrogates and code
     * points past U+10FFFF. */
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (s[1] < lo || s[1] > hi)
        return 0;
    unsigned v = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    *cp = v;
    return len;
}

size_t btd_escape_printable(const unsigned char *s, size_t n, size_t *len)
{
    *len = 1;
    if (s[0] < 0x80)
        return s[0] >= 0x20 && s[0] != 0x7f;
    unsigned cp;
    size_t k = btd_utf8_sequence(s, n, &cp);
    if (!k)
        return 0;
    *len = k;
    bool control = cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
    return control ? 0 : k;
}

void btd_escape_write(FILE *f, const char *s, size_t n, bool keep_newlines)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t start = 0;
    for (size_t i = 0; i < n;) {
        size_t len;
        if (btd_escape_printable(p + i, n - i, &len) || (p[i] == '\n' && keep_newlines)) {
            i += len;
            continue;
        }
        fwrite(s + start, 1, i - start, f);
        for (size_t k = 0; k < len; k++)
            fprintf(f, "\\x%02x", p[i + k]);
        i += len;
        start = i;
    }
    fwrite(s + start, 1, n - start, f);
}

const char *btd_escape_field(const char *s, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n;) {
        size_t len;
        size_t keep = btd_escape_printable(p + i, n - i, &len);
        size_t need = keep ? len : 4 * len;
        if (o + need + 1 > size)
            break;
        if (keep)
            memcpy(buf + o, p + i, len);
        else
            for (size_t k = 0; k < len; k++)
                snprintf(buf + o + 4 * k, 5, "\\x%02x", p[i + k]);
        o += need;
        i += len;
    }
    if (size)
        buf[o] = '\0';
    return buf;
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
