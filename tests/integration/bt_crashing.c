/* A traced program that crashes: `bt_crashing wait` waits for a capture,
 * emits a frame, then in a zone allocates (with its callstack) and writes
 * through a null pointer; `bt_crashing early` writes through the null pointer
 * as soon as a capture connected, before it emitted anything. With the
 * crash handler, the capture receives the zone, the allocation and the
 * crash; the program dies by SIGSEGV either way. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <boardtrace/trace.h>

static volatile int *volatile nowhere;

static __attribute__((noinline)) void crashing_step(void)
{
    BT_ZONE_N(z, "crashing_step", 1);
    void *block = malloc(4096);
    BT_ALLOC(block, 4096);
    *nowhere = 1;
    BT_FREE(block);
    free(block);
    BT_ZONE_END(z);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "wait") && strcmp(argv[1], "early"))) {
        fprintf(stderr, "usage: bt_crashing wait|early\n");
        return 2;
    }
    struct timespec step = {0, 10000000};
    for (int i = 0; i < 6000 && !bt_is_connected(); i++)
        nanosleep(&step, NULL);
    if (!strcmp(argv[1], "early"))
        *nowhere = 1;
    BT_FRAME_MARK;
    crashing_step();
    return 0;
}
