/* The measured loop: N empty zones (begin + end) on one thread, timed with
 * CLOCK_MONOTONIC. Written against Tracy's C API so the same source builds
 * against boardtrace's TracyC.h, with tracing compiled out, or (outside this
 * repository) against upstream Tracy for comparison.
 * Usage: bench_zone_loop ZONES   (waits up to 60 s for a capture first) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef BENCH_COMPILED_OUT
#define TracyCZoneN(ctx, name, active)
#define TracyCZoneEnd(ctx)
#define TracyCSetThreadName(name)
#define TracyCIsConnected 1
#else
#include "tracy/TracyC.h"
#endif

static double clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
    long zones = argc > 1 ? atol(argv[1]) : 10000000;
    TracyCSetThreadName("bench"); /* sets up this thread's buffer outside the loop */
    double give_up = now_ns() + 60e9;
    while (!TracyCIsConnected && now_ns() < give_up) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    /* wall time includes waiting for room and being preempted on a busy
     * machine; the thread's CPU time is what the instrumentation costs */
    double start = now_ns();
    double cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < zones; i++) {
        TracyCZoneN(z, "bench", 1);
        __asm__ volatile("" ::: "memory"); /* keep the loop: one zone per iteration */
        TracyCZoneEnd(z);
    }
    double cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    double ns = now_ns() - start;
    printf("zones=%ld ns_per_zone=%.2f cpu_ns_per_zone=%.2f\n", zones, ns / (double)zones,
           cpu / (double)zones);
    return 0;
}
