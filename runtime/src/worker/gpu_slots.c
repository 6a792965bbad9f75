/* GPU slots, the worker's side: each slot of the serial queue that GPU
 * calls filled (emit/gpu.c, which lists the fields per wire type) becomes
 * the wire event whose type it carries. */
#include "gpu_slots.h"

#include <string.h>

#include "boardtrace/wire.h"

int bt_gpu_type_per_thread(uint8_t type)
{
    return type >= BT_EV_GPU_ZONE_BEGIN && type <= BT_EV_GPU_ZONE_END;
}

void *bt_gpu_slot_copy(const struct bt_slot *slot)
{
    switch (slot->u.ev.sub) {
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
    case BT_EV_GPU_CONTEXT_NAME:
        return (void *)(uintptr_t)slot->u.ev.a;
    default:
        return NULL;
    }
}

void bt_gpu_encode(struct bt_encoder *e, const struct bt_slot *slot, int64_t time)
{
    uint8_t type = slot->u.ev.sub;
    uint64_t a = slot->u.ev.a, b = slot->u.ev.b, c = slot->u.ev.c;
    uint16_t query = (uint16_t)b;
    uint8_t context = (uint8_t)(b >> 16);
    switch (type) {
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
        bt_enc_gpu_zone_begin(e, type, time, slot->u.ev.thread, query, context, a);
        break;
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
        /* the payload's key is not read by the server (0, as for CPU zones) */
        bt_enc_gpu_zone_begin_alloc(e, type, time, slot->u.ev.thread, query, context, 0,
                                    (const void *)(uintptr_t)a, (size_t)c);
        break;
    case BT_EV_GPU_ZONE_END:
    case BT_EV_GPU_ZONE_END_SERIAL:
        bt_enc_gpu_zone_end(e, type, time, query, context);
        break;
    case BT_EV_GPU_TIME:
        bt_enc_gpu_time(e, (int64_t)a, query, context);
        break;
    case BT_EV_GPU_NEW_CONTEXT: {
        float period;
        uint32_t bits = (uint32_t)b;
        memcpy(&period, &bits, 4);
        bt_enc_gpu_new_context(e, time, (int64_t)a, slot->u.ev.thread, period, (uint8_t)c,
                               (uint8_t)(b >> 32), (uint8_t)(b >> 40));
        break;
    }
    case BT_EV_GPU_CONTEXT_NAME:
        bt_enc_gpu_context_name(e, context, (const char *)(uintptr_t)a, (size_t)c);
        break;
    case BT_EV_GPU_CALIBRATION:
        bt_enc_gpu_calibration(e, time, (int64_t)a, (int64_t)b, (uint8_t)c);
        break;
    case BT_EV_GPU_TIME_SYNC:
        bt_enc_gpu_time_sync(e, time, (int64_t)a, (uint8_t)c);
        break;
    default:
        break;
    }
}
