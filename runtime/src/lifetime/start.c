/* Runtime lifetime (start.h): started from a constructor (or the first
 * event), stopped from a destructor that joins the worker, which is what
 * makes TRACY_NO_EXIT hold the process until a capture has everything. Also
 * the configuration read from the environment, and a forked child's
 * untraced life. */
#define _GNU_SOURCE
#include "start.h"

#include <sys/eventfd.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/env.h"
#include "core/ring.h"
#include "core/runtime.h"
#include "core/timer.h"
#include "crash.h"
#include "systrace/systrace.h"
#include "worker/worker.h"

#define BUFFER_KB_DEFAULT 1024u
#define BUFFER_KB_MIN     64u
#define BUFFER_KB_MAX     (1024u * 1024u)

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_status = -1;
static int worker_started;

/* BOARDTRACE_BUFFER_KB: size of each thread's ring and of the serial queue,
 * rounded up to a power of two. */
static size_t buffer_size(void)
{
    unsigned long kb = bt_env_number("BOARDTRACE_BUFFER_KB", BUFFER_KB_MIN, BUFFER_KB_MAX,
                                     BUFFER_KB_DEFAULT, "a size in KiB", "1024");
    size_t bytes = 1;
    while (bytes < kb * 1024u)
        bytes <<= 1;
    return bytes;
}

static pthread_mutex_t stop_mutex = PTHREAD_MUTEX_INITIALIZER;

/* A forked child has none of the parent's threads, the worker among them:
 * nothing would ever drain its buffers, so an event that waits for room
 * would wait forever, and exit would join a thread that is not there. The
 * child runs untraced (runtime/README.md); the locks another thread may
 * have held at the fork are made usable again. */
static void after_fork_child(void)
{
    worker_started = 0;
    atomic_store(&bt_rt.worker_alive, 0);
    atomic_store(&bt_rt.state, BT_STATE_FINISHED);
    pthread_mutex_init(&stop_mutex, NULL);
    pthread_mutex_init(&bt_rt.mutex, NULL);
    bt_ring_after_fork_child();
}

static void start(void)
{
    bt_timer_init();
    bt_rt.init_begin = bt_timer_now();
    struct bt_timer_pair calib = bt_timer_pair();
    bt_rt.calib_ticks = calib.ticks;
    bt_rt.calib_ns = calib.ns;
    bt_rt.calib_half_ns = calib.half_ns;
    bt_rt.epoch = (uint64_t)time(NULL);
    bt_rt.pid = (uint32_t)getpid();
    const char *no_exit = getenv("TRACY_NO_EXIT");
    bt_rt.no_exit = no_exit && no_exit[0] == '1';
    bt_rt.ring_size = buffer_size();
    bt_rt.next_lock_id = 1;
    /* Without a bell (no eventfd: out of descriptors), the worker's naps
     * simply run out: slower when buffers fill, nothing lost. */
    bt_rt.worker_bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (bt_serial_init(&bt_rt.serial, bt_rt.ring_size) != 0 || bt_ring_init() != 0 ||
        pthread_atfork(NULL, NULL, after_fork_child) != 0)
        return;

    /* The worker must not take the program's signals. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store(&bt_rt.worker_alive, 1);
    if (pthread_create(&bt_rt.worker, NULL, bt_worker_main, NULL) == 0)
        worker_started = 1;
    else
        atomic_store(&bt_rt.worker_alive, 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (worker_started) {
        bt_systrace_start();
        bt_crash_install();
    }
    bt_rt.init_end = bt_timer_now();
    start_status = 0;
}

int bt_runtime_start(void)
{
    pthread_once(&start_once, start);
    return start_status;
}

__attribute__((constructor)) static void runtime_constructor(void)
{
    bt_runtime_start();
}

void bt_runtime_stop(void)
{
    pthread_mutex_lock(&stop_mutex);
    if (worker_started) {
        /* What the kernel still holds goes into the queue the worker's
         * last drain sends. */
        bt_systrace_stop();
        atomic_store(&bt_rt.shutdown, 1);
        pthread_join(bt_rt.worker, NULL);
        worker_started = 0;
    }
    pthread_mutex_unlock(&stop_mutex);
}

int bt_runtime_running(void)
{
    pthread_mutex_lock(&stop_mutex);
    int running = worker_started && !atomic_load(&bt_rt.shutdown);
    pthread_mutex_unlock(&stop_mutex);
    return running;
}

__attribute__((destructor)) static void runtime_destructor(void)
{
    bt_runtime_stop();
}
