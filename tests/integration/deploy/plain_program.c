/* Test double for a program built without tracing: no boardtrace note, no
 * Tracy client. It prints a line and runs for a few seconds, never opening
 * a tracing port. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    printf("plain-program running\n");
    fflush(stdout);
    sleep(4);
    return 0;
}
