/* The program the system-tracing test samples: two threads, each running an
 * uninstrumented hot function, `alpha` for twice the CPU time of `beta`,
 * in bursts with sleeps between them (context switches). Each burst is in a
 * zone of its caller, so the test can check that samples of alpha and beta
 * fall inside their zones (one timebase). Usage: bt_sampled [MS_PER_BURST]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <boardtrace/trace.h>

#define BURSTS 10

static int burst_ms = 30;

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Hot loops that spend `ns` of the thread's CPU time; kept out of line and
 * apart so that every sample in them names them. */
__attribute__((noinline)) static uint64_t alpha(int64_t ns)
{
    uint64_t x = 1;
    int64_t end = thread_cpu_ns() + ns;
    while (thread_cpu_ns() < end)
        for (int k = 0; k < 200000; k++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

__attribute__((noinline)) static uint64_t beta(int64_t ns)
{
    uint64_t x = 7;
    int64_t end = thread_cpu_ns() + ns;
    while (thread_cpu_ns() < end)
        for (int k = 0; k < 200000; k++)
            x = (x ^ (x >> 7)) * 0x9E3779B97F4A7C15ull;
    return x;
}

static volatile uint64_t sink;

static void *run_alpha(void *arg)
{
    (void)arg;
    bt_thread_set_name("alpha-thread");
    for (int i = 0; i < BURSTS; i++) {
        BT_ZONE_N(z, "alpha_burst", 1);
        sink += alpha((int64_t)burst_ms * 2 * 1000000);
        BT_ZONE_END(z);
        usleep(5000);
    }
    return NULL;
}

static void *run_beta(void *arg)
{
    (void)arg;
    bt_thread_set_name("beta-thread");
    for (int i = 0; i < BURSTS; i++) {
        BT_ZONE_N(z, "beta_burst", 1);
        sink += beta((int64_t)burst_ms * 1000000);
        BT_ZONE_END(z);
        usleep(5000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        burst_ms = atoi(argv[1]);
    if (burst_ms < 1)
        burst_ms = 1;
    pthread_t a, b;
    pthread_create(&a, NULL, run_alpha, NULL);
    pthread_create(&b, NULL, run_beta, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("bt_sampled: %d bursts of %d and %d ms\n", BURSTS, 2 * burst_ms, burst_ms);
    return 0;
}
