/* The capture's event model: applies each decoded event (zones, messages,
 * plots, frames, memory, locks, callstacks, query answers), streams bulk
 * records to the spools and queues the queries that name what it sees. */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Source location ids are int16 in the file, on each side of 0. */
#define MAX_SRCLOCS 32767

/* Writes "stream offset N: event Name (T): what" and returns the status. */
static int failf(const struct btc_event *ev, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int failf(const struct btc_event *ev, char *err, size_t errlen, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = bt_wire_event_name(ev->type);
    snprintf(err, errlen, "stream offset %llu: event %s (%u): %s", (unsigned long long)ev->offset,
             name ? name : "unknown", ev->type, what);
    return BTC_ERR_PROTOCOL;
}

static int nomem(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory while applying events");
    return BTC_ERR_NOMEM;
}

int btc_model_init(struct btc_model *m, const struct btc_welcome *w, const char *spool_dir,
                   char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->welcome = *w;
    btc_strtab_init(&m->strings);
    btc_map_init(&m->key_strings);
    btc_vec_init(&m->threads, sizeof(struct btc_thread));
    btc_map_init(&m->thread_index);
    btc_map_init(&m->fiber_index);
    m->current_thread = -1;
    btc_vec_init(&m->srclocs, sizeof(struct btc_srcloc));
    btc_map_init(&m->srcloc_index);
    btc_vec_init(&m->payload_srclocs, sizeof(struct btc_srcloc));
    btc_strtab_init(&m->payload_bytes);
    btc_vec_init(&m->srcloc_zone_counts, sizeof(uint64_t));
    btc_vec_init(&m->payload_zone_counts, sizeof(uint64_t));
    m->pending_payload_srcloc = -1;
    btc_vec_init(&m->plots, sizeof(struct btc_plot));
    btc_map_init(&m->plot_index);
    btc_map_init(&m->power_index);
    btc_vec_init(&m->framesets, sizeof(struct btc_frameset));
    btc_map_init(&m->frameset_index);
    btc_vec_init(&m->pools, sizeof(struct btc_pool));
    btc_map_init(&m->pool_index);
    btc_vec_init(&m->locks, sizeof(struct btc_lock));
    btc_map_init(&m->lock_index);
    btc_vec_init(&m->app_info, sizeof(uint32_t));
    m->systime_plot = -1;
    btc_vec_init(&m->cpus, sizeof(struct btc_cpu));
    btc_map_init(&m->tid_pid);
    btc_vec_init(&m->prio.items, sizeof(struct btc_query));
    btc_vec_init(&m->normal.items, sizeof(struct btc_query));
    for (int i = 0; i < BT_QUERY_COUNT; i++)
        btc_map_init(&m->pending[i]);
    btc_vec_init(&m->srcloc_fifo, sizeof(uint64_t));
    m->budget = 8188; /* until the session measures its socket: upstream on Linux loopback */
    m->zones.raw.fd = m->extras.fd = m->msgs.fd = m->plot_points.fd = m->frames.fd = m->mem.fd =
        m->lock_events.fd = m->texts.raw.fd = -1;
    m->gpu.zones.fd = m->samples.spool.fd = -1;
    m->ctxswitch.regions.fd = m->ctxswitch.cpu_regions.fd = -1;
    m->frame_images.data.raw.fd = m->code.data.raw.fd = m->hw_samples.spool.fd = -1;
    m->sections.spool.fd = m->callstacks.frames.raw.fd = -1;

    /* The default frame set and the default memory pool always exist. */
    struct btc_frameset *fs = btc_vec_push(&m->framesets);
    struct btc_pool *pool = btc_vec_push(&m->pools);
    if (!fs || !pool)
        return nomem(err, errlen);
    fs->continuous = 1;
    btc_map_init(&pool->live);

    snprintf(m->spool_dir, sizeof m->spool_dir, "%s", spool_dir && *spool_dir ? spool_dir : ".");
    int rc;
    if ((rc = btc_timeline_open(&m->zones, spool_dir, err, errlen)) ||
        (rc = btc_spool_open(&m->extras, spool_dir, sizeof(struct btc_extra_rec), err, errlen)) ||
        (rc = btc_spool_open(&m->msgs, spool_dir, sizeof(struct btc_msg_rec), err, errlen)) ||
        (rc = btc_spool_open(&m->plot_points, spool_dir, sizeof(struct btc_plot_rec), err,
                             errlen)) ||
        (rc = btc_spool_open(&m->frames, spool_dir, sizeof(struct btc_frame_rec), err, errlen)) ||
        (rc = btc_spool_open(&m->mem, spool_dir, sizeof(struct btc_mem_rec), err, errlen)) ||
        (rc = btc_spool_open(&m->lock_events, spool_dir, sizeof(struct btc_lock_rec), err,
                             errlen)) ||
        (rc = btc_texts_open(&m->texts, spool_dir, err, errlen)) ||
        (rc = btc_gpu_init(&m->gpu, spool_dir, err, errlen)) ||
        (rc = btc_samples_init(&m->samples, spool_dir, err, errlen)) ||
        (rc = btc_ctxswitch_init(&m->ctxswitch, spool_dir, err, errlen)) ||
        (rc = btc_frame_images_init(&m->frame_images, spool_dir, err, errlen)) ||
        (rc = btc_code_init(&m->code, (w->flags & BT_WELCOME_FLAG_CODE_TRANSFER) != 0, spool_dir,
                            err, errlen)) ||
        (rc = btc_hw_samples_init(&m->hw_samples, spool_dir, err, errlen)) ||
        (rc = btc_sections_init(&m->sections, spool_dir, err, errlen)) ||
        (rc = btc_callstacks_init(&m->callstacks, spool_dir, err, errlen)))
        return rc;
    return BTC_OK;
}

void btc_model_free(struct btc_model *m)
{
    btc_strtab_free(&m->strings);
    btc_map_free(&m->key_strings);
    for (size_t i = 0; i < m->threads.len; i++) {
        struct btc_vec *stack = &((struct btc_thread *)btc_vec_at(&m->threads, i))->stack;
        for (size_t k = 0; k < stack->len; k++)
            free(((struct btc_open_zone *)btc_vec_at(stack, k))->text);
        btc_vec_free(stack);
    }
    btc_vec_free(&m->threads);
    btc_map_free(&m->thread_index);
    btc_map_free(&m->fiber_index);
    btc_vec_free(&m->srclocs);
    btc_map_free(&m->srcloc_index);
    btc_vec_free(&m->payload_srclocs);
    btc_strtab_free(&m->payload_bytes);
    btc_vec_free(&m->srcloc_zone_counts);
    btc_vec_free(&m->payload_zone_counts);
    btc_vec_free(&m->plots);
    btc_map_free(&m->plot_index);
    btc_map_free(&m->power_index);
    btc_vec_free(&m->framesets);
    btc_map_free(&m->frameset_index);
    for (size_t i = 0; i < m->pools.len; i++)
        btc_map_free(&((struct btc_pool *)btc_vec_at(&m->pools, i))->live);
    btc_vec_free(&m->pools);
    btc_map_free(&m->pool_index);
    btc_vec_free(&m->locks);
    btc_map_free(&m->lock_index);
    btc_callstacks_free(&m->callstacks);
    btc_vec_free(&m->app_info);
    btc_vec_free(&m->cpus);
    btc_map_free(&m->tid_pid);
    btc_vec_free(&m->prio.items);
    btc_vec_free(&m->normal.items);
    for (int i = 0; i < BT_QUERY_COUNT; i++)
        btc_map_free(&m->pending[i]);
    btc_vec_free(&m->srcloc_fifo);
    btc_timeline_close(&m->zones);
    btc_spool_close(&m->extras);
    btc_spool_close(&m->msgs);
    btc_spool_close(&m->plot_points);
    btc_spool_close(&m->frames);
    btc_spool_close(&m->mem);
    btc_spool_close(&m->lock_events);
    btc_texts_close(&m->texts);
    btc_gpu_free(&m->gpu);
    btc_samples_free(&m->samples);
    btc_ctxswitch_free(&m->ctxswitch);
    btc_frame_images_free(&m->frame_images);
    btc_code_free(&m->code);
    btc_hw_samples_free(&m->hw_samples);
    btc_sections_free(&m->sections);
}

void btc_model_set_budget(struct btc_model *m, int64_t budget)
{
    m->budget = budget;
}

/* ---- queries ---------------------------------------------------------- */

/* Queued and pending queries kept allocated once all are answered. */
#define TRANSIENT_KEEP 4096

static int enqueue(struct btc_model *m, uint8_t type, uint64_t ptr, uint32_t extra)
{
    struct btc_query_queue *q = type < BT_QUERY_FIRST_NORMAL ? &m->prio : &m->normal;
    struct btc_query *it = btc_vec_push(&q->items);
    if (!it)
        return BTC_ERR_NOMEM;
    it->type = type;
    it->ptr = ptr;
    it->extra = extra;
    return BTC_OK;
}

static int query_extra(struct btc_model *m, uint8_t type, uint64_t ptr, uint32_t extra)
{
    if (btc_map_get(&m->pending[type], ptr))
        return BTC_OK;
    if (btc_map_put(&m->pending[type], ptr, 1) < 0 || enqueue(m, type, ptr, extra) < 0)
        return BTC_ERR_NOMEM;
    if (type == BT_QUERY_SOURCE_LOCATION) {
        uint64_t *k = btc_vec_push(&m->srcloc_fifo);
        if (!k)
            return BTC_ERR_NOMEM;
        *k = ptr;
    }
    return BTC_OK;
}

static int query(struct btc_model *m, uint8_t type, uint64_t ptr)
{
    return query_extra(m, type, ptr, 0);
}

/* Marks the answer to (type, ptr) received; returns whether it was asked. */
static int answered(struct btc_model *m, uint8_t type, uint64_t ptr)
{
    struct btc_map *pending = &m->pending[type];
    if (!btc_map_remove(pending, ptr))
        return 0;
    /* A burst of queries (every instruction of the code received) leaves a
     * large empty table behind: give it back. */
    if (pending->len == 0 && pending->cap > TRANSIENT_KEEP)
        btc_map_free(pending);
    m->budget++;
    return 1;
}

static int queue_pop(struct btc_query_queue *q, struct btc_query *out)
{
    if (q->head >= q->items.len)
        return 0;
    *out = *(struct btc_query *)btc_vec_at(&q->items, q->head++);
    if (q->head == q->items.len) {
        q->head = 0;
        q->items.len = 0;
        if (q->items.cap > TRANSIENT_KEEP)
            btc_vec_free(&q->items);
    }
    return 1;
}

size_t btc_model_take_queries(struct btc_model *m, uint8_t *out, size_t max)
{
    size_t n = 0;
    struct btc_query q;
    while (n < max && m->budget > 0 && (queue_pop(&m->prio, &q) || queue_pop(&m->normal, &q))) {
        uint8_t *p = out + n * BT_QUERY_SIZE;
        p[BT_QUERY_OFF_TYPE] = q.type;
        bt_wire_put_u64(p + BT_QUERY_OFF_PTR, q.ptr);
        bt_wire_put_u32(p + BT_QUERY_OFF_EXTRA, q.extra);
        m->budget--;
        n++;
    }
    return n;
}

uint64_t btc_model_outstanding(const struct btc_model *m)
{
    uint64_t n = 0;
    for (int i = 0; i < BT_QUERY_COUNT; i++)
        n += m->pending[i].len;
    return n + m->callstacks.frames_asked + m->code.transfers_pending + m->code.symbols_pending;
}

int btc_model_complete(const struct btc_model *m, const struct btc_decoder *d)
{
    if (!m->terminated || btc_model_outstanding(m) || m->callstacks.staging)
        return 0;
    if (d && (d->has_single || d->has_second))
        return 0;
    if (m->crashed)
        return 1;
    for (size_t i = 0; i < m->threads.len; i++)
        if (((struct btc_thread *)btc_vec_at(&m->threads, i))->stack.len)
            return 0;
    return 1;
}

/* ---- names ------------------------------------------------------------ */

static int64_t intern(struct btc_model *m, const char *s, size_t len)
{
    return btc_strtab_intern(&m->strings, s, len);
}

/* Asks for the text of a wire string key unless it is known or zero. */
static int want_string(struct btc_model *m, uint64_t key)
{
    if (!key || btc_map_get(&m->key_strings, key))
        return BTC_OK;
    return query(m, BT_QUERY_STRING, key);
}

/* A new thread record; its name is asked with query type q for key. */
static int64_t new_thread(struct btc_model *m, uint64_t tid, uint8_t q, uint64_t key)
{
    /* File thread indices are u16 with 0 reserved. */
    if (m->threads.len >= 65534)
        return BTC_ERR_PROTOCOL;
    struct btc_thread *t = btc_vec_push(&m->threads);
    if (!t)
        return BTC_ERR_NOMEM;
    t->tid = tid;
    t->name = -1;
    t->fiber = -1;
    btc_vec_init(&t->stack, sizeof(struct btc_open_zone));
    int64_t i = (int64_t)m->threads.len - 1;
    if (btc_map_put(&m->thread_index, tid, (uint64_t)i) < 0 || query(m, q, key) < 0)
        return BTC_ERR_NOMEM;
    return i;
}

static int64_t get_thread(struct btc_model *m, uint64_t tid)
{
    uint64_t *idx = btc_map_get(&m->thread_index, tid);
    if (idx)
        return (int64_t)*idx;
    return new_thread(m, tid, BT_QUERY_THREAD_STRING, tid);
}

/* A fiber is a thread of its own in the file, with upstream's id
 * (1 << 32 | n-th fiber) and a name asked by its key. */
static int64_t get_fiber(struct btc_model *m, uint64_t key)
{
    uint64_t *idx = btc_map_get(&m->fiber_index, key);
    if (idx)
        return (int64_t)*idx;
    int64_t i = new_thread(m, (1ull << 32) | m->fiber_index.len, BT_QUERY_FIBER_NAME, key);
    if (i < 0)
        return i;
    ((struct btc_thread *)btc_vec_at(&m->threads, (size_t)i))->is_fiber = 1;
    return btc_map_put(&m->fiber_index, key, (uint64_t)i) < 0 ? BTC_ERR_NOMEM : i;
}

static struct btc_thread *thread_at(struct btc_model *m, int64_t i)
{
    return btc_vec_at(&m->threads, (size_t)i);
}

/* The thread events go to once the current one is known: the fiber it
 * runs, if any, else itself. */
static int64_t acting_thread(struct btc_model *m)
{
    int64_t fiber = thread_at(m, m->current_thread)->fiber;
    return fiber >= 0 ? fiber : m->current_thread;
}

/* The thread per-thread events belong to: the last ThreadContext's, or the
 * fiber that thread has entered. */
static int64_t current_thread(struct btc_model *m)
{
    if (m->current_thread < 0)
        m->current_thread = get_thread(m, m->current_tid);
    return m->current_thread < 0 ? m->current_thread : acting_thread(m);
}

/* Static source location id for a wire key (querying it on first sight). */
static int static_srcloc(struct btc_model *m, uint64_t key, int16_t *id)
{
    /* Loops begin the same zone over and over: remember the last one. */
    if (m->last_srcloc_id && m->last_srcloc_key == key) {
        *id = m->last_srcloc_id;
        return BTC_OK;
    }
    uint64_t *v = btc_map_get(&m->srcloc_index, key);
    if (v) {
        m->last_srcloc_key = key;
        m->last_srcloc_id = (int16_t)*v;
    }
    if (v) {
        *id = (int16_t)*v;
        return BTC_OK;
    }
    if (m->srclocs.len >= MAX_SRCLOCS)
        return BTC_ERR_PROTOCOL;
    struct btc_srcloc *s = btc_vec_push(&m->srclocs);
    uint64_t *cnt = btc_vec_push(&m->srcloc_zone_counts);
    if (!s || !cnt)
        return BTC_ERR_NOMEM;
    s->key = key;
    *id = (int16_t)m->srclocs.len;
    if (btc_map_put(&m->srcloc_index, key, (uint64_t)*id) < 0)
        return BTC_ERR_NOMEM;
    return query(m, BT_QUERY_SOURCE_LOCATION, key);
}

static void see_time(struct btc_model *m, int64_t t)
{
    if (t > m->last_time)
        m->last_time = t;
}

/* ---- zones ------------------------------------------------------------ */

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
    see_time(m, time);
    return z;
}

static int zone_begin(struct btc_model *m, const struct btc_event *ev, int16_t srcloc,
                      int with_callstack, char *err, size_t errlen)
{
    int64_t ti = current_thread(m);
    if (ti < 0)
        return ti == BTC_ERR_NOMEM ? nomem(err, errlen)
                                   : failf(ev, err, errlen, "too many threads");
    struct btc_thread *t = thread_at(m, ti);
    if (t->stack.len >= 65535)
        return failf(ev, err, errlen, "zones nested deeper than 65535 on thread %" PRIu64, t->tid);
    if (with_callstack && !t->pending_callstack)
        return failf(ev, err, errlen, "expected a Callstack event before this zone");
    /* Everything is checked before anything changes, so a refused zone
     * leaves no trace in the spool. */
    if (btc_vec_reserve(&t->stack, 1) < 0)
        return nomem(err, errlen);
    struct btc_open_zone *parent = t->stack.len ? btc_vec_at(&t->stack, t->stack.len - 1) : NULL;
    if (parent && ev->time < parent->start)
        return failf(ev, err, errlen,
                     "zone begins at %" PRId64 " ns, before its parent (%" PRId64 " ns)", ev->time,
                     parent->start);
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
    struct btc_thread *t = thread_at(m, ti);
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

static int zone_end(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    int64_t ti = current_thread(m);
    if (ti < 0)
        return nomem(err, errlen);
    struct btc_thread *t = thread_at(m, ti);
    if (!t->stack.len)
        return failf(ev, err, errlen, "zone ended with no zone open on thread %" PRIu64, t->tid);
    struct btc_open_zone *z = btc_vec_at(&t->stack, t->stack.len - 1);
    if (z->validation != t->next_validation)
        return failf(ev, err, errlen,
                     "zone validation id %u does not match the open zone's %u (invalid order "
                     "of zone begin and end)",
                     t->next_validation, z->validation);
    t->next_validation = 0;
    if (ev->time < z->start)
        return failf(ev, err, errlen,
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
    see_time(m, ev->time);
    return BTC_OK;
}

/* The decoder's fast path (struct btc_zone_fast): the zone_begin and
 * zone_end above for the common case only, taking nothing it would have to
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
    see_time(m, time);
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
    see_time(m, end);
    return 1;
}

static size_t zone_run(void *ctx, const struct btc_zone_op *ops, size_t n)
{
    struct btc_model *m = ctx;
    if (m->current_thread < 0)
        return 0;
    int64_t ti = acting_thread(m);
    struct btc_thread *t = thread_at(m, ti);
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
    int64_t ti = current_thread(m);
    if (ti < 0)
        return nomem(err, errlen);
    struct btc_thread *t = thread_at(m, ti);
    if (!t->stack.len)
        return failf(ev, err, errlen, "no zone open on thread %" PRIu64, t->tid);
    struct btc_open_zone *z = btc_vec_at(&t->stack, t->stack.len - 1);
    if (z->validation != t->next_validation)
        return failf(ev, err, errlen, "validation id %u does not match the open zone's %u",
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

static int zone_decorate(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
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
        int64_t idx = intern(m, ev->str1, ev->str1_len);
        if (idx < 0)
            return nomem(err, errlen);
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
    return rc < 0 ? nomem(err, errlen) : BTC_OK;
}

static int payload_srcloc(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->data;
    size_t n = ev->data_len;
    if (n < BT_SRCLOC_PAYLOAD_MIN)
        return failf(ev, err, errlen, "source location payload of %zu bytes, expected >= %u", n,
                     BT_SRCLOC_PAYLOAD_MIN);
    const uint8_t *func = p + 8;
    const uint8_t *fend = memchr(func, 0, n - 8);
    if (!fend)
        return failf(ev, err, errlen, "source location payload: function name not terminated");
    const uint8_t *file = fend + 1;
    const uint8_t *flend = file < p + n ? memchr(file, 0, (size_t)(p + n - file)) : NULL;
    if (!flend)
        return failf(ev, err, errlen, "source location payload: file name not terminated");
    const uint8_t *name = flend + 1;
    size_t before = m->payload_bytes.lens.len;
    int64_t pi = btc_strtab_intern(&m->payload_bytes, (const char *)p, n);
    if (pi < 0)
        return nomem(err, errlen);
    if ((size_t)pi == before) {
        if (m->payload_srclocs.len >= MAX_SRCLOCS)
            return failf(ev, err, errlen, "more than %d distinct source location payloads",
                         MAX_SRCLOCS);
        struct btc_srcloc *s = btc_vec_push(&m->payload_srclocs);
        uint64_t *cnt = btc_vec_push(&m->payload_zone_counts);
        if (!s || !cnt)
            return nomem(err, errlen);
        uint32_t c = bt_wire_get_u32(p);
        s->color = ((c & 0xFF) << 16) | (c & 0xFF00) | ((c >> 16) & 0xFF);
        s->line = bt_wire_get_u32(p + 4);
        int64_t fi = intern(m, (const char *)func, (size_t)(fend - func));
        int64_t fl = intern(m, (const char *)file, (size_t)(flend - file));
        int64_t nm = name < p + n ? intern(m, (const char *)name, (size_t)(p + n - name)) : -1;
        if (fi < 0 || fl < 0 || nm < -1)
            return nomem(err, errlen);
        s->function = (uint64_t)fi + 1;
        s->file = (uint64_t)fl + 1;
        if (btc_code_source(m, fl, -1) < 0)
            return nomem(err, errlen);
        s->name = (uint64_t)(nm + 1);
        s->resolved = 1;
    }
    m->pending_payload_srcloc = pi;
    return BTC_OK;
}

/* ---- messages, plots, frames ------------------------------------------ */

static int message(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_msg_rec r;
    memset(&r, 0, sizeof r);
    unsigned t = ev->type;
    int colored = t == BT_EV_MESSAGE_COLOR || t == BT_EV_MESSAGE_COLOR_CALLSTACK ||
                  t == BT_EV_MESSAGE_LITERAL_COLOR || t == BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
    int literal = t >= BT_EV_MESSAGE_LITERAL && t <= BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
    int callstack = t == BT_EV_MESSAGE_CALLSTACK || t == BT_EV_MESSAGE_COLOR_CALLSTACK ||
                    t == BT_EV_MESSAGE_LITERAL_CALLSTACK ||
                    t == BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK;
    int64_t ti = current_thread(m);
    if (ti < 0)
        return nomem(err, errlen);
    r.thread = (uint32_t)ti;
    r.time = ev->time;
    r.color = 0xFFFFFFFFu;
    if (colored)
        r.color = 0xFF000000u | ev->p[11] | ((uint32_t)ev->p[10] << 8) | ((uint32_t)ev->p[9] << 16);
    if (literal) {
        uint64_t v = bt_wire_get_u64(ev->p + (colored ? 12 : 9));
        r.meta = (uint8_t)v;
        uint64_t addr = v >> 8;
        r.text = addr | BTC_MSG_TEXT_IS_KEY;
        if (want_string(m, addr) < 0)
            return nomem(err, errlen);
        if (!addr) {
            int64_t idx = intern(m, "", 0);
            if (idx < 0)
                return nomem(err, errlen);
            r.text = (uint64_t)idx;
        }
    } else {
        r.meta = ev->p[colored ? 12 : 9];
        uint64_t k;
        if (btc_texts_append(&m->texts, ev->str1, (uint32_t)ev->str1_len, &k) < 0) {
            snprintf(err, errlen, "cannot write the text spool");
            return BTC_ERR_IO;
        }
        r.text = k | BTC_MSG_TEXT_IS_SPOOLED;
    }
    if ((r.meta & 0xF) > BT_MSG_SOURCE_TRACY || (r.meta >> 4) > BT_MSG_SEVERITY_FATAL)
        return failf(ev, err, errlen, "message meta byte 0x%02x: source or severity out of range",
                     r.meta);
    if (callstack) {
        struct btc_thread *th = thread_at(m, ti);
        if (!th->pending_callstack)
            return failf(ev, err, errlen, "expected a Callstack event before this message");
        r.callstack = th->pending_callstack;
        th->pending_callstack = 0;
    }
    thread_at(m, ti)->messages++;
    if (m->msgs.count && r.time < m->last_msg_time)
        m->msgs_unsorted = 1;
    m->last_msg_time = r.time;
    see_time(m, ev->time);
    if (btc_spool_append(&m->msgs, &r, NULL) < 0) {
        snprintf(err, errlen, "cannot write the message spool");
        return BTC_ERR_IO;
    }
    return BTC_OK;
}

/* Adds a point to a plot: its running min, max, sum and order, and the
 * point spooled. */
static int add_point(struct btc_model *m, size_t plot, int64_t time, double v)
{
    struct btc_plot *p = btc_vec_at(&m->plots, plot);
    if (v < p->min)
        p->min = v;
    if (v > p->max)
        p->max = v;
    p->sum += v;
    if (p->count && time < p->last_time)
        p->unsorted = 1;
    p->last_time = time;
    p->count++;
    struct btc_plot_rec r = {.plot = (uint32_t)plot, .time = time, .value = v};
    return btc_spool_append(&m->plot_points, &r, NULL) < 0 ? BTC_ERR_IO : BTC_OK;
}

/* SysPowerReport: energy (uJ) used since the last report of that name; the
 * plot shows Watts, from the second report on, as upstream's server does. */
static int sys_power(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint64_t delta = bt_wire_get_u64(ev->p + 9), name = bt_wire_get_u64(ev->p + 17);
    uint64_t *pi = btc_map_get(&m->power_index, name);
    if (!pi) {
        struct btc_plot *p = btc_vec_push(&m->plots);
        if (!p || btc_map_put(&m->power_index, name, m->plots.len - 1) < 0 ||
            want_string(m, name) < 0)
            return nomem(err, errlen);
        p->key = name;
        p->type = BTC_PLOT_TYPE_POWER;
        p->format = BT_PLOT_FORMAT_WATT;
        p->fill = 1;
        p->min = INFINITY;
        p->max = -INFINITY;
        p->last_report = ev->time;
        return BTC_OK;
    }
    size_t plot = (size_t)*pi;
    struct btc_plot *p = btc_vec_at(&m->plots, plot);
    double dt = (double)ev->time - (double)p->last_report;
    p->last_report = ev->time;
    see_time(m, ev->time);
    double v = (double)delta * 1000.0 / dt;
    if (!isfinite(v))
        return BTC_OK;
    return add_point(m, plot, ev->time, v);
}

static int64_t get_plot(struct btc_model *m, uint64_t key)
{
    uint64_t *v = btc_map_get(&m->plot_index, key);
    if (v)
        return (int64_t)*v;
    struct btc_plot *p = btc_vec_push(&m->plots);
    if (!p)
        return BTC_ERR_NOMEM;
    p->key = key;
    p->fill = 1;
    p->min = INFINITY;
    p->max = -INFINITY;
    int64_t i = (int64_t)m->plots.len - 1;
    if (btc_map_put(&m->plot_index, key, (uint64_t)i) < 0)
        return BTC_ERR_NOMEM;
    if (!btc_map_get(&m->key_strings, key) && query(m, BT_QUERY_PLOT_NAME, key) < 0)
        return BTC_ERR_NOMEM;
    return i;
}

static int plot_data(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint64_t key = bt_wire_get_u64(ev->p + 1);
    double v;
    /* The value is 8 bytes wide except for PlotDataFloat (4; 21-byte event). */
    if (ev->type == BT_EV_PLOT_DATA_INT) {
        v = (double)(int64_t)bt_wire_get_u64(ev->p + 17);
    } else if (ev->type == BT_EV_PLOT_DATA_FLOAT) {
        uint32_t b32 = bt_wire_get_u32(ev->p + 17);
        float f;
        memcpy(&f, &b32, sizeof f);
        v = f;
    } else {
        uint64_t bits = bt_wire_get_u64(ev->p + 17);
        memcpy(&v, &bits, sizeof v);
    }
    if (!isfinite(v))
        return BTC_OK; /* upstream drops non-finite points too */
    int64_t pi = get_plot(m, key);
    if (pi < 0)
        return nomem(err, errlen);
    see_time(m, ev->time);
    return add_point(m, (size_t)pi, ev->time, v);
}

/* SysTimeReport: upstream's implicit "CPU usage" plot (percent). */
static int sys_time(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint32_t bits = bt_wire_get_u32(ev->p + 9);
    float f;
    memcpy(&f, &bits, sizeof f);
    double v = f;
    if (!isfinite(v))
        return BTC_OK;
    if (m->systime_plot < 0) {
        struct btc_plot *p = btc_vec_push(&m->plots);
        if (!p)
            return nomem(err, errlen);
        p->type = BTC_PLOT_TYPE_SYSTIME;
        p->format = BT_PLOT_FORMAT_PERCENTAGE;
        p->fill = 1;
        p->min = INFINITY;
        p->max = -INFINITY;
        m->systime_plot = (int64_t)m->plots.len - 1;
    }
    see_time(m, ev->time);
    return add_point(m, (size_t)m->systime_plot, ev->time, v);
}

static int frame_mark(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint64_t key = bt_wire_get_u64(ev->p + 9);
    int discontinuous = ev->type != BT_EV_FRAME_MARK_MSG;
    if (key >> 63)
        return failf(ev, err, errlen, "frame name key 0x%016" PRIx64 " has bit 63 set", key);
    uint64_t *v = btc_map_get(&m->frameset_index, key);
    int64_t si;
    if (key == 0) {
        si = 0;
    } else if (v) {
        si = (int64_t)*v;
    } else {
        if (ev->type == BT_EV_FRAME_MARK_MSG_END) {
            if (m->welcome.flags & BT_WELCOME_FLAG_ON_DEMAND)
                return BTC_OK;
            return failf(ev, err, errlen, "end of a discontinuous frame that never started");
        }
        struct btc_frameset *fs = btc_vec_push(&m->framesets);
        if (!fs)
            return nomem(err, errlen);
        fs->key = key;
        fs->continuous = !discontinuous;
        si = (int64_t)m->framesets.len - 1;
        if (btc_map_put(&m->frameset_index, key, (uint64_t)si) < 0 ||
            (!btc_map_get(&m->key_strings, key) && query(m, BT_QUERY_FRAME_NAME, key) < 0))
            return nomem(err, errlen);
    }
    struct btc_frameset *fs = btc_vec_at(&m->framesets, (size_t)si);
    if (fs->continuous == discontinuous)
        return failf(ev, err, errlen, "frame set used both as continuous and discontinuous");
    struct btc_frame_rec r = {.set = (uint32_t)si, .time = ev->time};
    if (ev->type == BT_EV_FRAME_MARK_MSG_START) {
        if (fs->open)
            return failf(ev, err, errlen, "discontinuous frame started twice without an end");
        fs->open = 1;
        r.kind = BTC_FRAME_START;
    } else if (ev->type == BT_EV_FRAME_MARK_MSG_END) {
        if (!fs->open)
            return failf(ev, err, errlen, "discontinuous frame ended twice");
        fs->open = 0;
        fs->count++;
        r.kind = BTC_FRAME_END;
    } else {
        fs->count++;
    }
    see_time(m, ev->time);
    return btc_spool_append(&m->frames, &r, NULL) < 0 ? BTC_ERR_IO : BTC_OK;
}

/* ---- memory ----------------------------------------------------------- */

static int64_t get_pool(struct btc_model *m, uint64_t name)
{
    if (!name)
        return 0;
    uint64_t *v = btc_map_get(&m->pool_index, name);
    if (v)
        return (int64_t)*v;
    struct btc_pool *p = btc_vec_push(&m->pools);
    if (!p)
        return BTC_ERR_NOMEM;
    p->name = name;
    btc_map_init(&p->live);
    int64_t i = (int64_t)m->pools.len - 1;
    if (btc_map_put(&m->pool_index, name, (uint64_t)i) < 0 || want_string(m, name) < 0)
        return BTC_ERR_NOMEM;
    return i;
}

static int mem_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    unsigned t = ev->type;
    int named = t == BT_EV_MEM_ALLOC_NAMED || t == BT_EV_MEM_FREE_NAMED ||
                t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED || t == BT_EV_MEM_FREE_CALLSTACK_NAMED;
    int callstack = t == BT_EV_MEM_ALLOC_CALLSTACK || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED ||
                    t == BT_EV_MEM_FREE_CALLSTACK || t == BT_EV_MEM_FREE_CALLSTACK_NAMED ||
                    t == BT_EV_MEM_DISCARD_CALLSTACK;
    int alloc = t == BT_EV_MEM_ALLOC || t == BT_EV_MEM_ALLOC_NAMED ||
                t == BT_EV_MEM_ALLOC_CALLSTACK || t == BT_EV_MEM_ALLOC_CALLSTACK_NAMED;
    int discard = t == BT_EV_MEM_DISCARD || t == BT_EV_MEM_DISCARD_CALLSTACK;
    uint32_t tid = bt_wire_get_u32(ev->p + 9);
    uint64_t ptr = bt_wire_get_u64(ev->p + 13);
    uint64_t name = 0;
    if (discard) {
        name = ptr;
    } else if (named) {
        if (!m->pending_pool_name)
            return failf(ev, err, errlen, "expected a MemNamePayload before this event");
        name = m->pending_pool_name;
        m->pending_pool_name = 0;
    }
    uint32_t cs = 0;
    if (callstack) {
        if (!m->pending_serial_callstack)
            return failf(ev, err, errlen, "expected a CallstackSerial event before this event");
        cs = m->pending_serial_callstack;
        m->pending_serial_callstack = 0;
    }
    int64_t ti = get_thread(m, tid);
    int64_t pi = get_pool(m, name);
    if (ti < 0 || pi < 0)
        return ti == BTC_ERR_PROTOCOL ? failf(ev, err, errlen, "too many threads")
                                      : nomem(err, errlen);
    struct btc_pool *pool = btc_vec_at(&m->pools, (size_t)pi);
    uint16_t fthread = (uint16_t)(ti + 1);
    int ignore_faults =
        m->welcome.flags & (BT_WELCOME_FLAG_IGNORE_MEM_FAULTS | BT_WELCOME_FLAG_ON_DEMAND);
    see_time(m, ev->time);
    if (alloc) {
        uint64_t size = bt_wire_get_u32(ev->p + 21) | ((uint64_t)bt_wire_get_u16(ev->p + 25) << 32);
        if (btc_map_get(&pool->live, ptr)) {
            if (!(m->welcome.flags & BT_WELCOME_FLAG_IGNORE_MEM_FAULTS))
                return failf(ev, err, errlen,
                             "allocation of 0x%" PRIx64 ", which is already allocated", ptr);
        }
        struct btc_mem_rec r = {.pool = (uint32_t)pi,
                                .thread_alloc = fthread,
                                .ptr = ptr,
                                .size = size,
                                .cs_alloc = cs,
                                .time_alloc = ev->time,
                                .time_free = -1};
        uint64_t idx;
        if (btc_spool_append(&m->mem, &r, &idx) < 0 || btc_map_put(&pool->live, ptr, idx) < 0)
            return nomem(err, errlen);
        pool->count++;
        return BTC_OK;
    }
    struct btc_mem_rec r = {.thread_free = fthread, .cs_free = cs, .time_free = ev->time};
    size_t off = offsetof(struct btc_mem_rec, thread_free);
    size_t off_cs = offsetof(struct btc_mem_rec, cs_free);
    size_t off_t = offsetof(struct btc_mem_rec, time_free);
    if (discard) {
        for (size_t i = 0; i < pool->live.cap; i++) {
            if (!pool->live.used[i])
                continue;
            uint64_t idx = pool->live.vals[i];
            if (btc_spool_patch(&m->mem, idx, off, &r.thread_free, 2) < 0 ||
                btc_spool_patch(&m->mem, idx, off_cs, &r.cs_free, 4) < 0 ||
                btc_spool_patch(&m->mem, idx, off_t, &r.time_free, 8) < 0)
                return BTC_ERR_IO;
            pool->freed++;
        }
        btc_map_clear(&pool->live);
        return BTC_OK;
    }
    if (ptr == 0)
        return BTC_OK;
    uint64_t *idxp = btc_map_get(&pool->live, ptr);
    if (!idxp) {
        if (ignore_faults)
            return BTC_OK;
        return failf(ev, err, errlen, "free of 0x%" PRIx64 ", which is not allocated", ptr);
    }
    uint64_t idx = *idxp;
    btc_map_remove(&pool->live, ptr);
    if (btc_spool_patch(&m->mem, idx, off, &r.thread_free, 2) < 0 ||
        btc_spool_patch(&m->mem, idx, off_cs, &r.cs_free, 4) < 0 ||
        btc_spool_patch(&m->mem, idx, off_t, &r.time_free, 8) < 0)
        return BTC_ERR_IO;
    pool->freed++;
    return BTC_OK;
}

/* ---- locks ------------------------------------------------------------ */

static struct btc_lock *find_lock(struct btc_model *m, uint32_t id, uint32_t *index)
{
    uint64_t *v = btc_map_get(&m->lock_index, id);
    if (!v)
        return NULL;
    *index = (uint32_t)*v;
    return btc_vec_at(&m->locks, (size_t)*v);
}

static int lock_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    unsigned t = ev->type;
    if (t == BT_EV_LOCK_ANNOUNCE) {
        uint32_t id = bt_wire_get_u32(p + 1);
        uint32_t li;
        if (find_lock(m, id, &li))
            return failf(ev, err, errlen, "lock %u announced twice", id);
        struct btc_lock *l = btc_vec_push(&m->locks);
        if (!l)
            return nomem(err, errlen);
        l->id = id;
        l->type = p[21];
        l->name = -1;
        l->announce = ev->time;
        if (btc_map_put(&m->lock_index, id, m->locks.len - 1) < 0)
            return nomem(err, errlen);
        int rc = static_srcloc(m, bt_wire_get_u64(p + 13), &l->srcloc);
        if (rc < 0)
            return rc == BTC_ERR_NOMEM ? nomem(err, errlen)
                                       : failf(ev, err, errlen, "too many source locations");
        see_time(m, ev->time);
        return BTC_OK;
    }
    if (t == BT_EV_LOCK_MARK) {
        /* As upstream: the mark names where the thread's last wait or
         * obtain of this lock happened. */
        int16_t sl;
        int rc = static_srcloc(m, bt_wire_get_u64(p + 9), &sl);
        if (rc >= 0 && get_thread(m, bt_wire_get_u32(p + 1)) < 0)
            rc = BTC_ERR_NOMEM;
        if (rc < 0)
            return failf(ev, err, errlen, "cannot record the lock mark");
        uint32_t li;
        struct btc_lock *l = find_lock(m, bt_wire_get_u32(p + 5), &li);
        if (!l)
            return failf(ev, err, errlen, "lock %u marked before its LockAnnounce",
                         bt_wire_get_u32(p + 5));
        uint64_t tid = bt_wire_get_u32(p + 1);
        for (unsigned k = 0; k < l->nthreads; k++) {
            if (l->tids[k] != tid || !l->markable[k])
                continue;
            if (btc_spool_patch(&m->lock_events, l->markable[k] - 1,
                                offsetof(struct btc_lock_rec, srcloc), &sl, sizeof sl) < 0) {
                snprintf(err, errlen, "cannot write the lock spool");
                return BTC_ERR_IO;
            }
            break;
        }
        return BTC_OK;
    }
    uint32_t id = bt_wire_get_u32(p + ((t == BT_EV_LOCK_RELEASE || t == BT_EV_LOCK_SHARED_RELEASE ||
                                        t == BT_EV_LOCK_NAME || t == BT_EV_LOCK_TERMINATE)
                                           ? 1
                                           : 5));
    uint32_t li;
    struct btc_lock *l = find_lock(m, id, &li);
    if (!l)
        return failf(ev, err, errlen, "lock %u used before its LockAnnounce", id);
    if (t == BT_EV_LOCK_TERMINATE) {
        l->terminate = ev->time;
        see_time(m, ev->time);
        return BTC_OK;
    }
    if (t == BT_EV_LOCK_NAME) {
        int64_t idx = intern(m, ev->str1, ev->str1_len);
        if (idx < 0)
            return nomem(err, errlen);
        l->name = idx;
        return BTC_OK;
    }
    struct btc_lock_rec r = {.lock = li, .time = ev->time};
    uint64_t tid;
    switch (t) {
    case BT_EV_LOCK_WAIT:
        r.type = 0;
        break;
    case BT_EV_LOCK_OBTAIN:
        r.type = 1;
        break;
    case BT_EV_LOCK_RELEASE:
        r.type = 2;
        break;
    case BT_EV_LOCK_SHARED_WAIT:
        r.type = 3;
        break;
    case BT_EV_LOCK_SHARED_OBTAIN:
        r.type = 4;
        break;
    default:
        r.type = 5;
        break;
    }
    if (t == BT_EV_LOCK_RELEASE) {
        if (!l->nthreads)
            return failf(ev, err, errlen, "release of lock %u that nobody obtained", id);
        r.thread = l->holder;
    } else {
        tid = bt_wire_get_u32(p + (t == BT_EV_LOCK_SHARED_RELEASE ? 13 : 1));
        unsigned k = 0;
        while (k < l->nthreads && l->tids[k] != tid)
            k++;
        if (k == l->nthreads) {
            if (k == BTC_LOCK_MAX_THREADS)
                return failf(ev, err, errlen, "lock %u used by more than %d threads", id,
                             BTC_LOCK_MAX_THREADS);
            l->tids[l->nthreads++] = tid;
            if (get_thread(m, tid) < 0)
                return nomem(err, errlen);
        }
        r.thread = (uint8_t)k;
        if (t == BT_EV_LOCK_OBTAIN)
            l->holder = (uint8_t)k;
    }
    uint64_t idx;
    if (btc_spool_append(&m->lock_events, &r, &idx) < 0)
        return BTC_ERR_IO;
    if (r.type != 2 && r.type != 5) /* waits and obtains can be marked */
        l->markable[r.thread] = idx + 1;
    l->events++;
    see_time(m, ev->time);
    return BTC_OK;
}

/* ---- answers ---------------------------------------------------------- */

static int source_location(struct btc_model *m, const struct btc_event *ev, char *err,
                           size_t errlen)
{
    if (m->srcloc_fifo_head >= m->srcloc_fifo.len)
        return failf(ev, err, errlen, "source location answer with no query outstanding");
    uint64_t key = ((uint64_t *)m->srcloc_fifo.data)[m->srcloc_fifo_head++];
    if (m->srcloc_fifo_head == m->srcloc_fifo.len)
        m->srcloc_fifo_head = m->srcloc_fifo.len = 0;
    answered(m, BT_QUERY_SOURCE_LOCATION, key);
    uint64_t *id = btc_map_get(&m->srcloc_index, key);
    struct btc_srcloc *s = btc_vec_at(&m->srclocs, (size_t)*id - 1);
    const uint8_t *p = ev->p;
    s->name = bt_wire_get_u64(p + 1);
    s->function = bt_wire_get_u64(p + 9);
    s->file = bt_wire_get_u64(p + 17);
    s->line = bt_wire_get_u32(p + 25);
    s->color = p[31] | ((uint32_t)p[30] << 8) | ((uint32_t)p[29] << 16);
    s->resolved = 1;
    if (want_string(m, s->name) < 0 || want_string(m, s->function) < 0 ||
        want_string(m, s->file) < 0 || btc_code_source_key(m, s->file) < 0)
        return nomem(err, errlen);
    return BTC_OK;
}

static int keyed_string(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint8_t q;
    switch (ev->type) {
    case BT_EV_STRING_DATA:
        q = BT_QUERY_STRING;
        break;
    case BT_EV_THREAD_NAME:
        q = BT_QUERY_THREAD_STRING;
        break;
    case BT_EV_PLOT_NAME:
        q = BT_QUERY_PLOT_NAME;
        break;
    case BT_EV_FRAME_NAME:
        q = BT_QUERY_FRAME_NAME;
        break;
    case BT_EV_FIBER_NAME:
        q = BT_QUERY_FIBER_NAME;
        break;
    default:
        return BTC_OK;
    }
    if (!answered(m, q, ev->key)) {
        m->unsolicited_strings++;
        m->unsolicited_bytes += ev->data_len;
        return BTC_OK;
    }
    int64_t idx = intern(m, (const char *)ev->data, ev->data_len);
    if (idx < 0)
        return nomem(err, errlen);
    if (q == BT_QUERY_THREAD_STRING || q == BT_QUERY_FIBER_NAME) {
        uint64_t *ti =
            btc_map_get(q == BT_QUERY_FIBER_NAME ? &m->fiber_index : &m->thread_index, ev->key);
        if (ti)
            thread_at(m, (int64_t)*ti)->name = idx;
        return BTC_OK;
    }
    if (btc_map_put(&m->key_strings, ev->key, (uint64_t)idx) < 0 ||
        btc_code_key_string(m, ev->key, idx) < 0)
        return nomem(err, errlen);
    return BTC_OK;
}

int btc_model_event(void *ctx, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_model *m = ctx;
    const uint8_t *p = ev->p;
    int16_t sl;
    int rc;
    m->event_count++;
    switch (ev->type) {
    case BT_EV_ZONE_BEGIN:
    case BT_EV_ZONE_BEGIN32:
    case BT_EV_ZONE_BEGIN16:
    case BT_EV_ZONE_BEGIN_CALLSTACK:
    case BT_EV_ZONE_BEGIN_CALLSTACK32:
    case BT_EV_ZONE_BEGIN_CALLSTACK16: {
        size_t koff = ev->size - 8;
        rc = static_srcloc(m, bt_wire_get_u64(p + koff), &sl);
        if (rc < 0)
            return rc == BTC_ERR_NOMEM
                       ? nomem(err, errlen)
                       : failf(ev, err, errlen, "more than %d source locations", MAX_SRCLOCS);
        return zone_begin(m, ev, sl, ev->type >= BT_EV_ZONE_BEGIN_CALLSTACK, err, errlen);
    }
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
        if (m->pending_payload_srcloc < 0)
            return failf(ev, err, errlen, "expected a SourceLocationPayload before this zone");
        sl = (int16_t)(-m->pending_payload_srcloc - 1);
        m->pending_payload_srcloc = -1;
        return zone_begin(m, ev, sl, ev->type == BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK, err,
                          errlen);
    case BT_EV_ZONE_END:
    case BT_EV_ZONE_END32:
    case BT_EV_ZONE_END16:
        return zone_end(m, ev, err, errlen);
    case BT_EV_ZONE_TEXT:
    case BT_EV_ZONE_NAME:
    case BT_EV_ZONE_COLOR:
    case BT_EV_ZONE_VALUE:
        return zone_decorate(m, ev, err, errlen);
    case BT_EV_ZONE_VALIDATION: {
        int64_t ti = current_thread(m);
        if (ti < 0)
            return nomem(err, errlen);
        thread_at(m, ti)->next_validation = bt_wire_get_u32(p + 1);
        return BTC_OK;
    }
    case BT_EV_SOURCE_LOCATION_PAYLOAD:
        return payload_srcloc(m, ev, err, errlen);
    case BT_EV_THREAD_CONTEXT:
        /* The thread record (and its name query) waits for an event that
         * needs it, as upstream: a thread that only plots gets none. */
        m->current_tid = bt_wire_get_u32(p + 1);
        m->current_thread = -1;
        return BTC_OK;
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_CALLSTACK:
    case BT_EV_MESSAGE_COLOR_CALLSTACK:
    case BT_EV_MESSAGE_LITERAL:
    case BT_EV_MESSAGE_LITERAL_COLOR:
    case BT_EV_MESSAGE_LITERAL_CALLSTACK:
    case BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK:
        return message(m, ev, err, errlen);
    case BT_EV_MESSAGE_APP_INFO: {
        int64_t idx = intern(m, ev->str1, ev->str1_len);
        uint32_t *slot = btc_vec_push(&m->app_info);
        if (idx < 0 || !slot)
            return nomem(err, errlen);
        *slot = (uint32_t)idx;
        return BTC_OK;
    }
    case BT_EV_PLOT_DATA_INT:
    case BT_EV_PLOT_DATA_FLOAT:
    case BT_EV_PLOT_DATA_DOUBLE:
        return plot_data(m, ev, err, errlen);
    case BT_EV_PLOT_CONFIG: {
        int64_t pi = get_plot(m, bt_wire_get_u64(p + 1));
        if (pi < 0)
            return nomem(err, errlen);
        struct btc_plot *pl = btc_vec_at(&m->plots, (size_t)pi);
        pl->format = p[9];
        pl->step = p[10];
        pl->fill = p[11];
        pl->color = bt_wire_get_u32(p + 12) & 0xFFFFFF;
        return BTC_OK;
    }
    case BT_EV_FRAME_MARK_MSG:
    case BT_EV_FRAME_MARK_MSG_START:
    case BT_EV_FRAME_MARK_MSG_END:
        return frame_mark(m, ev, err, errlen);
    case BT_EV_MEM_NAME_PAYLOAD:
        m->pending_pool_name = bt_wire_get_u64(p + 1);
        if (!m->pending_pool_name)
            return failf(ev, err, errlen, "memory pool name 0 (names must be non-zero)");
        return BTC_OK;
    case BT_EV_MEM_ALLOC:
    case BT_EV_MEM_ALLOC_NAMED:
    case BT_EV_MEM_FREE:
    case BT_EV_MEM_FREE_NAMED:
    case BT_EV_MEM_ALLOC_CALLSTACK:
    case BT_EV_MEM_ALLOC_CALLSTACK_NAMED:
    case BT_EV_MEM_FREE_CALLSTACK:
    case BT_EV_MEM_FREE_CALLSTACK_NAMED:
    case BT_EV_MEM_DISCARD:
    case BT_EV_MEM_DISCARD_CALLSTACK:
        return mem_event(m, ev, err, errlen);
    case BT_EV_LOCK_WAIT:
    case BT_EV_LOCK_OBTAIN:
    case BT_EV_LOCK_RELEASE:
    case BT_EV_LOCK_SHARED_WAIT:
    case BT_EV_LOCK_SHARED_OBTAIN:
    case BT_EV_LOCK_SHARED_RELEASE:
    case BT_EV_LOCK_NAME:
    case BT_EV_LOCK_ANNOUNCE:
    case BT_EV_LOCK_TERMINATE:
    case BT_EV_LOCK_MARK:
        return lock_event(m, ev, err, errlen);
    case BT_EV_CALLSTACK_PAYLOAD:
    case BT_EV_CALLSTACK_FRAME_SIZE:
    case BT_EV_CALLSTACK_FRAME:
    case BT_EV_SYMBOL_INFORMATION:
        return btc_callstacks_event(m, ev, err, errlen);
    case BT_EV_CALLSTACK:
    case BT_EV_CALLSTACK_SERIAL: {
        if (!m->callstacks.last)
            return failf(ev, err, errlen, "expected a CallstackPayload before this event");
        if (ev->type == BT_EV_CALLSTACK_SERIAL) {
            m->pending_serial_callstack = m->callstacks.last;
        } else {
            int64_t ti = current_thread(m);
            if (ti < 0)
                return nomem(err, errlen);
            thread_at(m, ti)->pending_callstack = m->callstacks.last;
        }
        m->callstacks.last = 0;
        return BTC_OK;
    }
    case BT_EV_SOURCE_LOCATION:
        return source_location(m, ev, err, errlen);
    case BT_EV_STRING_DATA:
    case BT_EV_THREAD_NAME:
    case BT_EV_PLOT_NAME:
    case BT_EV_FRAME_NAME:
    case BT_EV_FIBER_NAME:
        return keyed_string(m, ev, err, errlen);
    case BT_EV_FIBER_ENTER:
    case BT_EV_FIBER_LEAVE: {
        /* FiberEnter: time, fiber u64 @9, thread u32 @17, group hint @21;
         * FiberLeave: time, thread u32 @9. */
        int enter = ev->type == BT_EV_FIBER_ENTER;
        int64_t ti = get_thread(m, bt_wire_get_u32(p + (enter ? 17 : 9)));
        int64_t fi = enter ? get_fiber(m, bt_wire_get_u64(p + 9)) : -1;
        if (ti < 0 || (enter && fi < 0))
            return (ti == BTC_ERR_PROTOCOL || fi == BTC_ERR_PROTOCOL)
                       ? failf(ev, err, errlen, "too many threads")
                       : nomem(err, errlen);
        /* The fiber's run is a region of its own (upstream's fiber
         * context switches). */
        int64_t was = thread_at(m, ti)->fiber;
        if (btc_ctxswitch_fiber(m, thread_at(m, ti)->tid, was >= 0 ? thread_at(m, was)->tid : 0,
                                enter ? thread_at(m, fi)->tid : 0, ev->time) < 0) {
            snprintf(err, errlen, "cannot write the context switch spool");
            return BTC_ERR_IO;
        }
        thread_at(m, ti)->fiber = fi;
        if (enter)
            thread_at(m, fi)->group_hint = (int32_t)bt_wire_get_u32(p + 21);
        see_time(m, ev->time);
        return BTC_OK;
    }
    case BT_EV_SYS_POWER_REPORT:
        return sys_power(m, ev, err, errlen);
    case BT_EV_SYS_TIME_REPORT:
        return sys_time(m, ev, err, errlen);
    case BT_EV_CPU_TOPOLOGY: {
        struct btc_cpu c = {bt_wire_get_u32(p + 1), bt_wire_get_u32(p + 5), bt_wire_get_u32(p + 9),
                            bt_wire_get_u32(p + 13)};
        for (size_t i = 0; i < m->cpus.len; i++)
            if (((struct btc_cpu *)btc_vec_at(&m->cpus, i))->thread == c.thread)
                return BTC_OK; /* the loader needs unique CPU threads; first one wins */
        struct btc_cpu *slot = btc_vec_push(&m->cpus);
        if (!slot)
            return nomem(err, errlen);
        *slot = c;
        return BTC_OK;
    }
    case BT_EV_TID_TO_PID:
        return btc_map_put(&m->tid_pid, bt_wire_get_u64(p + 1), bt_wire_get_u64(p + 9)) < 0
                   ? nomem(err, errlen)
                   : BTC_OK;
    case BT_EV_THREAD_GROUP_HINT: {
        uint64_t *ti = btc_map_get(&m->thread_index, bt_wire_get_u32(p + 1));
        if (ti)
            thread_at(m, (int64_t)*ti)->group_hint = (int32_t)bt_wire_get_u32(p + 5);
        return BTC_OK;
    }
    case BT_EV_TERMINATE:
        m->terminated = 1;
        return BTC_OK;
    case BT_EV_CRASH:
        m->crashed = 1;
        return BTC_OK;
    case BT_EV_CRASH_REPORT: {
        m->crashed = 1;
        see_time(m, ev->time);
        int64_t ti = current_thread(m);
        if (ti < 0)
            return nomem(err, errlen);
        /* the callstack comes before the report (boardtrace's order) or
         * after it (upstream's): btc_model_finish takes the late one */
        struct btc_thread *th = thread_at(m, ti);
        m->crash.tid = th->tid;
        m->crash.time = ev->time;
        m->crash.text = bt_wire_get_u64(p + 9);
        m->crash.callstack = th->pending_callstack;
        th->pending_callstack = 0;
        m->crash.thread = ti;
        m->crash.reported = 1;
        return want_string(m, m->crash.text) < 0 ? nomem(err, errlen) : BTC_OK;
    }
    case BT_EV_GPU_NEW_CONTEXT:
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_END:
    case BT_EV_GPU_ZONE_END_SERIAL:
    case BT_EV_GPU_TIME:
    case BT_EV_GPU_CALIBRATION:
    case BT_EV_GPU_TIME_SYNC:
    case BT_EV_GPU_CONTEXT_NAME:
    case BT_EV_GPU_ANNOTATION_NAME:
    case BT_EV_GPU_ZONE_ANNOTATION:
        return btc_gpu_event(m, ev, err, errlen);
    case BT_EV_CALLSTACK_SAMPLE:
    case BT_EV_CALLSTACK_SAMPLE32:
    case BT_EV_CALLSTACK_SAMPLE16:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH32:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16:
        return btc_samples_event(m, ev, err, errlen);
    case BT_EV_CONTEXT_SWITCH:
    case BT_EV_THREAD_WAKEUP:
        return btc_ctxswitch_event(m, ev, err, errlen);
    case BT_EV_EXTERNAL_NAME:
    case BT_EV_EXTERNAL_THREAD_NAME:
        return btc_ctxswitch_name(m, ev, err, errlen);
    case BT_EV_FRAME_IMAGE:
    case BT_EV_FRAME_IMAGE_DATA:
        return btc_frame_images_event(m, ev, err, errlen);
    case BT_EV_SYMBOL_CODE:
    case BT_EV_SOURCE_CODE:
    case BT_EV_ACK_SERVER_QUERY_NOOP:
    case BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE:
    case BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE:
        return btc_code_event(m, ev, err, errlen);
    case BT_EV_HW_SAMPLE_CPU_CYCLE:
    case BT_EV_HW_SAMPLE_INSTRUCTION_RETIRED:
    case BT_EV_HW_SAMPLE_CACHE_REFERENCE:
    case BT_EV_HW_SAMPLE_CACHE_MISS:
    case BT_EV_HW_SAMPLE_BRANCH_RETIRED:
    case BT_EV_HW_SAMPLE_BRANCH_MISS:
        return btc_hw_samples_event(m, ev, err, errlen);
    case BT_EV_SECTION_ENTER:
    case BT_EV_SECTION_LEAVE:
    case BT_EV_SECTION_SETUP:
        return btc_sections_event(m, ev, err, errlen);
    default:
        /* Parsed and skipped: parameters, keep-alives, and
         * answers to queries this capture never sends. Their times still
         * moved the references. */
        if (ev->has_time && ev->type != BT_EV_GPU_TIME)
            see_time(m, ev->time);
        return BTC_OK;
    }
}

int btc_model_finish(struct btc_model *m)
{
    if (m->crash.reported && !m->crash.callstack) {
        struct btc_thread *t = thread_at(m, m->crash.thread);
        m->crash.callstack = t->pending_callstack;
        t->pending_callstack = 0;
    }
    for (size_t i = 0; i < m->threads.len; i++) {
        struct btc_thread *t = thread_at(m, (int64_t)i);
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
    return btc_gpu_finish(&m->gpu);
}

/* ---- shared with the units of the model (btc_model_parts.h) ----------- */

int btcm_fail(const struct btc_event *ev, char *err, size_t errlen, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return failf(ev, err, errlen, "%s", what);
}

int btcm_nomem(char *err, size_t errlen)
{
    return nomem(err, errlen);
}

int btcm_static_srcloc(struct btc_model *m, uint64_t key, int16_t *id)
{
    return static_srcloc(m, key, id);
}

int64_t btcm_get_thread(struct btc_model *m, uint64_t tid)
{
    return get_thread(m, tid);
}

int64_t btcm_current_thread(struct btc_model *m)
{
    return current_thread(m);
}

struct btc_thread *btcm_thread_at(struct btc_model *m, int64_t index)
{
    return thread_at(m, index);
}

int64_t btcm_intern(struct btc_model *m, const char *s, size_t len)
{
    return intern(m, s, len);
}

int btcm_query(struct btc_model *m, uint8_t type, uint64_t key)
{
    return query(m, type, key);
}

int btcm_query_extra(struct btc_model *m, uint8_t type, uint64_t key, uint32_t extra)
{
    return query_extra(m, type, key, extra);
}

int btcm_query_raw(struct btc_model *m, uint8_t type, uint64_t key, uint32_t extra)
{
    return enqueue(m, type, key, extra);
}

int btcm_answered(struct btc_model *m, uint8_t type, uint64_t key)
{
    return answered(m, type, key);
}

int btcm_pending(const struct btc_model *m, uint8_t type, uint64_t key)
{
    return btc_map_get(&m->pending[type], key) != NULL;
}

void btcm_budget(struct btc_model *m, int64_t n)
{
    m->budget += n;
}

void btcm_see_time(struct btc_model *m, int64_t t)
{
    see_time(m, t);
}
