/* Tracy's C API: every name of upstream v0.14.0's public/tracy/TracyC.h,
 * with the same types, struct layouts and signatures, on boardtrace's
 * runtime. The ___tracy_* functions are exported by libboardtrace, so code
 * compiled against upstream's own header links to boardtrace unchanged.
 * Written from Tracy's documented API. Where boardtrace differs (TRACY_ENABLE
 * follows RUNTIME_TRACING; TRACING_MODE chooses the defaults of the plain
 * forms; sampling is not started) runtime/README.md says so. */
#ifndef BOARDTRACE_TRACY_C_H
#define BOARDTRACE_TRACY_C_H

#include <stddef.h>
#include <stdint.h>

#include <boardtrace/config.h>
#include <boardtrace/note.h>

#if BT_RUNTIME_TRACING && !defined(TRACY_ENABLE)
#define TRACY_ENABLE 1
#endif
#if !BT_RUNTIME_TRACING && defined(TRACY_ENABLE) && !defined(BT_BUILDING_RUNTIME)
#error "TRACY_ENABLE is defined, but boardtrace was configured with RUNTIME_TRACING=OFF"
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum TracyPlotFormatEnum {
    TracyPlotFormatNumber,
    TracyPlotFormatMemory,
    TracyPlotFormatPercentage,
    TracyPlotFormatWatt
};

enum TracyMessageSeverity {
    TracyMessageSeverityTrace,
    TracyMessageSeverityDebug,
    TracyMessageSeverityInfo,
    TracyMessageSeverityWarning,
    TracyMessageSeverityError,
    TracyMessageSeverityFatal,
};

#ifndef TracyFunction
#define TracyFunction __FUNCTION__
#endif
#ifndef TracyFile
#define TracyFile __FILE__
#endif
#ifndef TracyLine
#define TracyLine __LINE__
#endif

#ifndef TRACY_ENABLE

/* Everything compiles to nothing (and the program links nothing of
 * boardtrace: a thread name is not set either). */
typedef const void *TracyCZoneCtx;
typedef const void *TracyCLockCtx;
typedef const void *TracyCSharedLockCtx;

/* Declared as upstream's (whose off build still names the thread); here it
 * does nothing, so the program links nothing of boardtrace. */
static inline void ___tracy_set_thread_name(const char *name)
{
    (void)name;
}

#define TracyCSetThreadName(name)

#define TracyCZone(c, x)
#define TracyCZoneN(c, x, y)
#define TracyCZoneC(c, x, y)
#define TracyCZoneNC(c, x, y, z)
#define TracyCZoneEnd(c)
#define TracyCZoneText(c, x, y)
#define TracyCZoneTextF(c, x, ...)
#define TracyCZoneName(c, x, y)
#define TracyCZoneNameF(c, x, ...)
#define TracyCZoneColor(c, x)
#define TracyCZoneValue(c, x)

#define TracyCAlloc(x, y)
#define TracyCFree(x)
#define TracyCMemoryDiscard(x)
#define TracyCAllocN(x, y, z)
#define TracyCFreeN(x, y)

#define TracyCSecureAlloc(ptr, size)
#define TracyCSecureFree(ptr)
#define TracyCSecureAllocN(ptr, size, name)
#define TracyCSecureFreeN(ptr, name)
#define TracyCSecureAllocS(ptr, size, depth)
#define TracyCSecureFreeS(ptr, depth)
#define TracyCSecureAllocNS(ptr, size, depth, name)
#define TracyCSecureFreeNS(ptr, depth, name)
#define TracyCSecureMemoryDiscard(name)
#define TracyCSecureMemoryDiscardS(name, depth)

#define TracyCFrameMark
#define TracyCFrameMarkNamed(x)
#define TracyCFrameMarkStart(x)
#define TracyCFrameMarkEnd(x)
#define TracyCFrameImage(x, y, z, w, a)

#define TracyCPlot(x, y)
#define TracyCPlotF(x, y)
#define TracyCPlotI(x, y)
#define TracyCPlotConfig(x, y, z, w, a)

#define TracyCMessage(x, y)
#define TracyCMessageL(x)
#define TracyCMessageC(x, y, z)
#define TracyCMessageLC(x, y)
#define TracyCAppInfo(x, y)

#define TracyCZoneS(x, y, z)
#define TracyCZoneNS(x, y, z, w)
#define TracyCZoneCS(x, y, z, w)
#define TracyCZoneNCS(x, y, z, w, a)

#define TracyCAllocS(x, y, z)
#define TracyCFreeS(x, y)
#define TracyCMemoryDiscardS(x, y)
#define TracyCAllocNS(x, y, z, w)
#define TracyCFreeNS(x, y, z)

#define TracyCMessageS(x, y, z)
#define TracyCMessageLS(x, y)
#define TracyCMessageCS(x, y, z, w)
#define TracyCMessageLCS(x, y, z)

#define TracyCLockCtx(l)
#define TracyCLockAnnounce(l)
#define TracyCLockTerminate(l)
#define TracyCLockBeforeLock(l)
#define TracyCLockAfterLock(l)
#define TracyCLockAfterUnlock(l)
#define TracyCLockAfterTryLock(l, x)
#define TracyCLockMark(l)
#define TracyCLockCustomName(l, x, y)

#define TracyCSharedLockCtx(l)
#define TracyCSharedLockAnnounce(l)
#define TracyCSharedLockAnnonce(l) /* upstream's misspelling, kept for its users */
#define TracyCSharedLockTerminate(l)
#define TracyCSharedLockBeforeLock(l)
#define TracyCSharedLockAfterLock(l)
#define TracyCSharedLockAfterUnlock(l)
#define TracyCSharedLockAfterTryLock(l, x)
#define TracyCSharedLockBeforeSharedLock(l)
#define TracyCSharedLockAfterSharedLock(l)
#define TracyCSharedLockAfterSharedUnlock(l)
#define TracyCSharedLockAfterTrySharedLock(l, x)
#define TracyCSharedLockMark(l)
#define TracyCSharedLockCustomName(l, x, y)

#define TracyCIsConnected 0
#define TracyCIsStarted   0

#define TracyCBeginSamplingProfiling() 0
#define TracyCEndSamplingProfiling()

#ifdef TRACY_FIBERS
#define TracyCFiberEnter(fiber)
#define TracyCFiberLeave
#endif

#else /* TRACY_ENABLE */

#ifndef TracyConcat
#define TracyConcat(x, y) TracyConcatIndirect(x, y)
#endif
#ifndef TracyConcatIndirect
#define TracyConcatIndirect(x, y) x##y
#endif

struct ___tracy_source_location_data {
    const char *name;
    const char *function;
    const char *file;
    uint32_t line;
    uint32_t color;
};

struct ___tracy_c_zone_context {
    uint32_t id;
    int32_t active;
#ifdef TRACY_ON_DEMAND
    uint64_t connectionId;
#endif
};

struct ___tracy_gpu_time_data {
    int64_t gpuTime;
    uint16_t queryId;
    uint8_t context;
};

struct ___tracy_gpu_zone_begin_data {
    uint64_t srcloc;
    uint16_t queryId;
    uint8_t context;
};

struct ___tracy_gpu_zone_begin_callstack_data {
    uint64_t srcloc;
    int32_t depth;
    uint16_t queryId;
    uint8_t context;
};

struct ___tracy_gpu_zone_end_data {
    uint16_t queryId;
    uint8_t context;
};

struct ___tracy_gpu_new_context_data {
    int64_t gpuTime;
    float period;
    uint8_t context;
    uint8_t flags;
    uint8_t type;
};

struct ___tracy_gpu_context_name_data {
    uint8_t context;
    const char *name;
    uint16_t len;
};

struct ___tracy_gpu_calibration_data {
    int64_t gpuTime;
    int64_t cpuDelta;
    uint8_t context;
};

struct ___tracy_gpu_time_sync_data {
    int64_t gpuTime;
    uint8_t context;
};

struct __tracy_lockable_context_data;
struct __tracy_shared_lockable_context_data;

typedef /*const*/ struct ___tracy_c_zone_context TracyCZoneCtx;
typedef struct __tracy_lockable_context_data *TracyCLockCtx;
typedef struct __tracy_shared_lockable_context_data *TracyCSharedLockCtx;

void ___tracy_set_thread_name(const char *name);
#define TracyCSetThreadName(name) ___tracy_set_thread_name(name);

/* Manual lifetime: libboardtrace always has these; the runtime starts by
 * itself at load, so startup only makes sure of it. */
void ___tracy_startup_profiler(void);
void ___tracy_shutdown_profiler(void);
int32_t ___tracy_profiler_started(void);
#ifdef TRACY_MANUAL_LIFETIME
#define TracyCIsStarted ___tracy_profiler_started()
#else
#define TracyCIsStarted 1
#endif

uint64_t ___tracy_alloc_srcloc(uint32_t line, const char *source, size_t sourceSz,
                               const char *function, size_t functionSz, uint32_t color);
uint64_t ___tracy_alloc_srcloc_name(uint32_t line, const char *source, size_t sourceSz,
                                    const char *function, size_t functionSz, const char *name,
                                    size_t nameSz, uint32_t color);

TracyCZoneCtx ___tracy_emit_zone_begin(const struct ___tracy_source_location_data *srcloc,
                                       int32_t active);
TracyCZoneCtx ___tracy_emit_zone_begin_callstack(const struct ___tracy_source_location_data *srcloc,
                                                 int32_t depth, int32_t active);
TracyCZoneCtx ___tracy_emit_zone_begin_alloc(uint64_t srcloc, int32_t active);
TracyCZoneCtx ___tracy_emit_zone_begin_alloc_callstack(uint64_t srcloc, int32_t depth,
                                                       int32_t active);
void ___tracy_emit_zone_end(TracyCZoneCtx ctx);
void ___tracy_emit_zone_text(TracyCZoneCtx ctx, const char *txt, size_t size);
void ___tracy_emit_zone_text_fmt(TracyCZoneCtx ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ___tracy_emit_zone_name(TracyCZoneCtx ctx, const char *txt, size_t size);
void ___tracy_emit_zone_name_fmt(TracyCZoneCtx ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ___tracy_emit_zone_color(TracyCZoneCtx ctx, uint32_t color);
void ___tracy_emit_zone_value(TracyCZoneCtx ctx, uint64_t value);

void ___tracy_emit_gpu_zone_begin(const struct ___tracy_gpu_zone_begin_data);
void ___tracy_emit_gpu_zone_begin_callstack(const struct ___tracy_gpu_zone_begin_callstack_data);
void ___tracy_emit_gpu_zone_begin_alloc(const struct ___tracy_gpu_zone_begin_data);
void ___tracy_emit_gpu_zone_begin_alloc_callstack(
    const struct ___tracy_gpu_zone_begin_callstack_data);
void ___tracy_emit_gpu_zone_end(const struct ___tracy_gpu_zone_end_data data);
void ___tracy_emit_gpu_time(const struct ___tracy_gpu_time_data);
void ___tracy_emit_gpu_new_context(const struct ___tracy_gpu_new_context_data);
void ___tracy_emit_gpu_context_name(const struct ___tracy_gpu_context_name_data);
void ___tracy_emit_gpu_calibration(const struct ___tracy_gpu_calibration_data);
void ___tracy_emit_gpu_time_sync(const struct ___tracy_gpu_time_sync_data);

void ___tracy_emit_gpu_zone_begin_serial(const struct ___tracy_gpu_zone_begin_data);
void ___tracy_emit_gpu_zone_begin_callstack_serial(
    const struct ___tracy_gpu_zone_begin_callstack_data);
void ___tracy_emit_gpu_zone_begin_alloc_serial(const struct ___tracy_gpu_zone_begin_data);
void ___tracy_emit_gpu_zone_begin_alloc_callstack_serial(
    const struct ___tracy_gpu_zone_begin_callstack_data);
void ___tracy_emit_gpu_zone_end_serial(const struct ___tracy_gpu_zone_end_data data);
void ___tracy_emit_gpu_time_serial(const struct ___tracy_gpu_time_data);
void ___tracy_emit_gpu_new_context_serial(const struct ___tracy_gpu_new_context_data);
void ___tracy_emit_gpu_context_name_serial(const struct ___tracy_gpu_context_name_data);
void ___tracy_emit_gpu_calibration_serial(const struct ___tracy_gpu_calibration_data);
void ___tracy_emit_gpu_time_sync_serial(const struct ___tracy_gpu_time_sync_data);

int32_t ___tracy_connected(void);

/* What the plain forms ask for: TRACY_CALLSTACK when the program defines
 * it (as upstream), else TRACING_MODE's defaults (runtime/README.md). */
#ifdef TRACY_CALLSTACK
#define BT_TRACYC_ZONE_DEPTH_ TRACY_CALLSTACK
#define BT_TRACYC_MEM_DEPTH_  TRACY_CALLSTACK
#define BT_TRACYC_MSG_DEPTH_  TRACY_CALLSTACK
#else
#if BT_TRACING_MODE >= 4
#define BT_TRACYC_ZONE_DEPTH_ BT_CALLSTACK_DEPTH
#else
#define BT_TRACYC_ZONE_DEPTH_ 0
#endif
#if BT_TRACING_MODE >= 3
#define BT_TRACYC_MEM_DEPTH_ BT_CALLSTACK_DEPTH
#else
#define BT_TRACYC_MEM_DEPTH_ 0
#endif
#define BT_TRACYC_MSG_DEPTH_ 0
#define TRACY_CALLSTACK      0
#endif

#define BT_TRACYC_LOC_(name, color)                                                            \
    static const struct ___tracy_source_location_data TracyConcat(                             \
        __tracy_source_location, TracyLine) = {name, __func__, TracyFile, (uint32_t)TracyLine, \
                                               (uint32_t)(color)}
#define BT_TRACYC_ZONE_(ctx, name, color, depth, active)    \
    BT_TRACYC_LOC_(name, color);                            \
    TracyCZoneCtx ctx = ___tracy_emit_zone_begin_callstack( \
        &TracyConcat(__tracy_source_location, TracyLine), (depth), (active))

#define TracyCZone(ctx, active)        BT_TRACYC_ZONE_(ctx, NULL, 0, BT_TRACYC_ZONE_DEPTH_, active);
#define TracyCZoneN(ctx, name, active) BT_TRACYC_ZONE_(ctx, name, 0, BT_TRACYC_ZONE_DEPTH_, active);
#define TracyCZoneC(ctx, color, active) \
    BT_TRACYC_ZONE_(ctx, NULL, color, BT_TRACYC_ZONE_DEPTH_, active);
#define TracyCZoneNC(ctx, name, color, active) \
    BT_TRACYC_ZONE_(ctx, name, color, BT_TRACYC_ZONE_DEPTH_, active);

#define TracyCZoneEnd(ctx)             ___tracy_emit_zone_end(ctx);
#define TracyCZoneText(ctx, txt, size) ___tracy_emit_zone_text(ctx, txt, size);
#define TracyCZoneTextF(ctx, fmt, ...) ___tracy_emit_zone_text_fmt(ctx, fmt, ##__VA_ARGS__);
#define TracyCZoneName(ctx, txt, size) ___tracy_emit_zone_name(ctx, txt, size);
#define TracyCZoneNameF(ctx, fmt, ...) ___tracy_emit_zone_name_fmt(ctx, fmt, ##__VA_ARGS__);
#define TracyCZoneColor(ctx, color)    ___tracy_emit_zone_color(ctx, color);
#define TracyCZoneValue(ctx, value)    ___tracy_emit_zone_value(ctx, value);

void ___tracy_emit_memory_alloc(const void *ptr, size_t size);
void ___tracy_emit_memory_alloc_callstack(const void *ptr, size_t size, int32_t depth);
void ___tracy_emit_memory_free(const void *ptr);
void ___tracy_emit_memory_free_callstack(const void *ptr, int32_t depth);
void ___tracy_emit_memory_alloc_named(const void *ptr, size_t size, const char *name);
void ___tracy_emit_memory_alloc_callstack_named(const void *ptr, size_t size, int32_t depth,
                                                const char *name);
void ___tracy_emit_memory_free_named(const void *ptr, const char *name);
void ___tracy_emit_memory_free_callstack_named(const void *ptr, int32_t depth, const char *name);
void ___tracy_emit_memory_discard(const char *name);
void ___tracy_emit_memory_discard_callstack(const char *name, int32_t depth);

void ___tracy_emit_logString(int8_t severity, int32_t color, int32_t callstack_depth, size_t size,
                             const char *txt);
void ___tracy_emit_logStringL(int8_t severity, int32_t color, int32_t callstack_depth,
                              const char *txt);

/* Memory tracking is part of TRACING_MODE 2 and up: below, the memory
 * macros compile to nothing (the functions above still work). */
#if BT_TRACING_MODE >= 2
#define TracyCAlloc(ptr, size) ___tracy_emit_memory_alloc_callstack(ptr, size, BT_TRACYC_MEM_DEPTH_)
#define TracyCFree(ptr)        ___tracy_emit_memory_free_callstack(ptr, BT_TRACYC_MEM_DEPTH_)
#define TracyCMemoryDiscard(name) \
    ___tracy_emit_memory_discard_callstack(name, BT_TRACYC_MEM_DEPTH_);
#define TracyCAllocN(ptr, size, name) \
    ___tracy_emit_memory_alloc_callstack_named(ptr, size, BT_TRACYC_MEM_DEPTH_, name)
#define TracyCFreeN(ptr, name) \
    ___tracy_emit_memory_free_callstack_named(ptr, BT_TRACYC_MEM_DEPTH_, name)
#define TracyCAllocS(ptr, size, depth)    ___tracy_emit_memory_alloc_callstack(ptr, size, depth)
#define TracyCFreeS(ptr, depth)           ___tracy_emit_memory_free_callstack(ptr, depth)
#define TracyCMemoryDiscardS(name, depth) ___tracy_emit_memory_discard_callstack(name, depth)
#define TracyCAllocNS(ptr, size, depth, name) \
    ___tracy_emit_memory_alloc_callstack_named(ptr, size, depth, name)
#define TracyCFreeNS(ptr, depth, name) ___tracy_emit_memory_free_callstack_named(ptr, depth, name)
#else
#define TracyCAlloc(ptr, size)                ((void)sizeof(ptr), (void)sizeof(size))
#define TracyCFree(ptr)                       ((void)sizeof(ptr))
#define TracyCMemoryDiscard(name)             ((void)sizeof(name));
#define TracyCAllocN(ptr, size, name)         ((void)sizeof(ptr), (void)sizeof(size))
#define TracyCFreeN(ptr, name)                ((void)sizeof(ptr))
#define TracyCAllocS(ptr, size, depth)        ((void)sizeof(ptr), (void)sizeof(size))
#define TracyCFreeS(ptr, depth)               ((void)sizeof(ptr))
#define TracyCMemoryDiscardS(name, depth)     ((void)sizeof(name))
#define TracyCAllocNS(ptr, size, depth, name) ((void)sizeof(ptr), (void)sizeof(size))
#define TracyCFreeNS(ptr, depth, name)        ((void)sizeof(ptr))
#endif

/* Older Tracy releases' "secure" memory forms (not in v0.14.0's header):
 * boardtrace's runtime stays usable until the process ends, so they are the
 * plain calls. */
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

#define TracyCMessage(txt, size) \
    ___tracy_emit_logString(TracyMessageSeverityInfo, 0, BT_TRACYC_MSG_DEPTH_, size, txt)
#define TracyCMessageL(txt) \
    ___tracy_emit_logStringL(TracyMessageSeverityInfo, 0, BT_TRACYC_MSG_DEPTH_, txt)
#define TracyCMessageC(txt, size, color) \
    ___tracy_emit_logString(TracyMessageSeverityInfo, color, BT_TRACYC_MSG_DEPTH_, size, txt)
#define TracyCMessageLC(txt, color) \
    ___tracy_emit_logStringL(TracyMessageSeverityInfo, color, BT_TRACYC_MSG_DEPTH_, txt)

void ___tracy_emit_frame_mark(const char *name);
void ___tracy_emit_frame_mark_start(const char *name);
void ___tracy_emit_frame_mark_end(const char *name);
void ___tracy_emit_frame_image(const void *image, uint16_t w, uint16_t h, uint8_t offset,
                               int32_t flip);

#define TracyCFrameMark            ___tracy_emit_frame_mark(0);
#define TracyCFrameMarkNamed(name) ___tracy_emit_frame_mark(name);
#define TracyCFrameMarkStart(name) ___tracy_emit_frame_mark_start(name);
#define TracyCFrameMarkEnd(name)   ___tracy_emit_frame_mark_end(name);
#define TracyCFrameImage(image, width, height, offset, flip) \
    ___tracy_emit_frame_image(image, width, height, offset, flip);

void ___tracy_emit_plot(const char *name, double val);
void ___tracy_emit_plot_float(const char *name, float val);
void ___tracy_emit_plot_int(const char *name, int64_t val);
void ___tracy_emit_plot_config(const char *name, int32_t type, int32_t step, int32_t fill,
                               uint32_t color);
void ___tracy_emit_message_appinfo(const char *txt, size_t size);

#define TracyCPlot(name, val)  ___tracy_emit_plot(name, val);
#define TracyCPlotF(name, val) ___tracy_emit_plot_float(name, val);
#define TracyCPlotI(name, val) ___tracy_emit_plot_int(name, val);
#define TracyCPlotConfig(name, type, step, fill, color) \
    ___tracy_emit_plot_config(name, type, step, fill, color);
#define TracyCAppInfo(txt, size) ___tracy_emit_message_appinfo(txt, size);

#define TracyCZoneS(ctx, depth, active)         BT_TRACYC_ZONE_(ctx, NULL, 0, depth, active);
#define TracyCZoneNS(ctx, name, depth, active)  BT_TRACYC_ZONE_(ctx, name, 0, depth, active);
#define TracyCZoneCS(ctx, color, depth, active) BT_TRACYC_ZONE_(ctx, NULL, color, depth, active);
#define TracyCZoneNCS(ctx, name, color, depth, active) \
    BT_TRACYC_ZONE_(ctx, name, color, depth, active);

#define TracyCMessageS(txt, size, depth) \
    ___tracy_emit_logString(TracyMessageSeverityInfo, 0, depth, size, txt)
#define TracyCMessageLS(txt, depth) \
    ___tracy_emit_logStringL(TracyMessageSeverityInfo, 0, depth, txt)
#define TracyCMessageCS(txt, size, color, depth) \
    ___tracy_emit_logString(TracyMessageSeverityInfo, color, depth, size, txt)
#define TracyCMessageLCS(txt, color, depth) \
    ___tracy_emit_logStringL(TracyMessageSeverityInfo, color, depth, txt)

struct __tracy_lockable_context_data *
___tracy_announce_lockable_ctx(const struct ___tracy_source_location_data *srcloc);
void ___tracy_terminate_lockable_ctx(struct __tracy_lockable_context_data *lockdata);
int32_t ___tracy_before_lock_lockable_ctx(struct __tracy_lockable_context_data *lockdata);
void ___tracy_after_lock_lockable_ctx(struct __tracy_lockable_context_data *lockdata);
void ___tracy_after_unlock_lockable_ctx(struct __tracy_lockable_context_data *lockdata);
void ___tracy_after_try_lock_lockable_ctx(struct __tracy_lockable_context_data *lockdata,
                                          int32_t acquired);
void ___tracy_mark_lockable_ctx(struct __tracy_lockable_context_data *lockdata,
                                const struct ___tracy_source_location_data *srcloc);
void ___tracy_custom_name_lockable_ctx(struct __tracy_lockable_context_data *lockdata,
                                       const char *name, size_t nameSz);

struct __tracy_shared_lockable_context_data *
___tracy_announce_shared_lockable_ctx(const struct ___tracy_source_location_data *srcloc);
void ___tracy_terminate_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata);
int32_t
___tracy_before_lock_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata);
void ___tracy_after_lock_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata);
void ___tracy_after_unlock_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata);
void ___tracy_after_try_lock_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata, int32_t acquired);
int32_t ___tracy_before_lock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata);
void ___tracy_after_lock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata);
void ___tracy_after_unlock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata);
void ___tracy_after_try_lock_shared_shared_lockable_ctx(
    struct __tracy_shared_lockable_context_data *lockdata, int32_t acquired);
void ___tracy_mark_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata,
                                       const struct ___tracy_source_location_data *srcloc);
void ___tracy_custom_name_shared_lockable_ctx(struct __tracy_shared_lockable_context_data *lockdata,
                                              const char *name, size_t nameSz);

#define TracyCLockAnnounce(lock) \
    BT_TRACYC_LOC_(NULL, 0);     \
    lock = ___tracy_announce_lockable_ctx(&TracyConcat(__tracy_source_location, TracyLine));
#define TracyCLockTerminate(lock)              ___tracy_terminate_lockable_ctx(lock);
#define TracyCLockBeforeLock(lock)             ___tracy_before_lock_lockable_ctx(lock);
#define TracyCLockAfterLock(lock)              ___tracy_after_lock_lockable_ctx(lock);
#define TracyCLockAfterUnlock(lock)            ___tracy_after_unlock_lockable_ctx(lock);
#define TracyCLockAfterTryLock(lock, acquired) ___tracy_after_try_lock_lockable_ctx(lock, acquired);
#define TracyCLockMark(lock) \
    BT_TRACYC_LOC_(NULL, 0); \
    ___tracy_mark_lockable_ctx(lock, &TracyConcat(__tracy_source_location, TracyLine));
#define TracyCLockCustomName(lock, name, nameSz) \
    ___tracy_custom_name_lockable_ctx(lock, name, nameSz);

#define TracyCSharedLockAnnounce(lock) \
    BT_TRACYC_LOC_(NULL, 0);           \
    lock = ___tracy_announce_shared_lockable_ctx(&TracyConcat(__tracy_source_location, TracyLine));
#define TracyCSharedLockTerminate(lock)   ___tracy_terminate_shared_lockable_ctx(lock);
#define TracyCSharedLockBeforeLock(lock)  ___tracy_before_lock_shared_lockable_ctx(lock);
#define TracyCSharedLockAfterLock(lock)   ___tracy_after_lock_shared_lockable_ctx(lock);
#define TracyCSharedLockAfterUnlock(lock) ___tracy_after_unlock_shared_lockable_ctx(lock);
#define TracyCSharedLockAfterTryLock(lock, acquired) \
    ___tracy_after_try_lock_shared_lockable_ctx(lock, acquired);
#define TracyCSharedLockBeforeSharedLock(lock) \
    ___tracy_before_lock_shared_shared_lockable_ctx(lock);
#define TracyCSharedLockAfterSharedLock(lock) ___tracy_after_lock_shared_shared_lockable_ctx(lock);
#define TracyCSharedLockAfterSharedUnlock(lock) \
    ___tracy_after_unlock_shared_shared_lockable_ctx(lock);
#define TracyCSharedLockAfterTrySharedLock(lock, acquired) \
    ___tracy_after_try_lock_shared_shared_lockable_ctx(lock, acquired);
#define TracyCSharedLockMark(lock) \
    BT_TRACYC_LOC_(NULL, 0);       \
    ___tracy_mark_shared_lockable_ctx(lock, &TracyConcat(__tracy_source_location, TracyLine));
#define TracyCSharedLockCustomName(lock, name, nameSz) \
    ___tracy_custom_name_shared_lockable_ctx(lock, name, nameSz);
#define TracyCSharedLockAnnonce(lock) TracyCSharedLockAnnounce(lock)

#define TracyCIsConnected ___tracy_connected()

int ___tracy_begin_sampling_profiling(void);
void ___tracy_end_sampling_profiling(void);

#define TracyCBeginSamplingProfiling() ___tracy_begin_sampling_profiling()
#define TracyCEndSamplingProfiling()   ___tracy_end_sampling_profiling()

void ___tracy_fiber_enter(const char *fiber);
void ___tracy_fiber_leave(void);
#ifdef TRACY_FIBERS
#define TracyCFiberEnter(fiber) ___tracy_fiber_enter(fiber);
#define TracyCFiberLeave        ___tracy_fiber_leave();
#endif

int64_t ___tracy_get_time(void);

#endif /* TRACY_ENABLE */

#ifdef __cplusplus
}
#endif

#endif
