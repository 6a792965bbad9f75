/* The runtime's clock: a raw hardware counter read on the hot path (rdtsc,
 * cntvct_el0, rdtime) with clock_gettime as fallback, and the calibration
 * that turns its ticks into the nanoseconds of the welcome message. */
#ifndef BT_TIMER_H
#define BT_TIMER_H

#include <stdint.h>
#include <time.h>

/* Nonzero when the hardware counter is used; 0 means clock_gettime
 * (CLOCK_MONOTONIC_RAW nanoseconds). Set once by bt_timer_init. */
extern int bt_timer_hardware;

/* Probes the counter (an x86 TSC must be invariant; a RISC-V time CSR must be
 * readable from user mode) and chooses the source. */
void bt_timer_init(void);

static inline int64_t bt_timer_fallback(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t bt_timer_now(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(bt_timer_hardware, 1)) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return (int64_t)(((uint64_t)hi << 32) | lo);
    }
#elif defined(__aarch64__)
    if (__builtin_expect(bt_timer_hardware, 1)) {
        uint64_t v;
        __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
        return (int64_t)v;
    }
#elif defined(__riscv) && __riscv_xlen == 64
    if (__builtin_expect(bt_timer_hardware, 1)) {
        uint64_t v;
        __asm__ volatile("rdtime %0" : "=r"(v));
        return (int64_t)v;
    }
#endif
    return bt_timer_fallback();
}

/* A (ticks, ns) sample: the counter read between two reads of the
 * reference clock, the tightest of a few tries; ns is their middle, known
 * to within half_ns. */
struct bt_timer_pair {
    int64_t ticks, ns, half_ns;
};
struct bt_timer_pair bt_timer_pair(void);

/* Nanoseconds per tick known with nothing to measure: 1.0 without a
 * hardware counter (ticks are ns); 0 where the rate must be measured (every
 * hardware counter: a stated rate such as ARM64's CNTFRQ_EL0 is only as
 * right as the board's firmware). */
double bt_timer_known_multiplier(void);

/* Nanoseconds per tick, measured between two (ticks, ns) samples. */
double bt_timer_multiplier(int64_t ticks0, int64_t ns0, int64_t ticks1, int64_t ns1);

/* Smallest positive difference of back-to-back reads, over `pairs` pairs. */
uint64_t bt_timer_resolution(int pairs);

/* Wall-clock-free monotonic nanoseconds used for calibration. */
int64_t bt_timer_reference_ns(void);

#endif
