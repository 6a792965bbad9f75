/* The program boardtrace-report diff's test records: ITERATIONS frames,
 * each a zone "iteration" holding a zone "steady" (a fixed amount of work)
 * and a zone "knob" whose work BT_DIFF_KNOB sets, in microseconds (default
 * 200), so two recordings differ in one zone's work; with BT_DIFF_EXTRA set, a
 * zone "extra" too. The work is measured in the thread's own CPU time, not in
 * loop turns: a turn's cost moves with the machine (its other guests, its
 * clock), while a zone's CPU time does not, so a zone that was not preempted
 * lasts what the knob says however busy the machine is. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <boardtrace/trace.h>

#define ITERATIONS 500
#define STEADY_US  200

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Busy for us microseconds of this thread's CPU time. */
static void work(unsigned long us)
{
    int64_t end = cpu_ns() + (int64_t)us * 1000;
    while (cpu_ns() < end)
        ;
}

int main(void)
{
    const char *knob_env = getenv("BT_DIFF_KNOB");
    unsigned long knob = knob_env ? strtoul(knob_env, NULL, 10) : 200;
    int extra = getenv("BT_DIFF_EXTRA") != NULL;
    for (int i = 0; i < ITERATIONS; i++) {
        BT_ZONE_N(iteration, "iteration", 1);
        {
            BT_ZONE_N(steady, "steady", 1);
            work(STEADY_US);
            BT_ZONE_END(steady);
        }
        {
            BT_ZONE_N(k, "knob", 1);
            work(knob);
            BT_ZONE_END(k);
        }
        if (extra) {
            BT_ZONE_N(e, "extra", 1);
            work(10);
            BT_ZONE_END(e);
        }
        BT_ZONE_END(iteration);
        BT_FRAME_MARK;
    }
    return 0;
}
