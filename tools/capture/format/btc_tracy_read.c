/* The .tracy reader: walks every section of a payload of any release from
 * 0.10.0 to 0.14.0 (upstream's gates, btc_format.h), keeping names and
 * counts and handing zones to a callback as it meets them; the block stream
 * under it, the GPU zones and the callstacks have units of their own
 * (btc_tracy_read_*.c). Every count comes from the file, so each loop stops
 * at the first short read. */
#define _GNU_SOURCE
#include <errno.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "btc_file_versions.h"
#include "btc_format.h"
#include "btc_tracy.h"
#include "btc_tracy_read_parts.h"

int64_t btcr_string_of_key(struct btc_trace *t, uint64_t key)
{
    uint64_t *v = btc_map_get(&t->key_string, key);
    return v ? (int64_t)*v : -1;
}

void btcr_srcloc(struct rd *r, struct btc_trace *t, struct btc_read_srcloc *s)
{
    int64_t *fields[3] = {&s->name, &s->function, &s->file};
    for (int i = 0; i < 3; i++) {
        uint64_t v = g64(r);
        uint8_t flags = g8(r);
        if (!(flags & BTC_STRREF_ACTIVE))
            *fields[i] = -1;
        else if (flags & BTC_STRREF_IDX)
            *fields[i] = v < btc_strtab_count(&t->strings) ? (int64_t)v : -1;
        else
            *fields[i] = btcr_string_of_key(t, v);
    }
    s->line = g32(r);
    s->color = g32(r);
}

struct zone_frame {
    uint32_t left;
    int64_t start;
    int16_t srcloc;
    uint32_t extra;
};

static int read_timeline(struct rd *r, struct btc_trace *t, uint64_t tid, btc_zone_fn fn, void *ctx)
{
    struct btc_vec stack;
    btc_vec_init(&stack, sizeof(struct zone_frame));
    int64_t ref = 0;
    uint32_t top = g32(r);
    int rc = BTC_OK;
    uint32_t top_left = top;
    while (!r->failed && (top_left || stack.len)) {
        struct zone_frame *parent = stack.len ? btc_vec_at(&stack, stack.len - 1) : NULL;
        if (parent && parent->left == 0) {
            struct btc_read_zone z = {.thread_id = tid,
                                      .srcloc = parent->srcloc,
                                      .depth = (uint32_t)stack.len - 1,
                                      .start = parent->start,
                                      .extra = parent->extra};
            z.end = gwto(r, &ref);
            stack.len--;
            t->zones++;
            t->zones_unended += z.end < 0;
            if (!r->failed && fn && (rc = fn(ctx, t, &z)) < 0)
                break;
            continue;
        }
        if (parent)
            parent->left--;
        else
            top_left--;
        if (stack.len >= MAX_ZONE_DEPTH) {
            btcr_fail(r, "zones nested too deep");
            break;
        }
        struct zone_frame *z = btc_vec_push(&stack);
        if (!z) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        z->srcloc = (int16_t)g16(r);
        z->start = gwto(r, &ref);
        z->extra = g32(r);
        z->left = g32(r);
    }
    btc_vec_free(&stack);
    return rc;
}

int btcr_payload(struct rd *r, struct btc_trace *t, btc_zone_fn fn, void *ctx)
{
    uint8_t hdr[BTC_FILE_HEADER_SIZE];
    btcr_get(r, hdr, sizeof hdr);
    if (r->failed || memcmp(hdr, btc_file_header, 5) != 0) {
        btcr_fail(r, "payload does not start with the \"tracy\" header");
        return BTC_ERR_FORMAT;
    }
    t->version = BTC_FILE_VERSION(hdr[5], hdr[6], hdr[7]);
    if (!btc_file_release_of(t->version)) {
        char msg[200];
        snprintf(msg, sizeof msg, "file version %u.%u.%u, expected one of %s", hdr[5], hdr[6],
                 hdr[7], btc_file_releases_text());
        btcr_fail(r, msg);
        return BTC_ERR_FORMAT;
    }
    const uint32_t fv = t->version;
    if (fv < BTC_GATE_NO_DELAY)
        g64(r); /* delay */
    t->resolution = (int64_t)g64(r);
    t->timer_mul = gf64(r);
    t->last_time = (int64_t)g64(r);
    g64(r); /* frame offset */
    t->pid = g64(r);
    g64(r); /* sampling period */
    t->cpu_arch = g8(r);
    g32(r);
    skip(r, 12);
    g8(r);
    gname(r, t->capture_name);
    gname(r, t->program);
    t->capture_time = g64(r);
    g64(r);
    gname(r, t->host_info);

    uint64_t n = g64(r); /* CPU topology */
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        g32(r);
        uint64_t dies = fv >= BTC_GATE_DIES ? g64(r) : 1;
        for (uint64_t d = 0; d < dies && !r->failed; d++) {
            if (fv >= BTC_GATE_DIES)
                g32(r);
            uint64_t cores = g64(r);
            for (uint64_t c = 0; c < cores && !r->failed; c++) {
                g32(r);
                uint64_t th = g64(r);
                t->cpu_threads += th;
                skip(r, th * 4);
            }
        }
    }
    t->crash_thread = g64(r); /* crash event */
    t->crash_time = (int64_t)g64(r);
    t->crash_text = (int64_t)g64(r); /* a pointer key until the strings are read */
    t->crash_callstack = g32(r);

    n = g64(r); /* frame sets */
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, 0); i++) {
        struct btc_read_frameset *fs = btc_vec_push(&t->framesets);
        if (!fs)
            return BTC_ERR_NOMEM;
        uint64_t name = g64(r);
        fs->name = (int64_t)name; /* resolved to a string once the strings are read */
        fs->continuous = g8(r);
        fs->frames = g64(r);
        int (*cb)(void *, const struct btc_trace *, const struct btc_read_frame *) =
            r->more ? r->more->frame : NULL;
        int64_t ref = 0;
        uint8_t continuous = fs->continuous;
        for (uint64_t k = 0; k < fs->frames && !r->failed; k++) {
            if (!cb) {
                skip(r, continuous ? 12 : 20);
                continue;
            }
            struct btc_read_frame f = {.set = (uint32_t)i, .end = -1};
            f.start = gwto(r, &ref);
            if (!continuous)
                f.end = gwto(r, &ref);
            g32(r); /* frame image */
            if (!r->failed && (r->cb_rc = cb(r->cb_ctx, t, &f)) < 0)
                btcr_fail(r, "export stopped");
        }
    }
    if (fv >= BTC_GATE_SECTIONS) {
        n = g64(r);
        for (uint64_t i = 0; i < n && !r->failed; i++) {
            g16(r);
            uint64_t items = g64(r);
            t->sections += items;
            for (uint64_t k = 0; k < items && !r->failed; k++)
                skip(r, 15);
        }
        t->section_categories = g64(r);
        for (uint64_t i = 0; i < t->section_categories && !r->failed; i++)
            skip(r, 5);
    }

    struct btc_map skeys; /* file string key -> index */
    btc_map_init(&skeys);
    int rc = BTC_OK;
    r->copy_on = 0;
    n = g64(r);
    if (r->out) {
        put_u64(r->out, n + r->rw->extra_count);
        r->copy_on = 1;
    }
    char *buf = NULL;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t key = g64(r);
        uint64_t len = g64(r);
        if (len > MAX_STRING_BYTES) {
            btcr_fail(r, "string longer than 64 MiB");
            break;
        }
        if (btcr_over_limit(r, t, 2 * len))
            break;
        char *nb = realloc(buf, len ? (size_t)len : 1);
        if (!nb) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        buf = nb;
        btcr_get(r, buf, (size_t)len);
        /* Strings are kept in file order even when two are equal. */
        size_t before = btc_strtab_count(&t->strings);
        int64_t idx = btc_strtab_intern(&t->strings, buf, (size_t)len);
        uint64_t *k = btc_vec_push(&t->string_keys);
        if (idx < 0 || !k) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        if ((size_t)idx != before) {
            /* A duplicate: store a second copy so indices stay aligned. */
            uint64_t *off = btc_vec_push(&t->strings.offs);
            uint32_t *l = btc_vec_push(&t->strings.lens);
            if (!off || !l) {
                rc = BTC_ERR_NOMEM;
                break;
            }
            *off = ((uint64_t *)t->strings.offs.data)[idx];
            *l = ((uint32_t *)t->strings.lens.data)[idx];
        }
        *k = key;
        if (btc_map_put(&skeys, key, i) < 0) {
            rc = BTC_ERR_NOMEM;
            break;
        }
    }
    free(buf);
    /* Appended strings: keys of their own, far from any pointer. */
    for (uint64_t i = 0; r->out && i < r->rw->extra_count; i++) {
        put_u64(r->out, 0xb7d0000000000000ull + i);
        put_u64(r->out, r->rw->extra_len[i]);
        put(r->out, r->rw->extra[i], r->rw->extra_len[i]);
    }
    n = rc < 0 ? 0 : g64(r); /* pointer strings */
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t ptr = g64(r);
        uint64_t *idx = btc_map_get(&skeys, g64(r));
        if (idx && btc_map_put(&t->key_string, ptr, *idx) < 0)
            rc = BTC_ERR_NOMEM;
    }
    struct btc_map thread_names;
    btc_map_init(&thread_names);
    n = rc < 0 ? 0 : g64(r);
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t tid = g64(r);
        uint64_t *idx = btc_map_get(&skeys, g64(r));
        if (idx && btc_map_put(&thread_names, tid, *idx) < 0)
            rc = BTC_ERR_NOMEM;
    }
    btc_map_free(&skeys);
    if (rc < 0) {
        btc_map_free(&thread_names);
        return rc;
    }
    for (size_t i = 0; i < t->framesets.len; i++) {
        struct btc_read_frameset *fs = btc_vec_at(&t->framesets, i);
        fs->name = fs->name ? btcr_string_of_key(t, (uint64_t)fs->name) : -1;
    }
    t->crash_text = t->crash_thread ? btcr_string_of_key(t, (uint64_t)t->crash_text) : -1;
    t->external_names = g64(r);
    for (uint64_t i = 0; i < t->external_names && !r->failed; i++)
        skip(r, 24);
    skip_list(r, 8); /* thread compression */
    t->external_threads = g64(r);
    for (uint64_t i = 0; i < t->external_threads && !r->failed; i++)
        skip(r, 8);

    /* Section 14 may list static locations in any order; zones refer to
     * them through the index table (section 15), whose entry s holds the key
     * of location s. */
    struct btc_vec unordered;
    btc_vec_init(&unordered, sizeof(struct btc_read_srcloc));
    struct btc_map by_key;
    btc_map_init(&by_key);
    n = g64(r);
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, btcr_vec_bytes(&unordered));
         i++) {
        uint64_t key = g64(r);
        struct btc_read_srcloc *s = btc_vec_push(&unordered);
        if (!s || btc_map_put(&by_key, key, i) < 0) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        btcr_srcloc(r, t, s);
    }
    n = rc < 0 ? 0 : g64(r);
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, btcr_vec_bytes(&unordered));
         i++) {
        uint64_t key = g64(r);
        if (i == 0)
            continue; /* entry 0 is reserved */
        struct btc_read_srcloc *s = btc_vec_push(&t->statics);
        if (!s) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        uint64_t *at = btc_map_get(&by_key, key);
        if (at)
            *s = *(struct btc_read_srcloc *)btc_vec_at(&unordered, (size_t)*at);
        else
            *s = (struct btc_read_srcloc){-1, -1, -1, 0, 0};
    }
    btc_vec_free(&unordered);
    btc_map_free(&by_key);
    n = rc < 0 ? 0 : g64(r); /* payload source locations */
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, 0); i++) {
        struct btc_read_srcloc *s = btc_vec_push(&t->payloads);
        if (!s) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        btcr_srcloc(r, t, s);
    }
    if (rc < 0) {
        btc_map_free(&thread_names);
        return rc;
    }
    skip_list(r, 10); /* zone count hints */
    skip_list(r, 10); /* GPU zone count hints */

    n = g64(r); /* locks */
    t->locks = n;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0 && !btcr_over_limit(r, t, 0); i++) {
        uint32_t id = g32(r);
        int64_t name = (int64_t)g24(r) - 1;
        int16_t srcloc = (int16_t)g16(r);
        uint8_t type = g8(r);
        skip(r, 1);           /* valid */
        int64_t ref = g64(r); /* announced: event times are offsets from it */
        skip(r, 8);           /* terminated */
        uint64_t nth = g64(r);
        skip(r, nth * 8);
        uint64_t ne = g64(r);
        t->lock_events += ne;
        if (!r->failed)
            rc = btc_read_lock_begin(t, id, name, srcloc, type, nth, ne);
        for (uint64_t k = 0; k < ne && !r->failed && rc >= 0; k++) {
            int64_t time = gwto(r, &ref);
            t->lock_events_marked += g16(r) != 0;
            uint8_t thread = g8(r);
            btc_read_lock_event(t, time, thread, g8(r));
        }
    }
    if (rc < 0)
        return rc;

    n = g64(r); /* messages */
    t->messages = n;
    int64_t mref = 0;
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0; i++) {
        g64(r); /* key */
        int64_t time = gwto(r, &mref);
        uint64_t text = g64(r);
        uint8_t flags = g8(r);
        uint32_t color = g32(r);
        uint32_t cs = g24(r);
        uint8_t source = 0, severity = 2; /* before 0.13.2: user, info (as upstream reads them) */
        if (fv >= BTC_GATE_MSG_META) {
            source = g8(r);
            severity = g8(r);
        }
        if (r->mfn && !r->failed) {
            int64_t idx = !(flags & BTC_STRREF_ACTIVE) ? -1
                          : (flags & BTC_STRREF_IDX)
                              ? (text < btc_strtab_count(&t->strings) ? (int64_t)text : -1)
                              : btcr_string_of_key(t, text);
            struct btc_read_message msg = {time, btc_trace_string(t, idx), color, source, severity};
            rc = r->mfn(ctx, t, &msg);
        }
        if (source == BT_MSG_SOURCE_TRACY)
            t->messages_tracy++;
        else
            t->messages_user++;
        if (source != BT_MSG_SOURCE_TRACY && color != 0xFFFFFFFFu)
            t->messages_colored++;
        t->messages_with_callstack += cs != 0;
    }
    if (rc < 0)
        return rc;
    n = g64(r); /* zone extras */
    t->extras = n;
    for (uint64_t i = 0; i < n && !r->failed; i++)
        skip(r, 12);

    g64(r); /* total zones */
    g64(r); /* child lists */
    n = g64(r);
    for (uint64_t i = 0; i < n && !r->failed && rc >= 0 && !btcr_over_limit(r, t, 0); i++) {
        struct btc_read_thread *th = btc_vec_push(&t->threads);
        if (!th) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        th->id = g64(r);
        uint64_t *nm = btc_map_get(&thread_names, th->id);
        th->name = nm ? (int64_t)*nm : -1;
        th->zones = g64(r);
        th->kernel_samples = g64(r);
        th->is_fiber = g8(r) != 0;
        th->group_hint = fv >= BTC_GATE_GROUP_HINT ? (int32_t)g32(r) : 0;
        uint64_t tid = th->id;
        rc = read_timeline(r, t, tid, fn, ctx);
        th = btc_vec_at(&t->threads, t->threads.len - 1);
        th->messages = g64(r);
        skip(r, th->messages * 8);
        /* Timer samples per callstack: all samples, less those at context
         * switches (a subset, with the same callstacks). */
        th->ctx_samples = g64(r);
        int64_t ref = 0;
        for (uint64_t k = 0; k < th->ctx_samples && !r->failed && rc >= 0; k++) {
            struct btc_read_sample smp = {tid, gwto(r, &ref), g24(r), 1};
            rc = btcr_count_callstack(r, t, smp.callstack, UINT64_MAX);
            if (rc >= 0)
                rc = btcr_give_sample(r, t, &smp);
        }
        th->samples = g64(r);
        ref = 0;
        for (uint64_t k = 0; k < th->samples && !r->failed && rc >= 0; k++) {
            struct btc_read_sample smp = {tid, gwto(r, &ref), g24(r), 0};
            rc = btcr_count_callstack(r, t, smp.callstack, 1);
            if (rc >= 0)
                rc = btcr_give_sample(r, t, &smp);
        }
        if (rc < 0)
            break;
        t->samples += th->samples;
        t->ctx_samples += th->ctx_samples;
    }
    btc_map_free(&thread_names);
    if (rc < 0)
        return rc;

    t->gpu_zones_timed = g64(r);
    g64(r); /* child lists */
    n = g64(r);
    t->gpu_contexts = n;
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, 0); i++) {
        skip(r, 8 + 1 + 8 + 4 + 1);
        int64_t *name = btc_vec_push(&t->gpu_names);
        if (!name)
            return BTC_ERR_NOMEM;
        *name = (int64_t)g24(r) - 1;
        skip(r, 8);
        if (fv >= BTC_GATE_GPU_NOTES)
            skip_list(r, 11);
        uint64_t nth = g64(r);
        for (uint64_t k = 0; k < nth && !r->failed; k++) {
            r->gpu_timeline = g64(r);
            btcr_gpu_zones(r, t, (uint32_t)i, fv >= BTC_GATE_GPU_NOTES);
        }
        if (fv >= BTC_GATE_GPU_NOTES) {
            uint64_t groups = g64(r);
            for (uint64_t k = 0; k < groups && !r->failed; k++) {
                g16(r);
                skip_list(r, 16);
            }
        }
    }

    n = g64(r); /* plots */
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, 0); i++) {
        struct btc_read_plot *p = btc_vec_push(&t->plots);
        if (!p)
            return BTC_ERR_NOMEM;
        p->type = g8(r);
        skip(r, 3 + 4);
        p->name = btcr_string_of_key(t, g64(r));
        p->min = gf64(r);
        p->max = gf64(r);
        gf64(r);
        p->points = g64(r);
        int (*cb)(void *, const struct btc_trace *, const struct btc_read_point *) =
            r->more ? r->more->point : NULL;
        int64_t ref = 0;
        for (uint64_t k = 0; k < p->points && !r->failed; k++) {
            if (!cb) {
                skip(r, 16);
                continue;
            }
            struct btc_read_point pt = {.plot = (uint32_t)i};
            pt.time = gwto(r, &ref);
            pt.value = gf64(r);
            if (!r->failed && (r->cb_rc = cb(r->cb_ctx, t, &pt)) < 0)
                btcr_fail(r, "export stopped");
        }
    }

    n = g64(r); /* memory pools */
    g64(r);
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, 0); i++) {
        struct btc_read_pool *p = btc_vec_push(&t->pools);
        if (!p)
            return BTC_ERR_NOMEM;
        uint64_t name = g64(r);
        p->name = name ? btcr_string_of_key(t, name) : -1;
        p->events = g64(r);
        p->active = g64(r);
        g64(r);
        int (*cb)(void *, const struct btc_trace *, const struct btc_read_mem *) =
            r->more ? r->more->mem : NULL;
        int64_t ref = 0;
        for (uint64_t k = 0; k < p->events && !r->failed; k++) {
            struct btc_read_mem e = {.pool = (uint32_t)i};
            e.ptr = g64(r);
            e.size = g64(r);
            uint32_t csa = g24(r);
            uint32_t csf = g24(r);
            e.time_alloc = gwto(r, &ref);
            int64_t free_off = (int64_t)g64(r);
            skip(r, 4);
            p->allocs_with_callstack += csa != 0;
            p->frees_with_callstack += csf != 0;
            p->freed += free_off >= 0;
            e.time_free =
                free_off < 0 ? -1 : (int64_t)((uint64_t)e.time_alloc + (uint64_t)free_off);
            e.cs_alloc = csa;
            if (free_off < 0 && csa && !btc_map_get(&t->leak_cs, csa) &&
                (btcr_over_limit(r, t, 0) || btc_map_put(&t->leak_cs, csa, 1) < 0))
                return r->failed ? BTC_ERR_FORMAT : BTC_ERR_NOMEM;
            if (cb && !r->failed && (r->cb_rc = cb(r->cb_ctx, t, &e)) < 0)
                btcr_fail(r, "export stopped");
        }
        skip(r, 32);
    }

    if ((rc = btcr_callstacks(r, t)) < 0)
        return rc;
    n = g64(r); /* app info */
    for (uint64_t i = 0; i < n && !r->failed && !btcr_over_limit(r, t, 0); i++) {
        uint64_t v = g64(r);
        uint8_t flags = g8(r);
        uint32_t *slot = btc_vec_push(&t->app_info);
        if (!slot)
            return BTC_ERR_NOMEM;
        int64_t idx = (flags & BTC_STRREF_IDX) ? (int64_t)v : btcr_string_of_key(t, v);
        *slot = idx < 0 ? UINT32_MAX : (uint32_t)idx;
    }
    skip(r, g32(r)); /* frame image dictionary */
    n = g64(r);
    t->frame_images = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint16_t w = g16(r), h = g16(r);
        g8(r);
        skip(r, (uint64_t)w * h / 2);
    }
    n = g64(r); /* context switches */
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint64_t tid = g64(r);
        uint64_t k = g64(r);
        t->ctx_switches += k;
        for (size_t j = 0; j < t->threads.len; j++) {
            struct btc_read_thread *th = btc_vec_at(&t->threads, j);
            if (th->id == tid)
                th->ctx_switches = k;
        }
        for (uint64_t j = 0; j < k && !r->failed; j++)
            skip(r, fv >= BTC_GATE_WAKEUP_CPU ? 36 : 35);
    }
    g64(r); /* per-CPU context switches */
    for (unsigned c = 0; c < BTC_FILE_PER_CPU_SLOTS && !r->failed; c++) {
        uint64_t k = g64(r);
        t->cpu_ctx_switches += k;
        for (uint64_t j = 0; j < k && !r->failed; j++)
            skip(r, 18);
    }
    t->tid_pids = g64(r); /* tid -> pid */
    for (uint64_t i = 0; i < t->tid_pids && !r->failed; i++)
        skip(r, 16);
    t->cpu_thread_data = g64(r);
    for (uint64_t i = 0; i < t->cpu_thread_data && !r->failed; i++) {
        skip(r, 16); /* tid, running time */
        t->cpu_regions += g32(r);
        t->cpu_migrations += g32(r);
    }
    g64(r); /* symbol locations */
    g64(r);
    n = g64(r);
    t->symbols = n;
    for (uint64_t i = 0; i < n && !r->failed; i++)
        skip(r, 32);
    n = g64(r); /* symbol code */
    t->symbol_code = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        g64(r);
        uint32_t len = g32(r);
        t->symbol_code_bytes += len;
        skip(r, len);
    }
    skip_list(r, 16); /* code -> symbol */
    n = g64(r);       /* hardware samples */
    t->hw_sample_addresses = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        g64(r);
        for (int k = 0; k < 6 && !r->failed; k++) {
            uint64_t c = g64(r);
            t->hw_samples[k] += c;
            for (uint64_t j = 0; j < c && !r->failed; j++)
                skip(r, 8);
        }
    }
    n = g64(r); /* source file cache */
    t->source_files = n;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        skip(r, g32(r));
        uint32_t len = g32(r);
        t->source_file_bytes += len;
        skip(r, len);
    }
    if (r->failed)
        return BTC_ERR_FORMAT;
    if (r->pos != r->len || btcr_next_block(r) || r->failed) {
        btcr_fail(r, "data after the last section");
        return BTC_ERR_FORMAT;
    }
    return BTC_OK;
}
