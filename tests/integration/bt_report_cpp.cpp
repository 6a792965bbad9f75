// A C++ program for the report's tests (test_report_cpp): its functions
// reach the trace under their mangled symbol names (callstack frames come
// from the ELF symbol table), and it leaks allocations with a callstack, so
// boardtrace-report shows them demangled and names where the leaks came from.
#include <cstddef>

#include "tracy/Tracy.hpp"

namespace report_demo
{

// Not inlined, so each is a frame of its own in the callstacks.
__attribute__((noinline)) static int Fibonacci(int n)
{
    ZoneScopedS(8);
    return n < 2 ? n : Fibonacci(n - 1) + Fibonacci(n - 2);
}

// Hands out slices of a static arena: what the trace sees is the same as
// for malloc, without a real leak in the test's process.
static char arena[1024];
static std::size_t used;

__attribute__((noinline)) static char *LeakyAlloc(std::size_t n)
{
    char *p = arena + used;
    used += n;
    TracyAllocNS(p, n, 8, "leaky-pool");
    return p;
}

} // namespace report_demo

int main()
{
    volatile int r = report_demo::Fibonacci(5);
    (void)r;
    // 3 leaks of 100 bytes from LeakyAlloc; a fourth allocation is freed.
    for (int i = 0; i < 3; i++)
        (void)report_demo::LeakyAlloc(100);
    char *kept = report_demo::LeakyAlloc(64);
    TracyFreeNS(kept, 8, "leaky-pool");
    return 0;
}
