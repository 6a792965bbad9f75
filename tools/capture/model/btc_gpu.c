/* GPU contexts and zones (see btc_gpu.h). The clock translation and the
 * nesting follow upstream's server, so a file we write reads back in its
 * GUI with the same GPU rows its own capture would show. */
#define _GNU_SOURCE
#include "btc_gpu.h"

#include <inttypes.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "btc_model.h"
#include "btc_model_parts.h"

int btc_gpu_init(struct btc_gpu *g, const char *spool_dir, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    btc_vec_init(&g->ctxs, sizeof(struct btc_gpu_ctx));
    for (int i = 0; i < 256; i++)
        g->by_wire[i] = -1;
    btc_map_init(&g->queries);
    btc_map_init(&g->started);
    btc_map_init(&g->srcloc_cnt);
    g->zones.fd = -1;
    return btc_spool_open(&g->zones, spool_dir, sizeof(struct btc_gpu_zone_rec), err, errlen);
}

void btc_gpu_free(struct btc_gpu *g)
{
    for (size_t i = 0; i < g->ctxs.len; i++) {
        struct btc_gpu_ctx *c = btc_vec_at(&g->ctxs, i);
        for (size_t k = 0; k < c->timelines.len; k++)
            btc_vec_free(&((struct btc_gpu_timeline *)btc_vec_at(&c->timelines, k))->stack);
        btc_vec_free(&c->timelines);
        btc_vec_free(&c->note_names);
        btc_vec_free(&c->notes);
    }
    btc_vec_free(&g->ctxs);
    btc_map_free(&g->queries);
    btc_map_free(&g->started);
    btc_map_free(&g->srcloc_cnt);
    btc_spool_close(&g->zones);
}

static struct btc_gpu_ctx *ctx_of(struct btc_gpu *g, uint8_t wire_id)
{
    int16_t i = g->by_wire[wire_id];
    return i < 0 ? NULL : btc_vec_at(&g->ctxs, (size_t)i);
}

/* A double as int64, saturated (hostile periods and clocks must not make
 * the conversion undefined). */
static int64_t sat(double v)
{
    if (!(v > -4e18))
        return v != v ? 0 : -(int64_t)4e18;
    return v > 4e18 ? (int64_t)4e18 : (int64_t)v;
}

/* Two's-complement arithmetic, as the client's 64-bit counters wrap. */
static int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}
static int64_t wrap_sub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* GPU ticks scaled to ns by the context's period (upstream loses the same
 * precision). */
static int64_t scaled(const struct btc_gpu_ctx *c, int64_t ticks)
{
    return c->period == 1.f ? ticks : sat((double)c->period * (double)ticks);
}

static int64_t cpu_ns(const struct btc_model *m, int64_t ticks)
{
    return btc_ticks_to_ns(m->welcome.timer_mul, m->welcome.init_begin, ticks);
}

static int new_context(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_gpu *g = &m->gpu;
    const uint8_t *p = ev->p;
    uint8_t id = p[25];
    if (g->by_wire[id] >= 0)
        return btcm_fail(ev, err, errlen, "GPU context %u created twice", id);
    if (p[27] == 0)
        return btcm_fail(ev, err, errlen, "GPU context %u has no type", id);
    struct btc_gpu_ctx *c = btc_vec_push(&g->ctxs);
    if (!c)
        return btcm_nomem(err, errlen);
    c->wire_id = id;
    c->type = p[27];
    c->calibration = (p[26] & 1) != 0; /* GpuContextCalibration */
    memcpy(&c->period, p + 21, 4);
    c->thread = bt_wire_get_u32(p + 17);
    c->name = -1;
    int64_t gpu = scaled(c, (int64_t)bt_wire_get_u64(p + 9));
    c->time_diff = wrap_sub(ev->time, gpu);
    c->calibrated_gpu = gpu;
    c->calibrated_cpu = ev->time;
    c->calibration_mod = 1.0;
    btc_vec_init(&c->timelines, sizeof(struct btc_gpu_timeline));
    btc_vec_init(&c->note_names, sizeof(struct btc_gpu_note_name));
    btc_vec_init(&c->notes, sizeof(struct btc_gpu_note));
    g->by_wire[id] = (int16_t)(g->ctxs.len - 1);
    btcm_see_time(m, ev->time);
    return BTC_OK;
}

static struct btc_gpu_timeline *timeline_of(struct btc_gpu_ctx *c, uint64_t tid, uint32_t *index,
                                            int create)
{
    for (size_t i = 0; i < c->timelines.len; i++) {
        struct btc_gpu_timeline *t = btc_vec_at(&c->timelines, i);
        if (t->tid == tid) {
            *index = (uint32_t)i;
            return t;
        }
    }
    if (!create)
        return NULL;
    struct btc_gpu_timeline *t = btc_vec_push(&c->timelines);
    if (!t)
        return NULL;
    t->tid = tid;
    btc_vec_init(&t->stack, sizeof(struct btc_gpu_open));
    *index = (uint32_t)(c->timelines.len - 1);
    return t;
}

static int zone_begin(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_gpu *g = &m->gpu;
    const uint8_t *p = ev->p;
    unsigned t = ev->type;
    int serial = t >= BT_EV_GPU_ZONE_BEGIN_SERIAL;
    int alloc = t == BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC ||
                t == BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK ||
                t == BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL ||
                t == BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL;
    int callstack = t == BT_EV_GPU_ZONE_BEGIN_CALLSTACK ||
                    t == BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK ||
                    t == BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL ||
                    t == BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL;
    uint32_t tid = bt_wire_get_u32(p + 9);
    uint16_t query = bt_wire_get_u16(p + 13);
    struct btc_gpu_ctx *c = ctx_of(g, p[15]);
    if (!c)
        return btcm_fail(ev, err, errlen, "GPU zone in context %u, which was never created", p[15]);
    if (btc_map_get(&g->queries, (uint64_t)c->wire_id << 16 | query))
        return btcm_fail(ev, err, errlen, "GPU query %u of context %u is still in flight", query,
                         c->wire_id);
    int16_t srcloc;
    if (alloc) {
        if (m->pending_payload_srcloc < 0)
            return btcm_fail(ev, err, errlen, "expected a SourceLocationPayload before this zone");
        srcloc = (int16_t)(-m->pending_payload_srcloc - 1);
    } else {
        int rc = btcm_static_srcloc(m, bt_wire_get_u64(p + 16), &srcloc);
        if (rc < 0)
            return rc == BTC_ERR_NOMEM ? btcm_nomem(err, errlen)
                                       : btcm_fail(ev, err, errlen, "too many source locations");
    }
    uint32_t cs = 0;
    if (callstack) {
        if (serial) {
            cs = m->pending_serial_callstack;
        } else {
            int64_t ti = btcm_current_thread(m);
            if (ti < 0)
                return btcm_nomem(err, errlen);
            cs = btcm_thread_at(m, ti)->pending_callstack;
        }
        if (!cs)
            return btcm_fail(ev, err, errlen, "expected a callstack before this GPU zone");
    }
    /* Contexts bound to one thread (OpenGL, Direct3D 11) keep one timeline;
     * the others one per thread that issues zones. */
    uint64_t key = c->thread ? 0 : tid;
    uint16_t thread = 0;
    if (!c->thread) {
        int64_t ti = btcm_get_thread(m, tid);
        if (ti < 0)
            return ti == BTC_ERR_NOMEM ? btcm_nomem(err, errlen)
                                       : btcm_fail(ev, err, errlen, "too many threads");
        thread = (uint16_t)(ti + 1);
    }
    uint32_t tl_index;
    struct btc_gpu_timeline *tl = timeline_of(c, key, &tl_index, 1);
    if (!tl || btc_vec_reserve(&tl->stack, 1) < 0)
        return btcm_nomem(err, errlen);
    if (tl->stack.len >= 65535)
        return btcm_fail(ev, err, errlen, "GPU zones nested deeper than 65535");
    struct btc_gpu_zone_rec rec = {.cpu_start = ev->time,
                                   .cpu_end = -1,
                                   .gpu_start = -1,
                                   .gpu_end = -1,
                                   .callstack = cs,
                                   .timeline = tl_index,
                                   .srcloc = srcloc,
                                   .thread = thread,
                                   .query = query,
                                   .ctx = (uint8_t)g->by_wire[c->wire_id]};
    uint64_t idx;
    if (btc_spool_append(&g->zones, &rec, &idx) < 0) {
        btcm_spool_failed(err, errlen, "GPU zone");
        return BTC_ERR_IO;
    }
    uint64_t *cnt = btc_map_get(&g->srcloc_cnt, (uint16_t)srcloc);
    if (btc_map_put(&g->queries, (uint64_t)c->wire_id << 16 | query, idx) < 0 ||
        (cnt ? (++*cnt, 0) : btc_map_put(&g->srcloc_cnt, (uint16_t)srcloc, 1)) < 0)
        return btcm_nomem(err, errlen);
    /* Only now that nothing can fail is anything consumed. */
    if (alloc)
        m->pending_payload_srcloc = -1;
    if (callstack && serial)
        m->pending_serial_callstack = 0;
    else if (callstack)
        btcm_thread_at(m, btcm_current_thread(m))->pending_callstack = 0;
    if (tl->stack.len)
        ((struct btc_gpu_open *)btc_vec_at(&tl->stack, tl->stack.len - 1))->children++;
    else
        tl->top++;
    struct btc_gpu_open *o = btc_vec_push(&tl->stack); /* reserved above */
    o->rec = idx;
    o->children = 0;
    g->zone_count++;
    btcm_see_time(m, ev->time);
    return BTC_OK;
}

/* Writes a closed zone's CPU end and child count into its record. */
static int close_zone(struct btc_gpu *g, const struct btc_gpu_open *o, int64_t cpu_end)
{
    if (o->children)
        g->child_lists++;
    struct btc_gpu_zone_rec r;
    r.cpu_end = cpu_end;
    r.children = o->children;
    if (btc_spool_patch(&g->zones, o->rec, offsetof(struct btc_gpu_zone_rec, cpu_end), &r.cpu_end,
                        sizeof r.cpu_end) < 0 ||
        btc_spool_patch(&g->zones, o->rec, offsetof(struct btc_gpu_zone_rec, children), &r.children,
                        sizeof r.children) < 0)
        return BTC_ERR_IO;
    return BTC_OK;
}

static int zone_end(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_gpu *g = &m->gpu;
    const uint8_t *p = ev->p;
    uint16_t query = bt_wire_get_u16(p + 13);
    struct btc_gpu_ctx *c = ctx_of(g, p[15]);
    if (!c)
        return btcm_fail(ev, err, errlen, "GPU zone end in context %u, which was never created",
                         p[15]);
    /* As upstream: the end names its timeline by the thread it carries
     * (0 from clients of single-thread contexts). */
    uint32_t tl_index;
    struct btc_gpu_timeline *tl = timeline_of(c, bt_wire_get_u32(p + 9), &tl_index, 0);
    if (!tl || !tl->stack.len)
        return btcm_fail(ev, err, errlen, "GPU zone end with no GPU zone open");
    if (btc_map_get(&g->queries, (uint64_t)c->wire_id << 16 | query))
        return btcm_fail(ev, err, errlen, "GPU query %u of context %u is still in flight", query,
                         c->wire_id);
    struct btc_gpu_open *o = btc_vec_at(&tl->stack, tl->stack.len - 1);
    if (btc_map_put(&g->queries, (uint64_t)c->wire_id << 16 | query, o->rec) < 0)
        return btcm_nomem(err, errlen);
    if (close_zone(g, o, ev->time) < 0) {
        btcm_spool_failed(err, errlen, "GPU zone");
        return BTC_ERR_IO;
    }
    tl->stack.len--;
    btcm_see_time(m, ev->time);
    return BTC_OK;
}

static int gpu_time(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_gpu *g = &m->gpu;
    const uint8_t *p = ev->p;
    uint16_t query = bt_wire_get_u16(p + 9);
    struct btc_gpu_ctx *c = ctx_of(g, p[11]);
    if (!c)
        return btcm_fail(ev, err, errlen, "GPU time for context %u, which was never created",
                         p[11]);
    uint64_t qkey = (uint64_t)c->wire_id << 16 | query;
    uint64_t *rec = btc_map_get(&g->queries, qkey);
    if (!rec)
        return btcm_fail(ev, err, errlen, "GPU time for query %u, which no zone asked", query);
    /* A 32-bit GPU counter that wrapped: upstream widens it from then on. */
    int64_t ticks = ev->time;
    if (c->last_gpu_time > INT64_MIN + (1ll << 31) && ticks < c->last_gpu_time - (1ll << 31)) {
        if (!c->overflow)
            c->overflow = c->last_gpu_time > 0
                              ? 1ull << (64 - __builtin_clzll((uint64_t)c->last_gpu_time))
                              : 1;
        c->overflow_mul++;
    }
    c->last_gpu_time = ticks;
    if (c->overflow)
        ticks = wrap_add(ticks, (int64_t)(c->overflow * c->overflow_mul));
    int64_t t;
    if (!c->calibration)
        t = wrap_add(scaled(c, ticks), c->time_diff);
    else if (c->period == 1.f)
        t = sat((double)wrap_sub(ticks, c->calibrated_gpu) * c->calibration_mod +
                (double)c->calibrated_cpu);
    else
        t = sat(((double)c->period * (double)ticks - (double)c->calibrated_gpu) *
                    c->calibration_mod +
                (double)c->calibrated_cpu);
    uint64_t r = *rec;
    btc_map_remove(&g->queries, qkey);
    int start = btc_map_get(&g->started, r) == NULL;
    size_t off = start ? offsetof(struct btc_gpu_zone_rec, gpu_start)
                       : offsetof(struct btc_gpu_zone_rec, gpu_end);
    if (btc_spool_patch(&g->zones, r, off, &t, sizeof t) < 0) {
        btcm_spool_failed(err, errlen, "GPU zone");
        return BTC_ERR_IO;
    }
    if (start) {
        if (btc_map_put(&g->started, r, 1) < 0)
            return btcm_nomem(err, errlen);
        c->count++;
    } else {
        btc_map_remove(&g->started, r);
    }
    btcm_see_time(m, t);
    return BTC_OK;
}

static int calibrate(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    int sync = ev->type == BT_EV_GPU_TIME_SYNC;
    uint8_t id = sync ? p[17] : p[25];
    struct btc_gpu_ctx *c = ctx_of(&m->gpu, id);
    if (!c)
        return btcm_fail(ev, err, errlen, "GPU clock data for context %u, which was never created",
                         id);
    int64_t gpu = scaled(c, (int64_t)bt_wire_get_u64(p + 1));
    int64_t cpu = cpu_ns(m, (int64_t)bt_wire_get_u64(p + 9));
    if (sync) {
        c->time_diff = wrap_sub(cpu, gpu);
        c->last_gpu_time = 0;
        c->overflow = 0;
        c->overflow_mul = 0;
        return BTC_OK;
    }
    if (!c->calibration)
        return btcm_fail(ev, err, errlen, "GPU calibration for context %u, created without it", id);
    int64_t gpu_delta = wrap_sub(gpu, c->calibrated_gpu);
    c->calibration_mod = (double)(int64_t)bt_wire_get_u64(p + 17) / (double)gpu_delta;
    c->calibrated_gpu = gpu;
    c->calibrated_cpu = cpu;
    return BTC_OK;
}

static int names(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    int note = ev->type == BT_EV_GPU_ANNOTATION_NAME;
    uint8_t id = note ? p[9] : p[1];
    struct btc_gpu_ctx *c = ctx_of(&m->gpu, id);
    if (!c)
        return btcm_fail(ev, err, errlen, "GPU name for context %u, which was never created", id);
    int64_t s = btcm_intern(m, ev->str1, ev->str1_len);
    if (s < 0)
        return btcm_nomem(err, errlen);
    if (!note) {
        c->name = s;
        return BTC_OK;
    }
    int64_t note_id = (int64_t)bt_wire_get_u64(p + 1);
    for (size_t i = 0; i < c->note_names.len; i++) {
        struct btc_gpu_note_name *n = btc_vec_at(&c->note_names, i);
        if (n->id == note_id) {
            n->name = s;
            return BTC_OK;
        }
    }
    struct btc_gpu_note_name *n = btc_vec_push(&c->note_names);
    if (!n)
        return btcm_nomem(err, errlen);
    n->id = note_id;
    n->name = s;
    return BTC_OK;
}

static int annotate(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    struct btc_gpu_ctx *c = ctx_of(&m->gpu, p[23]);
    if (!c)
        return btcm_fail(ev, err, errlen, "GPU annotation for context %u, which was never created",
                         p[23]);
    int64_t note_id = (int64_t)bt_wire_get_u64(p + 1);
    uint16_t query = bt_wire_get_u16(p + 21);
    double value;
    memcpy(&value, p + 9, 8);
    /* One value per (query, note): a later one replaces it, as upstream's
     * map does. */
    for (size_t i = 0; i < c->notes.len; i++) {
        struct btc_gpu_note *n = btc_vec_at(&c->notes, i);
        if (n->query == query && n->id == note_id) {
            n->value = value;
            return BTC_OK;
        }
    }
    struct btc_gpu_note *n = btc_vec_push(&c->notes);
    if (!n)
        return btcm_nomem(err, errlen);
    n->query = query;
    n->id = note_id;
    n->value = value;
    return BTC_OK;
}

int btc_gpu_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    switch (ev->type) {
    case BT_EV_GPU_NEW_CONTEXT:
        return new_context(m, ev, err, errlen);
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
        return zone_begin(m, ev, err, errlen);
    case BT_EV_GPU_ZONE_END:
    case BT_EV_GPU_ZONE_END_SERIAL:
        return zone_end(m, ev, err, errlen);
    case BT_EV_GPU_TIME:
        return gpu_time(m, ev, err, errlen);
    case BT_EV_GPU_CALIBRATION:
    case BT_EV_GPU_TIME_SYNC:
        return calibrate(m, ev, err, errlen);
    case BT_EV_GPU_CONTEXT_NAME:
    case BT_EV_GPU_ANNOTATION_NAME:
        return names(m, ev, err, errlen);
    case BT_EV_GPU_ZONE_ANNOTATION:
        return annotate(m, ev, err, errlen);
    default:
        return BTC_OK;
    }
}

int btc_gpu_finish(struct btc_gpu *g)
{
    for (size_t i = 0; i < g->ctxs.len; i++) {
        struct btc_gpu_ctx *c = btc_vec_at(&g->ctxs, i);
        for (size_t k = 0; k < c->timelines.len; k++) {
            struct btc_gpu_timeline *t = btc_vec_at(&c->timelines, k);
            while (t->stack.len) {
                if (close_zone(g, btc_vec_at(&t->stack, t->stack.len - 1), -1) < 0)
                    return BTC_ERR_IO;
                t->stack.len--;
            }
        }
    }
    return BTC_OK;
}
