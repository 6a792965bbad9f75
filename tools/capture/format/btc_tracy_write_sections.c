/* Sections in the .tracy file (section 7, 0.14.0 layout only): per
 * category its spans (Int48 start, Int48 end, StringIdx text), then the
 * categories' descriptions. */
#define _GNU_SOURCE
#include <string.h>

#include "btc_tracy_write_parts.h"

int btcw_sections(struct writer *wr)
{
    const struct btc_sections *s = &wr->m->sections;
    struct fw *w = &wr->w;
    uint64_t used = 0;
    for (size_t i = 0; i < s->categories.len; i++)
        used += ((const struct btc_section_category *)btc_vec_at(&s->categories, i))->count > 0;
    put_u64(w, used);
    for (size_t i = 0; i < s->categories.len; i++) {
        const struct btc_section_category *c = btc_vec_at(&s->categories, i);
        if (!c->count)
            continue;
        put_u16(w, c->category);
        put_u64(w, c->count);
        struct btc_spool_reader r;
        if (btc_spool_reader_open(&r, (struct btc_spool *)&s->spool) < 0)
            return btcw_io_fail(wr, "section");
        const uint8_t *p;
        int rc;
        uint64_t k = 0;
        while (k < c->count && (rc = btc_spool_reader_next(&r, &p)) > 0) {
            struct btc_section_rec e;
            memcpy(&e, p, sizeof e);
            if (e.category != c->category)
                continue;
            put_le(w, (uint64_t)e.start & 0xFFFFFFFFFFFFull, 6);
            put_le(w, (uint64_t)e.end & 0xFFFFFFFFFFFFull, 6);
            put_u24(w, e.text);
            k++;
        }
        btc_spool_reader_close(&r);
        if (k < c->count)
            return btcw_io_fail(wr, "section");
    }
    put_u64(w, s->categories.len);
    for (size_t i = 0; i < s->categories.len; i++) {
        const struct btc_section_category *c = btc_vec_at(&s->categories, i);
        put_u16(w, c->category);
        put_u24(w, c->description >= 0 ? (uint32_t)c->description + 1 : 0);
    }
    return BTC_OK;
}
