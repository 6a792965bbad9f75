/* Strict reading of the runtime's numeric environment variables. */
#include "env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long bt_env_number(const char *name, unsigned long lo, unsigned long hi,
                            unsigned long fallback, const char *what, const char *instead)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    unsigned long n = 0;
    const char *p = v;
    int ok = 1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || n > (hi - (unsigned long)(*p - '0')) / 10) {
            ok = 0;
            break;
        }
        n = n * 10 + (unsigned long)(*p - '0');
    }
    if (ok && n >= lo && n <= hi)
        return n;
    fprintf(stderr, "boardtrace: %s=%s is not %s (%lu..%lu); using %s\n", name, v, what, lo, hi,
            instead);
    return fallback;
}
