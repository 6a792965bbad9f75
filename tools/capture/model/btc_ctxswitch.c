/* Context switches, wakeups and fiber regions (see btc_ctxswitch.h),
 * following upstream's server event by event so the regions, their
 * wakeups and the per-thread figures come out the same. */
#define _GNU_SOURCE
#include "btc_ctxswitch.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "btc_model.h"
#include "btc_model_parts.h"

int btc_ctxswitch_init(struct btc_ctxswitch *c, const char *spool_dir, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->regions.fd = c->cpu_regions.fd = -1;
    btc_vec_init(&c->threads, sizeof(struct btc_ctx_thread));
    btc_map_init(&c->thread_index);
    btc_vec_init(&c->cpu_threads, sizeof(struct btc_cpu_thread));
    btc_map_init(&c->cpu_thread_index);
    btc_vec_init(&c->ext_tids, sizeof(uint64_t));
    btc_map_init(&c->ext_index);
    btc_vec_init(&c->ext_names, sizeof(struct btc_ext_name));
    btc_map_init(&c->ext_name_index);
    int rc = btc_spool_open(&c->regions, spool_dir, sizeof(struct btc_ctxsw_rec), err, errlen);
    if (rc < 0)
        return rc;
    return btc_spool_open(&c->cpu_regions, spool_dir, sizeof(struct btc_cpu_rec), err, errlen);
}

void btc_ctxswitch_free(struct btc_ctxswitch *c)
{
    btc_spool_close(&c->regions);
    btc_spool_close(&c->cpu_regions);
    btc_vec_free(&c->threads);
    btc_map_free(&c->thread_index);
    btc_vec_free(&c->cpu_threads);
    btc_map_free(&c->cpu_thread_index);
    btc_vec_free(&c->ext_tids);
    btc_map_free(&c->ext_index);
    btc_vec_free(&c->ext_names);
    btc_map_free(&c->ext_name_index);
}

static struct btc_ctx_thread *find_thread(struct btc_ctxswitch *c, uint64_t tid)
{
    uint64_t *i = btc_map_get(&c->thread_index, tid);
    return i ? btc_vec_at(&c->threads, (size_t)*i) : NULL;
}

static struct btc_ctx_thread *get_thread(struct btc_ctxswitch *c, uint64_t tid)
{
    struct btc_ctx_thread *t = find_thread(c, tid);
    if (t)
        return t;
    t = btc_vec_push(&c->threads);
    if (!t || btc_map_put(&c->thread_index, tid, c->threads.len - 1) < 0)
        return NULL;
    t->tid = tid;
    return t;
}

static struct btc_cpu_thread *cpu_thread(struct btc_ctxswitch *c, uint64_t tid)
{
    uint64_t *i = btc_map_get(&c->cpu_thread_index, tid);
    if (i)
        return btc_vec_at(&c->cpu_threads, (size_t)*i);
    struct btc_cpu_thread *t = btc_vec_push(&c->cpu_threads);
    if (!t || btc_map_put(&c->cpu_thread_index, tid, c->cpu_threads.len - 1) < 0)
        return NULL;
    t->tid = tid;
    return t;
}

/* External thread index of tid (section 13), added on first sight. */
static int ext_thread(struct btc_ctxswitch *c, uint64_t tid, uint16_t *out)
{
    uint64_t *i = btc_map_get(&c->ext_index, tid);
    if (i) {
        *out = (uint16_t)*i;
        return BTC_OK;
    }
    if (c->ext_tids.len >= 65535)
        return BTC_ERR_PROTOCOL;
    uint64_t *slot = btc_vec_push(&c->ext_tids);
    if (!slot || btc_map_put(&c->ext_index, tid, c->ext_tids.len - 1) < 0)
        return BTC_ERR_NOMEM;
    *slot = tid;
    *out = (uint16_t)(c->ext_tids.len - 1);
    return BTC_OK;
}

/* Writes the thread's last region back after a change. */
static int rewrite_last(struct btc_ctxswitch *c, const struct btc_ctx_thread *t)
{
    return btc_spool_patch(&c->regions, t->last_index, 0, &t->last, sizeof t->last) < 0 ? BTC_ERR_IO
                                                                                        : BTC_OK;
}

/* Appends a region to the thread: the last one becomes the one before. */
static int push_region(struct btc_ctxswitch *c, struct btc_ctx_thread *t,
                       const struct btc_ctxsw_rec *r)
{
    uint64_t idx;
    if (btc_spool_append(&c->regions, r, &idx) < 0)
        return BTC_ERR_IO;
    if (t->count) {
        t->prev_cpu = t->last.cpu;
        t->prev_wakeup = t->last.wakeup;
    }
    t->last = *r;
    t->last_index = idx;
    t->count++;
    return BTC_OK;
}

/* First sight of a thread on a CPU: ask for its and its process's names. */
static int check_name(struct btc_model *m, uint64_t tid)
{
    struct btc_ctxswitch *c = &m->ctxswitch;
    if (btc_map_get(&c->ext_name_index, tid))
        return BTC_OK;
    struct btc_ext_name *n = btc_vec_push(&c->ext_names);
    if (!n || btc_map_put(&c->ext_name_index, tid, c->ext_names.len - 1) < 0)
        return BTC_ERR_NOMEM;
    n->tid = tid;
    n->process = n->thread = -1;
    return btcm_query(m, BT_QUERY_EXTERNAL_NAME, tid);
}

static int switch_out(struct btc_ctxswitch *c, uint64_t tid, uint8_t cpu, int8_t reason,
                      int8_t state, int64_t time)
{
    struct btc_ctx_thread *t = find_thread(c, tid);
    if (t && t->count) {
        t->last.end = time;
        t->last.reason = reason;
        t->last.state = state;
        if (rewrite_last(c, t) < 0)
            return BTC_ERR_IO;
        struct btc_cpu_thread *ct = cpu_thread(c, tid);
        if (!ct)
            return BTC_ERR_NOMEM;
        ct->regions++;
        /* Hostile times must not overflow: the client's clock wraps. */
        ct->running_time =
            (int64_t)((uint64_t)ct->running_time + (uint64_t)time - (uint64_t)t->last.start);
    }
    if (c->cpu_last[cpu]) {
        int64_t end = time;
        if (btc_spool_patch(&c->cpu_regions, c->cpu_last[cpu] - 1,
                            offsetof(struct btc_cpu_rec, end), &end, sizeof end) < 0)
            return BTC_ERR_IO;
    }
    return BTC_OK;
}

static int switch_in(struct btc_model *m, uint64_t tid, uint8_t cpu, int64_t time)
{
    struct btc_ctxswitch *c = &m->ctxswitch;
    struct btc_ctx_thread *t = get_thread(c, tid);
    if (!t)
        return BTC_ERR_NOMEM;
    int migration = 0;
    if (t->count && t->last.reason == BTC_CTX_REASON_WAKEUP) {
        /* The thread was woken: this region starts where the wakeup was. */
        migration = t->count > 1 && t->prev_cpu != cpu;
    } else {
        migration = t->count && t->last.cpu != cpu;
        struct btc_ctxsw_rec r = {
            .wakeup = time, .start = time, .end = -1, .wakeup_cpu = cpu, .reason = -1, .state = -1};
        r.owner = (uint32_t)(t - (struct btc_ctx_thread *)c->threads.data);
        if (push_region(c, t, &r) < 0)
            return BTC_ERR_IO;
        /* A wakeup that came while it still ran, if it fits between the
         * last wakeup and now (the OS reports such early wakeups). */
        if (t->pending_wakeup && t->count > 1 && t->prev_wakeup <= t->pending_wakeup &&
            t->pending_wakeup <= time) {
            t->last.wakeup = t->pending_wakeup;
            t->last.wakeup_cpu = t->pending_cpu;
            t->pending_wakeup = 0;
        }
    }
    t->last.start = time;
    t->last.end = -1;
    t->last.cpu = cpu;
    t->last.reason = -1;
    t->last.state = -1;
    t->last.thread = 0;
    if (rewrite_last(c, t) < 0)
        return BTC_ERR_IO;

    struct btc_cpu_rec cr = {.start = time, .end = -1, .cpu = cpu};
    int rc = ext_thread(c, tid, &cr.thread);
    if (rc < 0)
        return rc;
    uint64_t idx;
    if (btc_spool_append(&c->cpu_regions, &cr, &idx) < 0)
        return BTC_ERR_IO;
    c->cpu_last[cpu] = idx + 1;
    c->cpu_count[cpu]++;
    c->cpu_total++;
    if ((rc = check_name(m, tid)) < 0)
        return rc;
    if (migration) {
        struct btc_cpu_thread *ct = cpu_thread(c, tid);
        if (!ct)
            return BTC_ERR_NOMEM;
        ct->migrations++;
    }
    return BTC_OK;
}

static int wakeup(struct btc_ctxswitch *c, uint64_t tid, uint8_t cpu, int64_t time)
{
    struct btc_ctx_thread *t = get_thread(c, tid);
    if (!t)
        return BTC_ERR_NOMEM;
    if (t->count && t->last.end < 0) {
        /* Woken while still running: kept for when it switches in. */
        t->pending_wakeup = time;
        t->pending_cpu = cpu;
        return BTC_OK;
    }
    struct btc_ctxsw_rec r = {.wakeup = time,
                              .start = time,
                              .end = -1,
                              .wakeup_cpu = cpu,
                              .reason = BTC_CTX_REASON_WAKEUP,
                              .state = -1};
    r.owner = (uint32_t)(t - (struct btc_ctx_thread *)c->threads.data);
    return push_region(c, t, &r);
}

int btc_ctxswitch_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_ctxswitch *c = &m->ctxswitch;
    const uint8_t *p = ev->p;
    int rc;
    if (ev->type == BT_EV_THREAD_WAKEUP) {
        /* time, thread u32 @9, cpu u8 @13 */
        rc = wakeup(c, bt_wire_get_u32(p + 9), p[13], ev->time);
    } else {
        /* time, old thread u32 @9, new thread u32 @13, cpu @17, reason @18,
         * state @19 */
        uint32_t old = bt_wire_get_u32(p + 9), new = bt_wire_get_u32(p + 13);
        uint8_t cpu = p[17];
        rc = BTC_OK;
        if (old)
            rc = switch_out(c, old, cpu, (int8_t)p[18], (int8_t)p[19], ev->time);
        if (rc >= 0 && new)
            rc = switch_in(m, new, cpu, ev->time);
    }
    if (rc == BTC_ERR_NOMEM)
        return btcm_nomem(err, errlen);
    if (rc == BTC_ERR_PROTOCOL)
        return btcm_fail(ev, err, errlen, "more than 65535 threads on the CPUs");
    if (rc < 0) {
        btcm_spool_failed(err, errlen, "context switch");
        return BTC_ERR_IO;
    }
    btcm_see_time(m, ev->time);
    return BTC_OK;
}

int btc_ctxswitch_name(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_ctxswitch *c = &m->ctxswitch;
    int thread_name = ev->type == BT_EV_EXTERNAL_THREAD_NAME;
    /* The process name completes the answer (the thread's comes first); a
     * name nobody asked for is dropped and counted, as other strings are. */
    int asked = thread_name ? btc_map_get(&m->pending[BT_QUERY_EXTERNAL_NAME], ev->key) != NULL
                            : btcm_answered(m, BT_QUERY_EXTERNAL_NAME, ev->key);
    uint64_t *i = btc_map_get(&c->ext_name_index, ev->key);
    if (!asked || !i) {
        m->unsolicited_strings++;
        m->unsolicited_bytes += ev->data_len;
        return BTC_OK;
    }
    int64_t s = btcm_intern(m, (const char *)ev->data, ev->data_len);
    if (s < 0)
        return btcm_nomem(err, errlen);
    struct btc_ext_name *n = btc_vec_at(&c->ext_names, (size_t)*i);
    if (thread_name)
        n->thread = s;
    else
        n->process = s;
    return BTC_OK;
}

int btc_ctxswitch_fiber(struct btc_model *m, uint64_t host, uint64_t from, uint64_t to, int64_t t)
{
    struct btc_ctxswitch *c = &m->ctxswitch;
    if (from) {
        struct btc_ctx_thread *f = find_thread(c, from);
        if (f && f->count) {
            f->last.end = t;
            if (rewrite_last(c, f) < 0)
                return BTC_ERR_IO;
        }
    }
    if (!to)
        return BTC_OK;
    struct btc_ctx_thread *f = get_thread(c, to);
    if (!f)
        return BTC_ERR_NOMEM;
    struct btc_ctxsw_rec r = {.wakeup = t,
                              .start = t,
                              .end = -1,
                              .thread = host,
                              .reason = BTC_CTX_REASON_FIBER,
                              .state = -1};
    r.owner = (uint32_t)(f - (struct btc_ctx_thread *)c->threads.data);
    return push_region(c, f, &r);
}
