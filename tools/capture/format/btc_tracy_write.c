/* The .tracy writer's hub: lays the model and its spools out as upstream's
 * file payload, section by section, in the layout of the release asked for
 * (btc_file_versions.h). The sections with units of their own are
 * btc_tracy_write_*.c (the thread records btc_tracy_write_threads.c), the
 * helpers they all share btc_tracy_write_base.c, and under them the file's
 * block stream (btc_tracy_file.c: 64 KiB blocks zstd-compressed one
 * stream-flush each, in as many streams as the machine has CPUs for, up to
 * 4 as upstream's FileWrite does; btc_compress.c). Zones and memory events
 * stream from the spools; memory stays bounded. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btc_file_versions.h"
#include "btc_format.h"
#include "btc_tracy.h"
#include "btc_tracy_prewrite.h"
#include "btc_tracy_write_parts.h"

static int write_frames(struct writer *wr)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    put_u64(w, m->framesets.len);
    for (size_t s = 0; s < m->framesets.len; s++) {
        struct btc_frameset *fs = btc_vec_at(&m->framesets, s);
        put_u64(w, fs->key);
        put_u8(w, (uint8_t)fs->continuous);
        int64_t ref = 0;
        uint64_t n = 0; /* frames written: the default set's frame index */
        if (s == 0) {
            /* Upstream's default set starts with frames at 0 and initEnd,
             * and for an on-demand client one at the time it connected. */
            int on_demand = (m->welcome.flags & BT_WELCOME_FLAG_ON_DEMAND) != 0;
            put_u64(w, fs->count + 2 + (uint64_t)on_demand);
            put_wto(w, &ref, 0);
            put_u32(w, (uint32_t)btcw_frame_image(wr, n++));
            put_wto(w, &ref, welcome_ns(&m->welcome, m->welcome.init_end));
            put_u32(w, (uint32_t)btcw_frame_image(wr, n++));
            if (on_demand) {
                put_wto(w, &ref, welcome_ns(&m->welcome, m->welcome.on_demand_time));
                put_u32(w, (uint32_t)btcw_frame_image(wr, n++));
            }
        } else {
            put_u64(w, fs->count);
        }
        struct btc_spool_reader r;
        if (btc_spool_reader_open(&r, &m->frames) < 0)
            return btcw_io_fail(wr, "frame");
        const uint8_t *p;
        int rc;
        int64_t start = 0;
        int have_start = 0;
        while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
            struct btc_frame_rec f;
            memcpy(&f, p, sizeof f);
            if (f.set != s)
                continue;
            if (f.kind == BTC_FRAME_MARK) {
                put_wto(w, &ref, f.time);
                put_u32(w, s == 0 ? (uint32_t)btcw_frame_image(wr, n++) : UINT32_MAX);
            } else if (f.kind == BTC_FRAME_START) {
                start = f.time;
                have_start = 1;
            } else if (have_start) {
                put_wto(w, &ref, start);
                put_wto(w, &ref, f.time);
                put_u32(w, UINT32_MAX);
                have_start = 0;
            }
        }
        btc_spool_reader_close(&r);
        if (rc < 0)
            return btcw_io_fail(wr, "frame");
    }
    return BTC_OK;
}

static int write_locks(struct writer *wr)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    put_u64(w, m->locks.len);
    for (size_t i = 0; i < m->locks.len; i++) {
        struct btc_lock *l = btc_vec_at(&m->locks, i);
        put_u32(w, l->id);
        put_u24(w, l->name >= 0 ? (uint32_t)l->name + 1 : 0);
        put_u16(w, (uint16_t)l->srcloc);
        put_u8(w, l->type);
        put_u8(w, 1);
        put_i64(w, l->announce);
        put_i64(w, l->terminate);
        put_u64(w, l->nthreads);
        for (unsigned k = 0; k < l->nthreads; k++)
            put_u64(w, l->tids[k]);
        put_u64(w, l->events);
        int64_t ref = l->announce;
        struct btc_spool_reader r;
        if (btc_spool_reader_open(&r, &m->lock_events) < 0)
            return btcw_io_fail(wr, "lock");
        const uint8_t *p;
        int rc;
        while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
            struct btc_lock_rec e;
            memcpy(&e, p, sizeof e);
            if (e.lock != i)
                continue;
            put_wto(w, &ref, e.time);
            put_u16(w, (uint16_t)e.srcloc);
            put_u8(w, e.thread);
            put_u8(w, e.type);
        }
        btc_spool_reader_close(&r);
        if (rc < 0)
            return btcw_io_fail(wr, "lock");
    }
    return BTC_OK;
}

static int write_extras(struct writer *wr)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    put_u64(w, m->extras.count + 1);
    for (int i = 0; i < 12; i++)
        put_u8(w, 0);
    struct btc_spool_reader r;
    if (btc_spool_reader_open(&r, &m->extras) < 0)
        return btcw_io_fail(wr, "zone extra");
    const uint8_t *p;
    int rc;
    while ((rc = btc_spool_reader_next(&r, &p)) > 0) {
        struct btc_extra_rec e;
        memcpy(&e, p, sizeof e);
        put_u24(w, e.callstack);
        put_u24(w, e.text ? (uint32_t)(wr->texts_base + e.text) : 0);
        put_u24(w, e.name);
        put_u24(w, e.color);
    }
    btc_spool_reader_close(&r);
    return rc < 0 ? btcw_io_fail(wr, "zone extra") : BTC_OK;
}

static int cmp_cpu(const void *a, const void *b)
{
    const struct btc_cpu *x = a, *y = b;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    if (x->die != y->die)
        return x->die < y->die ? -1 : 1;
    if (x->core != y->core)
        return x->core < y->core ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Section 4: package -> die (0.14.0 only) -> core -> CPU threads, from the
 * CpuTopology events sorted so each level's members are adjacent. */
static void write_topology(struct writer *wr)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    struct btc_cpu *c = m->cpus.data;
    size_t n = m->cpus.len;
    int dies = wr->version >= BTC_GATE_DIES;
    if (n)
        qsort(c, n, sizeof *c, cmp_cpu);
    uint64_t packages = 0;
    for (size_t i = 0; i < n; i++)
        packages += i == 0 || c[i].package != c[i - 1].package;
    put_u64(w, packages);
    for (size_t i = 0; i < n;) {
        size_t pend = i;
        while (pend < n && c[pend].package == c[i].package)
            pend++;
        put_u32(w, c[i].package);
        if (dies) {
            uint64_t nd = 0;
            for (size_t k = i; k < pend; k++)
                nd += k == i || c[k].die != c[k - 1].die;
            put_u64(w, nd);
        }
        for (size_t d = i; d < pend;) {
            size_t dend = d;
            while (dend < pend && (!dies || c[dend].die == c[d].die))
                dend++;
            if (dies)
                put_u32(w, c[d].die);
            uint64_t ncores = 0;
            for (size_t k = d; k < dend; k++)
                ncores += k == d || c[k].core != c[k - 1].core || c[k].die != c[k - 1].die;
            put_u64(w, ncores);
            for (size_t k = d; k < dend;) {
                size_t kend = k;
                while (kend < dend && c[kend].core == c[k].core && c[kend].die == c[k].die)
                    kend++;
                put_u32(w, c[k].core);
                put_u64(w, kend - k);
                for (size_t t = k; t < kend; t++)
                    put_u32(w, c[t].thread);
                k = kend;
            }
            d = dend;
        }
        i = pend;
    }
}

int64_t btc_tracy_last_time(const struct btc_model *m)
{
    int64_t init_end = welcome_ns(&m->welcome, m->welcome.init_end);
    return m->last_time > init_end ? m->last_time : init_end;
}

static int write_payload(struct writer *wr)
{
    struct btc_model *m = wr->m;
    struct fw *w = &wr->w;
    const struct btc_welcome *wl = &m->welcome;
    int rc;

    put(w, btc_file_header, sizeof btc_file_header);
    put_u8(w, (uint8_t)(wr->version >> 16));
    put_u8(w, (uint8_t)(wr->version >> 8));
    put_u8(w, (uint8_t)wr->version);
    if (wr->version < BTC_GATE_NO_DELAY) /* the client's queue delay, in ns */
        put_i64(w, btc_ticks_to_ns(wl->timer_mul, 0, (int64_t)wl->delay));
    put_i64(w, btc_ticks_to_ns(wl->timer_mul, 0, (int64_t)wl->resolution));
    put_f64(w, wl->timer_mul);
    put_i64(w, btc_tracy_last_time(m));
    put_u64(w, wl->on_demand_frames);
    put_u64(w, wl->pid);
    put_i64(w, wl->sampling_period);
    put_u8(w, wl->cpu_arch);
    put_u32(w, wl->cpu_id);
    put(w, wl->cpu_vendor, sizeof wl->cpu_vendor);
    put_u8(w, (wl->flags & BT_WELCOME_FLAG_ON_DEMAND) ? 1 : 0);

    char name[BTC_FILE_NAME_MAX];
    time_t epoch = (time_t)wl->epoch;
    struct tm tm;
    char when[32] = "";
    if (localtime_r(&epoch, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    int nl = snprintf(name, sizeof name, "%s @ %s", wl->program, when);
    put_str(w, name, (size_t)nl < sizeof name ? (size_t)nl : sizeof name - 1);
    put_str(w, wl->program, strlen(wl->program));
    put_u64(w, wl->epoch);
    put_u64(w, wl->exec_time);
    put_str(w, wl->host_info, strlen(wl->host_info));

    write_topology(wr);
    /* The crash event (zeros if none): its text is a pointer key, which
     * the pointer strings map to the text. */
    put_u64(w, m->crash.reported ? m->crash.tid : 0);
    put_i64(w, m->crash.reported ? m->crash.time : 0);
    put_u64(w, m->crash.reported ? m->crash.text : 0);
    put_u32(w, m->crash.reported ? m->crash.callstack : 0);
    if ((rc = write_frames(wr)) < 0)
        return rc;
    if (wr->version >= BTC_GATE_SECTIONS && (rc = btcw_sections(wr)) < 0)
        return rc;

    /* Strings: string i has key i; pointer keys map onto them. The names
     * come first, then the spooled texts, streamed from disk, then with a
     * head start the filler string (splice_timeline). */
    size_t ns = btc_strtab_count(&m->strings);
    char why[256];
    if (wr->pre_blocks && btc_spool_open(&wr->detour, m->spool_dir, 1, why, sizeof why) != BTC_OK)
        wr->pre_blocks = 0; /* no spool for the detour: no head start */
    wr->filler_key = ns + m->texts.count;
    put_u64(w, ns + m->texts.count + (wr->pre_blocks > 0));
    for (size_t i = 0; i < ns; i++) {
        uint32_t len;
        const char *s = btc_strtab_get(&m->strings, (uint32_t)i, &len);
        put_u64(w, i);
        put_str(w, s, len);
    }
    struct btc_texts_reader tr;
    if (btc_texts_reader_open(&tr, &m->texts) < 0)
        return btcw_io_fail(wr, "text");
    const char *text;
    uint32_t tlen;
    uint64_t k = 0;
    while ((rc = btc_texts_reader_next(&tr, &text, &tlen)) > 0) {
        put_u64(w, ns + k++);
        put_str(w, text, tlen);
    }
    btc_texts_reader_close(&tr);
    if (rc < 0 || k != m->texts.count)
        return btcw_io_fail(wr, "text");
    if (wr->pre_blocks && (rc = btcw_detour_begin(wr)) < 0)
        return rc;
    /* Key 0 names the default pool's memory plot "Frame", as upstream's
     * files do (the loader names that plot through this key). */
    int zero_key = btc_map_get(&m->key_strings, 0) == NULL;
    put_u64(w, m->key_strings.len + (uint64_t)zero_key);
    if (zero_key) {
        put_u64(w, 0);
        put_u64(w, (uint64_t)wr->frame_name);
    }
    for (size_t i = 0; i < m->key_strings.cap; i++) {
        if (m->key_strings.used[i]) {
            put_u64(w, m->key_strings.keys[i]);
            put_u64(w, m->key_strings.vals[i]);
        }
    }
    uint64_t named = 0;
    for (size_t i = 0; i < m->threads.len; i++)
        named += ((struct btc_thread *)btc_vec_at(&m->threads, i))->name >= 0;
    put_u64(w, named);
    for (size_t i = 0; i < m->threads.len; i++) {
        struct btc_thread *t = btc_vec_at(&m->threads, i);
        if (t->name >= 0) {
            put_u64(w, t->tid);
            put_u64(w, (uint64_t)t->name);
        }
    }
    btcw_external_names(wr);
    put_u64(w, m->threads.len + 1);
    put_u64(w, 0);
    for (size_t i = 0; i < m->threads.len; i++)
        put_u64(w, ((struct btc_thread *)btc_vec_at(&m->threads, i))->tid);
    btcw_external_threads(wr);

    put_u64(w, m->srclocs.len);
    for (size_t i = 0; i < m->srclocs.len; i++) {
        struct btc_srcloc *s = btc_vec_at(&m->srclocs, i);
        put_u64(w, s->key);
        btcw_put_srcloc(wr, s, 0);
    }
    put_u64(w, m->srclocs.len + 1);
    put_u64(w, 0);
    for (size_t i = 0; i < m->srclocs.len; i++)
        put_u64(w, ((struct btc_srcloc *)btc_vec_at(&m->srclocs, i))->key);
    put_u64(w, m->payload_srclocs.len);
    for (size_t i = 0; i < m->payload_srclocs.len; i++)
        btcw_put_srcloc(wr, btc_vec_at(&m->payload_srclocs, i), 1);
    uint64_t hints = 0;
    for (size_t i = 0; i < m->srclocs.len; i++)
        hints += ((uint64_t *)m->srcloc_zone_counts.data)[i] > 0;
    for (size_t i = 0; i < m->payload_srclocs.len; i++)
        hints += ((uint64_t *)m->payload_zone_counts.data)[i] > 0;
    put_u64(w, hints);
    for (size_t i = 0; i < m->srclocs.len; i++) {
        uint64_t c = ((uint64_t *)m->srcloc_zone_counts.data)[i];
        if (c) {
            put_u16(w, (uint16_t)(i + 1));
            put_u64(w, c);
        }
    }
    for (size_t i = 0; i < m->payload_srclocs.len; i++) {
        uint64_t c = ((uint64_t *)m->payload_zone_counts.data)[i];
        if (c) {
            put_u16(w, (uint16_t)(int16_t)(-(int64_t)i - 1));
            put_u64(w, c);
        }
    }
    btcw_gpu_hints(wr);
    if ((rc = write_locks(wr)) < 0)
        return rc;

    struct btc_msg_rec *msgs;
    if ((rc = btcw_load_messages(wr, &msgs)) < 0)
        return rc;
    rc = btcw_messages(wr, msgs);
    if (rc >= 0)
        rc = write_extras(wr);
    if (rc >= 0)
        rc = btcw_threads(wr, msgs);
    free(msgs);
    if (rc < 0)
        return rc;

    if ((rc = btcw_gpu(wr)) < 0 || (rc = btcw_plots(wr)) < 0 || (rc = btcw_memory(wr)) < 0)
        return rc;
    if ((rc = btcw_callstacks(wr)) < 0)
        return rc;
    put_u64(w, m->app_info.len);
    for (size_t i = 0; i < m->app_info.len; i++)
        put_strref_idx(w, ((uint32_t *)m->app_info.data)[i]);
    if ((rc = btcw_frame_images(wr)) < 0 || (rc = btcw_ctxswitch(wr)) < 0)
        return rc;
    put_u64(w, m->tid_pid.len);
    for (size_t i = 0; i < m->tid_pid.cap; i++) {
        if (m->tid_pid.used[i]) {
            put_u64(w, m->tid_pid.keys[i]);
            put_u64(w, m->tid_pid.vals[i]);
        }
    }
    btcw_cpu_threads(wr);
    if ((rc = btcw_symbols(wr)) < 0)
        return rc;
    if ((rc = btcw_hw_samples(wr)) < 0)
        return rc;
    if ((rc = btcw_source_files(wr)) < 0)
        return rc;
    return BTC_OK;
}

int btc_tracy_write(struct btc_model *m, const char *path, uint32_t version, uint64_t *bytes,
                    char *err, size_t errlen)
{
    return btc_tracy_write_compressed(m, path, version, 0, bytes, err, errlen);
}

int btc_tracy_write_compressed(struct btc_model *m, const char *path, uint32_t version, int lz4,
                               uint64_t *bytes, char *err, size_t errlen)
{
    struct writer wr = {.m = m, .version = version, .err = err, .errlen = errlen};
    if (!btc_file_release_of(version)) {
        snprintf(err, errlen, "file version %u.%u.%u is not one this writer knows (%s)",
                 version >> 16, (version >> 8) & 0xFF, version & 0xFF, btc_file_releases_text());
        return BTC_ERR_FORMAT;
    }
    wr.unknown = btc_strtab_intern(&m->strings, "???", 3);
    wr.frame_name = btc_strtab_intern(&m->strings, "Frame", 5);
    if (wr.unknown < 0 || wr.frame_name < 0)
        return BTC_ERR_NOMEM;
    wr.texts_base = btc_strtab_count(&m->strings);
    /* Zone extras index strings with 24 bits (upstream's StringIdx);
     * messages use 64-bit references and have no such limit. */
    if (wr.texts_base + m->zone_text_max >= (1u << 24)) {
        snprintf(err, errlen,
                 "zone texts reach string %llu: the file format indexes at most 16777215",
                 (unsigned long long)(wr.texts_base + m->zone_text_max));
        return BTC_ERR_FORMAT;
    }
    struct fw *w = &wr.w;
    char tmp[4200];
    w->legacy = version < BTC_GATE_CONTAINER;
    w->lz4 = lz4;
    wr.detour.fd = -1;
    wr.pre = m->prewrite;
    if (!w->legacy && wr.pre &&
        btc_prewrite_finish(wr.pre, &m->zones, lz4, &wr.pre_thread, &wr.pre_blocks))
        w->alone = 1;
    int rc = btc_fw_begin(w, path, tmp, sizeof tmp, err, errlen);
    if (rc < 0)
        return rc;
    rc = write_payload(&wr);
    if (w->detour) { /* failed on the way: the block is the detour's */
        free(w->blk);
        w->blk = wr.home_blk;
        w->len = wr.home_len;
        w->detour = NULL;
    }
    if (wr.detour.fd >= 0)
        btc_spool_close(&wr.detour);
    if (rc == BTC_ERR_NOMEM)
        snprintf(err, errlen, "out of memory while writing %s", path);
    return btc_fw_end(w, path, tmp, rc, bytes, err, errlen);
}
