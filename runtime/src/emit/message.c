/* The calling thread's other ring events: messages, app info, plots and
 * their settings, sections, parameters; and the thread's name. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "emit.h"

static uint32_t message_meta(enum bt_severity severity)
{
    unsigned s = (unsigned)severity;
    if (s > BT_SEVERITY_FATAL)
        s = BT_SEVERITY_FATAL;
    return (uint32_t)(BT_MSG_SOURCE_USER | (s << 4)) << 24;
}

/* A record of the calling thread outside any zone's state (messages, app
 * info, plot settings). */
static void emit_current(uint8_t kind, int depth, uint32_t b, const void *payload, size_t len,
                         uintptr_t caller)
{
    if (!bt_emit_enter())
        return;
    struct bt_thread *t = bt_emit_thread();
    if (t)
        bt_emit_record(t, kind, depth, b, payload, len, NULL, 0, bt_zone_keep(t), caller);
    bt_emit_leave();
}

void bt_message_at(const char *text, size_t len, uint32_t color, int colored,
                   enum bt_severity severity, int depth, uintptr_t caller)
{
    if (len > bt_payload_max())
        len = bt_payload_max();
    uint8_t kind = colored ? BT_REC_MESSAGE_COLOR : BT_REC_MESSAGE;
    uint32_t b = message_meta(severity) | (colored ? color & 0xFFFFFFu : 0);
    emit_current(kind, depth, b, text, len, caller);
}

void bt_message_literal_at(const char *text, uint32_t color, int colored, enum bt_severity severity,
                           int depth, uintptr_t caller)
{
    uint64_t address = (uint64_t)(uintptr_t)text;
    uint8_t kind = colored ? BT_REC_LITERAL_COLOR : BT_REC_LITERAL;
    uint32_t b = message_meta(severity) | (colored ? color & 0xFFFFFFu : 0);
    emit_current(kind, depth, b, &address, 8, caller);
}

void bt_message(const char *text, size_t len, enum bt_severity severity, int depth)
{
    bt_message_at(text, len, 0, 0, severity, depth, CALLER);
}

void bt_message_color(const char *text, size_t len, uint32_t color, enum bt_severity severity,
                      int depth)
{
    bt_message_at(text, len, color, 1, severity, depth, CALLER);
}

void bt_message_literal(const char *text, enum bt_severity severity, int depth)
{
    bt_message_literal_at(text, 0, 0, severity, depth, CALLER);
}

void bt_message_literal_color(const char *text, uint32_t color, enum bt_severity severity,
                              int depth)
{
    bt_message_literal_at(text, color, 1, severity, depth, CALLER);
}

void bt_app_info(const char *text, size_t len)
{
    if (len > bt_payload_max())
        len = bt_payload_max();
    emit_current(BT_REC_APP_INFO, 0, 0, text, len, CALLER);
}

static void plot(const char *name, uint8_t type, uint64_t bits)
{
    if (!bt_emit_enter())
        return;
    struct bt_thread *t = bt_emit_thread();
    uint8_t *p = t ? bt_ring_reserve(t, BT_REC_HEADER + 16, bt_zone_keep(t)) : NULL;
    if (p) {
        uint64_t key = (uint64_t)(uintptr_t)name;
        bt_rec_header(p, BT_REC_PLOT, 0, 16, type, bt_timer_now());
        memcpy(p + BT_REC_HEADER, &key, 8);
        memcpy(p + BT_REC_HEADER + 8, &bits, 8);
        bt_ring_commit(t, BT_REC_HEADER + 16);
    }
    bt_emit_leave();
}

void bt_plot_int(const char *name, int64_t value)
{
    plot(name, BT_EV_PLOT_DATA_INT, (uint64_t)value);
}

void bt_plot_float(const char *name, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, 4);
    plot(name, BT_EV_PLOT_DATA_FLOAT, bits);
}

void bt_plot_double(const char *name, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, 8);
    plot(name, BT_EV_PLOT_DATA_DOUBLE, bits);
}

void bt_plot_config(const char *name, enum bt_plot_format format, int step, int fill,
                    uint32_t color)
{
    uint64_t payload[2] = {(uint64_t)(uintptr_t)name, color};
    uint32_t b = (uint32_t)format | (uint32_t)(step ? 1 : 0) << 8 | (uint32_t)(fill ? 1 : 0) << 16;
    emit_current(BT_REC_PLOT_CONFIG, 0, b, payload, 16, CALLER);
}

/* Section ids: 0 stands for "not traced", so they start at 1. */
static _Atomic uint32_t section_next = 1;

uint32_t bt_section_enter(uint16_t category, const char *text, size_t len)
{
    struct bt_thread *t = bt_emit_thread();
    if (!t)
        return 0;
    if (len > bt_payload_max() - 8)
        len = bt_payload_max() - 8;
    uint32_t id = atomic_fetch_add_explicit(&section_next, 1, memory_order_relaxed);
    if (id == 0) /* after 2^32 sections */
        id = atomic_fetch_add_explicit(&section_next, 1, memory_order_relaxed);
    uint64_t id64 = id;
    if (!bt_emit_record(t, BT_REC_SECTION_ENTER, 0, category, &id64, 8, text, len, bt_zone_keep(t),
                        CALLER))
        return 0;
    return id;
}

void bt_section_leave(uint32_t id)
{
    struct bt_thread *t = bt_emit_thread();
    if (!t || id == 0)
        return;
    bt_emit_record(t, BT_REC_SECTION_LEAVE, 0, id, NULL, 0, NULL, 0, bt_zone_keep(t), CALLER);
}

void bt_section_setup(uint16_t category, const char *text, size_t len)
{
    struct bt_thread *t = bt_emit_thread();
    if (!t)
        return;
    if (len > bt_payload_max())
        len = bt_payload_max();
    bt_emit_record(t, BT_REC_SECTION_SETUP, 0, category, text, len, NULL, 0, bt_zone_keep(t),
                   CALLER);
}

void bt_param_setup(uint32_t idx, const char *name, uint8_t type, int32_t value)
{
    struct bt_thread *t = bt_emit_thread();
    if (!t)
        return;
    uint64_t payload[2] = {(uint64_t)(uintptr_t)name, type | (uint64_t)(uint32_t)value << 32};
    bt_emit_record(t, BT_REC_PARAM_SETUP, 0, idx, payload, 16, NULL, 0, bt_zone_keep(t), CALLER);
}

int bt_thread_get_name(uint32_t tid, char *buf, size_t size)
{
    int found = 0;
    pthread_mutex_lock(&bt_rt.mutex);
    for (struct bt_thread_name *n = bt_rt.names; n && !found; n = n->next)
        if (n->tid == tid) {
            if (size)
                snprintf(buf, size, "%s", n->name);
            found = 1;
        }
    pthread_mutex_unlock(&bt_rt.mutex);
    return found;
}

void bt_thread_set_name(const char *name)
{
    bt_thread_set_name_hint(name, 0);
}

void bt_thread_set_name_hint(const char *name, int32_t group_hint)
{
    struct bt_thread *t = bt_emit_thread();
    if (!t || !name)
        return;
    char *copy = strdup(name);
    if (!copy)
        return;
    char os_name[16];
    strncpy(os_name, name, sizeof(os_name) - 1);
    os_name[sizeof(os_name) - 1] = 0;
    bt_name_own_thread(os_name);
    pthread_mutex_lock(&bt_rt.mutex);
    struct bt_thread_name *n = bt_rt.names;
    while (n && n->tid != t->tid)
        n = n->next;
    if (n) {
        free(n->name);
        n->name = copy;
        n->group_hint = group_hint;
    } else if ((n = malloc(sizeof(*n))) != NULL) {
        n->tid = t->tid;
        n->group_hint = group_hint;
        n->name = copy;
        n->next = bt_rt.names;
        bt_rt.names = n;
    } else {
        free(copy);
    }
    pthread_mutex_unlock(&bt_rt.mutex);
}
