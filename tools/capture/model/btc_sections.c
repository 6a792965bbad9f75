/* Sections (see btc_sections.h), kept as upstream's server keeps them: a
 * span left before it was entered (the two come from different threads)
 * is completed by its enter; a category named by SectionSetup or first
 * used by a span gets a description entry. */
#define _GNU_SOURCE
#include "btc_sections.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "btc_model.h"
#include "btc_model_parts.h"

int btc_sections_init(struct btc_sections *s, const char *spool_dir, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->spool.fd = -1;
    btc_map_init(&s->open);
    btc_map_init(&s->left_early);
    btc_vec_init(&s->categories, sizeof(struct btc_section_category));
    return btc_spool_open(&s->spool, spool_dir, sizeof(struct btc_section_rec), err, errlen);
}

void btc_sections_free(struct btc_sections *s)
{
    btc_spool_close(&s->spool);
    btc_map_free(&s->open);
    btc_map_free(&s->left_early);
    btc_vec_free(&s->categories);
}

static struct btc_section_category *category(struct btc_sections *s, uint16_t id)
{
    for (size_t i = 0; i < s->categories.len; i++) {
        struct btc_section_category *c = btc_vec_at(&s->categories, i);
        if (c->category == id)
            return c;
    }
    struct btc_section_category *c = btc_vec_push(&s->categories);
    if (c) {
        c->category = id;
        c->description = -1;
    }
    return c;
}

int btc_sections_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_sections *s = &m->sections;
    const uint8_t *p = ev->p;
    if (ev->type == BT_EV_SECTION_SETUP) {
        /* category u16 @1 */
        struct btc_section_category *c = category(s, bt_wire_get_u16(p + 1));
        int64_t text = btcm_intern(m, ev->str1, ev->str1_len);
        if (!c || text < 0)
            return btcm_nomem(err, errlen);
        c->description = text;
        return BTC_OK;
    }
    uint32_t id = bt_wire_get_u32(p + 9);
    btcm_see_time(m, ev->time);
    if (ev->type == BT_EV_SECTION_LEAVE) {
        uint64_t *rec = btc_map_get(&s->open, id);
        if (!rec)
            return btc_map_put(&s->left_early, id, (uint64_t)ev->time) < 0 ? btcm_nomem(err, errlen)
                                                                           : BTC_OK;
        int64_t end = ev->time;
        if (btc_spool_patch(&s->spool, *rec, offsetof(struct btc_section_rec, end), &end,
                            sizeof end) < 0) {
            btcm_spool_failed(err, errlen, "section");
            return BTC_ERR_IO;
        }
        btc_map_remove(&s->open, id);
        return BTC_OK;
    }
    /* SectionEnter: time, id u32 @9, category u16 @13, and its text. */
    struct btc_section_category *c = category(s, bt_wire_get_u16(p + 13));
    int64_t text = btcm_intern(m, ev->str1, ev->str1_len);
    if (!c || text < 0)
        return btcm_nomem(err, errlen);
    struct btc_section_rec r = {.start = ev->time,
                                .end = -(int64_t)id,
                                .text = (uint32_t)text + 1,
                                .category = c->category};
    uint64_t *left = btc_map_get(&s->left_early, id);
    if (left) {
        r.end = (int64_t)*left;
        btc_map_remove(&s->left_early, id);
    }
    uint64_t idx;
    if (btc_spool_append(&s->spool, &r, &idx) < 0) {
        btcm_spool_failed(err, errlen, "section");
        return BTC_ERR_IO;
    }
    c->count++;
    if (r.end < 0 && btc_map_put(&s->open, id, idx) < 0)
        return btcm_nomem(err, errlen);
    return BTC_OK;
}
