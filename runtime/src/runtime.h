/* Internal state shared by the emitting side (api.c: per-thread rings and the
 * serial queue, written on the hot path) and the worker (worker.c: drains
 * them, encodes, talks to the capture). Not installed. */
#ifndef BT_RUNTIME_H
#define BT_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

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
    BT_SLOT_MEM_ALLOC = 1, /* a ptr, b size, c pool name */
    BT_SLOT_MEM_FREE,      /* a ptr, c pool name */
    BT_SLOT_MEM_DISCARD,   /* c pool name */
    BT_SLOT_FRAME,         /* a wire type, c name */
    BT_SLOT_LOCK_WAIT,     /* a lock id */
    BT_SLOT_LOCK_OBTAIN,   /* a lock id */
    BT_SLOT_LOCK_RELEASE,  /* a lock id */
    BT_SLOT_LOCK_MARK,     /* a lock id, b srcloc */
    BT_SLOT_LOCK_TERMINATE /* a lock id */
};

#define BT_SLOT_FRAMES 7u /* frames per extra slot */

struct bt_slot {
    _Atomic uint64_t seq;
    union {
        struct {
            uint8_t kind;
            uint8_t frames; /* callstack frames in the extra slots */
            uint8_t extra;  /* extra slots that follow */
            uint8_t pad;
            uint32_t thread;
            int64_t time;
            uint64_t a, b, c;
            uint64_t spare[2];
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
    struct bt_thread *next; /* guarded by bt_rt.mutex */
};

struct bt_lock {
    uint32_t id;
    const struct bt_srcloc *loc;
    int64_t announce_time;
    int announced;    /* sent on the current connection (worker) */
    int held_dropped; /* the obtain was dropped, so is the release */
    char *name;       /* custom name (bt_rt.mutex) */
    int name_sent;
    struct bt_lock *next;
};

/* A thread name set through the API, kept after the thread ends. */
struct bt_thread_name {
    uint32_t tid;
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
/* Worker: room was freed; wakes the sleepers, if any (no syscall if none). */
void bt_space_signal(void);

/* Starts the runtime once (constructor, or the first event, whichever comes
 * first). Returns 0 when the runtime is usable. */
int bt_runtime_start(void);

/* Creates the per-thread key whose destructor retires a thread's ring. */
int bt_api_init(void);

/* The worker thread's entry point (worker.c). */
void *bt_worker_main(void *arg);

/* The worker's use of the serial queue: the slot at the dequeue position when
 * it and its extra slots are published, else NULL; then release it. */
struct bt_slot *bt_serial_peek(struct bt_serial *q);
void bt_serial_release(struct bt_serial *q, const struct bt_slot *s);

/* Makes addresses safe for upstream's pointer packing (protocol notes 8.5)
 * unless NO_POINTER_COMPRESSION is set. */
uint64_t bt_address_canonical(uint64_t address);

/* Captures up to depth return addresses, innermost first, starting at
 * `caller` (the return address into the program, taken in the public
 * function; 0 = the caller of this function). Returns the count. */
int bt_callstack_capture(uint64_t *frames, int depth, uintptr_t caller);

#endif
