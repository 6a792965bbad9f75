/* Growable byte strings (see btd_buf.h). */
#include "btd_buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t n)
{
    fprintf(stderr, "boardtrace: error: out of memory (needed %zu bytes)\n", n);
    exit(1);
}

void *btd_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

char *btd_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = btd_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

static void reserve(struct btd_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        out_of_memory(cap);
    b->data = p;
    b->cap = cap;
}

void btd_buf_append(struct btd_buf *b, const void *data, size_t len)
{
    reserve(b, len);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void btd_buf_puts(struct btd_buf *b, const char *s)
{
    btd_buf_append(b, s, strlen(s));
}

void btd_buf_vprintf(struct btd_buf *b, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return;
    reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void btd_buf_printf(struct btd_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    btd_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void btd_buf_clear(struct btd_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void btd_buf_free(struct btd_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

const char *btd_buf_str(const struct btd_buf *b)
{
    return b->data ? b->data : "";
}
