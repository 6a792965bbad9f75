/* System tracing (see systrace.h), as upstream's client does it on Linux:
 * a software CPU-clock event per CPU for this process (so it works on
 * boards without a PMU driver) sampling user callstacks, the sched_switch
 * and sched_waking tracepoints on every CPU, and the hardware counters
 * where there is a PMU. Perf reports its times on CLOCK_MONOTONIC_RAW; they
 * are turned into the runtime's timer ticks here, so samples and switches
 * line up with zones. */
#define _GNU_SOURCE
#include "systrace.h"

#include <errno.h>
#include <math.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "boardtrace/wire.h"
#include "encode/encoder.h"
#include "core/env.h"
#include "perf_ring.h"
#include "core/runtime.h"
#include "switch_mend.h"
#include "symbols/callstack.h"
#include "sysinfo.h"
#include "core/timer.h"
#include "tracepoint.h"

#ifndef TRACY_SAMPLING_HZ
#define TRACY_SAMPLING_HZ 10000 /* upstream's default on Linux */
#endif
#define TEXT_OF(x)  #x
#define VALUE_OF(x) TEXT_OF(x)

#define MAX_FRAMES   127        /* the deepest user callstack asked of the kernel */
#define QUEUE_BYTES  (4u << 20) /* the bounded queue between this thread and the worker */
#define SAMPLE_PAGES 64         /* 256 KiB of perf ring per CPU for samples */
#define SWITCH_PAGES 64         /* and for context switches */
#define SMALL_PAGES  16         /* wakeups and hardware counters */
#define ROUND_NS     5000000    /* how often the rings are read */
#define HOLD_NS      2000000    /* switches this recent wait a round (other CPUs may be late) */
#define CONTEXT_MAX  (-4095ll)  /* PERF_CONTEXT_MAX: callchain markers lie above */
#define MAX_RINGS    1024

/* Kinds of perf ring and of queue record. */
enum {
    SYS_PAD = 0,
    SYS_SAMPLE,
    SYS_SWITCH, /* a context switch; frames: the old thread's stack */
    SYS_WAKEUP,
    SYS_HW_FIRST, /* + the counter's index in hw_counters */
};

/* The queue's records: a header, then `frames` u64 frames. */
struct sys_rec {
    uint8_t kind;
    uint8_t cpu;
    uint8_t state;
    uint8_t frames;
    uint32_t a; /* thread; the old thread of a switch */
    int64_t time;
    uint32_t b; /* the new thread of a switch */
    int8_t new_prio, old_prio;
    uint16_t len; /* the whole record, header included */
};

static const struct {
    uint64_t config;
    uint8_t wire;
    const char *env;
} hw_counters[] = {
    {PERF_COUNT_HW_CPU_CYCLES, BT_EV_HW_SAMPLE_CPU_CYCLE, "TRACY_NO_SAMPLE_RETIREMENT"},
    {PERF_COUNT_HW_INSTRUCTIONS, BT_EV_HW_SAMPLE_INSTRUCTION_RETIRED, "TRACY_NO_SAMPLE_RETIREMENT"},
    {PERF_COUNT_HW_CACHE_REFERENCES, BT_EV_HW_SAMPLE_CACHE_REFERENCE, "TRACY_NO_SAMPLE_CACHE"},
    {PERF_COUNT_HW_CACHE_MISSES, BT_EV_HW_SAMPLE_CACHE_MISS, "TRACY_NO_SAMPLE_CACHE"},
    {PERF_COUNT_HW_BRANCH_INSTRUCTIONS, BT_EV_HW_SAMPLE_BRANCH_RETIRED, "TRACY_NO_SAMPLE_BRANCH"},
    {PERF_COUNT_HW_BRANCH_MISSES, BT_EV_HW_SAMPLE_BRANCH_MISS, "TRACY_NO_SAMPLE_BRANCH"},
};
#define HW_COUNTERS (sizeof hw_counters / sizeof hw_counters[0])

/* sched_switch and sched_waking fields, by index in the lists below. */
enum { SW_PREV_PID, SW_PREV_PRIO, SW_PREV_STATE, SW_NEXT_PID, SW_NEXT_PRIO };
static const char *const switch_fields[] = {"prev_pid", "prev_prio", "prev_state", "next_pid",
                                            "next_prio"};
enum { WK_PID };
static const char *const waking_fields[] = {"pid"};

static struct {
    struct bt_perf_ring rings[MAX_RINGS];
    unsigned nrings;
    int ncpus;
    uint64_t period_ns;
    struct bt_tracepoint sched_switch, sched_waking;
    int switch_chains; /* the sched_switch samples carry the old thread's stack */
    char missing[512]; /* what could not be done, for the trace's message */
    pthread_t thread;
    int running;
    _Atomic int stop;
    /* the queue: single producer (the thread), single consumer (the worker) */
    uint8_t *queue;
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail;
    _Atomic uint64_t dropped;
    /* switches read but held for the next round, in arrival order */
    uint8_t *held;
    size_t held_len, held_cap;
    /* perf ns to timer ticks, and the estimate's relative error bound */
    double ticks_per_ns;
    double rate_err;
    /* which thread ids are ours (for the stacks of switched-out threads) */
    uint32_t own_tid[256];
    uint8_t own[256]; /* 0 unknown, 1 ours, 2 not */
    /* switches the kernel left out, put back as they are sent */
    struct bt_switch_mend mend;
} st;

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '1';
}

static void say_missing(const char *what, int err)
{
    size_t len = strlen(st.missing);
    snprintf(st.missing + len, sizeof st.missing - len, "%s%s (%s)", len ? "; " : "", what,
             err == EACCES || err == EPERM ? "not permitted: run as root or lower "
                                             "/proc/sys/kernel/perf_event_paranoid"
             : err == ENOSYS               ? "this kernel or emulator has no perf_event_open"
             : err == ENOENT               ? "no tracefs with the sched tracepoints"
             : err == EDEADLK ? "this RISC-V kernel is not preemptible and would deadlock reading "
                                "them: it lacks PREEMPT"
                              : strerror(err));
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = type;
    a->config = config;
    a->disabled = 1;
    a->inherit = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC_RAW;
}

/* One event per CPU; the first error if none opened. */
static int open_per_cpu(struct perf_event_attr *a, int pid, size_t pages, uint8_t kind)
{
    int first_error = 0, opened = 0;
    for (int cpu = 0; cpu < st.ncpus && st.nrings < MAX_RINGS; cpu++) {
        int rc = bt_perf_ring_open(&st.rings[st.nrings], a, pid, cpu, pages, kind);
        if (rc == 0) {
            st.nrings++;
            opened++;
        } else if (!first_error && rc != -ENODEV) {
            first_error = -rc; /* ENODEV: an offline CPU */
        }
    }
    return opened ? 0 : first_error ? first_error : ENODEV;
}

static void open_sampling(int pid)
{
    unsigned long hz = bt_env_number("TRACY_SAMPLING_HZ", 1, 1000000, TRACY_SAMPLING_HZ,
                                     "a rate in Hz", "the default, " VALUE_OF(TRACY_SAMPLING_HZ));
    unsigned long max = bt_sysinfo_read_ulong("/proc/sys/kernel/perf_event_max_sample_rate", hz);
    if (max > 0 && hz > max)
        hz = max;
    /* The CPU clock counts nanoseconds of a thread's CPU time: a fixed
     * period samples every thread in proportion to its time (the frequency
     * mode would retune the period per thread). */
    struct perf_event_attr a;
    attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
    a.sample_period = 1000000000ull / hz;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    a.sample_max_stack = MAX_FRAMES;
    a.exclude_callchain_kernel = 1;
    int err = open_per_cpu(&a, pid, SAMPLE_PAGES, SYS_SAMPLE);
    if (err == EACCES || err == EPERM) {
        /* perf_event_paranoid 2 (most distributions): user time only */
        a.exclude_kernel = 1;
        err = open_per_cpu(&a, pid, SAMPLE_PAGES, SYS_SAMPLE);
    }
    if (err) {
        say_missing("no CPU samples", err);
        return;
    }
    st.period_ns = a.sample_period;
}

static void open_hardware(int pid)
{
    int err = 0;
    unsigned opened = 0;
    for (unsigned i = 0; i < HW_COUNTERS; i++) {
        if (env_flag(hw_counters[i].env))
            continue;
        struct perf_event_attr a;
        attr_init(&a, PERF_TYPE_HARDWARE, hw_counters[i].config);
        a.freq = 1;
        a.sample_freq = 5000;
        a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.exclude_guest = 1;
        int e = open_per_cpu(&a, pid, SMALL_PAGES, (uint8_t)(SYS_HW_FIRST + i));
        if (e && !err)
            err = e;
        opened += !e;
    }
    /* No PMU, or one that cannot count or sample these events (virtual
     * machines, many boards: ENOENT, EOPNOTSUPP, ENODEV, and EINVAL from
     * the RISC-V SBI PMU without the Sscofpmf extension and from emulated
     * ARM PMUs) is how the machine is, not a failure: nothing to say; nor
     * when some counters opened and others do not exist. */
    if (!opened && err && err != ENOENT && err != EOPNOTSUPP && err != ENODEV && err != EINVAL)
        say_missing("no hardware counters", err);
}

/* Linux on RISC-V reads a user callstack without disabling page faults
 * (its perf_callchain_user). In a sched_switch sample the scheduler holds
 * the run-queue lock; a kernel built without preemption counting (no
 * PREEMPT in `uname -v`) does not see that as atomic, so a page fault on
 * the stack sleeps on the mm lock with the run queue locked and the board
 * deadlocks. Such kernels get context switches without stacks. Sampling is
 * safe everywhere: it reads stacks in a hard interrupt, always atomic. */
static int switch_chains_safe(void)
{
#if defined(__riscv)
    struct utsname u;
    return uname(&u) == 0 && strstr(u.version, "PREEMPT") != NULL;
#else
    return 1;
#endif
}

static void open_switches(void)
{
    char events[256];
    int rc = bt_tracefs_events(events, sizeof events);
    if (rc == 0)
        rc = bt_tracepoint_load(&st.sched_switch, events, "sched/sched_switch", switch_fields,
                                sizeof switch_fields / sizeof switch_fields[0]);
    if (rc != 0) {
        say_missing("no context switches", rc == -ENODEV ? ENOENT : -rc);
        return;
    }
    struct perf_event_attr a;
    if (bt_switch_mend_init(&st.mend) != 0) {
        say_missing("no context switches", ENOMEM);
        return;
    }
    attr_init(&a, PERF_TYPE_TRACEPOINT, (uint64_t)st.sched_switch.id);
    a.inherit = 0; /* per CPU, every process: inherit means nothing */
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
    st.switch_chains = switch_chains_safe();
    if (st.switch_chains) {
        a.sample_type |= PERF_SAMPLE_CALLCHAIN;
        a.sample_max_stack = MAX_FRAMES;
        a.exclude_callchain_kernel = 1;
    } else {
        say_missing("no wait stacks on context switches", EDEADLK); /* see switch_chains_safe */
    }
    int err = open_per_cpu(&a, -1, SWITCH_PAGES, SYS_SWITCH);
    if (err) {
        bt_switch_mend_free(&st.mend);
        say_missing("no context switches", err);
        return;
    }
    if (bt_tracepoint_load(&st.sched_waking, events, "sched/sched_waking", waking_fields, 1) != 0 &&
        bt_tracepoint_load(&st.sched_waking, events, "sched/sched_wakeup", waking_fields, 1) != 0)
        return;
    attr_init(&a, PERF_TYPE_TRACEPOINT, (uint64_t)st.sched_waking.id);
    a.inherit = 0;
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
    open_per_cpu(&a, -1, SMALL_PAGES, SYS_WAKEUP);
}

/* ---- time ---------------------------------------------------------------- */

/* Perf's CLOCK_MONOTONIC_RAW ns to timer ticks: the runtime's own
 * calibration pair as origin, the rate over everything since (more exact
 * the longer the program runs). Without a hardware timer ticks are ns.
 * Each estimate takes the tightest of three (ns, ticks, ns) brackets and
 * replaces the last only if its error bound (the bracket's half width and a
 * tick over the span) is smaller: a bracket the scheduler split (a
 * preempted reader, a board's vCPU descheduled) would otherwise skew the
 * rate by its width, early on by enough to move samples milliseconds. */
static void rate_update(void)
{
    if (!bt_timer_hardware)
        return;
    int64_t width = INT64_MAX, ns = 0, ticks = 0;
    for (int i = 0; i < 3; i++) {
        int64_t a = bt_timer_reference_ns();
        int64_t t = bt_timer_now();
        int64_t b = bt_timer_reference_ns();
        if (b - a < width) {
            width = b - a;
            ns = a + (b - a) / 2;
            ticks = t;
        }
    }
    int64_t span = ns - bt_rt.calib_ns, span_ticks = ticks - bt_rt.calib_ticks;
    if (span <= 0 || span_ticks <= 0)
        return;
    double rate = (double)span_ticks / (double)span;
    double err = ((double)width / 2 + 1 / rate) / (double)span;
    if (err < st.rate_err) {
        st.ticks_per_ns = rate;
        st.rate_err = err;
    }
}

static int64_t to_ticks(uint64_t ns)
{
    if (!bt_timer_hardware)
        return (int64_t)ns;
    return bt_rt.calib_ticks + (int64_t)((double)((int64_t)ns - bt_rt.calib_ns) * st.ticks_per_ns);
}

/* ---- the queue ----------------------------------------------------------- */

static int queue_put(const struct sys_rec *r, const uint64_t *frames)
{
    size_t len = sizeof *r + 8u * r->frames;
    uint64_t head = atomic_load_explicit(&st.head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&st.tail, memory_order_acquire);
    size_t at = (size_t)(head % QUEUE_BYTES);
    size_t pad = QUEUE_BYTES - at < len ? QUEUE_BYTES - at : 0;
    if (head + pad + len - tail > QUEUE_BYTES) {
        atomic_fetch_add_explicit(&st.dropped, 1, memory_order_relaxed);
        return -1;
    }
    if (pad) {
        st.queue[at] = SYS_PAD;
        head += pad;
        at = 0;
    }
    struct sys_rec h = *r;
    h.len = (uint16_t)len;
    memcpy(st.queue + at, &h, sizeof h);
    if (r->frames)
        memcpy(st.queue + at + sizeof h, frames, 8u * r->frames);
    atomic_store_explicit(&st.head, head + len, memory_order_release);
    return 0;
}

size_t bt_systrace_drain(struct bt_encoder *e, int discard)
{
    if (!st.queue)
        return 0;
    uint64_t tail = atomic_load_explicit(&st.tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&st.head, memory_order_acquire);
    uint64_t start = tail;
    while (tail != head) {
        size_t at = (size_t)(tail % QUEUE_BYTES);
        if (st.queue[at] == SYS_PAD) {
            tail += QUEUE_BYTES - at;
            continue;
        }
        struct sys_rec r;
        memcpy(&r, st.queue + at, sizeof r);
        uint64_t frames[MAX_FRAMES];
        memcpy(frames, st.queue + at + sizeof r, 8u * r.frames);
        tail += r.len;
        if (discard)
            continue;
        switch (r.kind) {
        case SYS_SAMPLE:
            bt_enc_sample(e, 0, r.a, r.time, frames, r.frames);
            break;
        case SYS_SWITCH:
            bt_enc_context_switch(e, r.time, r.a, r.b, r.cpu, BT_WAIT_REASON_NONE, r.state,
                                  r.new_prio, r.old_prio);
            if (r.frames)
                bt_enc_sample(e, 1, r.a, r.time, frames, r.frames);
            break;
        case SYS_WAKEUP:
            bt_enc_thread_wakeup(e, r.time, r.a, r.cpu);
            break;
        default:
            bt_enc_hw_sample(e, hw_counters[r.kind - SYS_HW_FIRST].wire, frames[0], r.time);
            break;
        }
    }
    atomic_store_explicit(&st.tail, tail, memory_order_release);
    return (size_t)(tail - start);
}

/* ---- reading the rings --------------------------------------------------- */

static int is_own_thread(uint32_t tid)
{
    if (tid == 0)
        return 0;
    unsigned slot = tid & 255u;
    if (st.own_tid[slot] != tid || !st.own[slot]) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%u", tid);
        st.own_tid[slot] = tid;
        st.own[slot] = access(path, F_OK) == 0 ? 1 : 2;
    }
    return st.own[slot] == 1;
}

/* A callchain's user frames, markers dropped, made safe for upstream's
 * pointer packing; the count kept. */
static unsigned user_frames(const uint64_t *chain, uint64_t n, uint64_t *out)
{
    unsigned k = 0;
    for (uint64_t i = 0; i < n && k < MAX_FRAMES; i++)
        if ((int64_t)chain[i] < CONTEXT_MAX || (int64_t)chain[i] >= 0)
            out[k++] = bt_address_canonical(chain[i]);
    return k;
}

/* Linux task states (prev_state bits) as Tracy's thread state codes. */
static uint8_t thread_state(int64_t prev_state)
{
    static const uint8_t codes[] = {BT_THREAD_STATE_SLEEPING, BT_THREAD_STATE_DISK_SLEEP,
                                    BT_THREAD_STATE_STOPPED,  BT_THREAD_STATE_TRACED,
                                    BT_THREAD_STATE_DEAD,     BT_THREAD_STATE_ZOMBIE,
                                    BT_THREAD_STATE_PARKED,   BT_THREAD_STATE_IDLE};
    for (unsigned i = 0; i < sizeof codes; i++)
        if (prev_state & (1ll << i))
            return codes[i];
    return BT_THREAD_STATE_RUNNING;
}

/* A perf record as a queue record; 0 when it is not a sample we use. */
static int decode(const struct bt_perf_ring *ring, const uint8_t *p, size_t len, struct sys_rec *r,
                  uint64_t *frames)
{
    const struct perf_event_header *h = (const void *)p;
    if (h->type != PERF_RECORD_SAMPLE)
        return 0;
    memset(r, 0, sizeof *r);
    r->kind = ring->kind;
    r->cpu = (uint8_t)(ring->cpu < 0 ? 0 : ring->cpu);
    size_t at = sizeof *h;
    uint64_t v[3];
    if (ring->kind >= SYS_HW_FIRST) { /* ip, time */
        if (len < at + 16)
            return 0;
        memcpy(v, p + at, 16);
        frames[0] = v[0]; /* the ip rides as the one frame */
        r->frames = 1;
        r->time = to_ticks(v[1]);
        return 1;
    }
    if (ring->kind == SYS_SAMPLE) { /* pid, tid, time, nr, ips */
        if (len < at + 24)
            return 0;
        uint32_t ids[2];
        memcpy(ids, p + at, 8);
        memcpy(v, p + at + 8, 16);
        if (v[1] > (len - at - 24) / 8)
            return 0;
        r->a = ids[1];
        r->time = to_ticks(v[0]);
        r->frames =
            (uint8_t)user_frames((const uint64_t *)(const void *)(p + at + 24), v[1], frames);
        return r->frames > 0;
    }
    /* time, [nr, ips], raw size, raw */
    if (len < at + 8)
        return 0;
    memcpy(v, p + at, 8);
    r->time = to_ticks(v[0]);
    at += 8;
    const uint64_t *chain = NULL;
    uint64_t nr = 0;
    if (ring->kind == SYS_SWITCH && st.switch_chains) {
        if (len < at + 8)
            return 0;
        memcpy(&nr, p + at, 8);
        if (nr > (len - at - 8) / 8)
            return 0;
        chain = (const uint64_t *)(const void *)(p + at + 8);
        at += 8 + 8 * nr;
    }
    uint32_t raw_len;
    if (len < at + 4)
        return 0;
    memcpy(&raw_len, p + at, 4);
    const uint8_t *raw = p + at + 4;
    if (raw_len > len - at - 4)
        return 0;
    if (ring->kind == SYS_WAKEUP) {
        r->a = (uint32_t)bt_tracepoint_int(&st.sched_waking, WK_PID, raw, raw_len);
        return 1;
    }
    const struct bt_tracepoint *tp = &st.sched_switch;
    r->a = (uint32_t)bt_tracepoint_int(tp, SW_PREV_PID, raw, raw_len);
    r->b = (uint32_t)bt_tracepoint_int(tp, SW_NEXT_PID, raw, raw_len);
    r->old_prio = (int8_t)bt_tracepoint_int(tp, SW_PREV_PRIO, raw, raw_len);
    r->new_prio = (int8_t)bt_tracepoint_int(tp, SW_NEXT_PRIO, raw, raw_len);
    r->state = thread_state(bt_tracepoint_int(tp, SW_PREV_STATE, raw, raw_len));
    if (chain && is_own_thread(r->a))
        r->frames = (uint8_t)user_frames(chain, nr, frames);
    return 1;
}

static void hold(const struct sys_rec *r, const uint64_t *frames)
{
    size_t len = sizeof *r + 8u * r->frames;
    if (st.held_len + len > st.held_cap) {
        size_t cap = st.held_cap ? st.held_cap * 2 : 65536;
        while (cap < st.held_len + len)
            cap *= 2;
        uint8_t *p = realloc(st.held, cap);
        if (!p) {
            atomic_fetch_add_explicit(&st.dropped, 1, memory_order_relaxed);
            return;
        }
        st.held = p;
        st.held_cap = cap;
    }
    struct sys_rec h = *r;
    h.len = (uint16_t)len;
    memcpy(st.held + st.held_len, &h, sizeof h);
    memcpy(st.held + st.held_len + sizeof h, frames, 8u * r->frames);
    st.held_len += len;
}

struct held_ref {
    int64_t time;
    size_t at;
};

static int by_time(const void *a, const void *b)
{
    const struct held_ref *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Queues a held switch or wakeup, after the switches the kernel left out
 * before it. */
static void send_held(const struct sys_rec *r, const uint64_t *frames)
{
    if (r->kind == SYS_WAKEUP) {
        bt_switch_mend_wakeup(&st.mend, r->a, r->time);
    } else {
        struct bt_switch s = {r->time, r->a, r->b, r->cpu, r->state}, put[BT_MEND_MAX];
        unsigned n = bt_switch_mend(&st.mend, &s, put);
        for (unsigned i = 0; i < n; i++) {
            struct sys_rec p = {.kind = SYS_SWITCH,
                                .cpu = put[i].cpu,
                                .state = put[i].state,
                                .a = put[i].old_thread,
                                .time = put[i].time,
                                .b = put[i].new_thread};
            queue_put(&p, NULL);
        }
    }
    queue_put(r, frames);
}

/* Sends the held switches and wakeups older than `before`, in time order,
 * and keeps the rest. */
static void release_held(int64_t before)
{
    size_t n = 0;
    for (size_t at = 0; at < st.held_len; n++)
        at += ((const struct sys_rec *)(const void *)(st.held + at))->len;
    if (!n)
        return;
    struct held_ref *refs = malloc(n * sizeof *refs);
    uint8_t *keep = malloc(st.held_len);
    if (!refs || !keep) {
        free(refs);
        free(keep);
        return;
    }
    size_t i = 0;
    for (size_t at = 0; at < st.held_len; i++) {
        struct sys_rec r;
        memcpy(&r, st.held + at, sizeof r);
        refs[i] = (struct held_ref){r.time, at};
        at += r.len;
    }
    qsort(refs, n, sizeof *refs, by_time);
    size_t kept = 0;
    for (i = 0; i < n; i++) {
        struct sys_rec r;
        memcpy(&r, st.held + refs[i].at, sizeof r);
        if (r.time < before) {
            uint64_t frames[MAX_FRAMES];
            memcpy(frames, st.held + refs[i].at + sizeof r, 8u * r.frames);
            send_held(&r, frames);
        } else {
            memcpy(keep + kept, st.held + refs[i].at, r.len);
            kept += r.len;
        }
    }
    memcpy(st.held, keep, kept);
    st.held_len = kept;
    free(keep);
    free(refs);
}

/* One pass over every ring; `final` sends everything held. */
static void read_rings(int final)
{
    rate_update();
    /* Everything that happened before this moment is in the rings once
     * they are read: the cut is taken first, as the reading itself may be
     * preempted for longer than HOLD_NS. */
    int64_t cut = final ? INT64_MAX : to_ticks((uint64_t)(bt_timer_reference_ns() - HOLD_NS));
    static uint8_t buf[65536];
    uint64_t frames[MAX_FRAMES];
    for (unsigned i = 0; i < st.nrings; i++) {
        struct bt_perf_ring *ring = &st.rings[i];
        size_t len;
        while ((len = bt_perf_ring_next(ring, buf, sizeof buf)) > 0) {
            struct sys_rec r;
            if (!decode(ring, buf, len, &r, frames))
                continue;
            if (r.kind == SYS_SWITCH || r.kind == SYS_WAKEUP)
                hold(&r, frames);
            else
                queue_put(&r, frames);
        }
        bt_perf_ring_release(ring);
    }
    release_held(cut);
}

static void *reader_main(void *arg)
{
    (void)arg;
    bt_name_own_thread("boardtrace-sys");
    for (unsigned i = 0; i < st.nrings; i++)
        bt_perf_ring_enable(&st.rings[i]);
    while (!atomic_load_explicit(&st.stop, memory_order_acquire)) {
        struct timespec ts = {0, ROUND_NS};
        nanosleep(&ts, NULL);
        read_rings(0);
    }
    for (unsigned i = 0; i < st.nrings; i++)
        bt_perf_ring_disable(&st.rings[i]);
    read_rings(1);
    return NULL;
}

/* ---- lifecycle ----------------------------------------------------------- */

void bt_systrace_start(void)
{
#if defined(TRACY_NO_SYSTEM_TRACING)
    return;
#else
    if (env_flag("TRACY_NO_SYS_TRACE"))
        return;
    st.ncpus = bt_sysinfo_cpu_count();
    st.ticks_per_ns = 1.0;
    st.rate_err = INFINITY;
    int pid = (int)getpid();
#if !defined(TRACY_NO_SAMPLING)
    if (!env_flag("TRACY_NO_SAMPLING"))
        open_sampling(pid);
    if (st.period_ns)
        open_hardware(pid);
#endif
#if !defined(TRACY_NO_CONTEXT_SWITCH)
    if (!env_flag("TRACY_NO_CONTEXT_SWITCH"))
        open_switches();
#endif
    if (st.missing[0])
        fprintf(stderr, "boardtrace: system tracing: %s\n", st.missing);
    if (!st.nrings)
        return;
    st.queue = malloc(QUEUE_BYTES);
    if (!st.queue) {
        for (unsigned i = 0; i < st.nrings; i++)
            bt_perf_ring_close(&st.rings[i]);
        st.nrings = 0;
        st.period_ns = 0;
        return;
    }
    rate_update();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    st.running = pthread_create(&st.thread, NULL, reader_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
}

void bt_systrace_stop(void)
{
    if (!st.running)
        return;
    atomic_store_explicit(&st.stop, 1, memory_order_release);
    pthread_join(st.thread, NULL);
    st.running = 0;
    for (unsigned i = 0; i < st.nrings; i++)
        bt_perf_ring_close(&st.rings[i]);
    st.nrings = 0;
    free(st.held);
    st.held = NULL;
    st.held_len = st.held_cap = 0;
    bt_switch_mend_free(&st.mend);
    uint64_t dropped = atomic_load_explicit(&st.dropped, memory_order_relaxed);
    if (dropped)
        fprintf(stderr,
                "boardtrace: system tracing: %llu samples and switches were dropped: the "
                "capture took them more slowly than the kernel gave them (try a lower "
                "TRACY_SAMPLING_HZ)\n",
                (unsigned long long)dropped);
}

uint64_t bt_systrace_sampling_period_ns(void)
{
    return st.period_ns;
}

/* ---- per session --------------------------------------------------------- */

void bt_systrace_session_begin(struct bt_encoder *e, uint32_t thread, int64_t time)
{
    int n = bt_sysinfo_cpu_count();
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/topology/physical_package_id");
    if (access(path, R_OK) == 0)
        for (int cpu = 0; cpu < n; cpu++)
            bt_enc_cpu_topology(e, (uint32_t)bt_sysinfo_topology(cpu, "physical_package_id"),
                                (uint32_t)bt_sysinfo_topology(cpu, "die_id"),
                                (uint32_t)bt_sysinfo_topology(cpu, "core_id"), (uint32_t)cpu);
    if (!st.missing[0])
        return;
    char text[600];
    int len = snprintf(text, sizeof text, "boardtrace: system tracing: %s", st.missing);
    bt_enc_thread_context(e, thread);
    bt_enc_message(e, time, text, (size_t)len, BT_MSG_SOURCE_TRACY | BT_MSG_SEVERITY_WARNING << 4,
                   0, 0, 0);
}
