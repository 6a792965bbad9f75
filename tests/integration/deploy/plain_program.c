/* Test double for a program built without tracing: no boardtrace note, no
 * Tracy client. It prints a line and runs until it is stopped (at most five
 * minutes), never opening a tracing port: a test sees the ready timeout
 * whatever the machine's load, not a race with the program's own end. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    printf("plain-program running\n");
    fflush(stdout);
    sleep(300);
    return 0;
}
