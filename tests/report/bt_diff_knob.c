/* The program boardtrace-report diff's test records: ITERATIONS frames,
 * each a zone "iteration" holding a zone "steady" (a fixed busy loop) and a
 * zone "knob" whose loop count BT_DIFF_KNOB sets (default 20000), so two
 * recordings differ in one zone's work; with BT_DIFF_EXTRA set, a zone
 * "extra" too. */
#include <stdint.h>
#include <stdlib.h>

#include <boardtrace/trace.h>

#define ITERATIONS 2000
#define STEADY     20000

static void spin(unsigned long n)
{
    for (volatile unsigned long i = 0; i < n; i++)
        ;
}

int main(void)
{
    const char *knob_env = getenv("BT_DIFF_KNOB");
    unsigned long knob = knob_env ? strtoul(knob_env, NULL, 10) : 20000;
    int extra = getenv("BT_DIFF_EXTRA") != NULL;
    for (int i = 0; i < ITERATIONS; i++) {
        BT_ZONE_N(iteration, "iteration", 1);
        {
            BT_ZONE_N(steady, "steady", 1);
            spin(STEADY);
            BT_ZONE_END(steady);
        }
        {
            BT_ZONE_N(k, "knob", 1);
            spin(knob);
            BT_ZONE_END(k);
        }
        if (extra) {
            BT_ZONE_N(e, "extra", 1);
            spin(1000);
            BT_ZONE_END(e);
        }
        BT_ZONE_END(iteration);
        BT_FRAME_MARK;
    }
    return 0;
}
