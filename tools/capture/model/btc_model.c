/* The capture's event model: sets up and frees the model, and applies
 * each decoded event by handing it to the unit for its kind (btc_zones.c,
 * btc_messages.c, btc_plots.c, btc_frames.c, btc_memory.c, btc_locks.c,
 * btc_threads.c, btc_names.c, btc_callstacks.c, btc_gpu.c, ...). The hub
 * and those units share the helpers below them (btc_model_base.c and the
 * queries of btc_queries.c), which call back into neither. */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        return btcm_nomem(err, errlen);
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
        rc = btcm_static_srcloc(m, bt_wire_get_u64(p + koff), &sl);
        if (rc < 0)
            return rc == BTC_ERR_NOMEM ? btcm_nomem(err, errlen)
                                       : btcm_fail(ev, err, errlen, "more than %d source locations",
                                                   BTCM_MAX_SRCLOCS);
        return btc_zone_begin(m, ev, sl, ev->type >= BT_EV_ZONE_BEGIN_CALLSTACK, err, errlen);
    }
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
        if (m->pending_payload_srcloc < 0)
            return btcm_fail(ev, err, errlen, "expected a SourceLocationPayload before this zone");
        sl = (int16_t)(-m->pending_payload_srcloc - 1);
        m->pending_payload_srcloc = -1;
        return btc_zone_begin(m, ev, sl, ev->type == BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK, err,
                              errlen);
    case BT_EV_ZONE_END:
    case BT_EV_ZONE_END32:
    case BT_EV_ZONE_END16:
        return btc_zone_end(m, ev, err, errlen);
    case BT_EV_ZONE_TEXT:
    case BT_EV_ZONE_NAME:
    case BT_EV_ZONE_COLOR:
    case BT_EV_ZONE_VALUE:
        return btc_zone_decorate(m, ev, err, errlen);
    case BT_EV_ZONE_VALIDATION: {
        int64_t ti = btcm_current_thread(m);
        if (ti < 0)
            return btcm_nomem(err, errlen);
        btcm_thread_at(m, ti)->next_validation = bt_wire_get_u32(p + 1);
        return BTC_OK;
    }
    case BT_EV_SOURCE_LOCATION_PAYLOAD:
        return btc_zone_payload_srcloc(m, ev, err, errlen);
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
        return btc_message_event(m, ev, err, errlen);
    case BT_EV_MESSAGE_APP_INFO: {
        int64_t idx = btcm_intern(m, ev->str1, ev->str1_len);
        uint32_t *slot = btc_vec_push(&m->app_info);
        if (idx < 0 || !slot)
            return btcm_nomem(err, errlen);
        *slot = (uint32_t)idx;
        return BTC_OK;
    }
    case BT_EV_PLOT_DATA_INT:
    case BT_EV_PLOT_DATA_FLOAT:
    case BT_EV_PLOT_DATA_DOUBLE:
        return btc_plot_data(m, ev, err, errlen);
    case BT_EV_PLOT_CONFIG:
        return btc_plot_config(m, ev, err, errlen);
    case BT_EV_FRAME_MARK_MSG:
    case BT_EV_FRAME_MARK_MSG_START:
    case BT_EV_FRAME_MARK_MSG_END:
        return btc_frame_mark(m, ev, err, errlen);
    case BT_EV_MEM_NAME_PAYLOAD:
        m->pending_pool_name = bt_wire_get_u64(p + 1);
        if (!m->pending_pool_name)
            return btcm_fail(ev, err, errlen, "memory pool name 0 (names must be non-zero)");
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
        return btc_memory_event(m, ev, err, errlen);
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
        return btc_lock_event(m, ev, err, errlen);
    case BT_EV_CALLSTACK_PAYLOAD:
    case BT_EV_CALLSTACK_FRAME_SIZE:
    case BT_EV_CALLSTACK_FRAME:
    case BT_EV_SYMBOL_INFORMATION:
        return btc_callstacks_event(m, ev, err, errlen);
    case BT_EV_CALLSTACK:
    case BT_EV_CALLSTACK_SERIAL: {
        if (!m->callstacks.last)
            return btcm_fail(ev, err, errlen, "expected a CallstackPayload before this event");
        if (ev->type == BT_EV_CALLSTACK_SERIAL) {
            m->pending_serial_callstack = m->callstacks.last;
        } else {
            int64_t ti = btcm_current_thread(m);
            if (ti < 0)
                return btcm_nomem(err, errlen);
            btcm_thread_at(m, ti)->pending_callstack = m->callstacks.last;
        }
        m->callstacks.last = 0;
        return BTC_OK;
    }
    case BT_EV_SOURCE_LOCATION:
        return btc_names_source_location(m, ev, err, errlen);
    case BT_EV_STRING_DATA:
    case BT_EV_THREAD_NAME:
    case BT_EV_PLOT_NAME:
    case BT_EV_FRAME_NAME:
    case BT_EV_FIBER_NAME:
        return btc_names_keyed_string(m, ev, err, errlen);
    case BT_EV_FIBER_ENTER:
    case BT_EV_FIBER_LEAVE:
        return btc_threads_fiber(m, ev, err, errlen);
    case BT_EV_SYS_POWER_REPORT:
        return btc_plot_sys_power(m, ev, err, errlen);
    case BT_EV_SYS_TIME_REPORT:
        return btc_plot_sys_time(m, ev, err, errlen);
    case BT_EV_CPU_TOPOLOGY: {
        struct btc_cpu c = {bt_wire_get_u32(p + 1), bt_wire_get_u32(p + 5), bt_wire_get_u32(p + 9),
                            bt_wire_get_u32(p + 13)};
        for (size_t i = 0; i < m->cpus.len; i++)
            if (((struct btc_cpu *)btc_vec_at(&m->cpus, i))->thread == c.thread)
                return BTC_OK; /* the loader needs unique CPU threads; first one wins */
        struct btc_cpu *slot = btc_vec_push(&m->cpus);
        if (!slot)
            return btcm_nomem(err, errlen);
        *slot = c;
        return BTC_OK;
    }
    case BT_EV_TID_TO_PID:
        return btc_map_put(&m->tid_pid, bt_wire_get_u64(p + 1), bt_wire_get_u64(p + 9)) < 0
                   ? btcm_nomem(err, errlen)
                   : BTC_OK;
    case BT_EV_THREAD_GROUP_HINT: {
        uint64_t *ti = btc_map_get(&m->thread_index, bt_wire_get_u32(p + 1));
        if (ti)
            btcm_thread_at(m, (int64_t)*ti)->group_hint = (int32_t)bt_wire_get_u32(p + 5);
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
        btcm_see_time(m, ev->time);
        int64_t ti = btcm_current_thread(m);
        if (ti < 0)
            return btcm_nomem(err, errlen);
        /* the callstack comes before the report (boardtrace's order) or
         * after it (upstream's): btc_model_finish takes the late one */
        struct btc_thread *th = btcm_thread_at(m, ti);
        m->crash.tid = th->tid;
        m->crash.time = ev->time;
        m->crash.text = bt_wire_get_u64(p + 9);
        m->crash.callstack = th->pending_callstack;
        th->pending_callstack = 0;
        m->crash.thread = ti;
        m->crash.reported = 1;
        return btcm_want_string(m, m->crash.text) < 0 ? btcm_nomem(err, errlen) : BTC_OK;
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
            btcm_see_time(m, ev->time);
        return BTC_OK;
    }
}

int btc_model_finish(struct btc_model *m)
{
    if (m->crash.reported && !m->crash.callstack) {
        struct btc_thread *t = btcm_thread_at(m, m->crash.thread);
        m->crash.callstack = t->pending_callstack;
        t->pending_callstack = 0;
    }
    int rc = btc_zones_close_open(m);
    if (rc < 0)
        return rc;
    return btc_gpu_finish(&m->gpu);
}
