/* POSIX shell quoting for remote command lines (see btd_quote.h). Single
 * quotes are the only quoting in which no character is special. */
#include "btd_quote.h"

#include <string.h>

void btd_quote_append(struct btd_buf *b, const char *arg)
{
    btd_buf_puts(b, "'");
    for (const char *p = arg; *p; p++) {
        if (*p == '\'')
            btd_buf_puts(b, "'\\''");
        else
            btd_buf_append(b, p, 1);
    }
    btd_buf_puts(b, "'");
}

bool btd_env_name_valid(const char *name, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!alpha && !(digit && i > 0))
            return false;
    }
    return true;
}
