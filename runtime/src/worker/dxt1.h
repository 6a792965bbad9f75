/* DXT1 compression of frame images (dxt1.c), for the worker; the size of
 * a compressed image is core/runtime.h's bt_dxt1_size. */
#ifndef BT_DXT1_H
#define BT_DXT1_H

#include <stddef.h>
#include <stdint.h>

/* rgba: w x h pixels, w and h multiples of 4; out: bt_dxt1_size bytes. */
void bt_dxt1_compress(const uint8_t *rgba, uint16_t w, uint16_t h, uint8_t *out);

#endif
