/* A dynamically linked program for the library tests: built for each board
 * architecture with that cross compiler, never run. */
#include <stdio.h>

int main(void)
{
    puts("hello");
    return 0;
}
