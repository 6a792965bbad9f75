/* A user's program built against the installed boardtrace package: one zone,
 * a message and a plot through <boardtrace/trace.h>, nobody connected, so it
 * exits at once. Prints the version and mode it was built with. */
#include <stdio.h>
#include <string.h>

#include <boardtrace/config.h>
#include <boardtrace/trace.h>

int main(void)
{
    BT_ZONE_N(zone, "consumer", 1);
    BT_MESSAGE("consumer started", strlen("consumer started"));
    BT_PLOT("consumer.value", 1.0);
    BT_ZONE_END(zone);
    printf("consumer: boardtrace %s mode %d\n", BT_VERSION_STRING, BT_TRACING_MODE);
    return 0;
}
