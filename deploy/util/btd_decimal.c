/* Decimal numbers from the command line (see btd_decimal.h). */
#include "btd_decimal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int btd_parse_decimal(const char *s, long *out)
{
    size_t digits = strspn(s, "0123456789");
    if (digits == 0 || s[digits])
        return -1;
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno)
        return -1;
    *out = v;
    return 0;
}
