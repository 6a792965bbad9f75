// Tracy's C++ API (upstream v0.14.0's tracy/Tracy.hpp: its macros, and the
// tracy:: names it declares) on boardtrace's runtime: header-only, over the C
// entry points of tracy/TracyC.h and boardtrace/trace.h, for C++11 to C++20.
// Without TRACY_ENABLE every macro compiles to nothing; tracy::Color and the
// helpers of tracy/TracySystem.hpp exist in both builds, as upstream's.
// Written from Tracy's documented API; what differs is in runtime/README.md.
#ifndef BOARDTRACE_TRACY_HPP
#define BOARDTRACE_TRACY_HPP

#include <stdint.h>
#include <string.h>

#include "TracyC.h"
#include "TracyColor.hpp"
#include "TracySystem.hpp"
#include <boardtrace/trace.h>

// Parameter types (TracyParameterSetup).
#define TracyParamTypeInt     0
#define TracyParamTypeBool    1
#define TracyParamTypeTrigger 2

#ifndef TRACY_ENABLE

#define TracyNoop

#define ZoneNamed(x, y)
#define ZoneNamedN(x, y, z)
#define ZoneNamedC(x, y, z)
#define ZoneNamedNC(x, y, z, w)

#define ZoneTransient(x, y)
#define ZoneTransientN(x, y, z)
#define ZoneTransientNC(x, y, z, w)

#define ZoneScoped
#define ZoneScopedN(x)
#define ZoneScopedC(x)
#define ZoneScopedNC(x, y)

#define ZoneText(x, y)
#define ZoneTextV(x, y, z)
#define ZoneTextF(x, ...)
#define ZoneTextVF(x, y, ...)
#define ZoneName(x, y)
#define ZoneNameV(x, y, z)
#define ZoneNameF(x, ...)
#define ZoneNameVF(x, y, ...)
#define ZoneColor(x)
#define ZoneColorV(x, y)
#define ZoneValue(x)
#define ZoneValueV(x, y)
#define ZoneIsActive     false
#define ZoneIsActiveV(x) false

#define FrameMark
#define FrameMarkNamed(x)
#define FrameMarkStart(x)
#define FrameMarkEnd(x)

#define FrameImage(x, y, z, w, a)

#define TracyLockable(type, varname)              type varname
#define TracyLockableN(type, varname, desc)       type varname
#define TracySharedLockable(type, varname)        type varname
#define TracySharedLockableN(type, varname, desc) type varname
#define LockableBase(type)                        type
#define SharedLockableBase(type)                  type
#define LockMark(x)                               (void)x
#define LockableName(x, y, z)

#define TracyPlot(x, y)
#define TracyPlotConfig(x, y, z, w, a)

#define TracyMessage(x, y)
#define TracyMessageL(x)
#define TracyMessageC(x, y, z)
#define TracyMessageLC(x, y)
#define TracyAppInfo(x, y)
#define TracyLogString(x, y, z, ...)

#define TracyAlloc(x, y)
#define TracyFree(x)
#define TracyMemoryDiscard(x)
#define TracySecureAlloc(x, y)
#define TracySecureFree(x)
#define TracySecureMemoryDiscard(x)

#define TracyAllocN(x, y, z)
#define TracyFreeN(x, y)
#define TracySecureAllocN(x, y, z)
#define TracySecureFreeN(x, y)

#define ZoneNamedS(x, y, z)
#define ZoneNamedNS(x, y, z, w)
#define ZoneNamedCS(x, y, z, w)
#define ZoneNamedNCS(x, y, z, w, a)

#define ZoneTransientS(x, y, z)
#define ZoneTransientNS(x, y, z, w)

#define ZoneScopedS(x)
#define ZoneScopedNS(x, y)
#define ZoneScopedCS(x, y)
#define ZoneScopedNCS(x, y, z)

#define TracyAllocS(x, y, z)
#define TracyFreeS(x, y)
#define TracyMemoryDiscardS(x, y)
#define TracySecureAllocS(x, y, z)
#define TracySecureFreeS(x, y)
#define TracySecureMemoryDiscardS(x, y)

#define TracyAllocNS(x, y, z, w)
#define TracyFreeNS(x, y, z)
#define TracySecureAllocNS(x, y, z, w)
#define TracySecureFreeNS(x, y, z)

#define TracyMessageS(x, y, z)
#define TracyMessageLS(x, y)
#define TracyMessageCS(x, y, z, w)
#define TracyMessageLCS(x, y, z)

#define TracySourceCallbackRegister(x, y)
#define TracyParameterRegister(x, y)
#define TracyParameterSetup(x, y, z, w)
#define TracyIsConnected false
#define TracyIsStarted   false
#define TracySetProgramName(x)
#define TracySetThreadName(x)

#define TracySectionEnter(x, ...)            0
#define TracySectionEnterCategory(x, y, ...) 0
#define TracySectionLeave(x)
#define TracySectionSetup(x, y, ...)

#define TracyFiberEnter(x)
#define TracyFiberEnterHint(x, y)
#define TracyFiberLeave

#else /* TRACY_ENABLE */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

namespace tracy
{

typedef ___tracy_source_location_data SourceLocationData;

enum class PlotFormatType : uint8_t { Number, Memory, Percentage, Watt };

enum class MessageSeverity : uint8_t { Trace, Debug, Info, Warning, Error, Fatal };

// A parameter the GUI changed: (data, idx, value), on the runtime's thread.
typedef void (*ParameterCallback)(void *data, uint32_t idx, int32_t val);
// A source file the runtime cannot read: its contents in a buffer from
// malloc (the runtime frees it) and their size in size, or nullptr.
typedef char *(*SourceContentsCallback)(void *data, const char *filename, size_t &size);

inline void StartupProfiler()
{
    ___tracy_startup_profiler();
}
inline void ShutdownProfiler()
{
    ___tracy_shutdown_profiler();
}
inline bool IsProfilerStarted()
{
    return ___tracy_profiler_started() != 0;
}
inline bool ProfilerAvailable()
{
    return ___tracy_profiler_started() != 0;
}

// The calls behind upstream's section, parameter, source and program-name
// macros, under upstream's names.
class Profiler
{
  public:
    static uint32_t SectionEnter(uint16_t category, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)))
    {
        va_list args;
        va_start(args, fmt);
        uint32_t id = Format(category, fmt, args, true);
        va_end(args);
        return id;
    }
    static void SectionLeave(uint32_t id)
    {
        bt_section_leave(id);
    }
    static void SectionSetup(uint16_t category, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)))
    {
        va_list args;
        va_start(args, fmt);
        Format(category, fmt, args, false);
        va_end(args);
    }
    static void ParameterRegister(ParameterCallback cb, void *data)
    {
        bt_param_register(cb, data);
    }
    static void ParameterSetup(uint32_t idx, const char *name, uint8_t type, int32_t val)
    {
        bt_param_setup(idx, name, type, val);
    }
    static void SourceCallbackRegister(SourceContentsCallback cb, void *data)
    {
        // the runtime's callback takes a pointer where upstream's takes a
        // reference: the pair is kept for the runtime's thread (a few bytes
        // per registration, which programs make once)
        SourceHook *hook = static_cast<SourceHook *>(malloc(sizeof(SourceHook)));
        if (!hook)
            return;
        hook->cb = cb;
        hook->data = data;
        bt_source_callback_register(cb ? SourceTrampoline : nullptr, hook);
    }
    bool IsConnected() const
    {
        return ___tracy_connected() != 0;
    }
    void SetProgramName(const char *name)
    {
        bt_program_set_name(name);
    }

  private:
    struct SourceHook {
        SourceContentsCallback cb;
        void *data;
    };
    static char *SourceTrampoline(void *hook, const char *filename, size_t *size)
    {
        SourceHook *h = static_cast<SourceHook *>(hook);
        return h->cb(h->data, filename, *size);
    }
    static uint32_t Format(uint16_t category, const char *fmt, va_list args, bool enter)
    {
        char small[256];
        va_list again;
        va_copy(again, args);
        int n = vsnprintf(small, sizeof small, fmt, args);
        if (n < 0) {
            va_end(again);
            return 0;
        }
        char *text = small;
        if ((size_t)n >= sizeof small) {
            text = static_cast<char *>(malloc((size_t)n + 1));
            if (text)
                vsnprintf(text, (size_t)n + 1, fmt, again);
        }
        va_end(again);
        if (!text)
            return 0;
        uint32_t id = 0;
        if (enter)
            id = bt_section_enter(category, text, (size_t)n);
        else
            bt_section_setup(category, text, (size_t)n);
        if (text != small)
            free(text);
        return id;
    }
};

inline Profiler &GetProfiler()
{
    static Profiler profiler;
    return profiler;
}

// A zone for the enclosing scope: begun by the constructor, ended by the
// destructor.
class ScopedZone
{
  public:
    ScopedZone(const SourceLocationData *srcloc, int32_t depth = 0, bool active = true)
        : m_ctx(___tracy_emit_zone_begin_callstack(srcloc, depth, active))
    {
    }
    ScopedZone(uint32_t line, const char *source, size_t sourceSz, const char *function,
               size_t functionSz, const char *name, size_t nameSz, uint32_t color, int32_t depth,
               bool active)
        : m_ctx(___tracy_emit_zone_begin_alloc_callstack(
              ___tracy_alloc_srcloc_name(line, source, sourceSz, function, functionSz, name, nameSz,
                                         color),
              depth, active))
    {
    }
    ScopedZone(uint32_t line, const char *source, size_t sourceSz, const char *function,
               size_t functionSz, const char *name, size_t nameSz, int32_t depth, bool active)
        : ScopedZone(line, source, sourceSz, function, functionSz, name, nameSz, 0, depth, active)
    {
    }
    ~ScopedZone()
    {
        ___tracy_emit_zone_end(m_ctx);
    }
    ScopedZone(const ScopedZone &) = delete;
    ScopedZone &operator=(const ScopedZone &) = delete;

    void Text(const char *txt, size_t size)
    {
        ___tracy_emit_zone_text(m_ctx, txt, size);
    }
    void Text(const char *txt)
    {
        ___tracy_emit_zone_text(m_ctx, txt, strlen(txt));
    }
    void TextFmt(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        va_list args;
        va_start(args, fmt);
        Format(false, fmt, args);
        va_end(args);
    }
    void Name(const char *txt, size_t size)
    {
        ___tracy_emit_zone_name(m_ctx, txt, size);
    }
    void Name(const char *txt)
    {
        ___tracy_emit_zone_name(m_ctx, txt, strlen(txt));
    }
    void NameFmt(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        va_list args;
        va_start(args, fmt);
        Format(true, fmt, args);
        va_end(args);
    }
    void Color(uint32_t color)
    {
        ___tracy_emit_zone_color(m_ctx, color);
    }
    void Value(uint64_t value)
    {
        ___tracy_emit_zone_value(m_ctx, value);
    }
    bool IsActive() const
    {
        return m_ctx.active != 0;
    }

  private:
    void Format(bool name, const char *fmt, va_list args)
    {
        if (!m_ctx.active)
            return;
        char text[1024];
        int n = vsnprintf(text, sizeof(text), fmt, args);
        if (n < 0)
            return;
        size_t len = (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1;
        if (name)
            ___tracy_emit_zone_name(m_ctx, text, len);
        else
            ___tracy_emit_zone_text(m_ctx, text, len);
    }

    TracyCZoneCtx m_ctx;
};

// A mutex whose use is traced (TracyLockable).
template <class T> class Lockable
{
  public:
    explicit Lockable(const SourceLocationData *srcloc)
        : m_ctx(___tracy_announce_lockable_ctx(srcloc))
    {
    }
    ~Lockable()
    {
        ___tracy_terminate_lockable_ctx(m_ctx);
    }
    Lockable(const Lockable &) = delete;
    Lockable &operator=(const Lockable &) = delete;

    void lock()
    {
        ___tracy_before_lock_lockable_ctx(m_ctx);
        m_lockable.lock();
        ___tracy_after_lock_lockable_ctx(m_ctx);
    }
    void unlock()
    {
        m_lockable.unlock();
        ___tracy_after_unlock_lockable_ctx(m_ctx);
    }
    bool try_lock()
    {
        bool acquired = m_lockable.try_lock();
        ___tracy_after_try_lock_lockable_ctx(m_ctx, acquired);
        return acquired;
    }
    void Mark(const SourceLocationData *srcloc)
    {
        ___tracy_mark_lockable_ctx(m_ctx, srcloc);
    }
    void CustomName(const char *name, size_t size)
    {
        ___tracy_custom_name_lockable_ctx(m_ctx, name, size);
    }

  private:
    T m_lockable;
    TracyCLockCtx m_ctx;
};

// A readers-writer lock whose use is traced (TracySharedLockable).
template <class T> class SharedLockable
{
  public:
    explicit SharedLockable(const SourceLocationData *srcloc)
        : m_ctx(___tracy_announce_shared_lockable_ctx(srcloc))
    {
    }
    ~SharedLockable()
    {
        ___tracy_terminate_shared_lockable_ctx(m_ctx);
    }
    SharedLockable(const SharedLockable &) = delete;
    SharedLockable &operator=(const SharedLockable &) = delete;

    void lock()
    {
        ___tracy_before_lock_shared_lockable_ctx(m_ctx);
        m_lockable.lock();
        ___tracy_after_lock_shared_lockable_ctx(m_ctx);
    }
    void unlock()
    {
        m_lockable.unlock();
        ___tracy_after_unlock_shared_lockable_ctx(m_ctx);
    }
    bool try_lock()
    {
        bool acquired = m_lockable.try_lock();
        ___tracy_after_try_lock_shared_lockable_ctx(m_ctx, acquired);
        return acquired;
    }
    void lock_shared()
    {
        ___tracy_before_lock_shared_shared_lockable_ctx(m_ctx);
        m_lockable.lock_shared();
        ___tracy_after_lock_shared_shared_lockable_ctx(m_ctx);
    }
    void unlock_shared()
    {
        m_lockable.unlock_shared();
        ___tracy_after_unlock_shared_shared_lockable_ctx(m_ctx);
    }
    bool try_lock_shared()
    {
        bool acquired = m_lockable.try_lock_shared();
        ___tracy_after_try_lock_shared_shared_lockable_ctx(m_ctx, acquired);
        return acquired;
    }
    void Mark(const SourceLocationData *srcloc)
    {
        ___tracy_mark_shared_lockable_ctx(m_ctx, srcloc);
    }
    void CustomName(const char *name, size_t size)
    {
        ___tracy_custom_name_shared_lockable_ctx(m_ctx, name, size);
    }

  private:
    T m_lockable;
    TracyCSharedLockCtx m_ctx;
};

inline void PlotData(const char *name, int64_t val)
{
    ___tracy_emit_plot_int(name, val);
}
inline void PlotData(const char *name, float val)
{
    ___tracy_emit_plot_float(name, val);
}
inline void PlotData(const char *name, double val)
{
    ___tracy_emit_plot(name, val);
}
inline void ConfigurePlot(const char *name, PlotFormatType type, bool step = false,
                          bool fill = true, uint32_t color = 0)
{
    ___tracy_emit_plot_config(name, (int32_t)type, step, fill, color);
}

inline void LogString(MessageSeverity severity, uint32_t color, int32_t depth, size_t size,
                      const char *txt)
{
    ___tracy_emit_logString((int8_t)severity, (int32_t)color, depth, size, txt);
}
inline void LogString(MessageSeverity severity, uint32_t color, int32_t depth, const char *txt)
{
    ___tracy_emit_logStringL((int8_t)severity, (int32_t)color, depth, txt);
}

} // namespace tracy

#define TracyNoop ((void)0)

#define BT_TRACY_LOC_(name, color)                                                             \
    static constexpr tracy::SourceLocationData TracyConcat(__tracy_source_location, TracyLine) \
    {                                                                                          \
        name, TracyFunction, TracyFile, (uint32_t)TracyLine, (uint32_t)(color)                 \
    }

#define ZoneNamedNCS(varname, name, color, depth, active) \
    BT_TRACY_LOC_(name, color);                           \
    tracy::ScopedZone varname(&TracyConcat(__tracy_source_location, TracyLine), depth, active)
#define ZoneNamedS(varname, depth, active)        ZoneNamedNCS(varname, nullptr, 0, depth, active)
#define ZoneNamedNS(varname, name, depth, active) ZoneNamedNCS(varname, name, 0, depth, active)
#define ZoneNamedCS(varname, color, depth, active) \
    ZoneNamedNCS(varname, nullptr, color, depth, active)
#define ZoneNamed(varname, active)        ZoneNamedS(varname, BT_TRACYC_ZONE_DEPTH_, active)
#define ZoneNamedN(varname, name, active) ZoneNamedNS(varname, name, BT_TRACYC_ZONE_DEPTH_, active)
#define ZoneNamedC(varname, color, active) \
    ZoneNamedCS(varname, color, BT_TRACYC_ZONE_DEPTH_, active)
#define ZoneNamedNC(varname, name, color, active) \
    ZoneNamedNCS(varname, name, color, BT_TRACYC_ZONE_DEPTH_, active)

#define ZoneTransientS(varname, depth, active)                                        \
    tracy::ScopedZone varname(TracyLine, TracyFile, strlen(TracyFile), TracyFunction, \
                              strlen(TracyFunction), nullptr, 0, depth, active)
#define ZoneTransientNS(varname, name, depth, active)                                 \
    tracy::ScopedZone varname(TracyLine, TracyFile, strlen(TracyFile), TracyFunction, \
                              strlen(TracyFunction), name, strlen(name), depth, active)
#define ZoneTransient(varname, active) ZoneTransientS(varname, BT_TRACYC_ZONE_DEPTH_, active)
#define ZoneTransientN(varname, name, active) \
    ZoneTransientNS(varname, name, BT_TRACYC_ZONE_DEPTH_, active)
#define ZoneTransientNC(varname, name, color, active)                                 \
    tracy::ScopedZone varname(TracyLine, TracyFile, strlen(TracyFile), TracyFunction, \
                              strlen(TracyFunction), name, strlen(name), color,       \
                              BT_TRACYC_ZONE_DEPTH_, active)

#if defined(__GNUC__)
#define BT_TRACY_NO_SHADOW_(expr)                                                       \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wshadow\"") expr; \
    _Pragma("GCC diagnostic pop")
#else
#define BT_TRACY_NO_SHADOW_(expr) expr
#endif

#define ZoneScoped         BT_TRACY_NO_SHADOW_(ZoneNamed(___tracy_scoped_zone, true))
#define ZoneScopedN(name)  BT_TRACY_NO_SHADOW_(ZoneNamedN(___tracy_scoped_zone, name, true))
#define ZoneScopedC(color) BT_TRACY_NO_SHADOW_(ZoneNamedC(___tracy_scoped_zone, color, true))
#define ZoneScopedNC(name, color) \
    BT_TRACY_NO_SHADOW_(ZoneNamedNC(___tracy_scoped_zone, name, color, true))
#define ZoneScopedS(depth) BT_TRACY_NO_SHADOW_(ZoneNamedS(___tracy_scoped_zone, depth, true))
#define ZoneScopedNS(name, depth) \
    BT_TRACY_NO_SHADOW_(ZoneNamedNS(___tracy_scoped_zone, name, depth, true))
#define ZoneScopedCS(color, depth) \
    BT_TRACY_NO_SHADOW_(ZoneNamedCS(___tracy_scoped_zone, color, depth, true))
#define ZoneScopedNCS(name, color, depth) \
    BT_TRACY_NO_SHADOW_(ZoneNamedNCS(___tracy_scoped_zone, name, color, depth, true))

#define ZoneText(txt, size)           ___tracy_scoped_zone.Text(txt, size)
#define ZoneTextV(varname, txt, size) varname.Text(txt, size)
#define ZoneTextF(fmt, ...)           ___tracy_scoped_zone.TextFmt(fmt, ##__VA_ARGS__)
#define ZoneTextVF(varname, fmt, ...) varname.TextFmt(fmt, ##__VA_ARGS__)
#define ZoneName(txt, size)           ___tracy_scoped_zone.Name(txt, size)
#define ZoneNameV(varname, txt, size) varname.Name(txt, size)
#define ZoneNameF(fmt, ...)           ___tracy_scoped_zone.NameFmt(fmt, ##__VA_ARGS__)
#define ZoneNameVF(varname, fmt, ...) varname.NameFmt(fmt, ##__VA_ARGS__)
#define ZoneColor(color)              ___tracy_scoped_zone.Color(color)
#define ZoneColorV(varname, color)    varname.Color(color)
#define ZoneValue(value)              ___tracy_scoped_zone.Value(value)
#define ZoneValueV(varname, value)    varname.Value(value)
#define ZoneIsActive                  ___tracy_scoped_zone.IsActive()
#define ZoneIsActiveV(varname)        varname.IsActive()

#define FrameMark            ___tracy_emit_frame_mark(nullptr)
#define FrameMarkNamed(name) ___tracy_emit_frame_mark(name)
#define FrameMarkStart(name) ___tracy_emit_frame_mark_start(name)
#define FrameMarkEnd(name)   ___tracy_emit_frame_mark_end(name)

#define FrameImage(image, width, height, offset, flip) \
    ___tracy_emit_frame_image(image, width, height, offset, flip)

#define BT_TRACY_LOCKLOC_(desc)                                                     \
    []() -> const tracy::SourceLocationData * {                                     \
        static constexpr tracy::SourceLocationData srcloc{nullptr, desc, TracyFile, \
                                                          (uint32_t)TracyLine, 0};  \
        return &srcloc;                                                             \
    }()
#define TracyLockable(type, varname)          \
    tracy::Lockable<type> varname             \
    {                                         \
        BT_TRACY_LOCKLOC_(#type " " #varname) \
    }
#define TracyLockableN(type, varname, desc) \
    tracy::Lockable<type> varname           \
    {                                       \
        BT_TRACY_LOCKLOC_(desc)             \
    }
#define TracySharedLockable(type, varname)    \
    tracy::SharedLockable<type> varname       \
    {                                         \
        BT_TRACY_LOCKLOC_(#type " " #varname) \
    }
#define TracySharedLockableN(type, varname, desc) \
    tracy::SharedLockable<type> varname           \
    {                                             \
        BT_TRACY_LOCKLOC_(desc)                   \
    }
#define LockableBase(type)       tracy::Lockable<type>
#define SharedLockableBase(type) tracy::SharedLockable<type>
#define LockMark(varname)                                                                      \
    static constexpr tracy::SourceLocationData TracyConcat(__tracy_lock_location_, TracyLine){ \
        nullptr, TracyFunction, TracyFile, (uint32_t)TracyLine, 0};                            \
    varname.Mark(&TracyConcat(__tracy_lock_location_, TracyLine))
#define LockableName(varname, txt, size) varname.CustomName(txt, size)

#define TracyPlot(name, val) tracy::PlotData(name, val)
#define TracyPlotConfig(name, type, step, fill, color) \
    tracy::ConfigurePlot(name, type, step, fill, color)

#define TracyAppInfo(txt, size) ___tracy_emit_message_appinfo(txt, size)

#define TracyLogString(severity, color, depth, ...) \
    tracy::LogString(severity, color, depth, __VA_ARGS__)

#define TracyMessageS(txt, size, depth) \
    tracy::LogString(tracy::MessageSeverity::Info, 0, depth, size, txt)
#define TracyMessageLS(txt, depth) tracy::LogString(tracy::MessageSeverity::Info, 0, depth, txt)
#define TracyMessageCS(txt, size, color, depth) \
    tracy::LogString(tracy::MessageSeverity::Info, color, depth, size, txt)
#define TracyMessageLCS(txt, color, depth) \
    tracy::LogString(tracy::MessageSeverity::Info, color, depth, txt)
#define TracyMessage(txt, size)         TracyMessageS(txt, size, BT_TRACYC_MSG_DEPTH_)
#define TracyMessageL(txt)              TracyMessageLS(txt, BT_TRACYC_MSG_DEPTH_)
#define TracyMessageC(txt, size, color) TracyMessageCS(txt, size, color, BT_TRACYC_MSG_DEPTH_)
#define TracyMessageLC(txt, color)      TracyMessageLCS(txt, color, BT_TRACYC_MSG_DEPTH_)

/* Memory tracking is part of TRACING_MODE 2 and up, as with TracyC.h. */
#if BT_TRACING_MODE >= 2
#define TracyAllocS(ptr, size, depth)    ___tracy_emit_memory_alloc_callstack(ptr, size, depth)
#define TracyFreeS(ptr, depth)           ___tracy_emit_memory_free_callstack(ptr, depth)
#define TracyMemoryDiscardS(name, depth) ___tracy_emit_memory_discard_callstack(name, depth)
#define TracyAllocNS(ptr, size, depth, name) \
    ___tracy_emit_memory_alloc_callstack_named(ptr, size, depth, name)
#define TracyFreeNS(ptr, depth, name)              ___tracy_emit_memory_free_callstack_named(ptr, depth, name)
#define TracyAlloc(ptr, size)                      TracyAllocS(ptr, size, BT_TRACYC_MEM_DEPTH_)
#define TracyFree(ptr)                             TracyFreeS(ptr, BT_TRACYC_MEM_DEPTH_)
#define TracyMemoryDiscard(name)                   TracyMemoryDiscardS(name, BT_TRACYC_MEM_DEPTH_)
#define TracyAllocN(ptr, size, name)               TracyAllocNS(ptr, size, BT_TRACYC_MEM_DEPTH_, name)
#define TracyFreeN(ptr, name)                      TracyFreeNS(ptr, BT_TRACYC_MEM_DEPTH_, name)
#define TracySecureAlloc(ptr, size)                TracyAlloc(ptr, size)
#define TracySecureFree(ptr)                       TracyFree(ptr)
#define TracySecureMemoryDiscard(name)             TracyMemoryDiscard(name)
#define TracySecureAllocN(ptr, size, name)         TracyAllocN(ptr, size, name)
#define TracySecureFreeN(ptr, name)                TracyFreeN(ptr, name)
#define TracySecureAllocS(ptr, size, depth)        TracyAllocS(ptr, size, depth)
#define TracySecureFreeS(ptr, depth)               TracyFreeS(ptr, depth)
#define TracySecureMemoryDiscardS(name, depth)     TracyMemoryDiscardS(name, depth)
#define TracySecureAllocNS(ptr, size, depth, name) TracyAllocNS(ptr, size, depth, name)
#define TracySecureFreeNS(ptr, depth, name)        TracyFreeNS(ptr, depth, name)

#else
#define TracyAllocS(ptr, size, depth)              ((void)sizeof(ptr), (void)sizeof(size))
#define TracyFreeS(ptr, depth)                     ((void)sizeof(ptr))
#define TracyMemoryDiscardS(name, depth)           ((void)sizeof(name))
#define TracyAllocNS(ptr, size, depth, name)       ((void)sizeof(ptr), (void)sizeof(size))
#define TracyFreeNS(ptr, depth, name)              ((void)sizeof(ptr))
#define TracyAlloc(ptr, size)                      ((void)sizeof(ptr), (void)sizeof(size))
#define TracyFree(ptr)                             ((void)sizeof(ptr))
#define TracyMemoryDiscard(name)                   ((void)sizeof(name))
#define TracyAllocN(ptr, size, name)               ((void)sizeof(ptr), (void)sizeof(size))
#define TracyFreeN(ptr, name)                      ((void)sizeof(ptr))
#define TracySecureAlloc(ptr, size)                TracyAlloc(ptr, size)
#define TracySecureFree(ptr)                       TracyFree(ptr)
#define TracySecureMemoryDiscard(name)             TracyMemoryDiscard(name)
#define TracySecureAllocN(ptr, size, name)         TracyAllocN(ptr, size, name)
#define TracySecureFreeN(ptr, name)                TracyFreeN(ptr, name)
#define TracySecureAllocS(ptr, size, depth)        TracyAllocS(ptr, size, depth)
#define TracySecureFreeS(ptr, depth)               TracyFreeS(ptr, depth)
#define TracySecureMemoryDiscardS(name, depth)     TracyMemoryDiscardS(name, depth)
#define TracySecureAllocNS(ptr, size, depth, name) TracyAllocNS(ptr, size, depth, name)
#define TracySecureFreeNS(ptr, depth, name)        TracyFreeNS(ptr, depth, name)
#endif

#define TracySourceCallbackRegister(cb, data) tracy::Profiler::SourceCallbackRegister(cb, data)
#define TracyParameterRegister(cb, data)      tracy::Profiler::ParameterRegister(cb, data)
#define TracyParameterSetup(idx, name, type, val) \
    tracy::Profiler::ParameterSetup(idx, name, type, val)
#define TracyIsConnected          (___tracy_connected() != 0)
#define TracyIsStarted            (___tracy_profiler_started() != 0)
#define TracySetProgramName(name) tracy::GetProfiler().SetProgramName(name)
#define TracySetThreadName(name)  tracy::SetThreadName(name)

#define TracySectionEnter(fmt, ...) tracy::Profiler::SectionEnter(0, fmt, ##__VA_ARGS__)
#define TracySectionEnterCategory(category, fmt, ...) \
    tracy::Profiler::SectionEnter(category, fmt, ##__VA_ARGS__)
#define TracySectionLeave(id) tracy::Profiler::SectionLeave(id)
#define TracySectionSetup(category, fmt, ...) \
    tracy::Profiler::SectionSetup(category, fmt, ##__VA_ARGS__)

#define TracyFiberEnter(fiber)                bt_fiber_enter(fiber, 0)
#define TracyFiberEnterHint(fiber, groupHint) bt_fiber_enter(fiber, groupHint)
#define TracyFiberLeave                       bt_fiber_leave()

#endif /* TRACY_ENABLE */

#endif
