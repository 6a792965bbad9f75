/* JSON writer (see btd_json.h). Output is indented two spaces per level so a
 * person can read the record too. */
#define _GNU_SOURCE
#include "btd_json.h"

#include "btd_escape.h"

#include <stdio.h>
#include <string.h>

void btd_json_escape(struct btd_buf *b, const char *s)
{
    btd_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            btd_buf_puts(b, "\\\"");
            break;
        case '\\':
            btd_buf_puts(b, "\\\\");
            break;
        case '\n':
            btd_buf_puts(b, "\\n");
            break;
        case '\r':
            btd_buf_puts(b, "\\r");
            break;
        case '\t':
            btd_buf_puts(b, "\\t");
            break;
        default: {
            /* Board text is bytes: what is not well-formed UTF-8 becomes
             * U+FFFD (the record stays valid JSON) and every control (C0,
             * DEL, C1, bidirectional overrides) is escaped, so the record
             * shown on a terminal cannot act on it. */
            size_t len, left = strnlen((const char *)p, 4);
            unsigned cp = *p;
            if (btd_escape_printable(p, left, &len))
                btd_buf_append(b, p, len);
            else if (len == 1 && *p >= 0x80)
                btd_buf_puts(b, "\\ufffd");
            else if (len == 1 || btd_utf8_sequence(p, left, &cp))
                btd_buf_printf(b, "\\u%04x", cp);
            p += len - 1;
        }
        }
    }
    btd_buf_puts(b, "\"");
}

static void key(struct btd_json *j, const char *k)
{
    if (j->need_comma[j->depth])
        btd_buf_puts(&j->out, ",");
    if (j->depth > 0)
        btd_buf_printf(&j->out, "\n%*s", 2 * j->depth, "");
    j->need_comma[j->depth] = true;
    if (k) {
        btd_json_escape(&j->out, k);
        btd_buf_puts(&j->out, ": ");
    }
}

static void open_(struct btd_json *j, const char *k, const char *bracket)
{
    key(j, k);
    btd_buf_puts(&j->out, bracket);
    if (j->depth < 31)
        j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_(struct btd_json *j, const char *bracket)
{
    bool had = j->need_comma[j->depth];
    j->depth--;
    if (had)
        btd_buf_printf(&j->out, "\n%*s", 2 * j->depth, "");
    btd_buf_puts(&j->out, bracket);
    if (j->depth == 0)
        btd_buf_puts(&j->out, "\n");
}

void btd_json_begin_object(struct btd_json *j, const char *k)
{
    open_(j, k, "{");
}

void btd_json_end_object(struct btd_json *j)
{
    close_(j, "}");
}

void btd_json_begin_array(struct btd_json *j, const char *k)
{
    open_(j, k, "[");
}

void btd_json_end_array(struct btd_json *j)
{
    close_(j, "]");
}

void btd_json_string(struct btd_json *j, const char *k, const char *value)
{
    key(j, k);
    if (value)
        btd_json_escape(&j->out, value);
    else
        btd_buf_puts(&j->out, "null");
}

void btd_json_int(struct btd_json *j, const char *k, int64_t value)
{
    key(j, k);
    btd_buf_printf(&j->out, "%lld", (long long)value);
}

void btd_json_double(struct btd_json *j, const char *k, double value)
{
    key(j, k);
    btd_buf_printf(&j->out, "%.6f", value);
}

void btd_json_bool(struct btd_json *j, const char *k, bool value)
{
    key(j, k);
    btd_buf_puts(&j->out, value ? "true" : "false");
}

void btd_json_null(struct btd_json *j, const char *k)
{
    key(j, k);
    btd_buf_puts(&j->out, "null");
}
