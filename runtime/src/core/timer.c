/* Timer source selection and calibration. The hot-path read is inline in
 * timer.h; this file decides once whether the hardware counter is usable. */
#define _GNU_SOURCE
#include "timer.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

int bt_timer_hardware = 0;

#if defined(__riscv)
static sigjmp_buf probe_jump;

static void probe_sigill(int sig)
{
    (void)sig;
    siglongjmp(probe_jump, 1);
}

/* Some kernels leave the time CSR to M-mode emulation or forbid it; a SIGILL
 * on the first read means "use clock_gettime". */
static int riscv_time_readable(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = probe_sigill;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGILL, &sa, &old) != 0)
        return 0;
    volatile int ok = 0;
    if (sigsetjmp(probe_jump, 1) == 0) {
        uint64_t a, b;
        __asm__ volatile("rdtime %0" : "=r"(a));
        __asm__ volatile("rdtime %0" : "=r"(b));
        ok = b >= a && (a != 0 || b != 0);
    }
    sigaction(SIGILL, &old, NULL);
    return ok;
}
#endif

/* Average nanoseconds between visible changes of the chosen clock, watched
 * for about a millisecond. */
static double granularity_ns(void)
{
    int64_t start = bt_timer_fallback(), now = start;
    int64_t last = bt_timer_now();
    long changes = 0;
    while ((now = bt_timer_fallback()) - start < 1000000) {
        int64_t v = bt_timer_now();
        if (v != last) {
            changes++;
            last = v;
        }
    }
    return changes ? (double)(now - start) / (double)changes : 1e9;
}

/* A counter that advances in coarse steps (a user-mode emulator updates the
 * ARM generic timer about once a microsecond) would give short zones a
 * duration of 0; clock_gettime is then the better clock. */
static void prefer_the_finer_clock(void)
{
    if (!bt_timer_hardware)
        return;
    double hardware = granularity_ns();
    bt_timer_hardware = 0;
    double fallback = granularity_ns();
    bt_timer_hardware = !(hardware > 100.0 && hardware > 2.0 * fallback);
}

void bt_timer_init(void)
{
#if defined(__x86_64__)
    /* Only an invariant TSC ticks at a constant rate across cores and P-states. */
    unsigned a, b, c, d;
    bt_timer_hardware = __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8));
#elif defined(__aarch64__)
    bt_timer_hardware = 1; /* the generic timer is always readable at EL0 on Linux */
#elif defined(__riscv) && __riscv_xlen == 64
    bt_timer_hardware = riscv_time_readable();
#else
    bt_timer_hardware = 0;
#endif
    prefer_the_finer_clock();
}

int64_t bt_timer_reference_ns(void)
{
    return bt_timer_fallback();
}

double bt_timer_multiplier(int64_t ticks0, int64_t ns0, int64_t ticks1, int64_t ns1)
{
    if (!bt_timer_hardware)
        return 1.0;
    if (ticks1 <= ticks0 || ns1 <= ns0)
        return 1.0;
    return (double)(ns1 - ns0) / (double)(ticks1 - ticks0);
}

struct bt_timer_pair bt_timer_pair(void)
{
    struct bt_timer_pair best = {0, 0, INT64_MAX};
    for (int i = 0; i < 5; i++) {
        int64_t a = bt_timer_reference_ns();
        int64_t t = bt_timer_now();
        int64_t b = bt_timer_reference_ns();
        if ((b - a) / 2 + 1 < best.half_ns)
            best = (struct bt_timer_pair){t, a + (b - a) / 2, (b - a) / 2 + 1};
    }
    return best;
}

double bt_timer_known_multiplier(void)
{
    /* ARM64's CNTFRQ_EL0 would state the generic timer's rate, but
     * firmware sets it, and on some boards sets it wrong (Linux then takes
     * the device tree's clock-frequency instead): measured like the rest. */
    return bt_timer_hardware ? 0 : 1.0;
}

uint64_t bt_timer_resolution(int pairs)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < pairs; i++) {
        int64_t a = bt_timer_now();
        int64_t b = bt_timer_now();
        if (b > a && (uint64_t)(b - a) < best)
            best = (uint64_t)(b - a);
    }
    return best == UINT64_MAX ? 1 : best;
}
