/* Growable byte strings for building remote commands, JSON and messages.
 * Allocation failure ends the program with a message: boardtrace is a CLI and
 * has nothing sensible to do without memory. */
#ifndef BTD_BUF_H
#define BTD_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct btd_buf {
    char *data; /* always NUL-terminated once anything was appended */
    size_t len;
    size_t cap;
};

void btd_buf_append(struct btd_buf *b, const void *data, size_t len);
void btd_buf_puts(struct btd_buf *b, const char *s);
void btd_buf_printf(struct btd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void btd_buf_vprintf(struct btd_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void btd_buf_clear(struct btd_buf *b);
void btd_buf_free(struct btd_buf *b);
/* The contents as a C string ("" when empty). */
const char *btd_buf_str(const struct btd_buf *b);

/* xmalloc-style helpers with the same out-of-memory policy. */
void *btd_xmalloc(size_t n);
char *btd_xstrdup(const char *s);

#endif
