/* Frame images of a capture: the small DXT1 screenshots a client attaches
 * to frames (FrameImageData, then FrameImage naming the frame). The pixels
 * go to a spool, kept as sent; what frame each image belongs to is held. */
#ifndef BTC_FRAME_IMAGES_H
#define BTC_FRAME_IMAGES_H

#include <stdint.h>

#include "btc_spool.h"
#include "btc_util.h"

struct btc_frame_image {
    uint64_t text; /* its DXT1 bytes: text number in the data spool */
    uint16_t w, h;
    uint8_t flip;
};

struct btc_frame_images {
    struct btc_texts data;   /* DXT1 bytes of each FrameImageData */
    struct btc_vec images;   /* struct btc_frame_image, kept ones, by text */
    struct btc_map by_frame; /* index in the default frame set -> image */
    int64_t pending;         /* data text waiting for its FrameImage, -1 none */
    uint32_t pending_len;
    uint64_t dropped; /* images naming no frame, a frame twice, or sized wrong */
};

int btc_frame_images_init(struct btc_frame_images *f, const char *spool_dir, char *err,
                          size_t errlen);
void btc_frame_images_free(struct btc_frame_images *f);

struct btc_model;
struct btc_event;
/* Applies FrameImageData and FrameImage events. */
int btc_frame_images_event(struct btc_model *m, const struct btc_event *ev, char *err,
                           size_t errlen);

#endif
