/* Frame images in the .tracy file (section 30): no dictionary, then each
 * image's size, flip and DXT1 bytes, streamed from the image spool. The
 * default frame set refers to them by index (btcw_frame_image). */
#define _GNU_SOURCE
#include <string.h>

#include "btc_tracy_write_parts.h"

int32_t btcw_frame_image(struct writer *wr, uint64_t frame)
{
    uint64_t *i = btc_map_get(&wr->m->frame_images.by_frame, frame);
    return i ? (int32_t)*i : -1;
}

int btcw_frame_images(struct writer *wr)
{
    struct btc_frame_images *f = &wr->m->frame_images;
    struct fw *w = &wr->w;
    put_u32(w, 0); /* no dictionary */
    put_u64(w, f->images.len);
    if (!f->images.len)
        return BTC_OK;
    struct btc_texts_reader r;
    if (btc_texts_reader_open(&r, &f->data) < 0)
        return btcw_io_fail(wr, "frame image");
    uint64_t text = 0;
    int rc = 1;
    for (size_t i = 0; i < f->images.len && rc > 0; i++) {
        const struct btc_frame_image *img = btc_vec_at(&f->images, i);
        const char *s;
        uint32_t len;
        while ((rc = btc_texts_reader_next(&r, &s, &len)) > 0 && text++ < img->text) {
        }
        if (rc <= 0 || len != (uint32_t)img->w * img->h / 2)
            break;
        put_u16(w, img->w);
        put_u16(w, img->h);
        put_u8(w, img->flip);
        put(w, s, len);
    }
    btc_texts_reader_close(&r);
    return rc <= 0 ? btcw_io_fail(wr, "frame image") : BTC_OK;
}
