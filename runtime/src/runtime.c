/* Runtime lifetime: started from a constructor (or the first event), stopped
 * from a destructor that joins the worker, which is what makes TRACY_NO_EXIT
 * hold the process until a capture has everything. Also the configuration
 * read from the environment and the serial queue's consumer side. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crash.h"
#include "env.h"
#include "runtime.h"
#include "systrace.h"
#include "timer.h"

#define BUFFER_KB_DEFAULT 1024u
#define BUFFER_KB_MIN     64u
#define BUFFER_KB_MAX     (1024u * 1024u)

struct bt_runtime bt_rt = {.mutex = PTHREAD_MUTEX_INITIALIZER};

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

/* A sleeper also wakes every SPACE_WAIT_MS, to see state changes (a capture
 * that went away turns waiting into dropping) without being told. */
#define SPACE_WAIT_MS 100

void bt_space_wait(uint32_t seen)
{
    atomic_fetch_add_explicit(&bt_rt.space_waiters, 1, memory_order_seq_cst);
    /* After counting ourselves: a worker that starts a nap from now on sees
     * the count and does not nap (bt_worker_nap_begin). */
    if (bt_rt.worker_bell >= 0 &&
        atomic_load_explicit(&bt_rt.worker_napping, memory_order_seq_cst)) {
        uint64_t one = 1;
        ssize_t w = write(bt_rt.worker_bell, &one, sizeof(one));
        (void)w; /* full (it is rung already) is fine */
    }
    struct timespec ts = {0, SPACE_WAIT_MS * 1000000L};
    /* Returns at once if the worker bumped the word since `seen`. */
    syscall(SYS_futex, &bt_rt.space_seq, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    atomic_fetch_sub_explicit(&bt_rt.space_waiters, 1, memory_order_relaxed);
}

void bt_space_signal(void)
{
    atomic_fetch_add_explicit(&bt_rt.space_seq, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&bt_rt.space_waiters, memory_order_seq_cst) > 0)
        syscall(SYS_futex, &bt_rt.space_seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

int bt_worker_nap_begin(int progress)
{
    atomic_store_explicit(&bt_rt.worker_napping, 1, memory_order_seq_cst);
    if (progress && atomic_load_explicit(&bt_rt.space_waiters, memory_order_seq_cst) > 0) {
        atomic_store_explicit(&bt_rt.worker_napping, 0, memory_order_relaxed);
        return 0;
    }
    return 1;
}

void bt_worker_nap_end(int rung)
{
    atomic_store_explicit(&bt_rt.worker_napping, 0, memory_order_relaxed);
    if (rung) {
        uint64_t count;
        ssize_t r = read(bt_rt.worker_bell, &count, sizeof(count)); /* non-blocking */
        (void)r;
    }
}

static int serial_init(struct bt_serial *q, size_t bytes)
{
    size_t count = bytes / sizeof(struct bt_slot);
    q->slots = aligned_alloc(64, count * sizeof(struct bt_slot));
    if (!q->slots)
        return -1;
    for (size_t i = 0; i < count; i++)
        atomic_init(&q->slots[i].seq, i);
    q->mask = count - 1;
    atomic_init(&q->enqueue_pos, 0);
    q->dequeue_pos = 0;
    return 0;
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
    bt_api_after_fork_child();
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
    if (serial_init(&bt_rt.serial, bt_rt.ring_size) != 0 || bt_api_init() != 0 ||
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

struct bt_slot *bt_serial_peek(struct bt_serial *q)
{
    uint64_t pos = q->dequeue_pos;
    struct bt_slot *s = &q->slots[pos & q->mask];
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != pos + 1)
        return NULL;
    for (unsigned i = 0; i < s->u.ev.extra; i++) {
        struct bt_slot *x = &q->slots[(pos + 1 + i) & q->mask];
        if (atomic_load_explicit(&x->seq, memory_order_acquire) != pos + 1 + i + 1)
            return NULL;
    }
    return s;
}

void bt_serial_release(struct bt_serial *q, const struct bt_slot *s)
{
    unsigned n = 1u + s->u.ev.extra;
    uint64_t pos = q->dequeue_pos;
    uint64_t size = q->mask + 1;
    for (unsigned i = 0; i < n; i++)
        atomic_store_explicit(&q->slots[(pos + i) & q->mask].seq, pos + i + size,
                              memory_order_release);
    q->dequeue_pos = pos + n;
}
