/* The .tracy reader against upstream: the file upstream tracy-capture wrote
 * for the recorded session reads to its end and holds the README's counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "session_expect.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    static char path[4096];
    snprintf(path, sizeof path, "%s/session.tracy", argv[1]);
    return session_expect_run("upstream_session_tracy", path);
}
