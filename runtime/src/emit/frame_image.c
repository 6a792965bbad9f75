/* Frame images: the emitting thread copies the RGBA pixels; the worker
 * compresses them to DXT1 (worker/dxt1.c: what Tracy's viewer decodes) and
 * sends them with the frame they belong to. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "emit.h"

void bt_frame_image(const void *rgba, uint16_t w, uint16_t h, uint8_t offset, int flip)
{
    if (!rgba || w == 0 || h == 0 || w % 4 || h % 4 || bt_dxt1_size(w, h) > BT_FRAME_IMAGE_MAX) {
        atomic_fetch_add_explicit(&bt_rt.dropped, 1, memory_order_relaxed);
        return;
    }
    size_t size = (size_t)w * h * 4;
    void *copy = malloc(size);
    if (!copy)
        return;
    memcpy(copy, rgba, size);
    uint32_t frame = atomic_load_explicit(&bt_frame_count, memory_order_relaxed) - (uint32_t)offset;
    struct bt_serial_ev ev = {BT_SLOT_FRAME_IMAGE, 0, (uint64_t)(uintptr_t)copy,
                              (uint64_t)w | (uint64_t)h << 16 | (uint64_t)(flip != 0) << 32, frame};
    if (!bt_serial_emit(&ev, 0, 0))
        free(copy);
}
