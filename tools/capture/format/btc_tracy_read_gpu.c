/* The .tracy reader's GPU zones: each context's timelines, depth first,
 * with per-source-location statistics (query ids from file 0.12.4 on). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "btc_file_versions.h"
#include "btc_tracy_read_parts.h"

static struct btc_read_gpu_stat *gpu_stat(struct btc_trace *t, uint32_t ctx, int16_t srcloc)
{
    for (size_t i = 0; i < t->gpu_stats.len; i++) {
        struct btc_read_gpu_stat *g = btc_vec_at(&t->gpu_stats, i);
        if (g->ctx == ctx && g->srcloc == srcloc)
            return g;
    }
    struct btc_read_gpu_stat *g = btc_vec_push(&t->gpu_stats);
    if (g) {
        g->ctx = ctx;
        g->srcloc = srcloc;
        g->min_ns = INT64_MAX;
    }
    return g;
}

struct gpu_frame {
    int64_t cpu_start, gpu_start;
    uint64_t left;
    int16_t srcloc;
};

static void gpu_zone_end(struct rd *r, struct btc_trace *t, uint32_t ctx, const struct gpu_frame *z,
                         int64_t cpu_end, int64_t gpu_end)
{
    if (r->more && r->more->gpu_zone && !r->failed && r->cb_rc >= 0) {
        struct btc_read_gpu_zone g = {.ctx = ctx,
                                      .timeline = r->gpu_timeline,
                                      .depth = r->gpu_depth,
                                      .srcloc = z->srcloc,
                                      .cpu_start = z->cpu_start,
                                      .cpu_end = cpu_end,
                                      .gpu_start = z->gpu_start,
                                      .gpu_end = gpu_end};
        r->cb_rc = r->more->gpu_zone(r->cb_ctx, t, &g);
        if (r->cb_rc < 0)
            btcr_fail(r, "export stopped");
    }
    struct btc_read_gpu_stat *g = gpu_stat(t, ctx, z->srcloc);
    if (!g) {
        btcr_fail(r, "out of memory for GPU zone statistics");
        return;
    }
    g->zones++;
    int64_t d = (int64_t)((uint64_t)gpu_end - (uint64_t)z->gpu_start);
    if (z->gpu_start < 0 || gpu_end < 0 || d <= 0)
        return;
    g->count++;
    g->total_ns = (int64_t)((uint64_t)g->total_ns + (uint64_t)d);
    if (d < g->min_ns)
        g->min_ns = d;
    if (d > g->max_ns)
        g->max_ns = d;
}

void btcr_gpu_zones(struct rd *r, struct btc_trace *t, uint32_t ctx, int query_ids)
{
    /* Depth-first like the CPU timeline: start, children, then the ends,
     * CPU and GPU times each against their own running reference. */
    struct btc_vec stack;
    btc_vec_init(&stack, sizeof(struct gpu_frame));
    int64_t ref = 0, gref = 0;
    uint64_t top = g64(r);
    while (!r->failed && (top || stack.len)) {
        struct gpu_frame *parent = stack.len ? btc_vec_at(&stack, stack.len - 1) : NULL;
        if (parent && parent->left == 0) {
            int64_t cpu_end = gwto(r, &ref);
            int64_t gpu_end = gwto(r, &gref);
            if (query_ids)
                g16(r);
            r->gpu_depth = (uint32_t)stack.len - 1;
            gpu_zone_end(r, t, ctx, parent, cpu_end, gpu_end);
            stack.len--;
            continue;
        }
        if (parent)
            parent->left--;
        else
            top--;
        struct gpu_frame z;
        z.cpu_start = gwto(r, &ref);
        z.gpu_start = gwto(r, &gref);
        z.srcloc = (int16_t)g16(r);
        uint32_t callstack = g24(r);
        g16(r);
        t->gpu_zones++;
        t->gpu_zones_with_callstack += callstack != 0;
        z.left = g64(r);
        if (!z.left) {
            int64_t cpu_end = gwto(r, &ref);
            int64_t gpu_end = gwto(r, &gref);
            if (query_ids)
                g16(r);
            r->gpu_depth = (uint32_t)stack.len;
            gpu_zone_end(r, t, ctx, &z, cpu_end, gpu_end);
            continue;
        }
        struct gpu_frame *n = stack.len < MAX_ZONE_DEPTH ? btc_vec_push(&stack) : NULL;
        if (!n) {
            btcr_fail(r, "GPU zones nested too deep");
            break;
        }
        *n = z;
    }
    btc_vec_free(&stack);
}
