/* Names and texts the reports print come from the traced program: control
 * characters in them (an ESC sequence in a zone name, the 8-bit CSI 0x9b)
 * would act on the terminal, so they are printed as \xNN instead. One helper
 * for every text report; the JSON writer escapes by JSON's rules
 * (btr_json_string) with the same idea of what is printable. */
#include <stdio.h>
#include <string.h>

#include "btr_report.h"

size_t btr_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
    unsigned char c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
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
    if (p[1] < lo || p[1] > hi)
        return 0;
    uint32_t v = c & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3fu);
    }
    *cp = v;
    return len;
}

int btr_text_printable(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
        return 0;
    /* Bidirectional overrides and isolates reorder what the terminal
     * shows: a name could pass for another. */
    return !((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069));
}

/* How many bytes at p (n of them left) form one character to escape: a
 * byte that is not part of well-formed UTF-8, or a whole sequence that is
 * not printable; 0 for one to keep (its length in *keep). */
static size_t control_in(const unsigned char *p, size_t n, size_t *keep)
{
    uint32_t cp;
    size_t k = btr_utf8_decode(p, n, &cp);
    if (!k)
        return 1;
    *keep = k;
    return btr_text_printable(cp) ? 0 : k;
}

const char *btr_text_safe(const char *s, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), n = 0, keep = 0;
    while (n < len && !control_in(p + n, len - n, &keep))
        n += keep;
    if (n == len || size == 0)
        return s;
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < size;) {
        size_t k = control_in(p + i, len - i, &keep);
        if (!k) {
            if (o + keep + 1 > size)
                break;
            memcpy(buf + o, p + i, keep);
            o += keep;
            i += keep;
            continue;
        }
        if (o + 4 * k + 1 > size)
            break;
        for (size_t j = 0; j < k; j++, o += 4)
            snprintf(buf + o, 5, "\\x%02x", p[i++]);
    }
    buf[o] = 0;
    return buf;
}

void btr_text_write(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t keep = 0, k = control_in(p, (size_t)(end - p), &keep);
        if (!k) {
            size_t n = keep;
            while (p + n < end && !control_in(p + n, (size_t)(end - p - n), &keep))
                n += keep;
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
