/* Frame images (see btc_frame_images.h). As upstream: the image belongs to
 * the default set's frame (client frame number - first frame + 1, the set
 * starting with the server's two frames); one per frame. An image that
 * fits no frame, comes twice for one, or whose data is not w*h/2 bytes of
 * DXT1 is dropped and counted instead of failing the capture. */
#define _GNU_SOURCE
#include "btc_frame_images.h"

#include <stdio.h>
#include <string.h>

#include "btc_model.h"
#include "btc_model_parts.h"

int btc_frame_images_init(struct btc_frame_images *f, const char *spool_dir, char *err,
                          size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->pending = -1;
    btc_vec_init(&f->images, sizeof(struct btc_frame_image));
    btc_map_init(&f->by_frame);
    f->data.raw.fd = -1;
    return btc_texts_open(&f->data, spool_dir, err, errlen);
}

void btc_frame_images_free(struct btc_frame_images *f)
{
    btc_texts_close(&f->data);
    btc_vec_free(&f->images);
    btc_map_free(&f->by_frame);
}

int btc_frame_images_event(struct btc_model *m, const struct btc_event *ev, char *err,
                           size_t errlen)
{
    struct btc_frame_images *f = &m->frame_images;
    if (ev->type == BT_EV_FRAME_IMAGE_DATA) {
        /* An earlier one never claimed stays in the spool, unreferenced. */
        if (f->pending >= 0)
            f->dropped++;
        uint64_t idx;
        if (ev->data_len > UINT32_MAX ||
            btc_texts_append(&f->data, ev->data, (uint32_t)ev->data_len, &idx) < 0) {
            btcm_spool_failed(err, errlen, "frame image");
            return BTC_ERR_IO;
        }
        f->pending = (int64_t)idx;
        f->pending_len = (uint32_t)ev->data_len;
        return BTC_OK;
    }
    /* FrameImage: frame u32 @1, w u16 @5, h u16 @7, flip u8 @9 */
    const uint8_t *p = ev->p;
    if (f->pending < 0)
        return btcm_fail(ev, err, errlen, "expected FrameImageData before this event");
    uint16_t w = bt_wire_get_u16(p + 5), h = bt_wire_get_u16(p + 7);
    int64_t frame = (int64_t)bt_wire_get_u32(p + 1) - (int64_t)m->welcome.on_demand_frames + 1;
    uint64_t text = (uint64_t)f->pending;
    f->pending = -1;
    if (frame <= 0 || btc_map_get(&f->by_frame, (uint64_t)frame) ||
        (uint64_t)w * h / 2 != f->pending_len || w % 4 || h % 4) {
        f->dropped++;
        return BTC_OK;
    }
    struct btc_frame_image *img = btc_vec_push(&f->images);
    if (!img || btc_map_put(&f->by_frame, (uint64_t)frame, f->images.len - 1) < 0)
        return btcm_nomem(err, errlen);
    img->text = text;
    img->w = w;
    img->h = h;
    img->flip = p[9];
    return BTC_OK;
}
