/* The GPU parts of a .tracy file: the zone-count hints per source location
 * (section 18) and the contexts with their timelines (section 24), streamed
 * from the GPU zone spool one timeline at a time. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btc_file_versions.h"
#include "btc_tracy_write_parts.h"

void btcw_gpu_hints(struct writer *wr)
{
    const struct btc_map *cnt = &wr->m->gpu.srcloc_cnt;
    put_u64(&wr->w, cnt->len);
    for (size_t i = 0; i < cnt->cap; i++) {
        if (!cnt->used[i])
            continue;
        put_u16(&wr->w, (uint16_t)cnt->keys[i]);
        put_u64(&wr->w, cnt->vals[i]);
    }
}

struct gpu_pending_end {
    int64_t cpu_end, gpu_end;
    uint32_t left;
    uint16_t query;
};

static void put_end(struct writer *wr, int64_t *ref, int64_t *gref, int64_t cpu_end,
                    int64_t gpu_end, uint16_t query)
{
    put_wto(&wr->w, ref, cpu_end);
    put_wto(&wr->w, gref, gpu_end);
    if (wr->version >= BTC_GATE_GPU_NOTES)
        put_u16(&wr->w, query);
}

/* One timeline, depth first: each zone, its children, then its ends; the
 * two references run through the whole timeline. */
static int write_timeline(struct writer *wr, uint8_t ctx, uint32_t timeline, uint64_t top)
{
    struct fw *w = &wr->w;
    put_u64(w, top);
    if (!top)
        return BTC_OK;
    struct btc_vec stack;
    btc_vec_init(&stack, sizeof(struct gpu_pending_end));
    int64_t ref = 0, gref = 0;
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &wr->m->gpu.zones) < 0)
        return btcw_io_fail(wr, "GPU zone");
    const uint8_t *p;
    int rc;
    while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
        struct btc_gpu_zone_rec z;
        memcpy(&z, p, sizeof z);
        if (z.ctx != ctx || z.timeline != timeline)
            continue;
        put_wto(w, &ref, z.cpu_start);
        put_wto(w, &gref, z.gpu_start);
        put_u16(w, (uint16_t)z.srcloc);
        put_u24(w, z.callstack);
        put_u16(w, z.thread);
        put_u64(w, z.children);
        if (stack.len)
            ((struct gpu_pending_end *)btc_vec_at(&stack, stack.len - 1))->left--;
        if (z.children) {
            struct gpu_pending_end *e = btc_vec_push(&stack);
            if (!e) {
                rc = BTC_ERR_NOMEM;
                break;
            }
            *e = (struct gpu_pending_end){z.cpu_end, z.gpu_end, z.children, z.query};
            continue;
        }
        put_end(wr, &ref, &gref, z.cpu_end, z.gpu_end, z.query);
        while (stack.len) {
            struct gpu_pending_end *e = btc_vec_at(&stack, stack.len - 1);
            if (e->left)
                break;
            put_end(wr, &ref, &gref, e->cpu_end, e->gpu_end, e->query);
            stack.len--;
        }
    }
    btc_spool_reader_close(&r);
    btc_vec_free(&stack);
    if (rc == BTC_ERR_NOMEM)
        return rc;
    return rc < 0 ? btcw_io_fail(wr, "GPU zone") : BTC_OK;
}

/* The annotations of one context, grouped by query as upstream's map of
 * maps is written. */
static int write_notes(struct writer *wr, const struct btc_gpu_ctx *c)
{
    struct fw *w = &wr->w;
    struct btc_map seen;
    btc_map_init(&seen);
    for (size_t i = 0; i < c->notes.len; i++) {
        const struct btc_gpu_note *n = btc_vec_at(&c->notes, i);
        uint64_t *k = btc_map_get(&seen, n->query);
        if (k)
            ++*k;
        else if (btc_map_put(&seen, n->query, 1) < 0) {
            btc_map_free(&seen);
            return BTC_ERR_NOMEM;
        }
    }
    put_u64(w, seen.len);
    for (size_t s = 0; s < seen.cap; s++) {
        if (!seen.used[s])
            continue;
        put_u16(w, (uint16_t)seen.keys[s]);
        put_u64(w, seen.vals[s]);
        for (size_t i = 0; i < c->notes.len; i++) {
            const struct btc_gpu_note *n = btc_vec_at(&c->notes, i);
            if (n->query != seen.keys[s])
                continue;
            put_i64(w, n->id);
            put_f64(w, n->value);
        }
    }
    btc_map_free(&seen);
    return BTC_OK;
}

int btcw_gpu(struct writer *wr)
{
    const struct btc_gpu *g = &wr->m->gpu;
    struct fw *w = &wr->w;
    int notes = wr->version >= BTC_GATE_GPU_NOTES;
    uint64_t total = 0;
    for (size_t i = 0; i < g->ctxs.len; i++)
        total += ((const struct btc_gpu_ctx *)btc_vec_at(&g->ctxs, i))->count;
    put_u64(w, total);
    put_u64(w, g->child_lists);
    put_u64(w, g->ctxs.len);
    for (size_t i = 0; i < g->ctxs.len; i++) {
        const struct btc_gpu_ctx *c = btc_vec_at(&g->ctxs, i);
        put_u64(w, c->thread);
        put_u8(w, c->calibration);
        put_u64(w, c->count);
        uint32_t period;
        memcpy(&period, &c->period, 4);
        put_u32(w, period);
        put_u8(w, btc_file_gpu_context_type(wr->version, c->type));
        put_u24(w, c->name >= 0 ? (uint32_t)c->name + 1 : 0);
        put_u64(w, c->overflow);
        if (notes) {
            put_u64(w, c->note_names.len);
            for (size_t k = 0; k < c->note_names.len; k++) {
                const struct btc_gpu_note_name *n = btc_vec_at(&c->note_names, k);
                put_i64(w, n->id);
                put_u24(w, (uint32_t)n->name + 1);
            }
        }
        put_u64(w, c->timelines.len);
        for (size_t k = 0; k < c->timelines.len; k++) {
            const struct btc_gpu_timeline *t = btc_vec_at(&c->timelines, k);
            put_u64(w, t->tid);
            int rc = write_timeline(wr, (uint8_t)i, (uint32_t)k, t->top);
            if (rc < 0)
                return rc;
        }
        if (notes) {
            int rc = write_notes(wr, c);
            if (rc < 0)
                return rc;
        }
    }
    return BTC_OK;
}
