/* GPU timelines, emitting side: Tracy's GPU C API over the serial queue.
 * The program reads its GPU's clock and reports contexts, zones (a CPU time
 * taken here, a query id the GPU time arrives for later) and calibrations;
 * the worker turns each slot into the wire event whose type it carries
 * (worker/gpu_slots.c), with the thread's time chain for the per-thread
 * forms. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "emit.h"

/* Slot fields per wire type (sub):
 *   zone begin:       a srcloc key,   b query | context << 16
 *   zone begin alloc: a payload copy, b query | context << 16, c payload length
 *   zone end:         b query | context << 16
 *   time:             a GPU time,     b query | context << 16
 *   new context:      a GPU time,     b period bits | flags << 32 | type << 40, c context
 *   context name:     a name copy,    b context << 16, c length
 *   calibration:      a GPU time,     b CPU delta, c context
 *   time sync:        a GPU time,     c context
 * Copies are malloc'd here and freed by the worker (or here, when dropped). */

/* The serial forms of zone events are the per-thread ones + 5 (45-49 -> 50-54). */
#define SERIAL_OFFSET (BT_EV_GPU_ZONE_BEGIN_SERIAL - BT_EV_GPU_ZONE_BEGIN)

static uint64_t query_context(uint16_t query, uint8_t context)
{
    return (uint64_t)query | (uint64_t)context << 16;
}

static int gpu_emit(uint8_t type, uint64_t a, uint64_t b, uint64_t c, int depth, uintptr_t caller)
{
    struct bt_serial_ev ev = {BT_SLOT_GPU, type, a, b, c};
    return bt_serial_emit(&ev, depth, caller);
}

void bt_gpu_zone_begin_at(uint64_t srcloc, int made, uint16_t query, uint8_t context, int depth,
                          int serial, uintptr_t caller)
{
    uint8_t type;
    uint64_t a = srcloc, c = 0;
    void *copy = NULL;
    if (made) {
        size_t len;
        const uint8_t *payload = bt_made_payload(srcloc, &len);
        if (!payload || !(copy = malloc(len)))
            return;
        memcpy(copy, payload, len);
        a = (uint64_t)(uintptr_t)copy;
        c = len;
        type = depth > 0 ? BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK
                         : BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC;
    } else {
        type = depth > 0 ? BT_EV_GPU_ZONE_BEGIN_CALLSTACK : BT_EV_GPU_ZONE_BEGIN;
    }
    if (serial)
        type = (uint8_t)(type + SERIAL_OFFSET);
    if (!gpu_emit(type, a, query_context(query, context), c, depth, caller))
        free(copy);
}

void bt_gpu_zone_begin(const struct bt_srcloc *loc, uint16_t query, uint8_t context, int depth,
                       int serial)
{
    bt_gpu_zone_begin_at((uint64_t)(uintptr_t)loc, 0, query, context, depth, serial, CALLER);
}

void bt_gpu_zone_begin_made(uint64_t handle, uint16_t query, uint8_t context, int depth, int serial)
{
    bt_gpu_zone_begin_at(handle, 1, query, context, depth, serial, CALLER);
}

void bt_gpu_zone_end(uint16_t query, uint8_t context, int serial)
{
    uint8_t type = serial ? BT_EV_GPU_ZONE_END_SERIAL : BT_EV_GPU_ZONE_END;
    gpu_emit(type, 0, query_context(query, context), 0, 0, 0);
}

void bt_gpu_time(int64_t gpu_time, uint16_t query, uint8_t context, int serial)
{
    (void)serial; /* one queue keeps every order */
    gpu_emit(BT_EV_GPU_TIME, (uint64_t)gpu_time, query_context(query, context), 0, 0, 0);
}

void bt_gpu_new_context(uint8_t context, int64_t gpu_time, float period, uint8_t flags,
                        uint8_t type, int serial)
{
    (void)serial;
    uint32_t bits;
    memcpy(&bits, &period, 4);
    uint64_t b = bits | (uint64_t)flags << 32 | (uint64_t)type << 40;
    gpu_emit(BT_EV_GPU_NEW_CONTEXT, (uint64_t)gpu_time, b, context, 0, 0);
}

void bt_gpu_context_name(uint8_t context, const char *name, size_t len, int serial)
{
    (void)serial;
    if (!name)
        return;
    if (len > BT_TEXT_MAX)
        len = BT_TEXT_MAX;
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return;
    memcpy(copy, name, len);
    if (!gpu_emit(BT_EV_GPU_CONTEXT_NAME, (uint64_t)(uintptr_t)copy, (uint64_t)context << 16, len,
                  0, 0))
        free(copy);
}

void bt_gpu_calibration(uint8_t context, int64_t gpu_time, int64_t cpu_delta, int serial)
{
    (void)serial;
    gpu_emit(BT_EV_GPU_CALIBRATION, (uint64_t)gpu_time, (uint64_t)cpu_delta, context, 0, 0);
}

void bt_gpu_time_sync(uint8_t context, int64_t gpu_time, int serial)
{
    (void)serial;
    gpu_emit(BT_EV_GPU_TIME_SYNC, (uint64_t)gpu_time, 0, context, 0, 0);
}
