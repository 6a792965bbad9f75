/* Quoting for the board's POSIX shell: every argument boardtrace sends to a
 * remote command line goes through here, so it arrives as one literal word
 * whatever it contains (spaces, quotes, $(), ;, newlines). */
#ifndef BTD_QUOTE_H
#define BTD_QUOTE_H

#include "btd_buf.h"

#include <stdbool.h>

/* Appends ARG single-quoted, each ' written as '\'' ("" becomes ''). */
void btd_quote_append(struct btd_buf *b, const char *arg);

/* True for a valid environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
bool btd_env_name_valid(const char *name, size_t len);

#endif
