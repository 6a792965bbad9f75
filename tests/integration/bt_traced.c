/* The traced program the integration tests start: one scenario per first
 * argument, each emitting a known number of every event kind through
 * <boardtrace/trace.h>, so a test acting as the server can check that exactly
 * that arrived. Scenarios: features, many THREADS ZONES, drop ZONES,
 * callstacks, bursts, sleep, tracyc, deep DEPTH, churn THREADS, texts, linger,
 * idle, signals ZONES, fork ZONES, open-at-exit, wide THREADS PLOTS. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <boardtrace/trace.h>

#define FEATURE_WORKERS 2
#define FEATURE_ITER    500

static void spin(void)
{
    for (volatile int k = 0; k < 32; k++) {
    }
}

static void *feature_worker(void *arg)
{
    int idx = (int)(intptr_t)arg;
    char name[32];
    snprintf(name, sizeof(name), "feature-worker-%d", idx + 1);
    bt_thread_set_name(name);
    static char pool_block[64];
    for (int i = 0; i < FEATURE_ITER; i++) {
        BT_ZONE_N(outer, "outer", 1);
        BT_ZONE_VALUE(outer, (uint64_t)i);
        {
            BT_ZONE_NC(inner, "inner", 0x00FF00, 1);
            char text[32];
            int n = snprintf(text, sizeof(text), "iter %d", i);
            BT_ZONE_TEXT(inner, text, (size_t)n);
            BT_ZONE_COLOR(inner, 0xFF0000);
            spin();
            BT_ZONE_END(inner);
        }
        {
            static const char file[] = "bt_traced.c";
            static const char function[] = "dyn_function";
            bt_zone z = bt_zone_begin_dynamic(__LINE__, file, sizeof(file) - 1, function,
                                              sizeof(function) - 1, "dyn_named", 9, 0, 0, 1);
            BT_ZONE_NAME(z, "renamed", 7);
            spin();
            BT_ZONE_END(z);
        }
        BT_ZONE_END(outer);
        void *p = malloc(32);
        BT_ALLOC(p, 32);
        BT_FREE(p);
        free(p);
        BT_ALLOC_N(pool_block + idx * 8, 8, "feature-pool");
        BT_FREE_N(pool_block + idx * 8, "feature-pool");
        bt_plot_int("feature-int", i);
    }
    return NULL;
}

/* Counts are fixed by the constants above; the test derives them. */
static int scenario_features(void)
{
    bt_thread_set_name("feature-main");
    BT_APP_INFO("bt_traced features", 18);
    BT_MESSAGE_L("features start");
    struct bt_lock *lock = NULL;
    BT_LOCK_ANNOUNCE(lock);
    BT_LOCK_NAME(lock, "feature-lock", 12);
    bt_plot_config("feature-double", BT_PLOT_PERCENTAGE, 1, 0, 0x00FF00);
    pthread_t th[FEATURE_WORKERS];
    for (int w = 0; w < FEATURE_WORKERS; w++)
        pthread_create(&th[w], NULL, feature_worker, (void *)(intptr_t)w);
    for (int f = 0; f < 50; f++) {
        BT_FRAME_MARK_START("feature-discontinuous");
        BT_ZONE_N(frame, "frame", 1);
        BT_LOCK_BEFORE_LOCK(lock);
        BT_LOCK_AFTER_LOCK(lock);
        spin();
        BT_LOCK_AFTER_UNLOCK(lock);
        BT_PLOT("feature-double", f * 0.5);
        BT_PLOT_F("feature-float", (float)f);
        if (f % 10 == 0) {
            char msg[64];
            int n = snprintf(msg, sizeof(msg), "message %d", f);
            BT_MESSAGE(msg, (size_t)n);
            n = snprintf(msg, sizeof(msg), "colored %d", f);
            BT_MESSAGE_C(msg, (size_t)n, 0xFF0000);
            BT_MESSAGE_S("warning", 7, BT_SEVERITY_WARNING);
        }
        BT_ZONE_END(frame);
        BT_FRAME_MARK_END("feature-discontinuous");
        BT_FRAME_MARK_NAMED("feature-named");
        BT_FRAME_MARK;
    }
    for (int w = 0; w < FEATURE_WORKERS; w++)
        pthread_join(th[w], NULL);
    BT_MEM_DISCARD("feature-pool");
    BT_LOCK_TERMINATE(lock);
    BT_MESSAGE_LC("features end", 0x0000FF);
    return 0;
}

struct many_args {
    long zones;
};

static const struct bt_srcloc many_loc = {"many", "many_worker", "bt_traced.c", 1, 0};

static void *many_worker(void *arg)
{
    const struct many_args *a = arg;
    for (long i = 0; i < a->zones; i++) {
        bt_zone z = bt_zone_begin(&many_loc, 0, 1);
        bt_zone_end(z);
    }
    return NULL;
}

static int scenario_many(int threads, long zones)
{
    pthread_t th[64];
    struct many_args a = {zones};
    if (threads > 64)
        threads = 64;
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, many_worker, &a);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    return 0;
}

/* Emits `zones` zones nobody may be there to receive, then reports drops. */
static int scenario_drop(long zones, int wait_stdin)
{
    for (long i = 0; i < zones; i++) {
        BT_ZONE_N(z, "drop", 1);
        BT_ZONE_END(z);
    }
    printf("dropped %llu\n", (unsigned long long)bt_dropped_events());
    fflush(stdout);
    if (wait_stdin) {
        char c;
        while (read(0, &c, 1) > 0) {
        }
    }
    return 0;
}

static __attribute__((noipa)) void callstack_leaf(int i)
{
    BT_ZONE_NCD(z, "with_callstack", 0, 8, 1);
    void *p = malloc(16);
    bt_mem_alloc(p, 16, NULL, 6);
    bt_mem_free(p, NULL, 6);
    free(p);
    bt_message("callstack message", 17, BT_SEVERITY_INFO, 4);
    (void)i;
    BT_ZONE_END(z);
}

static __attribute__((noipa)) void callstack_middle(int i)
{
    callstack_leaf(i);
    __asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

static int scenario_callstacks(void)
{
    for (int i = 0; i < 20; i++)
        callstack_middle(i);
    return 0;
}

/* Back-to-back allocation/free pairs: with a coarse clock both often read the
 * same tick, yet the server must see every free after its allocation. */
static void *burst_worker(void *arg)
{
    char *block = arg;
    for (int i = 0; i < 20000; i++) {
        BT_ALLOC(block + (i % 8), 1);
        BT_FREE(block + (i % 8));
    }
    return NULL;
}

static int scenario_bursts(void)
{
    static char blocks[2][8];
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, burst_worker, blocks[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    return 0;
}

/* Zones nested `depth` deep: with a small buffer their pending ends exceed it. */
static void nest(int depth)
{
    if (depth == 0)
        return;
    BT_ZONE_N(z, "deep", 1);
    nest(depth - 1);
    BT_ZONE_END(z);
}

/* Messages of every length from 0 to 2999 bytes from 4 threads: with a small
 * buffer, variable-size records wrap around it all the time. The program
 * prints the sum of the texts' FNV-1a hashes for the capture to compare. */
static uint64_t fnv1a(const char *text, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)text[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void *texts_worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    static char text_buffers[4][3000];
    char *text = text_buffers[id];
    uint64_t *sum = malloc(sizeof(uint64_t));
    *sum = 0;
    for (int i = 0; i < 3000; i++) {
        size_t len = (size_t)((i * 7 + id * 13) % 3000);
        for (size_t k = 0; k < len; k++)
            text[k] = (char)('a' + (k * 31 + (size_t)i + (size_t)id) % 26);
        BT_ZONE_N(z, "texts", 1);
        BT_MESSAGE(text, len);
        BT_ZONE_END(z);
        *sum += fnv1a(text, len);
    }
    return sum;
}

static int scenario_texts(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, texts_worker, (void *)(intptr_t)i);
    uint64_t total = 0;
    for (int i = 0; i < 4; i++) {
        void *sum;
        pthread_join(th[i], &sum);
        total += *(uint64_t *)sum;
        free(sum);
    }
    printf("hash %llu\n", (unsigned long long)total);
    return 0;
}

/* Threads that come and go before any capture: each emits 10 zones. */
static void *churn_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) {
        BT_ZONE_N(z, "churn", 1);
        BT_ZONE_END(z);
    }
    return NULL;
}

static int scenario_churn(int threads)
{
    for (int i = 0; i < threads; i++) {
        pthread_t th;
        pthread_create(&th, NULL, churn_worker, NULL);
        pthread_join(th, NULL);
    }
    struct timespec ts = {0, 200000000}; /* the worker prunes every 10 ms */
    nanosleep(&ts, NULL);
    printf("dropped %llu\n", (unsigned long long)bt_dropped_events());
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0) {
    }
    return 0;
}

/* A SIGALRM handler that emits a zone with a value (and a message) on the
 * thread it interrupts, which is itself emitting zones with texts: the
 * handler lands inside emitting calls again and again. Prints how many
 * handler zones ran and how many events the runtime dropped. */
static volatile sig_atomic_t alarms;

static void alarm_zone(int sig)
{
    (void)sig;
    BT_ZONE_N(z, "in-handler", 1);
    BT_ZONE_VALUE(z, (uint64_t)alarms);
    BT_MESSAGE_L("alarm");
    BT_ZONE_END(z);
    alarms++;
}

static int scenario_signals(long zones)
{
    BT_ZONE_N(first, "main", 1); /* the thread's buffer exists before any alarm */
    BT_ZONE_END(first);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = alarm_zone;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 20}, {0, 20}};
    setitimer(ITIMER_REAL, &every, NULL);
    static const char text[] = "a text long enough to be written while an alarm comes";
    for (long i = 1; i < zones; i++) {
        BT_ZONE_N(z, "main", 1);
        BT_ZONE_TEXT(z, text, sizeof(text) - 1);
        BT_ZONE_END(z);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("alarms %ld dropped %llu\n", (long)alarms, (unsigned long long)bt_dropped_events());
    fflush(stdout);
    return 0;
}

/* Forks inside a zone; the child emits `zones` zones (more than its buffer
 * holds) and exits through exit(), the parent waits for it, prints its exit
 * status and emits one more zone. */
static int scenario_fork(long zones)
{
    BT_ZONE_N(outer, "before-fork", 1);
    pid_t pid = fork();
    if (pid == 0) {
        for (long i = 0; i < zones; i++) {
            BT_ZONE_N(z, "in-child", 1);
            BT_ZONE_END(z);
        }
        BT_ZONE_END(outer);
        exit(0);
    }
    int status = -1;
    if (pid > 0)
        waitpid(pid, &status, 0);
    BT_ZONE_END(outer);
    BT_ZONE_N(after, "after-fork", 1);
    BT_ZONE_END(after);
    printf("child %d\n", pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fflush(stdout);
    return 0;
}

/* A thread that returns with two zones open, then exit() inside two open
 * zones of the main thread. */
static void *open_zones_worker(void *arg)
{
    (void)arg;
    BT_ZONE_N(a, "thread-open", 1);
    BT_ZONE_N(b, "thread-open", 1);
    (void)a;
    (void)b;
    return NULL;
}

static int scenario_open_at_exit(void)
{
    pthread_t th;
    pthread_create(&th, NULL, open_zones_worker, NULL);
    pthread_join(th, NULL);
    BT_ZONE_N(outer, "open-at-exit", 1);
    BT_ZONE_N(inner, "open-at-exit", 1);
    (void)outer;
    (void)inner;
    exit(0);
}

/* Every macro of Tracy's C API, in bt_traced_tracyc.c. */
int scenario_tracyc(void);

/* One zone around a 300 ms sleep: the capture checks the timer calibration. */
static int scenario_sleep(void)
{
    BT_ZONE_N(z, "sleep", 1);
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    BT_ZONE_END(z);
    return 0;
}

/* Emits a little, then keeps running until stdin closes. */
static int scenario_linger(void)
{
    BT_ZONE_N(z, "linger", 1);
    BT_ZONE_END(z);
    printf("ready\n");
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0) {
    }
    return 0;
}

/* wide: THREADS named threads, thread k busy k + 1 times as long as the
 * first (20 zones of its own name each), and PLOTS plots of 10 points each:
 * more of both than a report draws, so its caps show. */
struct wide_args {
    int k;
};

static void *wide_worker(void *arg)
{
    int k = ((const struct wide_args *)arg)->k;
    char name[32];
    snprintf(name, sizeof(name), "wide-%02d", k);
    bt_thread_set_name(name);
    for (int i = 0; i < 20; i++) {
        BT_ZONE_N(z, "wide_work", 1);
        for (int r = 0; r <= k; r++)
            for (int n = 0; n < 200; n++)
                spin();
        BT_ZONE_END(z);
    }
    return NULL;
}

static int scenario_wide(int threads, int plots)
{
    if (threads < 1 || threads > 256 || plots < 0 || plots > 1000)
        return 2;
    pthread_t th[256];
    struct wide_args args[256];
    for (int k = 0; k < threads; k++) {
        args[k].k = k;
        pthread_create(&th[k], NULL, wide_worker, &args[k]);
    }
    for (int k = 0; k < threads; k++)
        pthread_join(th[k], NULL);
    /* Plot names must outlive the trace: one static block. */
    static char names[1000][16];
    for (int p = 0; p < plots; p++) {
        snprintf(names[p], sizeof(names[p]), "wide-plot-%03d", p);
        for (int i = 0; i < 10; i++)
            bt_plot_int(names[p], p * 10 + i);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "features";
    if (strcmp(what, "features") == 0)
        return scenario_features();
    if (strcmp(what, "many") == 0 && argc > 3)
        return scenario_many(atoi(argv[2]), atol(argv[3]));
    if (strcmp(what, "drop") == 0 && argc > 2)
        return scenario_drop(atol(argv[2]), argc > 3);
    if (strcmp(what, "callstacks") == 0)
        return scenario_callstacks();
    if (strcmp(what, "texts") == 0)
        return scenario_texts();
    if (strcmp(what, "churn") == 0 && argc > 2)
        return scenario_churn(atoi(argv[2]));
    if (strcmp(what, "deep") == 0 && argc > 2) {
        nest(atoi(argv[2]));
        return 0;
    }
    if (strcmp(what, "tracyc") == 0)
        return scenario_tracyc();
    if (strcmp(what, "sleep") == 0)
        return scenario_sleep();
    if (strcmp(what, "bursts") == 0)
        return scenario_bursts();
    if (strcmp(what, "linger") == 0)
        return scenario_linger();
    if (strcmp(what, "idle") == 0)
        return 0;
    if (strcmp(what, "open-at-exit") == 0)
        return scenario_open_at_exit();
    if (strcmp(what, "fork") == 0 && argc > 2)
        return scenario_fork(atol(argv[2]));
    if (strcmp(what, "wide") == 0 && argc > 3)
        return scenario_wide(atoi(argv[2]), atoi(argv[3]));
    if (strcmp(what, "signals") == 0 && argc > 2)
        return scenario_signals(atol(argv[2]));
    fprintf(stderr, "bt_traced: unknown scenario %s\n", what);
    return 2;
}
