/* Callstacks in the .tracy file: the callstack table with the frame table
 * after it (section 28) and the symbol table with the code-address map
 * around the symbol code (section 35/36/37). Frames stream from the frame
 * spool; the ones the client never resolved come after, from the frame map. */
#define _GNU_SOURCE
#include <string.h>

#include "btc_tracy_write_parts.h"

/* Frame ids already written, when two frame addresses can share one (an
 * address retagged by btc_frame_address): the first frame filed wins. */
struct frame_ids {
    int dedupe;
    struct btc_tagmap seen; /* id -> ID_ASKED, then ID_WRITTEN */
};
enum { ID_ASKED = 1, ID_WRITTEN = 2 };

/* Whether the frame at addr is still to be written (and now counts as
 * written). */
static int frame_to_write(struct frame_ids *ids, uint64_t addr)
{
    if (!ids || !ids->dedupe)
        return 1;
    uint64_t id = btc_frame_id(addr);
    if (btc_tagmap_get(&ids->seen, id) == ID_WRITTEN)
        return 0;
    /* The key is already in the map (counted), so this cannot fail. */
    (void)btc_tagmap_put(&ids->seen, id, ID_WRITTEN);
    return 1;
}

/* Calls fn for each spooled frame; returns BTC_OK or the I/O failure. */
static int each_resolved(struct writer *wr, struct frame_ids *ids,
                         void (*fn)(struct fw *, const struct btc_frame_view *))
{
    struct btc_callstacks *c = &wr->m->callstacks;
    if (!c->frames_resolved)
        return BTC_OK;
    struct btc_texts_reader r;
    if (btc_texts_reader_open(&r, &c->frames) < 0)
        return btcw_io_fail(wr, "callstack frame");
    const char *rec;
    uint32_t len;
    uint64_t seen = 0;
    int rc;
    while ((rc = btc_texts_reader_next(&r, &rec, &len)) > 0) {
        struct btc_frame_view f;
        if (btc_callstacks_frame(rec, len, &f) < 0) {
            rc = -1;
            break;
        }
        if (frame_to_write(ids, f.addr))
            fn(&wr->w, &f);
        seen++;
    }
    btc_texts_reader_close(&r);
    return rc < 0 || seen != c->frames_resolved ? btcw_io_fail(wr, "callstack frame") : BTC_OK;
}

static void put_frame(struct fw *w, const struct btc_frame_view *f)
{
    put_u64(w, btc_frame_id(f->addr));
    put_u8(w, (uint8_t)f->n);
    put_u24(w, f->image + 1);
    for (unsigned k = 0; k < f->n; k++) {
        struct btc_subframe s;
        btc_callstacks_subframe(f, k, &s);
        put_u24(w, s.name + 1);
        put_u24(w, s.file + 1);
        put_u32(w, s.line);
        put_u64(w, s.sym_addr);
    }
}

/* The frame table's length: one entry per frame id. Returns -1 when out of
 * memory. */
static int64_t count_frame_ids(const struct btc_callstacks *c, struct frame_ids *ids)
{
    btc_tagmap_init(&ids->seen);
    ids->dedupe = c->frames_retagged != 0;
    if (!ids->dedupe)
        return (int64_t)btc_callstacks_frame_count(c);
    const struct btc_tagmap *state = &c->frame_state;
    int64_t n = 0;
    for (size_t i = 0; i < state->cap; i++) {
        if (!state->tags[i])
            continue;
        uint64_t id = btc_frame_id(state->keys[i]);
        if (btc_tagmap_get(&ids->seen, id))
            continue;
        if (btc_tagmap_put(&ids->seen, id, ID_ASKED) < 0)
            return -1;
        n++;
    }
    return n;
}

int btcw_callstacks(struct writer *wr)
{
    struct btc_callstacks *c = &wr->m->callstacks;
    struct fw *w = &wr->w;
    size_t n = btc_strtab_count(&c->stacks);
    put_u64(w, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        const uint8_t *addrs = (const uint8_t *)btc_strtab_get(&c->stacks, (uint32_t)i, &len);
        put_u16(w, (uint16_t)(len / 8));
        for (uint32_t k = 0; k < len / 8; k++)
            put_u64(w, btc_frame_id(bt_wire_get_u64(addrs + 8 * k)));
    }
    /* Every frame asked for is written; one the client never resolved gets
     * a single "???" subframe so both loaders (0.11.1 reads unresolved
     * ones) accept it. */
    struct frame_ids ids;
    int64_t frames = count_frame_ids(c, &ids);
    if (frames < 0) {
        btc_tagmap_free(&ids.seen);
        snprintf(wr->err, wr->errlen, "out of memory for the callstack frame ids");
        return BTC_ERR_NOMEM;
    }
    put_u64(w, (uint64_t)frames);
    int rc = each_resolved(wr, &ids, put_frame);
    const struct btc_tagmap *state = &c->frame_state;
    for (size_t i = 0; i < state->cap && rc >= 0; i++) {
        if (!state->tags[i] || btc_callstacks_resolved(c, state->keys[i]) ||
            !frame_to_write(&ids, state->keys[i]))
            continue;
        put_u64(w, btc_frame_id(state->keys[i]));
        put_u8(w, 1);
        put_u24(w, (uint32_t)wr->unknown + 1);
        put_u24(w, (uint32_t)wr->unknown + 1);
        put_u24(w, (uint32_t)wr->unknown + 1);
        put_u32(w, 0);
        put_u64(w, 0);
    }
    btc_tagmap_free(&ids.seen);
    return rc;
}

/* Code address -> symbol of its innermost subframe. */
static void put_frame_symbol(struct fw *w, const struct btc_frame_view *f)
{
    struct btc_subframe s;
    btc_callstacks_subframe(f, 0, &s);
    put_u64(w, btc_frame_address(f->addr));
    put_u64(w, s.sym_addr);
}

int btcw_symbols(struct writer *wr)
{
    struct btc_callstacks *c = &wr->m->callstacks;
    struct fw *w = &wr->w;
    uint64_t plain = 0, inl = 0;
    for (size_t i = 0; i < c->symbols.len; i++) {
        struct btc_symbol *y = btc_vec_at(&c->symbols, i);
        if (y->resolved && y->is_inline)
            inl++;
        else if (y->resolved)
            plain++;
    }
    put_u64(w, plain);
    put_u64(w, inl);
    put_u64(w, plain + inl);
    for (size_t i = 0; i < c->symbols.len; i++) {
        struct btc_symbol *y = btc_vec_at(&c->symbols, i);
        if (!y->resolved)
            continue;
        put_u64(w, y->addr);
        put_u24(w, y->name);
        put_u24(w, y->file);
        put_u32(w, y->line);
        put_u24(w, y->image);
        put_u24(w, y->call_file);
        put_u32(w, y->call_line);
        put_u8(w, y->is_inline);
        put_u24(w, y->size);
    }
    int rc = btcw_symbol_code(wr);
    if (rc < 0)
        return rc;
    put_u64(w, c->frames_resolved);
    return each_resolved(wr, NULL, put_frame_symbol);
}
