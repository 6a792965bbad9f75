/* CPU zones: begin and end (checked, then spooled to the timeline), their
 * text, name, colour and value, source locations sent as payload, and the
 * decoder's fast path for runs of plain zone events. */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* open_zone and close_zone are compiled into each caller, the fast path's
 * loop among them: out of line, the calls and the registers they spill
 * cost about 7% of a replay's ingest (10 M zones: 0.18 -> 0.165 s). */
#define ZONE_INLINE static inline __attribute__((always_inline))

/* The counts a zone begun on thread t under parent (NULL: none) adds to. */
ZONE_INLINE void count_zone(struct btc_model *m, struct btc_thread *t, struct btc_open_zone *parent,
                            int16_t srcloc)
{
    if (parent)
        parent->children++;
    t->zones++;
    t->top_zones += parent == NULL;
    m->zone_count++;
    if (srcloc > 0)
        ((uint64_t *)m->srcloc_zone_counts.data)[srcloc - 1]++;
    else
        ((uint64_t *)m->payload_zone_counts.data)[-srcloc - 1]++;
}

/* Opens a zone on thread t once every check has passed and its stack has
 * room: its begin in the timeline spool (extra and child count are set at
 * its end), its entry on the stack, the counts. NULL when the spool cannot
 * be written, nothing changed. */
ZONE_INLINE struct btc_open_zone *open_zone(struct btc_model *m, struct btc_tl_cursor *c,
                                            struct btc_thread *t, int16_t srcloc, int64_t time)
{
    struct btc_open_zone *parent = t->stack.len ? btc_vec_at(&t->stack, t->stack.len - 1) : NULL;
    uint64_t at;
    uint8_t tag_back;
    if (btc_tl_begin(&m->zones, c, srcloc, (uint64_t)time - (uint64_t)t->timeline_ref, &at,
                     &tag_back) < 0)
        return NULL;
    count_zone(m, t, parent, srcloc);
    t->timeline_ref = time;
    struct btc_open_zone *z = btc_vec_at(&t->stack, t->stack.len++);
    memset(z, 0, sizeof *z);
    z->at = at;
    z->tag_back = tag_back;
    z->start = time;
    z->validation = t->next_validation;
    t->next_validation = 0;
    btcm_see_time(m, time);
    return z;
}

int btc_zone_begin(struct btc_model *m, const struct btc_event *ev, int16_t srcloc,
                   int with_callstack, char *err, size_t errlen)
{
    int64_t ti = btcm_current_thread(m);
    if (ti < 0)
        return ti == BTC_ERR_NOMEM ? btcm_nomem(err, errlen)
                                   : btcm_fail(ev, err, errlen, "too many threads");
    struct btc_thread *t = btcm_thread_at(m, ti);
    if (t->stack.len >= 65535)
        return btcm_fail(ev, err, errlen, "zones nested deeper than 65535 on thread %" PRIu64,
                         t->tid);
    if (with_callstack && !t->pending_callstack)
        return btcm_fail(ev, err, errlen, "expected a Callstack event before this zone");
    /* Everything is checked before anything changes, so a refused zone
     * leaves no trace in the spool. */
    if (btc_vec_reserve(&t->stack, 1) < 0)
        return btcm_nomem(err, errlen);
    struct btc_open_zone *parent = t->stack.len ? btc_vec_at(&t->stack, t->stack.len - 1) : NULL;
    if (parent && ev->time < parent->start)
        return btcm_fail(ev, err, errlen,
                         "zone begins at %" PRId64 " ns, before its parent (%" PRId64 " ns)",
                         ev->time, parent->start);
    struct btc_tl_cursor c;
    btc_tl_cursor(&m->zones, (uint32_t)ti, &c);
    struct btc_open_zone *z = open_zone(m, &c, t, srcloc, ev->time);
    btc_tl_settle(&m->zones, &c);
    if (!z) {
        snprintf(err, errlen, "cannot write the zone spool: %s", strerror(errno));
        return BTC_ERR_IO;
    }
    if (with_callstack) {
        z->extra.callstack = t->pending_callstack;
        z->has_extra = 1;
        t->pending_callstack = 0;
    }
    return BTC_OK;
}

ZONE_INLINE int close_zone(struct btc_model *m, struct btc_tl_cursor *c, int64_t ti,
                           struct btc_open_zone *z, int64_t end)
{
    struct btc_thread *t = btcm_thread_at(m, ti);
    uint32_t extra = 0;
    if (z->text) {
        uint64_t k;
        int rc = btc_texts_append(&m->texts, z->text, z->text_len, &k);
        free(z->text);
        z->text = NULL;
        if (rc < 0)
            return rc;
        z->extra.text = (uint32_t)(k + 1);
        m->zone_text_max = k + 1;
    }
    if (z->has_extra) {
        uint64_t idx;
        if (btc_spool_append(&m->extras, &z->extra, &idx) < 0)
            return BTC_ERR_IO;
        extra = (uint32_t)(idx + 1);
    }
    if (btc_tl_close_zone(&m->zones, c, z->at, z->tag_back, extra, z->children,
                          (uint64_t)end - (uint64_t)t->timeline_ref) < 0)
        return BTC_ERR_IO;
    t->child_lists += z->children != 0;
    t->timeline_ref = end;
    return BTC_OK;
}

int btc_zone_end(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    int64_t ti = btcm_current_thread(m);
    if (ti < 0)
        return btcm_nomem(err, errlen);
    struct btc_thread *t = btcm_thread_at(m, ti);
    if (!t->stack.len)
        return btcm_fail(ev, err, errlen, "zone ended with no zone open on thread %" PRIu64,
                         t->tid);
    struct btc_open_zone *z = btc_vec_at(&t->stack, t->stack.len - 1);
    if (z->validation != t->next_validation)
        return btcm_fail(ev, err, errlen,
                         "zone validation id %u does not match the open zone's %u (invalid order "
                         "of zone begin and end)",
                         t->next_validation, z->validation);
    t->next_validation = 0;
    if (ev->time < z->start)
        return btcm_fail(ev, err, errlen,
                         "zone ends at %" PRId64 " ns, before it began (%" PRId64 " ns)", ev->time,
                         z->start);
    struct btc_tl_cursor c;
    btc_tl_cursor(&m->zones, (uint32_t)ti, &c);
    int rc = close_zone(m, &c, ti, z, ev->time);
    btc_tl_settle(&m->zones, &c);
    if (rc < 0) {
        snprintf(err, errlen, "cannot write the zone spool: %s", strerror(errno));
        return BTC_ERR_IO;
    }
    t->stack.len--;
    btcm_see_time(m, ev->time);
    return BTC_OK;
}

/* The decoder's fast path (struct btc_zone_fast): the btc_zone_begin
 * and btc_zone_end above for the common case only, taking nothing it would have to
 * refuse: the first event it refuses goes back to btc_model_event,
 * unchanged. A run of zone events all belongs to one thread (a thread or
 * fiber switch is an event of its own), looked up once. */
static inline int zone_begin_fast(struct btc_model *m, struct btc_tl_cursor *c,
                                  struct btc_thread *t, int64_t time, uint64_t srcloc_key)
{
    int16_t srcloc = m->last_srcloc_id;
    if (!srcloc || m->last_srcloc_key != srcloc_key || t->stack.len == t->stack.cap ||
        t->stack.len >= 65535)
        return 0;
    if (t->stack.len &&
        time < ((struct btc_open_zone *)btc_vec_at(&t->stack, t->stack.len - 1))->start)
        return 0;
    return open_zone(m, c, t, srcloc, time) != NULL;
}

static inline int zone_end_fast(struct btc_model *m, struct btc_tl_cursor *c, struct btc_thread *t,
                                int64_t ti, int64_t time)
{
    if (!t->stack.len)
        return 0;
    struct btc_open_zone *z = btc_vec_at(&t->stack, t->stack.len - 1);
    if (z->validation != t->next_validation || time < z->start || z->text || z->has_extra ||
        close_zone(m, c, ti, z, time) < 0)
        return 0;
    t->next_validation = 0;
    t->stack.len--;
    btcm_see_time(m, time);
    return 1;
}

/* A begin and its end next to each other, a leaf (most zones): the two
 * above at once, with no stack entry, as the leaf's records. Taken only
 * when both would be, in the same state: the begin's checks, then the
 * end's (no validation id pending: the end would find it on the zone). */
static inline int leaf_fast(struct btc_model *m, struct btc_tl_cursor *c, struct btc_thread *t,
                            int64_t start, uint64_t srcloc_key, int64_t end)
{
    int16_t srcloc = m->last_srcloc_id;
    if (!srcloc || m->last_srcloc_key != srcloc_key || t->stack.len >= 65535 ||
        t->next_validation || end < start)
        return 0;
    struct btc_open_zone *parent = t->stack.len ? btc_vec_at(&t->stack, t->stack.len - 1) : NULL;
    if ((parent && start < parent->start) ||
        btc_tl_leaf(&m->zones, c, srcloc, (uint64_t)start - (uint64_t)t->timeline_ref,
                    (uint64_t)end - (uint64_t)start) < 0)
        return 0;
    count_zone(m, t, parent, srcloc);
    t->timeline_ref = end;
    btcm_see_time(m, end);
    return 1;
}

static size_t zone_run(void *ctx, const struct btc_zone_op *ops, size_t n)
{
    struct btc_model *m = ctx;
    if (m->current_thread < 0)
        return 0;
    int64_t ti = btcm_acting_thread(m);
    struct btc_thread *t = btcm_thread_at(m, ti);
    struct btc_tl_cursor c;
    btc_tl_cursor(&m->zones, (uint32_t)ti, &c);
    size_t i = 0;
    for (; i < n; i++) {
        if (ops[i].begin && i + 1 < n && !ops[i + 1].begin &&
            leaf_fast(m, &c, t, ops[i].time, ops[i].key, ops[i + 1].time)) {
            i++;
            continue;
        }
        if (!(ops[i].begin ? zone_begin_fast(m, &c, t, ops[i].time, ops[i].key)
                           : zone_end_fast(m, &c, t, ti, ops[i].time)))
            break;
    }
    btc_tl_settle(&m->zones, &c);
    m->event_count += i;
    return i;
}

struct btc_zone_fast btc_model_zone_fast(struct btc_model *m)
{
    return (struct btc_zone_fast){zone_run, m};
}

static int zone_top(struct btc_model *m, const struct btc_event *ev, struct btc_open_zone **out,
                    char *err, size_t errlen)
{
    int64_t ti = btcm_current_thread(m);
    if (ti < 0)
        return btcm_nomem(err, errlen);
    struct btc_thread *t = btcm_thread_at(m, ti);
    if (!t->stack.len)
        return btcm_fail(ev, err, errlen, "no zone open on thread %" PRIu64, t->tid);
    struct btc_open_zone *z = btc_vec_at(&t->stack, t->stack.len - 1);
    if (z->validation != t->next_validation)
        return btcm_fail(ev, err, errlen, "validation id %u does not match the open zone's %u",
                         t->next_validation, z->validation);
    *out = z;
    return BTC_OK;
}

/* Zone text: a second text (or value) is appended after a newline, as
 * upstream shows it. Kept with the open zone, spooled when it ends. */
static int zone_add_text(struct btc_open_zone *z, const char *s, size_t len)
{
    size_t old = z->text ? (size_t)z->text_len + 1 : 0;
    if (old + len > UINT32_MAX)
        return BTC_ERR_NOMEM;
    char *t = realloc(z->text, old + len + 1);
    if (!t)
        return BTC_ERR_NOMEM;
    if (old)
        t[old - 1] = '\n';
    memcpy(t + old, s, len);
    z->text = t;
    z->text_len = (uint32_t)(old + len);
    z->has_extra = 1;
    return BTC_OK;
}

int btc_zone_decorate(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_open_zone *z = NULL;
    int rc = zone_top(m, ev, &z, err, errlen);
    if (rc < 0)
        return rc;
    switch (ev->type) {
    case BT_EV_ZONE_TEXT:
        rc = zone_add_text(z, ev->str1, ev->str1_len);
        break;
    case BT_EV_ZONE_NAME: {
        int64_t idx = btcm_intern(m, ev->str1, ev->str1_len);
        if (idx < 0)
            return btcm_nomem(err, errlen);
        z->extra.name = (uint32_t)idx + 1;
        z->has_extra = 1;
        break;
    }
    case BT_EV_ZONE_COLOR:
        z->extra.color = ev->p[3] | ((uint32_t)ev->p[2] << 8) | ((uint32_t)ev->p[1] << 16);
        z->has_extra = 1;
        break;
    case BT_EV_ZONE_VALUE: {
        uint64_t v = bt_wire_get_u64(ev->p + 1);
        char buf[64];
        int n = snprintf(buf, sizeof buf, "%" PRIu64 " [0x%" PRIx64 "]", v, v);
        rc = zone_add_text(z, buf, (size_t)n);
        break;
    }
    default:
        break;
    }
    return rc < 0 ? btcm_nomem(err, errlen) : BTC_OK;
}

int btc_zone_payload_srcloc(struct btc_model *m, const struct btc_event *ev, char *err,
                            size_t errlen)
{
    const uint8_t *p = ev->data;
    size_t n = ev->data_len;
    if (n < BT_SRCLOC_PAYLOAD_MIN)
        return btcm_fail(ev, err, errlen, "source location payload of %zu bytes, expected >= %u", n,
                         BT_SRCLOC_PAYLOAD_MIN);
    const uint8_t *func = p + 8;
    const uint8_t *fend = memchr(func, 0, n - 8);
    if (!fend)
        return btcm_fail(ev, err, errlen, "source location payload: function name not terminated");
    const uint8_t *file = fend + 1;
    const uint8_t *flend = file < p + n ? memchr(file, 0, (size_t)(p + n - file)) : NULL;
    if (!flend)
        return btcm_fail(ev, err, errlen, "source location payload: file name not terminated");
    const uint8_t *name = flend + 1;
    size_t before = m->payload_bytes.lens.len;
    int64_t pi = btc_strtab_intern(&m->payload_bytes, (const char *)p, n);
    if (pi < 0)
        return btcm_nomem(err, errlen);
    if ((size_t)pi == before) {
        if (m->payload_srclocs.len >= BTCM_MAX_SRCLOCS)
            return btcm_fail(ev, err, errlen, "more than %d distinct source location payloads",
                             BTCM_MAX_SRCLOCS);
        struct btc_srcloc *s = btc_vec_push(&m->payload_srclocs);
        uint64_t *cnt = btc_vec_push(&m->payload_zone_counts);
        if (!s || !cnt)
            return btcm_nomem(err, errlen);
        uint32_t c = bt_wire_get_u32(p);
        s->color = ((c & 0xFF) << 16) | (c & 0xFF00) | ((c >> 16) & 0xFF);
        s->line = bt_wire_get_u32(p + 4);
        int64_t fi = btcm_intern(m, (const char *)func, (size_t)(fend - func));
        int64_t fl = btcm_intern(m, (const char *)file, (size_t)(flend - file));
        int64_t nm = name < p + n ? btcm_intern(m, (const char *)name, (size_t)(p + n - name)) : -1;
        if (fi < 0 || fl < 0 || nm < -1)
            return btcm_nomem(err, errlen);
        s->function = (uint64_t)fi + 1;
        s->file = (uint64_t)fl + 1;
        if (btc_code_source(m, fl, -1) < 0)
            return btcm_nomem(err, errlen);
        s->name = (uint64_t)(nm + 1);
        s->resolved = 1;
    }
    m->pending_payload_srcloc = pi;
    return BTC_OK;
}

int btc_zones_close_open(struct btc_model *m)
{
    for (size_t i = 0; i < m->threads.len; i++) {
        struct btc_thread *t = btcm_thread_at(m, (int64_t)i);
        struct btc_tl_cursor c;
        btc_tl_cursor(&m->zones, (uint32_t)i, &c);
        while (t->stack.len) {
            struct btc_open_zone *z = btc_vec_at(&t->stack, t->stack.len - 1);
            int rc = close_zone(m, &c, (int64_t)i, z, -1);
            btc_tl_settle(&m->zones, &c);
            if (rc < 0)
                return rc;
            t->stack.len--;
        }
    }
    return BTC_OK;
}
