/* The .tracy reader's callstacks, their frames and symbols, and the CPU
 * samples that name them (with btc_tracy_rewrite, frames renamed on the
 * way). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "btc_file_versions.h"
#include "btc_tracy_read_parts.h"

int btcr_count_callstack(struct rd *r, struct btc_trace *t, uint32_t cs, uint64_t add)
{
    if (!cs)
        return BTC_OK;
    uint64_t *c = btc_map_get(&t->cs_counts, cs);
    if (c) {
        *c += add;
        return BTC_OK;
    }
    if (btcr_over_limit(r, t, 0))
        return BTC_ERR_FORMAT;
    return btc_map_put(&t->cs_counts, cs, add) < 0 ? BTC_ERR_NOMEM : BTC_OK;
}

/* A sample to the caller's callback, if any. */
int btcr_give_sample(struct rd *r, const struct btc_trace *t, const struct btc_read_sample *smp)
{
    if (!r->more || !r->more->sample || r->failed)
        return BTC_OK;
    int rc = r->more->sample(r->cb_ctx, t, smp);
    return rc < 0 ? rc : BTC_OK;
}

/* Callstacks (section 27) and frames (28): counted, and for the callstacks
 * timer samples hit, each function's self and inclusive samples (a frame's
 * function is its first subframe: the innermost when inlined). */
/* A frame record for btc_tracy_rewrite: read whole, given to the hook,
 * written back with its changes (same length). */
static void rewrite_frame(struct rd *r, struct btc_trace *t, struct btc_map *frame_slot,
                          struct btc_vec *names)
{
    int copy = r->copy_on;
    r->copy_on = 0;
    uint64_t fid = g64(r);
    uint8_t n = g8(r);
    uint32_t image = g24(r);
    struct btc_rewrite_sub sub[256];
    for (unsigned k = 0; k < n; k++) {
        sub[k].name = g24(r) - 1;
        sub[k].file = g24(r) - 1;
        sub[k].line = g32(r);
        sub[k].sym_addr = g64(r);
    }
    if (!r->failed && r->rw->frame)
        r->rw->frame(r->rw->ctx, t, fid, sub, n);
    uint64_t *slotp = btc_map_get(frame_slot, fid);
    if (slotp && n) {
        int64_t *nm = btc_vec_at(names, (size_t)*slotp - 1);
        nm[0] = sub[0].name == UINT32_MAX ? -1 : (int64_t)sub[0].name;
        nm[1] = (int64_t)image - 1;
    }
    if (r->out) {
        put_u64(r->out, fid);
        put_u8(r->out, n);
        put_u24(r->out, image);
        for (unsigned k = 0; k < n; k++) {
            put_u24(r->out, sub[k].name + 1);
            put_u24(r->out, sub[k].file + 1);
            put_u32(r->out, sub[k].line);
            put_u64(r->out, sub[k].sym_addr);
        }
    }
    r->copy_on = copy;
}

int btcr_callstacks(struct rd *r, struct btc_trace *t)
{
    struct sampled_cs {
        uint64_t count;
        size_t first, n; /* in fids */
        uint64_t id;
    };
    struct btc_vec stacks, fids;
    struct btc_map frame_slot; /* frame id -> slot in names, + 1 */
    struct btc_vec names;      /* per needed frame: i64 name, i64 image */
    btc_vec_init(&stacks, sizeof(struct sampled_cs));
    btc_vec_init(&fids, sizeof(uint64_t));
    btc_map_init(&frame_slot);
    btc_vec_init(&names, 2 * sizeof(int64_t));
    int rc = BTC_OK;
    uint64_t n = g64(r);
    t->callstacks = n;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0; i++) {
        uint16_t len = g16(r);
        uint64_t *c = btc_map_get(&t->cs_counts, i + 1);
        uint64_t count = c && (int64_t)*c > 0 ? *c : 0;
        if (!count && !btc_map_get(&t->leak_cs, i + 1)) {
            skip(r, (uint64_t)len * 8);
            continue;
        }
        struct sampled_cs *sc = btc_vec_push(&stacks);
        if (!sc || btc_vec_reserve(&fids, len) < 0) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        *sc = (struct sampled_cs){count, fids.len, len, i + 1};
        for (uint16_t k = 0; k < len; k++) {
            uint64_t fid = g64(r);
            *(uint64_t *)btc_vec_push(&fids) = fid;
            if (!btc_map_get(&frame_slot, fid)) {
                int64_t *nm = btc_vec_push(&names);
                if (!nm || btc_map_put(&frame_slot, fid, names.len) < 0) {
                    rc = BTC_ERR_NOMEM;
                    break;
                }
                nm[0] = nm[1] = -1;
            }
        }
        t->timer_samples += count;
        if (btcr_over_limit(r, t, btcr_vec_bytes(&fids) + btcr_vec_bytes(&names)))
            rc = BTC_ERR_FORMAT;
    }
    n = g64(r);
    t->callstack_frames = n;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0; i++) {
        if (r->rw) {
            rewrite_frame(r, t, &frame_slot, &names);
            continue;
        }
        uint64_t fid = g64(r);
        uint8_t sub = g8(r);
        int64_t image = (int64_t)g24(r) - 1;
        uint64_t *slotp = btc_map_get(&frame_slot, fid);
        if (slotp && sub) {
            int64_t *nm = btc_vec_at(&names, (size_t)*slotp - 1);
            nm[0] = (int64_t)g24(r) - 1;
            nm[1] = image;
            skip(r, 15 + (uint64_t)(sub - 1) * 18);
        } else {
            skip(r, (uint64_t)sub * 18);
        }
    }
    /* Per function: self from the innermost frame, inclusive once per
     * distinct function of the stack. */
    struct btc_map fn_slot; /* name -> slot in t->sampled + 1 */
    btc_map_init(&fn_slot);
    for (size_t i = 0; i < stacks.len && rc >= 0 && !r->failed; i++) {
        const struct sampled_cs *sc = btc_vec_at(&stacks, i);
        if (sc->n) {
            uint64_t fid = *(uint64_t *)btc_vec_at(&fids, sc->first);
            const int64_t *nm = btc_vec_at(&names, (size_t)*btc_map_get(&frame_slot, fid) - 1);
            if (nm[0] >= 0 && btc_map_put(&t->sample_top, sc->id, (uint64_t)nm[0] + 1) < 0)
                rc = BTC_ERR_NOMEM;
        }
        for (size_t k = 0; k < sc->n && sc->count && rc >= 0; k++) {
            uint64_t fid = *(uint64_t *)btc_vec_at(&fids, sc->first + k);
            const int64_t *nm = btc_vec_at(&names, (size_t)*btc_map_get(&frame_slot, fid) - 1);
            int seen = 0;
            for (size_t j = 0; j < k && !seen; j++) {
                uint64_t other = *(uint64_t *)btc_vec_at(&fids, sc->first + j);
                seen = ((const int64_t *)btc_vec_at(
                           &names, (size_t)*btc_map_get(&frame_slot, other) - 1))[0] == nm[0];
            }
            if (seen)
                continue;
            uint64_t *fs = btc_map_get(&fn_slot, (uint64_t)nm[0]);
            struct btc_read_sampled *f;
            if (fs) {
                f = btc_vec_at(&t->sampled, (size_t)*fs - 1);
            } else {
                f = btc_vec_push(&t->sampled);
                if (!f || btc_map_put(&fn_slot, (uint64_t)nm[0], t->sampled.len) < 0) {
                    rc = BTC_ERR_NOMEM;
                    break;
                }
                f->name = nm[0];
                f->image = nm[1];
            }
            f->inclusive += sc->count;
            if (k == 0)
                f->self += sc->count;
        }
    }
    btc_map_free(&fn_slot);
    btc_vec_free(&stacks);
    btc_vec_free(&fids);
    btc_map_free(&frame_slot);
    btc_vec_free(&names);
    btc_map_free(&t->cs_counts);
    btc_map_init(&t->cs_counts);
    return rc;
}
