/* Tracy's C API (the TracyC* macros and the ___tracy_* calls they rest on),
 * implemented on boardtrace's runtime, so C code instrumented for Tracy builds
 * and runs unchanged. Written from Tracy's documented API. TRACY_ENABLE follows
 * boardtrace's RUNTIME_TRACING option; TRACING_MODE gates memory tracking (2)
 * and callstacks (3, and 4 for every zone). */
#ifndef BOARDTRACE_TRACY_C_H
#define BOARDTRACE_TRACY_C_H

#include <stddef.h>
#include <stdint.h>

#include <boardtrace/config.h>
#include <boardtrace/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

enum TracyPlotFormatEnum {
    TracyPlotFormatNumber = BT_PLOT_NUMBER,
    TracyPlotFormatMemory = BT_PLOT_MEMORY,
    TracyPlotFormatPercentage = BT_PLOT_PERCENTAGE,
    TracyPlotFormatWatt = BT_PLOT_WATT,
};

#if BT_RUNTIME_TRACING

#ifndef TRACY_ENABLE
#define TRACY_ENABLE 1
#endif

#define ___tracy_source_location_data bt_srcloc
typedef bt_zone TracyCZoneCtx;
#define ___tracy_lockable_context_data bt_lock

/* Callstack depth a TracyC*S macro asks for, honoured from mode 3 on. */
#if BT_TRACING_MODE >= 3
#define BT_TRACYC_DEPTH_(depth) (depth)
#else
#define BT_TRACYC_DEPTH_(depth) ((void)(depth), 0)
#endif

static inline uint64_t ___tracy_alloc_srcloc(uint32_t line, const char *source, size_t sourceSz,
                                             const char *function, size_t functionSz,
                                             uint32_t color)
{
    return bt_srcloc_make(line, source, sourceSz, function, functionSz, NULL, 0, color);
}
static inline uint64_t ___tracy_alloc_srcloc_name(uint32_t line, const char *source,
                                                  size_t sourceSz, const char *function,
                                                  size_t functionSz, const char *name,
                                                  size_t nameSz, uint32_t color)
{
    return bt_srcloc_make(line, source, sourceSz, function, functionSz, name, nameSz, color);
}
static inline TracyCZoneCtx ___tracy_emit_zone_begin(const struct bt_srcloc *srcloc, int active)
{
    return bt_zone_begin(srcloc, BT_ZONE_DEPTH_, active);
}
static inline TracyCZoneCtx ___tracy_emit_zone_begin_callstack(const struct bt_srcloc *srcloc,
                                                               int depth, int active)
{
    return bt_zone_begin(srcloc, BT_TRACYC_DEPTH_(depth), active);
}
static inline TracyCZoneCtx ___tracy_emit_zone_begin_alloc(uint64_t srcloc, int active)
{
    return bt_zone_begin_made(srcloc, BT_ZONE_DEPTH_, active);
}
static inline TracyCZoneCtx ___tracy_emit_zone_begin_alloc_callstack(uint64_t srcloc, int depth,
                                                                     int active)
{
    return bt_zone_begin_made(srcloc, BT_TRACYC_DEPTH_(depth), active);
}
static inline void ___tracy_emit_zone_end(TracyCZoneCtx ctx)
{
    bt_zone_end(ctx);
}
static inline void ___tracy_emit_zone_text(TracyCZoneCtx ctx, const char *txt, size_t size)
{
    bt_zone_text(ctx, txt, size);
}
static inline void ___tracy_emit_zone_name(TracyCZoneCtx ctx, const char *txt, size_t size)
{
    bt_zone_name(ctx, txt, size);
}
static inline void ___tracy_emit_zone_color(TracyCZoneCtx ctx, uint32_t color)
{
    bt_zone_color(ctx, color);
}
static inline void ___tracy_emit_zone_value(TracyCZoneCtx ctx, uint64_t value)
{
    bt_zone_value(ctx, value);
}
static inline int ___tracy_connected(void)
{
    return bt_is_connected();
}

#define BT_TRACYC_ZONE_(ctx, name, color, depth, active)                     \
    static const struct bt_srcloc BT_CONCAT(bt_tracyc_srcloc_, __LINE__) = { \
        name, __func__, __FILE__, (uint32_t)__LINE__, (uint32_t)(color)};    \
    TracyCZoneCtx ctx = bt_zone_begin(&BT_CONCAT(bt_tracyc_srcloc_, __LINE__), (depth), (active))

#define TracyCZone(ctx, active)         BT_TRACYC_ZONE_(ctx, NULL, 0, BT_ZONE_DEPTH_, active)
#define TracyCZoneN(ctx, name, active)  BT_TRACYC_ZONE_(ctx, name, 0, BT_ZONE_DEPTH_, active)
#define TracyCZoneC(ctx, color, active) BT_TRACYC_ZONE_(ctx, NULL, color, BT_ZONE_DEPTH_, active)
#define TracyCZoneNC(ctx, name, color, active) \
    BT_TRACYC_ZONE_(ctx, name, color, BT_ZONE_DEPTH_, active)
#define TracyCZoneS(ctx, depth, active) \
    BT_TRACYC_ZONE_(ctx, NULL, 0, BT_TRACYC_DEPTH_(depth), active)
#define TracyCZoneNS(ctx, name, depth, active) \
    BT_TRACYC_ZONE_(ctx, name, 0, BT_TRACYC_DEPTH_(depth), active)
#define TracyCZoneCS(ctx, color, depth, active) \
    BT_TRACYC_ZONE_(ctx, NULL, color, BT_TRACYC_DEPTH_(depth), active)
#define TracyCZoneNCS(ctx, name, color, depth, active) \
    BT_TRACYC_ZONE_(ctx, name, color, BT_TRACYC_DEPTH_(depth), active)

#define TracyCZoneEnd(ctx)             bt_zone_end(ctx)
#define TracyCZoneText(ctx, txt, size) bt_zone_text((ctx), (txt), (size))
#define TracyCZoneName(ctx, txt, size) bt_zone_name((ctx), (txt), (size))
#define TracyCZoneColor(ctx, color)    bt_zone_color((ctx), (color))
#define TracyCZoneValue(ctx, value)    bt_zone_value((ctx), (value))

#if BT_TRACING_MODE >= 2
#define TracyCAllocNS(ptr, size, depth, name) \
    bt_mem_alloc((ptr), (size), (name), BT_TRACYC_DEPTH_(depth))
#define TracyCFreeNS(ptr, depth, name)    bt_mem_free((ptr), (name), BT_TRACYC_DEPTH_(depth))
#define TracyCMemoryDiscardS(name, depth) bt_mem_discard((name), BT_TRACYC_DEPTH_(depth))
#else
#define TracyCAllocNS(ptr, size, depth, name) (BT_UNUSED_(ptr), BT_UNUSED_(size), BT_UNUSED_(depth))
#define TracyCFreeNS(ptr, depth, name)        (BT_UNUSED_(ptr), BT_UNUSED_(depth))
#define TracyCMemoryDiscardS(name, depth)     (BT_UNUSED_(name), BT_UNUSED_(depth))
#endif
#define TracyCAlloc(ptr, size)         TracyCAllocNS(ptr, size, BT_MEM_DEPTH_, NULL)
#define TracyCFree(ptr)                TracyCFreeNS(ptr, BT_MEM_DEPTH_, NULL)
#define TracyCAllocN(ptr, size, name)  TracyCAllocNS(ptr, size, BT_MEM_DEPTH_, name)
#define TracyCFreeN(ptr, name)         TracyCFreeNS(ptr, BT_MEM_DEPTH_, name)
#define TracyCAllocS(ptr, size, depth) TracyCAllocNS(ptr, size, depth, NULL)
#define TracyCFreeS(ptr, depth)        TracyCFreeNS(ptr, depth, NULL)
#define TracyCMemoryDiscard(name)      TracyCMemoryDiscardS(name, BT_MEM_DEPTH_)
/* "Secure" variants guard against a profiler already torn down; boardtrace's
 * runtime stays usable until the process ends, so they are the same calls. */
#define TracyCSecureAlloc(ptr, size)                TracyCAlloc(ptr, size)
#define TracyCSecureFree(ptr)                       TracyCFree(ptr)
#define TracyCSecureAllocN(ptr, size, name)         TracyCAllocN(ptr, size, name)
#define TracyCSecureFreeN(ptr, name)                TracyCFreeN(ptr, name)
#define TracyCSecureAllocS(ptr, size, depth)        TracyCAllocS(ptr, size, depth)
#define TracyCSecureFreeS(ptr, depth)               TracyCFreeS(ptr, depth)
#define TracyCSecureAllocNS(ptr, size, depth, name) TracyCAllocNS(ptr, size, depth, name)
#define TracyCSecureFreeNS(ptr, depth, name)        TracyCFreeNS(ptr, depth, name)
#define TracyCSecureMemoryDiscard(name)             TracyCMemoryDiscard(name)
#define TracyCSecureMemoryDiscardS(name, depth)     TracyCMemoryDiscardS(name, depth)

#define TracyCMessage(txt, size) bt_message((txt), (size), BT_SEVERITY_INFO, 0)
#define TracyCMessageL(txt)      bt_message_literal((txt), BT_SEVERITY_INFO, 0)
#define TracyCMessageC(txt, size, color) \
    bt_message_color((txt), (size), (color), BT_SEVERITY_INFO, 0)
#define TracyCMessageLC(txt, color) bt_message_literal_color((txt), (color), BT_SEVERITY_INFO, 0)
#define TracyCMessageS(txt, size, depth) \
    bt_message((txt), (size), BT_SEVERITY_INFO, BT_TRACYC_DEPTH_(depth))
#define TracyCMessageLS(txt, depth) \
    bt_message_literal((txt), BT_SEVERITY_INFO, BT_TRACYC_DEPTH_(depth))
#define TracyCMessageCS(txt, size, color, depth) \
    bt_message_color((txt), (size), (color), BT_SEVERITY_INFO, BT_TRACYC_DEPTH_(depth))
#define TracyCMessageLCS(txt, color, depth) \
    bt_message_literal_color((txt), (color), BT_SEVERITY_INFO, BT_TRACYC_DEPTH_(depth))
#define TracyCAppInfo(txt, size) bt_app_info((txt), (size))

#define TracyCFrameMark            bt_frame_mark(NULL)
#define TracyCFrameMarkNamed(name) bt_frame_mark(name)
#define TracyCFrameMarkStart(name) bt_frame_mark_start(name)
#define TracyCFrameMarkEnd(name)   bt_frame_mark_end(name)

#define TracyCPlot(name, val)  bt_plot_double((name), (val))
#define TracyCPlotF(name, val) bt_plot_float((name), (val))
#define TracyCPlotI(name, val) bt_plot_int((name), (val))
#define TracyCPlotConfig(name, type, step, fill, color) \
    bt_plot_config((name), (enum bt_plot_format)(type), (step), (fill), (color))

#define TracyCSetThreadName(name) bt_thread_set_name(name)
#define TracyCIsConnected         bt_is_connected()
#define TracyCIsStarted           1

#define TracyCLockCtx(var) struct bt_lock *var
#define TracyCLockAnnounce(lock)                                                  \
    do {                                                                          \
        static const struct bt_srcloc BT_CONCAT(bt_tracyc_lockloc_, __LINE__) = { \
            NULL, __func__, __FILE__, (uint32_t)__LINE__, 0};                     \
        (lock) = bt_lock_announce(&BT_CONCAT(bt_tracyc_lockloc_, __LINE__));      \
    } while (0)
#define TracyCLockTerminate(lock)              bt_lock_terminate(lock)
#define TracyCLockBeforeLock(lock)             bt_lock_before_lock(lock)
#define TracyCLockAfterLock(lock)              bt_lock_after_lock(lock)
#define TracyCLockAfterUnlock(lock)            bt_lock_after_unlock(lock)
#define TracyCLockAfterTryLock(lock, acquired) bt_lock_after_try_lock((lock), (acquired))
#define TracyCLockMark(lock)                                                      \
    do {                                                                          \
        static const struct bt_srcloc BT_CONCAT(bt_tracyc_markloc_, __LINE__) = { \
            NULL, __func__, __FILE__, (uint32_t)__LINE__, 0};                     \
        bt_lock_mark((lock), &BT_CONCAT(bt_tracyc_markloc_, __LINE__));           \
    } while (0)
#define TracyCLockCustomName(lock, name, size) bt_lock_set_name((lock), (name), (size))

#else /* !BT_RUNTIME_TRACING */

#ifdef TRACY_ENABLE
#error "TRACY_ENABLE is defined, but boardtrace was configured with RUNTIME_TRACING=OFF"
#endif

typedef const void *TracyCZoneCtx;

#define TracyCZone(ctx, active)
#define TracyCZoneN(ctx, name, active)
#define TracyCZoneC(ctx, color, active)
#define TracyCZoneNC(ctx, name, color, active)
#define TracyCZoneS(ctx, depth, active)
#define TracyCZoneNS(ctx, name, depth, active)
#define TracyCZoneCS(ctx, color, depth, active)
#define TracyCZoneNCS(ctx, name, color, depth, active)
#define TracyCZoneEnd(ctx)             ((void)0)
#define TracyCZoneText(ctx, txt, size) ((void)0)
#define TracyCZoneName(ctx, txt, size) ((void)0)
#define TracyCZoneColor(ctx, color)    ((void)0)
#define TracyCZoneValue(ctx, value)    ((void)0)

#define TracyCAlloc(ptr, size)                      ((void)0)
#define TracyCFree(ptr)                             ((void)0)
#define TracyCAllocN(ptr, size, name)               ((void)0)
#define TracyCFreeN(ptr, name)                      ((void)0)
#define TracyCAllocS(ptr, size, depth)              ((void)0)
#define TracyCFreeS(ptr, depth)                     ((void)0)
#define TracyCAllocNS(ptr, size, depth, name)       ((void)0)
#define TracyCFreeNS(ptr, depth, name)              ((void)0)
#define TracyCMemoryDiscard(name)                   ((void)0)
#define TracyCMemoryDiscardS(name, depth)           ((void)0)
#define TracyCSecureAlloc(ptr, size)                ((void)0)
#define TracyCSecureFree(ptr)                       ((void)0)
#define TracyCSecureAllocN(ptr, size, name)         ((void)0)
#define TracyCSecureFreeN(ptr, name)                ((void)0)
#define TracyCSecureAllocS(ptr, size, depth)        ((void)0)
#define TracyCSecureFreeS(ptr, depth)               ((void)0)
#define TracyCSecureAllocNS(ptr, size, depth, name) ((void)0)
#define TracyCSecureFreeNS(ptr, depth, name)        ((void)0)
#define TracyCSecureMemoryDiscard(name)             ((void)0)
#define TracyCSecureMemoryDiscardS(name, depth)     ((void)0)

#define TracyCMessage(txt, size)                 ((void)0)
#define TracyCMessageL(txt)                      ((void)0)
#define TracyCMessageC(txt, size, color)         ((void)0)
#define TracyCMessageLC(txt, color)              ((void)0)
#define TracyCMessageS(txt, size, depth)         ((void)0)
#define TracyCMessageLS(txt, depth)              ((void)0)
#define TracyCMessageCS(txt, size, color, depth) ((void)0)
#define TracyCMessageLCS(txt, color, depth)      ((void)0)
#define TracyCAppInfo(txt, size)                 ((void)0)

#define TracyCFrameMark            ((void)0)
#define TracyCFrameMarkNamed(name) ((void)0)
#define TracyCFrameMarkStart(name) ((void)0)
#define TracyCFrameMarkEnd(name)   ((void)0)

#define TracyCPlot(name, val)                           ((void)0)
#define TracyCPlotF(name, val)                          ((void)0)
#define TracyCPlotI(name, val)                          ((void)0)
#define TracyCPlotConfig(name, type, step, fill, color) ((void)0)

#define TracyCSetThreadName(name) ((void)0)
#define TracyCIsConnected         0
#define TracyCIsStarted           0

#define TracyCLockCtx(var)
#define TracyCLockAnnounce(lock)               ((void)0)
#define TracyCLockTerminate(lock)              ((void)0)
#define TracyCLockBeforeLock(lock)             ((void)0)
#define TracyCLockAfterLock(lock)              ((void)0)
#define TracyCLockAfterUnlock(lock)            ((void)0)
#define TracyCLockAfterTryLock(lock, acquired) ((void)0)
#define TracyCLockMark(lock)                   ((void)0)
#define TracyCLockCustomName(lock, name, size) ((void)0)

#endif /* BT_RUNTIME_TRACING */

#ifdef __cplusplus
}
#endif

#endif
