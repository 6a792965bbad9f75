/* Internal state shared by the emitting side (emit/: per-thread rings and
 * the serial queue, written on the hot path) and the worker (worker/: drains
 * them, encodes, talks to the capture); runtime.c holds it, with the room
 * hand-off between the two and the serial queue's slots. Not installed. */
#ifndef BT_RUNTIME_H
#define BT_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>

#include "boardtrace/trace.h"

/* Records of a per-thread ring: a 16-byte header, then `a` callstack frames
 * (8 bytes each), then the kind's payload; 8-byte aligned, never wrapping
 * (a PAD record fills the rest of the ring instead). */
enum bt_rec_kind {
    BT_REC_PAD = 0,
    BT_REC_ZONE_BEGIN,     /* payload: srcloc pointer */
    BT_REC_ZONE_BEGIN_DYN, /* payload: len bytes of SourceLocationPayload */
    BT_REC_ZONE_END,       /* no payload */
    BT_REC_ZONE_TEXT,      /* payload: len bytes */
    BT_REC_ZONE_NAME,      /* payload: len bytes */
    BT_REC_ZONE_COLOR,     /* b: rgb */
    BT_REC_ZONE_VALUE,     /* payload: u64 */
    BT_REC_MESSAGE,        /* b: rgb | meta << 24; payload: len bytes */
    BT_REC_MESSAGE_COLOR,  /* as MESSAGE */
    BT_REC_LITERAL,        /* b: meta << 24; payload: text address */
    BT_REC_LITERAL_COLOR,  /* b: rgb | meta << 24; payload: text address */
    BT_REC_APP_INFO,       /* payload: len bytes */
    BT_REC_PLOT,           /* b: wire type; payload: name, value bits */
    BT_REC_PLOT_CONFIG,    /* b: format | step << 8 | fill << 16; payload: name, color */
    BT_REC_SECTION_ENTER,  /* b: category; payload: u64 id, then len - 8 text bytes */
    BT_REC_SECTION_LEAVE,  /* b: id */
    BT_REC_SECTION_SETUP,  /* b: category; payload: text */
    BT_REC_PARAM_SETUP,    /* b: idx; payload: name, type | (u32)value << 32 */
    BT_REC_CRASH,          /* payload: text address (lifetime/crash.c) */
    BT_REC_KINDS,          /* how many kinds there are: none is this or above */
};

struct bt_rec {
    uint8_t kind;
    uint8_t a;    /* callstack frames that follow the header */
    uint16_t len; /* payload bytes for variable-size kinds */
    uint32_t b;
    int64_t time;
};

#define BT_REC_HEADER   16u
#define BT_REC_ALIGN(n) (((n) + 7u) & ~(size_t)7u)

/* Slots of the serial queue (memory, locks, frame marks): one multi-producer
 * queue ordered by reservation, so an alloc handed to another thread is always
 * sent before its free. Callstack frames ride in extra slots. */
enum bt_slot_kind {
    BT_SLOT_MEM_ALLOC = 1,       /* a ptr, b size, c pool name */
    BT_SLOT_MEM_FREE,            /* a ptr, c pool name */
    BT_SLOT_MEM_DISCARD,         /* c pool name */
    BT_SLOT_FRAME,               /* a wire type, c name */
    BT_SLOT_LOCK_WAIT,           /* a lock id */
    BT_SLOT_LOCK_OBTAIN,         /* a lock id */
    BT_SLOT_LOCK_RELEASE,        /* a lock id */
    BT_SLOT_LOCK_MARK,           /* a lock id, b srcloc */
    BT_SLOT_LOCK_TERMINATE,      /* a lock id */
    BT_SLOT_LOCK_SHARED_WAIT,    /* a lock id */
    BT_SLOT_LOCK_SHARED_OBTAIN,  /* a lock id */
    BT_SLOT_LOCK_SHARED_RELEASE, /* a lock id */
    BT_SLOT_FIBER_ENTER,         /* a fiber name, b group hint */
    BT_SLOT_FIBER_LEAVE,         /* no fields */
    BT_SLOT_GPU,                 /* sub: wire type; fields in emit/gpu.c */
    BT_SLOT_FRAME_IMAGE          /* a RGBA copy, b w | h << 16 | flip << 32, c frame */
};

/* A frame image's size once the worker has compressed it to DXT1
 * (worker/dxt1.c), and the largest one wire frame carries (Tracy's frames
 * are at most 256 KiB, the event's header included): bigger images are
 * dropped when emitted. */
#define BT_FRAME_IMAGE_MAX (256u * 1024u - 64u)
static inline size_t bt_dxt1_size(uint16_t w, uint16_t h)
{
    return (size_t)w * h / 2;
}

#define BT_SLOT_FRAMES 7u /* frames per extra slot */

struct bt_slot {
    _Atomic uint64_t seq;
    union {
        struct {
            uint8_t kind;
            uint8_t frames; /* callstack frames in the extra slots */
            uint8_t extra;  /* extra slots that follow */
            uint8_t sub;    /* a kind's variant (BT_SLOT_GPU: the wire type) */
            uint32_t thread;
            int64_t time;
            uint64_t a, b, c;
            uint64_t ring_pos; /* the thread's ring head when this was emitted */
            uint64_t spare;
        } ev;
        uint64_t frame[BT_SLOT_FRAMES];
    } u;
};

struct bt_serial {
    struct bt_slot *slots;
    uint64_t mask;
    _Alignas(64) _Atomic uint64_t enqueue_pos;
    _Alignas(64) uint64_t dequeue_pos; /* worker only */
};

/* Scratch for bt_srcloc_make handles (Tracy's two-step dynamic zones). */
struct bt_made_srcloc {
    uint8_t *data;
    size_t len;
    size_t cap;
};

#define BT_MADE_SLOTS 4u

struct bt_thread {
    /* producer side */
    uint8_t *data;
    uint64_t mask;
    uint64_t head_local;
    uint64_t tail_cache;
    uint32_t tid;
    uint32_t open_zones;
    unsigned made_next;
    struct bt_made_srcloc made[BT_MADE_SLOTS];
    /* shared with the worker */
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail;
    _Atomic int retired;
    /* Fiber events this thread put in the serial queue, and (worker only)
     * those the worker has sent: while they differ, the worker sends this
     * ring only up to the next fiber event's position (worker/drain.c). */
    _Atomic uint32_t fiber_emitted;
    uint32_t fiber_sent;
    /* Worker only: zones whose begin it sent and whose end it has not, which
     * it closes itself when the session ends (worker/drain.c,
     * bt_drain_close_open_zones). */
    uint32_t sent_open;
    struct bt_thread *next; /* guarded by bt_rt.mutex */
};

struct bt_lock {
    uint32_t id;
    uint8_t type; /* BT_LOCK_TYPE_LOCKABLE or _SHARED_LOCKABLE */
    const struct bt_srcloc *loc;
    int64_t announce_time;
    int announced;                   /* sent on the current connection (worker) */
    int held_dropped;                /* the obtain was dropped, so is the release */
    _Atomic uint32_t shared_dropped; /* shared obtains dropped, releases to skip */
    char *name;                      /* custom name (bt_rt.mutex) */
    int name_sent;
    struct bt_lock *next;
};

/* A thread name set through the API, kept after the thread ends. */
struct bt_thread_name {
    uint32_t tid;
    int32_t group_hint; /* the GUI's thread group, 0 none (sent after the name) */
    char *name;
    struct bt_thread_name *next;
};

enum bt_state {
    BT_STATE_WAITING = 0,   /* no capture has connected yet */
    BT_STATE_CONNECTED = 1, /* a capture is receiving */
    BT_STATE_FINISHED = 2,  /* the one session is over; new events are discarded */
};

struct bt_runtime {
    int64_t init_begin;
    int64_t init_end;
    int64_t calib_ticks; /* (ticks, ns) at start, for timerMul */
    int64_t calib_ns;
    int64_t calib_half_ns; /* how well calib_ns is known (bt_timer_pair) */
    uint64_t epoch;
    uint32_t pid;
    int no_exit;
    size_t ring_size;
    _Atomic int state;
    _Atomic int shutdown;
    _Atomic int worker_alive;
    _Atomic uint64_t dropped;
    pthread_mutex_t mutex;
    struct bt_thread *threads;
    struct bt_thread_name *names;
    struct bt_lock *locks;
    uint32_t next_lock_id;
    struct bt_serial serial;
    pthread_t worker;
    /* Emitting threads that found their buffer full sleep on space_seq
     * (a futex word), which the worker bumps after freeing room. */
    _Alignas(64) _Atomic uint32_t space_seq;
    _Atomic int space_waiters;
    /* The worker naps between passes; a producer about to sleep for room
     * rings its bell (an eventfd it polls; -1 if none) so that it drains
     * at once. */
    _Atomic int worker_napping;
    int worker_bell;
};

extern struct bt_runtime bt_rt;

/* The room-to-write hand-off between emitting threads and the worker. A
 * producer reads bt_space_seq() before it looks at a tail; if there is no
 * room it calls bt_space_wait() with that value, which returns once the
 * worker has freed room since (or after a safety timeout). */
static inline uint32_t bt_space_seq(void)
{
    return atomic_load_explicit(&bt_rt.space_seq, memory_order_acquire);
}
void bt_space_wait(uint32_t seen);
/* Worker, before a nap: 1 = nap (the bell will ring if a producer comes to
 * wait for room), 0 = a producer waits already and the last pass made
 * progress (`progress`): drain again instead. */
int bt_worker_nap_begin(int progress);
/* After the nap; `rung`: the bell's descriptor was readable (it is reset). */
void bt_worker_nap_end(int rung);
/* A full buffer (a ring, or the serial queue): 1 = retry (the worker will
 * drain it), 0 = drop the event. What happens is runtime/README.md's memory
 * policy: wait for the worker when a capture is (or will be) there, else
 * drop and count. */
int bt_buffer_full_wait(uint32_t seen);

/* Worker: room was freed; wakes the sleepers, if any (no syscall if none). */
void bt_space_signal(void);

/* Names the calling thread for the system (ps, top, perf, the kernel's
 * sched events), cut to its 15 characters. This is what
 * pthread_setname_np(pthread_self(), ...) does, without its way of naming
 * other threads, which would bring sprintf into every traced program. */
static inline void bt_name_own_thread(const char *name)
{
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* The serial queue, sized to `bytes`; 0, or -1 without memory. */
int bt_serial_init(struct bt_serial *q, size_t bytes);
/* A producer's claim of `count` consecutive slots of bt_rt.serial (the first
 * at *first), waiting for room or dropping as bt_buffer_full_wait decides:
 * NULL = dropped. The producer fills them and publishes each (its seq). */
struct bt_slot *bt_serial_reserve(unsigned count, uint64_t *first);
/* The worker's use of the serial queue: the slot at the dequeue position when
 * it and its extra slots are published, else NULL; then release it. */
struct bt_slot *bt_serial_peek(struct bt_serial *q);
void bt_serial_release(struct bt_serial *q, const struct bt_slot *s);

#endif
