/* Callstacks, their frames and symbols (see btc_callstacks.h). */
#define _GNU_SOURCE
#include "btc_callstacks.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "btc_code.h"
#include "btc_format.h"
#include "btc_model.h"
#include "btc_model_parts.h"

/* Spooled frame: addr u64, image u32, n u8, then n subframes of name u32,
 * file u32, line u32, symbol address u64. */
#define FRAME_HEAD    13
#define SUBFRAME_SIZE 20

int btc_callstacks_init(struct btc_callstacks *c, const char *spool_dir, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->frames.raw.fd = -1;
    btc_strtab_init(&c->stacks);
    btc_tagmap_init(&c->frame_state);
    btc_vec_init(&c->symbols, sizeof(struct btc_symbol));
    btc_map_init(&c->symbol_index);
    return btc_texts_open(&c->frames, spool_dir, err, errlen);
}

void btc_callstacks_free(struct btc_callstacks *c)
{
    btc_strtab_free(&c->stacks);
    btc_tagmap_free(&c->frame_state);
    btc_texts_close(&c->frames);
    btc_vec_free(&c->symbols);
    btc_map_free(&c->symbol_index);
}

int btc_callstacks_resolved(const struct btc_callstacks *c, uint64_t addr)
{
    return btc_tagmap_get(&c->frame_state, addr) == BTC_FRAME_RESOLVED;
}

int btc_callstacks_frame(const char *rec, uint32_t len, struct btc_frame_view *out)
{
    const uint8_t *p = (const uint8_t *)rec;
    if (len < FRAME_HEAD)
        return -1;
    out->addr = bt_wire_get_u64(p);
    out->image = bt_wire_get_u32(p + 8);
    out->n = p[12];
    out->packed = p + FRAME_HEAD;
    return out->n && len == FRAME_HEAD + SUBFRAME_SIZE * out->n ? 0 : -1;
}

void btc_callstacks_subframe(const struct btc_frame_view *f, unsigned k, struct btc_subframe *out)
{
    const uint8_t *s = f->packed + SUBFRAME_SIZE * k;
    out->name = bt_wire_get_u32(s);
    out->file = bt_wire_get_u32(s + 4);
    out->line = bt_wire_get_u32(s + 8);
    out->sym_addr = bt_wire_get_u64(s + 12);
}

static int callstack_payload(struct btc_model *m, const struct btc_event *ev, char *err,
                             size_t errlen)
{
    struct btc_callstacks *c = &m->callstacks;
    if (ev->data_len % 8 || !ev->data_len || ev->data_len / 8 > 65535)
        return btcm_fail(ev, err, errlen,
                         "callstack payload of %zu bytes, expected a multiple of 8", ev->data_len);
    size_t before = btc_strtab_count(&c->stacks);
    int64_t ci = btc_strtab_intern(&c->stacks, (const char *)ev->data, ev->data_len);
    if (ci < 0)
        return btcm_nomem(err, errlen);
    c->last = (uint32_t)ci + 1;
    if ((size_t)ci != before)
        return BTC_OK;
    for (size_t i = 0; i < ev->data_len / 8; i++)
        if (btcm_query_frame(m, bt_wire_get_u64(ev->data + 8 * i)) < 0)
            return btcm_nomem(err, errlen);
    return BTC_OK;
}

/* Files a finished frame record (staging_rec) and marks it resolved. */
static int file_frame(struct btc_callstacks *c, char *err, size_t errlen)
{
    uint64_t addr = bt_wire_get_u64(c->staging_rec), index;
    if (btc_texts_append(&c->frames, c->staging_rec, (uint32_t)c->staging_len, &index) < 0) {
        btcm_spool_failed(err, errlen, "callstack frame");
        return BTC_ERR_IO;
    }
    c->frames_resolved++;
    return btc_tagmap_put(&c->frame_state, addr, BTC_FRAME_RESOLVED) < 0 ? btcm_nomem(err, errlen)
                                                                         : BTC_OK;
}

/* Upstream's clients answer a frame they cannot resolve (a program whose
 * section headers were stripped, libbacktrace failing quietly) with zero
 * subframes, which upstream's own server asserts on. The frame is kept as
 * one subframe naming its address, "0x...", in its image, with "[unknown]"
 * for a file: every loader reads it, and the host names it from the
 * unstripped program (boardtrace-report symbolize). */
static int unresolved_frame(struct btc_model *m, uint64_t ptr, uint32_t image, char *err,
                            size_t errlen)
{
    struct btc_callstacks *c = &m->callstacks;
    char hex[24];
    int len = snprintf(hex, sizeof hex, "0x%" PRIx64, ptr);
    int64_t name = btcm_intern(m, hex, (size_t)len);
    int64_t file = btcm_intern(m, "[unknown]", 9);
    if (name < 0 || file < 0)
        return btcm_nomem(err, errlen);
    uint8_t *rec = c->staging_rec;
    bt_wire_put_u64(rec, ptr);
    bt_wire_put_u32(rec + 8, image);
    rec[12] = 1;
    bt_wire_put_u32(rec + FRAME_HEAD, (uint32_t)name);
    bt_wire_put_u32(rec + FRAME_HEAD + 4, (uint32_t)file);
    bt_wire_put_u32(rec + FRAME_HEAD + 8, 0);
    bt_wire_put_u64(rec + FRAME_HEAD + 12, 0);
    c->staging_len = FRAME_HEAD + SUBFRAME_SIZE;
    c->frames_unresolved++;
    return file_frame(c, err, errlen);
}

static int frame_size(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_callstacks *c = &m->callstacks;
    uint64_t ptr = bt_wire_get_u64(ev->p + 1);
    unsigned n = ev->p[9];
    if (c->staging)
        return btcm_fail(ev, err, errlen,
                         "frame 0x%" PRIx64 " announced before the previous "
                         "frame's %u subframes arrived",
                         ptr, c->staging_left);
    if (btc_tagmap_get(&c->frame_state, ptr) != BTC_FRAME_ASKED)
        return btcm_fail(ev, err, errlen, "answer for frame 0x%" PRIx64 ", which was not asked for",
                         ptr);
    int64_t img = btcm_intern(m, ev->str1, ev->str1_len);
    if (img < 0)
        return btcm_nomem(err, errlen);
    /* Answered: the budget comes back; the state turns resolved with the
     * last subframe (a frame cut short stays unknown). */
    c->frames_asked--;
    btcm_budget(m, 1);
    if (n == 0)
        return unresolved_frame(m, ptr, (uint32_t)img, err, errlen);
    bt_wire_put_u64(c->staging_rec, ptr);
    bt_wire_put_u32(c->staging_rec + 8, (uint32_t)img);
    c->staging_rec[12] = (uint8_t)n;
    c->staging_len = FRAME_HEAD;
    c->staging = 1;
    c->staging_left = n;
    return BTC_OK;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Inlined code of compiler intrinsics and of the C++ atomics headers, which
 * upstream's server drops when it is the innermost of several subframes
 * (the function that used it is the line worth showing). */
static int skipped_subframe_file(const char *file, size_t n)
{
    if (ends_with(file, n, "/include/arm_neon.h") || ends_with(file, n, "/bits/atomic_base.h") ||
        ends_with(file, n, "/atomic"))
        return 1;
    if (!ends_with(file, n, "intrin.h"))
        return 0;
    size_t base = n;
    while (base > 0 && file[base - 1] != '/')
        base--;
    return base >= 9 && memcmp(file + base - 9, "/include/", 9) == 0;
}

/* Learns the symbol a subframe points at (asking the client for its
 * source position once). */
static int see_symbol(struct btc_model *m, const struct btc_subframe *s, uint32_t image,
                      uint32_t size, int is_inline)
{
    struct btc_callstacks *c = &m->callstacks;
    if (!s->sym_addr || btc_map_get(&c->symbol_index, s->sym_addr))
        return BTC_OK;
    struct btc_symbol *y = btc_vec_push(&c->symbols);
    if (!y)
        return BTC_ERR_NOMEM;
    y->addr = s->sym_addr;
    y->name = s->name + 1;
    y->image = image + 1;
    y->call_file = s->file + 1;
    y->call_line = s->line;
    y->size = size & 0xFFFFFF;
    y->is_inline = (uint8_t)is_inline;
    if (btc_map_put(&c->symbol_index, y->addr, c->symbols.len - 1) < 0 ||
        btcm_query(m, BT_QUERY_SYMBOL, y->addr) < 0)
        return BTC_ERR_NOMEM;
    return BTC_OK;
}

static int subframe(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_callstacks *c = &m->callstacks;
    if (!c->staging)
        return btcm_fail(ev, err, errlen, "subframe without a CallstackFrameSize before it");
    uint8_t *rec = c->staging_rec;
    if (c->staging_left > 1 && c->staging_left == rec[12] &&
        skipped_subframe_file(ev->str2, ev->str2_len)) {
        rec[12]--;
        c->staging_left--;
        return BTC_OK;
    }
    int64_t name = btcm_intern(m, ev->str1, ev->str1_len);
    int64_t file = btcm_intern(m, ev->str2, ev->str2_len);
    if (name < 0 || file < 0)
        return btcm_nomem(err, errlen);
    struct btc_subframe s = {(uint32_t)name, (uint32_t)file, bt_wire_get_u32(ev->p + 1),
                             bt_wire_get_u64(ev->p + 5)};
    uint8_t *p = rec + c->staging_len;
    bt_wire_put_u32(p, s.name);
    bt_wire_put_u32(p + 4, s.file);
    bt_wire_put_u32(p + 8, s.line);
    bt_wire_put_u64(p + 12, s.sym_addr);
    c->staging_len += SUBFRAME_SIZE;
    uint32_t image = bt_wire_get_u32(rec + 8);
    /* All but the last subframe are inlined. */
    if (btc_code_source(m, file, image) < 0 ||
        see_symbol(m, &s, image, bt_wire_get_u32(ev->p + 13), c->staging_left > 1) < 0)
        return btcm_nomem(err, errlen);
    if (--c->staging_left)
        return BTC_OK;
    c->staging = 0;
    return file_frame(c, err, errlen);
}

static int symbol_information(struct btc_model *m, const struct btc_event *ev, char *err,
                              size_t errlen)
{
    struct btc_callstacks *c = &m->callstacks;
    uint64_t addr = bt_wire_get_u64(ev->p + 5);
    if (!btcm_answered(m, BT_QUERY_SYMBOL, addr))
        return btcm_fail(ev, err, errlen,
                         "answer for symbol 0x%" PRIx64 ", which was not asked for", addr);
    uint64_t *si = btc_map_get(&c->symbol_index, addr);
    struct btc_symbol *y = btc_vec_at(&c->symbols, (size_t)*si);
    int64_t file = btcm_intern(m, ev->str1, ev->str1_len);
    if (file < 0)
        return btcm_nomem(err, errlen);
    y->file = (uint32_t)file + 1;
    y->line = bt_wire_get_u32(ev->p + 1);
    y->resolved = 1;
    if (btc_code_symbol(m, addr, y->size) < 0 ||
        btc_code_source(m, file, (int64_t)y->image - 1) < 0)
        return btcm_nomem(err, errlen);
    return BTC_OK;
}

int btc_callstacks_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    switch (ev->type) {
    case BT_EV_CALLSTACK_PAYLOAD:
        return callstack_payload(m, ev, err, errlen);
    case BT_EV_CALLSTACK_FRAME_SIZE:
        return frame_size(m, ev, err, errlen);
    case BT_EV_CALLSTACK_FRAME:
        return subframe(m, ev, err, errlen);
    default:
        return symbol_information(m, ev, err, errlen);
    }
}
