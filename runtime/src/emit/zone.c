/* Zones, the emit path's hottest calls: a begin is a timer read and a
 * store into the calling thread's ring; no lock, syscall or allocation once
 * the ring exists (core/ring.h). Also the source locations made at run time
 * (Tracy's dynamic zones) and a zone's text, name, color and value. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "emit.h"

/* The calling thread for a zone begin; NULL = an inactive zone. */
static inline struct bt_thread *zone_thread(int active)
{
    return active ? bt_emit_thread() : NULL;
}

static inline bt_zone zone_begin_body(const struct bt_srcloc *loc, int depth, int active,
                                      uintptr_t caller)
{
    bt_zone z = {0};
    struct bt_thread *t = zone_thread(active);
    if (!t)
        return z;
    size_t keep = bt_zone_keep(t) + BT_REC_HEADER;
    if (__builtin_expect(depth > 0, 0)) {
        uint64_t key = (uint64_t)(uintptr_t)loc;
        if (!bt_emit_record(t, BT_REC_ZONE_BEGIN, depth, 0, &key, 8, NULL, 0, keep, caller))
            return z;
    } else {
        uint8_t *p = bt_ring_reserve(t, BT_REC_HEADER + 8, keep);
        if (!p)
            return z;
        bt_rec_header(p, BT_REC_ZONE_BEGIN, 0, 8, 0, bt_timer_now());
        memcpy(p + BT_REC_HEADER, &loc, sizeof(loc));
        bt_ring_commit(t, BT_REC_HEADER + 8);
    }
    t->open_zones++;
    z.active = 1;
    return z;
}

static inline bt_zone zone_begin(const struct bt_srcloc *loc, int depth, int active,
                                 uintptr_t caller)
{
    bt_zone z = {0};
    if (!active || !bt_emit_enter())
        return z;
    z = zone_begin_body(loc, depth, active, caller);
    bt_emit_leave();
    return z;
}

bt_zone bt_zone_begin(const struct bt_srcloc *loc, int depth, int active)
{
    return zone_begin(loc, depth, active, CALLER);
}

bt_zone bt_zone_begin_at(const struct bt_srcloc *loc, int depth, int active, uintptr_t caller)
{
    return zone_begin(loc, depth, active, caller);
}

void bt_zone_end(bt_zone zone)
{
    if (!zone.active)
        return;
    int64_t now = bt_timer_now();
    struct bt_thread *t = bt_tls_thread;
    if (!t || !bt_emit_enter())
        return;
    bt_zone_end_at(t, now);
    bt_emit_leave();
}

/* SourceLocationPayload: u32 color, u32 line, function NUL, file NUL, name. */
static size_t srcloc_payload_size(size_t file_len, size_t function_len, size_t name_len)
{
    return 8 + function_len + 1 + file_len + 1 + name_len;
}

static void srcloc_payload_fill(uint8_t *p, uint32_t line, const char *file, size_t file_len,
                                const char *function, size_t function_len, const char *name,
                                size_t name_len, uint32_t color)
{
    memcpy(p, &color, 4);
    memcpy(p + 4, &line, 4);
    p += 8;
    if (function_len)
        memcpy(p, function, function_len);
    p[function_len] = 0;
    p += function_len + 1;
    if (file_len)
        memcpy(p, file, file_len);
    p[file_len] = 0;
    p += file_len + 1;
    if (name_len)
        memcpy(p, name, name_len);
}

/* Keeps a runtime-built location within one record; names beyond that are
 * shortened (the protocol carries at most 64 KiB anyway). */
static void srcloc_fit(size_t *file_len, size_t *function_len, size_t *name_len)
{
    size_t third = (bt_payload_max() - 10) / 3;
    if (*file_len > third)
        *file_len = third;
    if (*function_len > third)
        *function_len = third;
    if (*name_len > third)
        *name_len = third;
}

static bt_zone zone_begin_made(uint64_t handle, int depth, int active, uintptr_t caller)
{
    bt_zone z = {0};
    struct bt_thread *t = bt_tls_thread;
    if (!active || !handle || !t || !bt_emit_enter())
        return z;
    const struct bt_made_srcloc *m = (const struct bt_made_srcloc *)(uintptr_t)handle;
    if (bt_emit_record(t, BT_REC_ZONE_BEGIN_DYN, depth, 0, m->data, m->len, NULL, 0,
                       bt_zone_keep(t) + BT_REC_HEADER, caller)) {
        t->open_zones++;
        z.active = 1;
    }
    bt_emit_leave();
    return z;
}

static bt_zone zone_begin_dynamic(uint32_t line, const char *file, size_t file_len,
                                  const char *function, size_t function_len, const char *name,
                                  size_t name_len, uint32_t color)
{
    bt_zone z = {0};
    struct bt_thread *t = bt_emit_thread();
    if (!t)
        return z;
    if (!name)
        name_len = 0;
    srcloc_fit(&file_len, &function_len, &name_len);
    size_t len = srcloc_payload_size(file_len, function_len, name_len);
    size_t need = BT_REC_HEADER + BT_REC_ALIGN(len);
    uint8_t *p = bt_ring_reserve(t, need, bt_zone_keep(t) + BT_REC_HEADER);
    if (!p)
        return z;
    srcloc_payload_fill(p + BT_REC_HEADER, line, file, file_len, function, function_len, name,
                        name_len, color);
    bt_rec_header(p, BT_REC_ZONE_BEGIN_DYN, 0, (uint16_t)len, 0, bt_timer_now());
    bt_ring_commit(t, need);
    t->open_zones++;
    z.active = 1;
    return z;
}

bt_zone bt_zone_begin_dynamic(uint32_t line, const char *file, size_t file_len,
                              const char *function, size_t function_len, const char *name,
                              size_t name_len, uint32_t color, int depth, int active)
{
    bt_zone z = {0};
    if (!active)
        return z;
    if (depth > 0) {
        /* callstack capture lives in emit_record; go through a made slot,
         * which fits the names itself */
        uint64_t h =
            bt_srcloc_make(line, file, file_len, function, function_len, name, name_len, color);
        return zone_begin_made(h, depth, active, CALLER);
    }
    if (!bt_emit_enter())
        return z;
    z = zone_begin_dynamic(line, file, file_len, function, function_len, name, name_len, color);
    bt_emit_leave();
    return z;
}

uint64_t bt_srcloc_make(uint32_t line, const char *file, size_t file_len, const char *function,
                        size_t function_len, const char *name, size_t name_len, uint32_t color)
{
    struct bt_thread *t = bt_emit_thread();
    if (!t)
        return 0;
    if (!name)
        name_len = 0;
    srcloc_fit(&file_len, &function_len, &name_len);
    size_t len = srcloc_payload_size(file_len, function_len, name_len);
    struct bt_made_srcloc *m = &t->made[t->made_next++ % BT_MADE_SLOTS];
    if (m->cap < len) {
        uint8_t *grown = realloc(m->data, len);
        if (!grown)
            return 0;
        m->data = grown;
        m->cap = len;
    }
    srcloc_payload_fill(m->data, line, file, file_len, function, function_len, name, name_len,
                        color);
    m->len = len;
    return (uint64_t)(uintptr_t)m;
}

bt_zone bt_zone_begin_made(uint64_t handle, int depth, int active)
{
    return zone_begin_made(handle, depth, active, CALLER);
}

bt_zone bt_zone_begin_made_at(uint64_t handle, int depth, int active, uintptr_t caller)
{
    return zone_begin_made(handle, depth, active, caller);
}

const uint8_t *bt_made_payload(uint64_t handle, size_t *len)
{
    const struct bt_made_srcloc *m = (const struct bt_made_srcloc *)(uintptr_t)handle;
    if (!m) {
        *len = 0;
        return NULL;
    }
    *len = m->len;
    return m->data;
}

static void zone_string(bt_zone zone, uint8_t kind, const char *text, size_t len)
{
    struct bt_thread *t = bt_tls_thread;
    if (!zone.active || !t || !bt_emit_enter())
        return;
    if (len > bt_payload_max())
        len = bt_payload_max();
    bt_emit_record(t, kind, 0, 0, text, len, NULL, 0, bt_zone_keep(t), CALLER);
    bt_emit_leave();
}

void bt_zone_text(bt_zone zone, const char *text, size_t len)
{
    zone_string(zone, BT_REC_ZONE_TEXT, text, len);
}

void bt_zone_name(bt_zone zone, const char *text, size_t len)
{
    zone_string(zone, BT_REC_ZONE_NAME, text, len);
}

void bt_zone_color(bt_zone zone, uint32_t color)
{
    struct bt_thread *t = bt_tls_thread;
    if (!zone.active || !t || !bt_emit_enter())
        return;
    uint8_t *p = bt_ring_reserve(t, BT_REC_HEADER, bt_zone_keep(t));
    if (p) {
        bt_rec_header(p, BT_REC_ZONE_COLOR, 0, 0, color & 0xFFFFFFu, 0);
        bt_ring_commit(t, BT_REC_HEADER);
    }
    bt_emit_leave();
}

void bt_zone_value(bt_zone zone, uint64_t value)
{
    struct bt_thread *t = bt_tls_thread;
    if (!zone.active || !t || !bt_emit_enter())
        return;
    uint8_t *p = bt_ring_reserve(t, BT_REC_HEADER + 8, bt_zone_keep(t));
    if (p) {
        bt_rec_header(p, BT_REC_ZONE_VALUE, 0, 8, 0, 0);
        memcpy(p + BT_REC_HEADER, &value, 8);
        bt_ring_commit(t, BT_REC_HEADER + 8);
    }
    bt_emit_leave();
}
