/* The runtime's clock against the kernel's: the runtime's timer (rdtime on
 * RISC-V, cntvct_el0 on ARM64, the TSC on x86) calibrated the way the
 * runtime calibrates it, a (ticks, ns) pair at start and another later, then
 * read against CLOCK_MONOTONIC (and CLOCK_MONOTONIC_RAW, the clock perf
 * stamps samples with) for two seconds. Every reading must agree with the
 * kernel's clock within the error the calibration itself allows: how far
 * apart each pair's two clock reads were, and the counter's resolution,
 * carried forward by how far the reading lies past the calibration.
 * Usage: test_timer_clock [--require-hardware]: with the option the
 * hardware counter must be the runtime's choice (a board with a real
 * kernel), else clock_gettime is accepted too. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/timer.h"

static int require_hardware;

/* A (ticks, ns) pair: the counter read between two reads of the clock, ns
 * their midpoint, half_ns half their distance. Of five tries, the tightest. */
struct pair {
    int64_t ticks;
    int64_t ns;
    int64_t half_ns;
};

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct pair take_pair(clockid_t id)
{
    struct pair best = {.half_ns = INT64_MAX};
    for (int i = 0; i < 5; i++) {
        int64_t a = clock_ns(id);
        int64_t t = bt_timer_now();
        int64_t b = clock_ns(id);
        if ((b - a) / 2 < best.half_ns)
            best = (struct pair){.ticks = t, .ns = a + (b - a) / 2, .half_ns = (b - a) / 2 + 1};
    }
    return best;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void agrees_with(clockid_t id, const char *name)
{
    struct pair c0 = take_pair(id);
    sleep_ms(300);
    struct pair c1 = take_pair(id);
    double mul = bt_timer_multiplier(c0.ticks, c0.ns, c1.ticks, c1.ns);
    double res_ns = (double)bt_timer_resolution(1000) * mul;
    double span = (double)(c1.ns - c0.ns);
    double worst = 0, worst_bound = 0, worst_ratio = 0;
    for (int k = 0; k < 20; k++) {
        sleep_ms(100);
        struct pair p = take_pair(id);
        double predicted = (double)c0.ns + (double)(p.ticks - c0.ticks) * mul;
        double error = predicted - (double)p.ns;
        if (error < 0)
            error = -error;
        /* The calibration's endpoints are each known to their half width
         * and the counter's resolution; the rate they give errs by their
         * sum over the span, which grows with the distance from c0. */
        double reach = (double)(p.ns - c0.ns) / span;
        double bound = (double)(c0.half_ns + p.half_ns) + res_ns +
                       ((double)(c0.half_ns + c1.half_ns) + 2 * res_ns) * reach;
        if (error / bound > worst_ratio) {
            worst_ratio = error / bound;
            worst = error;
            worst_bound = bound;
        }
    }
    print_message("%s: %.6f ns per tick, resolution %.0f ns, calibration pairs within %lld and "
                  "%lld ns; worst reading %.0f ns off, allowed %.0f ns (%.0f%% of it)\n",
                  name, mul, res_ns, (long long)c0.half_ns, (long long)c1.half_ns, worst,
                  worst_bound, 100 * worst_ratio);
    assert_true(worst_ratio <= 1.0);
}

static void the_counter_is_the_runtime_choice(void **state)
{
    (void)state;
    bt_timer_init();
    print_message("runtime clock: %s\n",
                  bt_timer_hardware ? "the hardware counter" : "clock_gettime (fallback)");
    if (require_hardware)
        assert_true(bt_timer_hardware);
}

static void ticks_agree_with_clock_monotonic(void **state)
{
    (void)state;
    agrees_with(CLOCK_MONOTONIC, "CLOCK_MONOTONIC");
}

static void ticks_agree_with_clock_monotonic_raw(void **state)
{
    (void)state;
    agrees_with(CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW");
}

/* Every hardware counter's rate is measured (0: none known); only the
 * clock_gettime fallback's is known, 1 ns per tick. ARM64's CNTFRQ_EL0 is
 * not taken on trust: firmware sets it, on some boards wrong. */
static void a_hardware_counters_rate_is_measured(void **state)
{
    (void)state;
    assert_true(bt_timer_known_multiplier() == (bt_timer_hardware ? 0.0 : 1.0));
}

/* The welcome's measured rate: taken as soon as its error bound (the two
 * samples' half widths and the counter's resolution each, over their span)
 * is 2e-6, or after 200 ms, as the worker (runtime/src/worker/worker.c)
 * does; a reading 300 ms later then
 * lies where that rate puts it, within the bound carried over the longer
 * span. The resolution is measured, not taken as one tick: a user-mode
 * emulator's ARM counter steps about once a microsecond (62 ticks), and on
 * a loaded machine the runtime may still prefer it to clock_gettime. */
static void short_calibration_holds(void)
{
    double res_ticks = (double)bt_timer_resolution(1000);
    struct bt_timer_pair c0 = bt_timer_pair(), c1;
    double mul, doubt;
    for (;;) {
        c1 = bt_timer_pair();
        mul = bt_timer_multiplier(c0.ticks, c0.ns, c1.ticks, c1.ns);
        doubt = (double)(c0.half_ns + c1.half_ns) + 2 * res_ticks * mul;
        if (c1.ns - c0.ns >= 200000000 || doubt <= 2e-6 * (double)(c1.ns - c0.ns))
            break;
        sleep_ms(1);
    }
    sleep_ms(300);
    struct bt_timer_pair p = bt_timer_pair();
    double predicted = (double)c0.ns + (double)(p.ticks - c0.ticks) * mul;
    double error = predicted > (double)p.ns ? predicted - (double)p.ns : (double)p.ns - predicted;
    double reach = (double)(p.ns - c0.ns) / (double)(c1.ns - c0.ns);
    double bound = (double)(c0.half_ns + p.half_ns) + 2 * res_ticks * mul + doubt * reach;
    print_message("calibrated over %.1f ms to %.2g (resolution %.0f ticks): a reading %.0f ms on "
                  "is %.0f ns off, allowed %.0f ns\n",
                  (double)(c1.ns - c0.ns) / 1e6, doubt / (double)(c1.ns - c0.ns), res_ticks,
                  (double)(p.ns - c0.ns) / 1e6, error, bound);
    assert_true(error <= bound);
}

static void a_short_calibration_holds_to_its_bound(void **state)
{
    (void)state;
    if (bt_timer_hardware)
        short_calibration_holds();
}

/* The same with ARM's counter, which every Linux lets a program read, even
 * where the runtime prefers clock_gettime (under an emulator, whose counter
 * is coarse): the bound holds for a coarse counter too. */
static void the_arm_counter_holds_to_its_bound_however_coarse(void **state)
{
    (void)state;
#if defined(__aarch64__)
    int chosen = bt_timer_hardware;
    bt_timer_hardware = 1;
    short_calibration_holds();
    bt_timer_hardware = chosen;
#endif
}

int main(int argc, char **argv)
{
    require_hardware = argc > 1 && strcmp(argv[1], "--require-hardware") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_counter_is_the_runtime_choice),
        cmocka_unit_test(ticks_agree_with_clock_monotonic),
        cmocka_unit_test(ticks_agree_with_clock_monotonic_raw),
        cmocka_unit_test(a_hardware_counters_rate_is_measured),
        cmocka_unit_test(a_short_calibration_holds_to_its_bound),
        cmocka_unit_test(the_arm_counter_holds_to_its_bound_however_coarse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
