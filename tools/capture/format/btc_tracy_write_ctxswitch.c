/* The context-switch parts of a .tracy file: external names (section 11)
 * and the external thread table (13), the regions of the program's threads
 * and fibers (31) and of each CPU (32), and the per-thread CPU figures (34).
 * Regions stream from their spools, one thread or CPU at a time. */
#define _GNU_SOURCE
#include <string.h>

#include "btc_tracy_write_parts.h"

void btcw_external_names(struct writer *wr)
{
    const struct btc_ctxswitch *c = &wr->m->ctxswitch;
    struct fw *w = &wr->w;
    put_u64(w, c->ext_names.len);
    for (size_t i = 0; i < c->ext_names.len; i++) {
        const struct btc_ext_name *n = btc_vec_at(&c->ext_names, i);
        put_u64(w, n->tid);
        put_u64(w, (uint64_t)(n->process >= 0 ? n->process : wr->unknown));
        put_u64(w, (uint64_t)(n->thread >= 0 ? n->thread : wr->unknown));
    }
}

void btcw_external_threads(struct writer *wr)
{
    const struct btc_ctxswitch *c = &wr->m->ctxswitch;
    put_u64(&wr->w, c->ext_tids.len);
    for (size_t i = 0; i < c->ext_tids.len; i++)
        put_u64(&wr->w, *(const uint64_t *)btc_vec_at(&c->ext_tids, i));
}

/* Whether the file keeps a thread's regions: upstream keeps those of the
 * threads (and fibers) that have zones or samples. */
static int kept(const struct btc_model *m, uint64_t tid)
{
    uint64_t *i = btc_map_get(&m->thread_index, tid);
    if (!i) {
        for (size_t k = 0; k < m->threads.len; k++) {
            const struct btc_thread *t = btc_vec_at(&m->threads, k);
            if (t->is_fiber && t->tid == tid)
                return t->zones > 0 || t->samples > 0;
        }
        return 0;
    }
    const struct btc_thread *t = btc_vec_at(&m->threads, (size_t)*i);
    return t->zones > 0 || t->samples > 0;
}

static int write_thread(struct writer *wr, uint32_t owner, const struct btc_ctx_thread *t)
{
    struct fw *w = &wr->w;
    int wakeup_cpu = wr->version >= BTC_GATE_WAKEUP_CPU;
    put_u64(w, t->tid);
    put_u64(w, t->count);
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &wr->m->ctxswitch.regions) < 0)
        return btcw_io_fail(wr, "context switch");
    int64_t ref = 0;
    uint64_t k = 0;
    const uint8_t *p;
    int rc;
    while (k < t->count && (rc = btc_spool_reader_next(&r, &p)) > 0) {
        struct btc_ctxsw_rec s;
        memcpy(&s, p, sizeof s);
        if (s.owner != owner)
            continue;
        put_wto(w, &ref, s.wakeup);
        put_wto(w, &ref, s.start);
        put_wto(w, &ref, s.end);
        put_u8(w, s.cpu);
        put_u8(w, (uint8_t)s.reason);
        put_u8(w, (uint8_t)s.state);
        put_u64(w, s.thread);
        if (wakeup_cpu)
            put_u8(w, s.wakeup_cpu);
        k++;
    }
    btc_spool_reader_close(&r);
    return k < t->count ? btcw_io_fail(wr, "context switch") : BTC_OK;
}

static int write_cpu(struct writer *wr, unsigned cpu)
{
    const struct btc_ctxswitch *c = &wr->m->ctxswitch;
    struct fw *w = &wr->w;
    put_u64(w, c->cpu_count[cpu]);
    if (!c->cpu_count[cpu])
        return BTC_OK;
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, (struct btc_spool *)&c->cpu_regions) < 0)
        return btcw_io_fail(wr, "CPU region");
    int64_t ref = 0;
    uint64_t k = 0;
    const uint8_t *p;
    int rc;
    while (k < c->cpu_count[cpu] && (rc = btc_spool_reader_next(&r, &p)) > 0) {
        struct btc_cpu_rec s;
        memcpy(&s, p, sizeof s);
        if (s.cpu != cpu)
            continue;
        put_wto(w, &ref, s.start);
        put_wto(w, &ref, s.end);
        put_u16(w, s.thread);
        k++;
    }
    btc_spool_reader_close(&r);
    return k < c->cpu_count[cpu] ? btcw_io_fail(wr, "CPU region") : BTC_OK;
}

int btcw_ctxswitch(struct writer *wr)
{
    const struct btc_ctxswitch *c = &wr->m->ctxswitch;
    uint64_t n = 0;
    for (size_t i = 0; i < c->threads.len; i++) {
        const struct btc_ctx_thread *t = btc_vec_at(&c->threads, i);
        n += t->count && kept(wr->m, t->tid);
    }
    put_u64(&wr->w, n);
    for (size_t i = 0; i < c->threads.len; i++) {
        const struct btc_ctx_thread *t = btc_vec_at(&c->threads, i);
        if (!t->count || !kept(wr->m, t->tid))
            continue;
        int rc = write_thread(wr, (uint32_t)i, t);
        if (rc < 0)
            return rc;
    }
    put_u64(&wr->w, c->cpu_total);
    for (unsigned cpu = 0; cpu < BTC_CTX_CPUS; cpu++) {
        int rc = write_cpu(wr, cpu);
        if (rc < 0)
            return rc;
    }
    return BTC_OK;
}

void btcw_cpu_threads(struct writer *wr)
{
    const struct btc_ctxswitch *c = &wr->m->ctxswitch;
    struct fw *w = &wr->w;
    put_u64(w, c->cpu_threads.len);
    for (size_t i = 0; i < c->cpu_threads.len; i++) {
        const struct btc_cpu_thread *t = btc_vec_at(&c->cpu_threads, i);
        put_u64(w, t->tid);
        put_i64(w, t->running_time);
        put_u32(w, t->regions);
        put_u32(w, t->migrations);
    }
}
