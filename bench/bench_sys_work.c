/* The system tracing benchmark's program (bench_systrace): once a capture is
 * connected, two threads each do a fixed amount of arithmetic in 200 zoned
 * chunks; then it prints the work's wall time, the process's CPU time and
 * the CPU time of the runtime's system tracer thread ("boardtrace-sys", from
 * /proc/self/task/TID/schedstat; 0 when it does not run) and of its worker
 * ("boardtrace", which encodes and sends).
 * Usage: bench_sys_work ITERATIONS_PER_THREAD */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <boardtrace/trace.h>

#define CHUNKS 200

static uint64_t iterations;
static volatile uint64_t sink;

static int64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *work(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg;
    for (int c = 0; c < CHUNKS; c++) {
        BT_ZONE_N(z, "chunk", 1);
        for (uint64_t i = 0; i < iterations / CHUNKS; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        BT_ZONE_END(z);
    }
    sink += x;
    return NULL;
}

/* CPU nanoseconds of this process's thread named `name`, or 0. */
static long long thread_cpu_ns(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long long ns = 0;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        if (f)
            fclose(f);
        if (strcmp(comm, name) != 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        f = fopen(path, "r");
        if (f && fscanf(f, "%lld", &ns) != 1)
            ns = 0;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return ns;
}

int main(int argc, char **argv)
{
    iterations = argc > 1 ? strtoull(argv[1], NULL, 10) : 400000000ull;
    while (!bt_is_connected()) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    int64_t cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), reader0 = thread_cpu_ns("boardtrace-sys");
    int64_t worker0 = thread_cpu_ns("boardtrace");
    int64_t t0 = now_ns(CLOCK_MONOTONIC);
    pthread_t a, b;
    pthread_create(&a, NULL, work, (void *)1);
    pthread_create(&b, NULL, work, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    int64_t t1 = now_ns(CLOCK_MONOTONIC);
    int64_t cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), reader1 = thread_cpu_ns("boardtrace-sys");
    int64_t worker1 = thread_cpu_ns("boardtrace");
    printf("work_ns=%lld cpu_ns=%lld reader_ns=%lld worker_ns=%lld\n", (long long)(t1 - t0),
           (long long)(cpu1 - cpu0), (long long)(reader1 - reader0),
           (long long)(worker1 - worker0));
    fflush(stdout);
    return 0;
}
