/* What the emitting side's files share (emit/): the calling thread's ring,
 * registered at its first event; a record with an optional callstack; the
 * serial queue's events (memory, locks, frames, GPU, fibers, images); and
 * the entry points with an explicit callstack start for the Tracy-named
 * functions. */
#ifndef BT_EMIT_H
#define BT_EMIT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "boardtrace/trace.h"
#include "core/ring.h"
#include "core/runtime.h"
#include "core/timer.h"
#include "symbols/callstack.h"

/* The return address into the program's code, taken in a public function:
 * a callstack starts there, whatever the runtime's own frames are. */
#define CALLER ((uintptr_t)__builtin_return_address(0))

/* The calling thread's first event (emit.c): starts the runtime if it is
 * not yet, then registers the thread's ring. NULL = not traced. */
struct bt_thread *bt_emit_thread_register(void);

static inline struct bt_thread *bt_emit_thread(void)
{
    struct bt_thread *t = bt_tls_thread;
    if (__builtin_expect(t != NULL, 1))
        return t;
    return bt_emit_thread_register();
}

/* A record with an optional callstack and a payload; returns 0 if dropped. */
int bt_emit_record(struct bt_thread *t, uint8_t kind, int depth, uint32_t b, const void *p1,
                   size_t n1, const void *p2, size_t n2, size_t keep, uintptr_t caller);

/* A serial event as the emitting side fills it; bt_serial_emit (serial.c)
 * adds the thread, time, ring position and callstack. Returns 0 if it was
 * dropped. */
struct bt_serial_ev {
    uint8_t kind;
    uint8_t sub;
    uint64_t a, b, c;
};
int bt_serial_emit(const struct bt_serial_ev *ev, int depth, uintptr_t caller);

/* Entry points with an explicit callstack start (see CALLER), for the
 * Tracy-named functions of tracy_c*.c, so a callstack begins in the
 * program's code rather than in a wrapper. */
bt_zone bt_zone_begin_at(const struct bt_srcloc *loc, int depth, int active, uintptr_t caller);
bt_zone bt_zone_begin_made_at(uint64_t handle, int depth, int active, uintptr_t caller);
void bt_message_at(const char *text, size_t len, uint32_t color, int colored,
                   enum bt_severity severity, int depth, uintptr_t caller);
void bt_message_literal_at(const char *text, uint32_t color, int colored, enum bt_severity severity,
                           int depth, uintptr_t caller);
void bt_mem_alloc_at(const void *ptr, size_t size, const char *pool, int depth, uintptr_t caller);
void bt_mem_free_at(const void *ptr, const char *pool, int depth, uintptr_t caller);
void bt_mem_discard_at(const char *pool, int depth, uintptr_t caller);
void bt_gpu_zone_begin_at(uint64_t srcloc, int made, uint16_t query, uint8_t context, int depth,
                          int serial, uintptr_t caller);

/* The payload a bt_srcloc_make handle stands for (SourceLocationPayload). */
const uint8_t *bt_made_payload(uint64_t handle, size_t *len);

/* Default frame marks so far: what a frame image's offset counts back from. */
extern _Atomic uint32_t bt_frame_count;

#endif
