/* Names and texts the reports print come from the traced program: control
 * characters in them (an ESC sequence in a zone name) would act on the
 * terminal, so they are printed as \xNN instead. One helper for every text
 * report; the JSON writer escapes by JSON's rules (btr_json_string). */
#include <stdio.h>
#include <string.h>

#include "btr_report.h"

/* How many bytes at p (n of them left) form one character to escape (C0
 * controls, DEL, and the C1 controls U+0080..U+009F in UTF-8), 0 for one
 * to keep. */
static size_t control_in(const unsigned char *p, size_t n)
{
    if (p[0] < 0x20 || p[0] == 0x7f)
        return 1;
    if (n >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return 2;
    return 0;
}

/* The same in a NUL-terminated string (the NUL ends the check). */
static size_t control_at(const unsigned char *p)
{
    return control_in(p, p[0] ? 2 : 1);
}

const char *btr_text_safe(const char *s, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (p[n] && !control_at(p + n))
        n++;
    if (!p[n] || size == 0)
        return s;
    size_t o = 0;
    for (; *p && o + 1 < size;) {
        size_t k = control_at(p);
        if (!k) {
            buf[o++] = (char)*p++;
            continue;
        }
        if (o + 4 * k + 1 > size)
            break;
        for (size_t i = 0; i < k; i++, o += 4)
            snprintf(buf + o, 5, "\\x%02x", *p++);
    }
    buf[o] = 0;
    return buf;
}

void btr_text_write(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t k = control_in(p, (size_t)(end - p));
        if (!k) {
            size_t n = 1;
            while (p + n < end && !control_in(p + n, (size_t)(end - p - n)))
                n++;
            fwrite(p, 1, n, out);
            p += n;
            continue;
        }
        for (size_t i = 0; i < k; i++)
            fprintf(out, "\\x%02x", *p++);
    }
}

void btr_text_put(FILE *out, const char *s)
{
    btr_text_write(out, s, strlen(s));
}
