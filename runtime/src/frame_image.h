/* DXT1 compression of frame images (frame_image.c), for the worker. */
#ifndef BT_FRAME_IMAGE_H
#define BT_FRAME_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The largest compressed image one wire frame carries (Tracy's frames are
 * at most 256 KiB, the event's header included). */
#define BT_FRAME_IMAGE_MAX (256u * 1024u - 64u)

size_t bt_dxt1_size(uint16_t w, uint16_t h);
/* rgba: w x h pixels, w and h multiples of 4; out: bt_dxt1_size bytes. */
void bt_dxt1_compress(const uint8_t *rgba, uint16_t w, uint16_t h, uint8_t *out);

#endif
