/* Tracy's C API by its own names: every ___tracy_* function of upstream
 * v0.14.0's TracyC.h, exported by libboardtrace so that a program compiled
 * against upstream's header links to boardtrace unchanged. Each is a thin
 * entry point over the native bt_* API; those that may record a callstack
 * pass their return address, so a callstack starts in the program's code.
 * The GPU and lock entry points are in tracy_c_gpu.c and tracy_c_lock.c. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracy_c.h"

_Static_assert(sizeof(struct ___tracy_source_location_data) == sizeof(struct bt_srcloc),
               "Tracy's source location is boardtrace's");

static TracyCZoneCtx zone_ctx(bt_zone z)
{
    TracyCZoneCtx ctx;
    ctx.id = 0;
    ctx.active = z.active;
    return ctx;
}

static bt_zone zone_of(TracyCZoneCtx ctx)
{
    bt_zone z = {ctx.active};
    return z;
}

void ___tracy_set_thread_name(const char *name)
{
    bt_thread_set_name(name);
}

void ___tracy_startup_profiler(void)
{
    bt_runtime_start();
}

void ___tracy_shutdown_profiler(void)
{
    bt_runtime_stop();
}

int32_t ___tracy_profiler_started(void)
{
    return bt_runtime_running();
}

uint64_t ___tracy_alloc_srcloc(uint32_t line, const char *source, size_t sourceSz,
                               const char *function, size_t functionSz, uint32_t color)
{
    return bt_srcloc_make(line, source, sourceSz, function, functionSz, NULL, 0, color);
}

uint64_t ___tracy_alloc_srcloc_name(uint32_t line, const char *source, size_t sourceSz,
                                    const char *function, size_t functionSz, const char *name,
                                    size_t nameSz, uint32_t color)
{
    return bt_srcloc_make(line, source, sourceSz, function, functionSz, name, nameSz, color);
}

TracyCZoneCtx ___tracy_emit_zone_begin(const struct ___tracy_source_location_data *srcloc,
                                       int32_t active)
{
    return zone_ctx(bt_zone_begin_at(SRCLOC(srcloc), 0, active, CALLER));
}

TracyCZoneCtx ___tracy_emit_zone_begin_callstack(const struct ___tracy_source_location_data *srcloc,
                                                 int32_t depth, int32_t active)
{
    return zone_ctx(bt_zone_begin_at(SRCLOC(srcloc), depth, active, CALLER));
}

TracyCZoneCtx ___tracy_emit_zone_begin_alloc(uint64_t srcloc, int32_t active)
{
    return zone_ctx(bt_zone_begin_made_at(srcloc, 0, active, CALLER));
}

TracyCZoneCtx ___tracy_emit_zone_begin_alloc_callstack(uint64_t srcloc, int32_t depth,
                                                       int32_t active)
{
    return zone_ctx(bt_zone_begin_made_at(srcloc, depth, active, CALLER));
}

void ___tracy_emit_zone_end(TracyCZoneCtx ctx)
{
    bt_zone_end(zone_of(ctx));
}

void ___tracy_emit_zone_text(TracyCZoneCtx ctx, const char *txt, size_t size)
{
    bt_zone_text(zone_of(ctx), txt, size);
}

void ___tracy_emit_zone_name(TracyCZoneCtx ctx, const char *txt, size_t size)
{
    bt_zone_name(zone_of(ctx), txt, size);
}

/* Formats into a stack buffer, or the heap when the text is longer. */
static void zone_format(TracyCZoneCtx ctx, int name, const char *fmt, va_list args)
{
    if (!ctx.active)
        return;
    char small[512];
    va_list again;
    va_copy(again, args);
    int n = vsnprintf(small, sizeof(small), fmt, args);
    char *text = small;
    if (n >= (int)sizeof(small)) {
        text = malloc((size_t)n + 1);
        if (text)
            vsnprintf(text, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    if (n < 0 || !text)
        return;
    if (name)
        bt_zone_name(zone_of(ctx), text, (size_t)n);
    else
        bt_zone_text(zone_of(ctx), text, (size_t)n);
    if (text != small)
        free(text);
}

void ___tracy_emit_zone_text_fmt(TracyCZoneCtx ctx, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    zone_format(ctx, 0, fmt, args);
    va_end(args);
}

void ___tracy_emit_zone_name_fmt(TracyCZoneCtx ctx, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    zone_format(ctx, 1, fmt, args);
    va_end(args);
}

void ___tracy_emit_zone_color(TracyCZoneCtx ctx, uint32_t color)
{
    bt_zone_color(zone_of(ctx), color);
}

void ___tracy_emit_zone_value(TracyCZoneCtx ctx, uint64_t value)
{
    bt_zone_value(zone_of(ctx), value);
}

int32_t ___tracy_connected(void)
{
    return bt_is_connected();
}

/* Memory */

void ___tracy_emit_memory_alloc(const void *ptr, size_t size)
{
    bt_mem_alloc_at(ptr, size, NULL, 0, CALLER);
}

void ___tracy_emit_memory_alloc_callstack(const void *ptr, size_t size, int32_t depth)
{
    bt_mem_alloc_at(ptr, size, NULL, depth, CALLER);
}

void ___tracy_emit_memory_free(const void *ptr)
{
    bt_mem_free_at(ptr, NULL, 0, CALLER);
}

void ___tracy_emit_memory_free_callstack(const void *ptr, int32_t depth)
{
    bt_mem_free_at(ptr, NULL, depth, CALLER);
}

void ___tracy_emit_memory_alloc_named(const void *ptr, size_t size, const char *name)
{
    bt_mem_alloc_at(ptr, size, name, 0, CALLER);
}

void ___tracy_emit_memory_alloc_callstack_named(const void *ptr, size_t size, int32_t depth,
                                                const char *name)
{
    bt_mem_alloc_at(ptr, size, name, depth, CALLER);
}

void ___tracy_emit_memory_free_named(const void *ptr, const char *name)
{
    bt_mem_free_at(ptr, name, 0, CALLER);
}

void ___tracy_emit_memory_free_callstack_named(const void *ptr, int32_t depth, const char *name)
{
    bt_mem_free_at(ptr, name, depth, CALLER);
}

void ___tracy_emit_memory_discard(const char *name)
{
    bt_mem_discard_at(name, 0, CALLER);
}

void ___tracy_emit_memory_discard_callstack(const char *name, int32_t depth)
{
    bt_mem_discard_at(name, depth, CALLER);
}

/* Messages: a color of 0 is an uncolored message, as upstream sends it. */

void ___tracy_emit_logString(int8_t severity, int32_t color, int32_t callstack_depth, size_t size,
                             const char *txt)
{
    bt_message_at(txt, size, (uint32_t)color, color != 0, (enum bt_severity)severity,
                  callstack_depth, CALLER);
}

void ___tracy_emit_logStringL(int8_t severity, int32_t color, int32_t callstack_depth,
                              const char *txt)
{
    bt_message_literal_at(txt, (uint32_t)color, color != 0, (enum bt_severity)severity,
                          callstack_depth, CALLER);
}

void ___tracy_emit_message_appinfo(const char *txt, size_t size)
{
    bt_app_info(txt, size);
}

/* Frames and plots */

void ___tracy_emit_frame_mark(const char *name)
{
    bt_frame_mark(name);
}

void ___tracy_emit_frame_mark_start(const char *name)
{
    bt_frame_mark_start(name);
}

void ___tracy_emit_frame_mark_end(const char *name)
{
    bt_frame_mark_end(name);
}

void ___tracy_emit_frame_image(const void *image, uint16_t w, uint16_t h, uint8_t offset,
                               int32_t flip)
{
    bt_frame_image(image, w, h, offset, flip != 0);
}

void ___tracy_emit_plot(const char *name, double val)
{
    bt_plot_double(name, val);
}

void ___tracy_emit_plot_float(const char *name, float val)
{
    bt_plot_float(name, val);
}

void ___tracy_emit_plot_int(const char *name, int64_t val)
{
    bt_plot_int(name, val);
}

void ___tracy_emit_plot_config(const char *name, int32_t type, int32_t step, int32_t fill,
                               uint32_t color)
{
    bt_plot_config(name, (enum bt_plot_format)type, step, fill, color);
}

/* Sampling is not part of the runtime yet: a start request says so. */
int ___tracy_begin_sampling_profiling(void)
{
    return 0;
}

void ___tracy_end_sampling_profiling(void)
{
}

void ___tracy_fiber_enter(const char *fiber)
{
    bt_fiber_enter(fiber, 0);
}

void ___tracy_fiber_leave(void)
{
    bt_fiber_leave();
}

int64_t ___tracy_get_time(void)
{
    return bt_time_now();
}
