/* GPU slots as the worker encodes them (gpu_slots.c). */
#ifndef BT_GPU_SLOTS_H
#define BT_GPU_SLOTS_H

#include <stdint.h>

#include "encode/encoder.h"
#include "core/runtime.h"

/* Whether a GPU wire type rides the thread's time chain (the worker sends
 * the thread's context, and binds a callstack to the thread, first). */
int bt_gpu_type_per_thread(uint8_t type);
/* Encodes a GPU slot; time: the thread's time for the per-thread kinds, the
 * serial chain's time for the others. */
void bt_gpu_encode(struct bt_encoder *e, const struct bt_slot *slot, int64_t time);
/* The copy a GPU slot owns (location payload, context name), or NULL. */
void *bt_gpu_slot_copy(const struct bt_slot *slot);

#endif
