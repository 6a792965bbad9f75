/* boardtrace tracing API: zones, messages, plots, frames, thread names,
 * memory and locks, emitted to a Tracy v0.14.0 capture. Selected by
 * <boardtrace/config.h>: everything compiles to nothing when RUNTIME_TRACING
 * is OFF, and TRACING_MODE picks the features (1 zones + messages, 2 + memory,
 * 3 + memory callstacks, 4 + callstacks on every zone). */
#ifndef BOARDTRACE_TRACE_H
#define BOARDTRACE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <boardtrace/config.h>
#include <boardtrace/note.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A static source location. Must outlive the program's tracing (the capture
 * asks for its strings by address at any time): the BT_ZONE* macros declare
 * one as a static object. name may be NULL (the zone is shown by function). */
struct bt_srcloc {
    const char *name;
    const char *function;
    const char *file;
    uint32_t line;
    uint32_t color; /* 0xRRGGBB, 0 = default */
};

/* What a zone begin returns and its end takes. active is 0 when the zone was
 * not recorded (inactive by request, or dropped under the memory policy of
 * runtime/README.md); the end of an inactive zone emits nothing. */
typedef struct bt_zone {
    int active;
} bt_zone;

enum bt_severity {
    BT_SEVERITY_TRACE = 0,
    BT_SEVERITY_DEBUG = 1,
    BT_SEVERITY_INFO = 2,
    BT_SEVERITY_WARNING = 3,
    BT_SEVERITY_ERROR = 4,
    BT_SEVERITY_FATAL = 5,
};

enum bt_plot_format {
    BT_PLOT_NUMBER = 0,
    BT_PLOT_MEMORY = 1,
    BT_PLOT_PERCENTAGE = 2,
    BT_PLOT_WATT = 3,
};

/* Texts longer than this (the protocol's limit) are cut to it. */
#define BT_TEXT_MAX 65535u

struct bt_lock;

/* What a macro compiled out does with its arguments: sizeof evaluates nothing
 * and emits no code, but keeps the caller's variables "used" (no warnings). */
#define BT_UNUSED_(x) ((void)sizeof(x))

/* The functions exist when tracing is compiled in (and for the library's own
 * sources, which build either way); user code reaches them through macros. */
#if BT_RUNTIME_TRACING || defined(BT_BUILDING_RUNTIME)

/* Zones. depth > 0 records a callstack of that many frames (mode >= 3). */
bt_zone bt_zone_begin(const struct bt_srcloc *loc, int depth, int active);
/* A zone whose source location is built at run time (names need not outlive
 * the call; they are copied). name may be NULL. */
bt_zone bt_zone_begin_dynamic(uint32_t line, const char *file, size_t file_len,
                              const char *function, size_t function_len, const char *name,
                              size_t name_len, uint32_t color, int depth, int active);
/* The same in two steps, as Tracy's C API does it: make returns a handle the
 * same thread passes to bt_zone_begin_made (at most 4 handles outstanding per
 * thread; the strings are copied by make). */
uint64_t bt_srcloc_make(uint32_t line, const char *file, size_t file_len, const char *function,
                        size_t function_len, const char *name, size_t name_len, uint32_t color);
bt_zone bt_zone_begin_made(uint64_t handle, int depth, int active);
void bt_zone_end(bt_zone zone);
void bt_zone_text(bt_zone zone, const char *text, size_t len);
void bt_zone_name(bt_zone zone, const char *text, size_t len);
void bt_zone_color(bt_zone zone, uint32_t color);
void bt_zone_value(bt_zone zone, uint64_t value);

/* Messages. The text is copied; literal variants send only the address, so
 * the text must live until the program exits (a string literal). */
void bt_message(const char *text, size_t len, enum bt_severity severity, int depth);
void bt_message_color(const char *text, size_t len, uint32_t color, enum bt_severity severity,
                      int depth);
void bt_message_literal(const char *text, enum bt_severity severity, int depth);
void bt_message_literal_color(const char *text, uint32_t color, enum bt_severity severity,
                              int depth);
void bt_app_info(const char *text, size_t len);

/* Plots, frames and names: name strings must live until the program exits. */
void bt_plot_int(const char *name, int64_t value);
void bt_plot_float(const char *name, float value);
void bt_plot_double(const char *name, double value);
void bt_plot_config(const char *name, enum bt_plot_format format, int step, int fill,
                    uint32_t color);
void bt_frame_mark(const char *name); /* NULL: the default frame set */
void bt_frame_mark_start(const char *name);
void bt_frame_mark_end(const char *name);
void bt_thread_set_name(const char *name); /* copied */
/* As bt_thread_set_name, and the GUI shows the threads of one non-zero
 * group_hint together (Tracy's SetThreadNameWithHint). */
void bt_thread_set_name_hint(const char *name, int32_t group_hint);
/* The name the thread tid was given through the API, into buf (cut to
 * size); 0 if it was given none. */
int bt_thread_get_name(uint32_t tid, char *buf, size_t size);
/* The name the discovery broadcast announces the program by (copied; the
 * welcome keeps the process name, as upstream's SetProgramName). */
void bt_program_set_name(const char *name);

/* Sections (Tracy 0.13's TracySection*): a labelled span of the calling
 * thread's time line in a category. enter returns the id leave takes (0
 * when not traced; leave ignores 0); setup names a category. Texts are
 * copied. */
uint32_t bt_section_enter(uint16_t category, const char *text, size_t len);
void bt_section_leave(uint32_t id);
void bt_section_setup(uint16_t category, const char *text, size_t len);

/* Parameters the GUI can change: setup announces parameter idx (type 0
 * int, 1 bool, 2 trigger; the name must live until the program exits); a
 * change calls the registered callback on the runtime's worker thread. */
typedef void (*bt_param_callback)(void *data, uint32_t idx, int32_t value);
void bt_param_register(bt_param_callback callback, void *data);
void bt_param_setup(uint32_t idx, const char *name, uint8_t type, int32_t value);

/* Source files the runtime cannot read itself (a file asked for that is
 * missing, or newer than the executable): the callback, called on the
 * worker thread, returns the file's contents in a malloc'ed buffer (the
 * runtime frees it) and their size, or NULL. */
typedef char *(*bt_source_callback)(void *data, const char *filename, size_t *size);
void bt_source_callback_register(bt_source_callback callback, void *data);

/* Memory. pool NULL is the default pool; a named pool's name must live until
 * the program exits. depth > 0 records a callstack. */
void bt_mem_alloc(const void *ptr, size_t size, const char *pool, int depth);
void bt_mem_free(const void *ptr, const char *pool, int depth);
void bt_mem_discard(const char *pool, int depth);

/* Locks: announce returns the handle the other calls take (NULL when the
 * runtime is out of memory; every call accepts NULL). */
struct bt_lock *bt_lock_announce(const struct bt_srcloc *loc);
void bt_lock_terminate(struct bt_lock *lock);
int bt_lock_before_lock(struct bt_lock *lock);
void bt_lock_after_lock(struct bt_lock *lock);
void bt_lock_after_unlock(struct bt_lock *lock);
void bt_lock_after_try_lock(struct bt_lock *lock, int acquired);
void bt_lock_mark(struct bt_lock *lock, const struct bt_srcloc *loc);
void bt_lock_set_name(struct bt_lock *lock, const char *name, size_t len);

/* Shared locks (readers-writer): announce one, then report exclusive use
 * with the calls above and shared use with these. */
struct bt_lock *bt_shared_lock_announce(const struct bt_srcloc *loc);
int bt_lock_before_shared_lock(struct bt_lock *lock);
void bt_lock_after_shared_lock(struct bt_lock *lock);
void bt_lock_after_shared_unlock(struct bt_lock *lock);
void bt_lock_after_try_shared_lock(struct bt_lock *lock, int acquired);

/* GPU timelines, as Tracy's GPU C API: the program reads its GPU's clock
 * and hands the times over. context is the program's context number;
 * serial = 1 sends through the process-wide ordered queue (for contexts
 * used from several threads), 0 through the calling thread's order. A zone
 * begin's srcloc is a static location (bt_gpu_zone_begin) or a
 * bt_srcloc_make handle (bt_gpu_zone_begin_made); depth > 0 records a
 * callstack. Names are copied. */
void bt_gpu_new_context(uint8_t context, int64_t gpu_time, float period, uint8_t flags,
                        uint8_t type, int serial);
void bt_gpu_context_name(uint8_t context, const char *name, size_t len, int serial);
void bt_gpu_zone_begin(const struct bt_srcloc *loc, uint16_t query, uint8_t context, int depth,
                       int serial);
void bt_gpu_zone_begin_made(uint64_t handle, uint16_t query, uint8_t context, int depth,
                            int serial);
void bt_gpu_zone_end(uint16_t query, uint8_t context, int serial);
void bt_gpu_time(int64_t gpu_time, uint16_t query, uint8_t context, int serial);
void bt_gpu_calibration(uint8_t context, int64_t gpu_time, int64_t cpu_delta, int serial);
void bt_gpu_time_sync(uint8_t context, int64_t gpu_time, int serial);

/* Fibers: zones the calling thread begins or ends between enter and leave
 * belong to the fiber's timeline (the name must live until the program
 * exits; its address identifies the fiber). */
void bt_fiber_enter(const char *fiber, int32_t group_hint);
void bt_fiber_leave(void);

/* A frame image (RGBA, w and h multiples of 4) for the frame `offset`
 * default frame marks back; copied, and compressed off the calling thread
 * (DXT1, as Tracy's viewer expects). */
void bt_frame_image(const void *rgba, uint16_t w, uint16_t h, uint8_t offset, int flip);

/* The runtime's clock, in the ticks events carry. */
int64_t bt_time_now(void);

/* Whether a capture is connected now. */
int bt_is_connected(void);
/* Events dropped so far because a buffer was full and nobody was connected. */
uint64_t bt_dropped_events(void);

#endif

#if BT_RUNTIME_TRACING

#define BT_CONCAT_(a, b) a##b
#define BT_CONCAT(a, b)  BT_CONCAT_(a, b)

#if BT_TRACING_MODE >= 4
#define BT_ZONE_DEPTH_ BT_CALLSTACK_DEPTH
#else
#define BT_ZONE_DEPTH_ 0
#endif
#if BT_TRACING_MODE >= 3
#define BT_MEM_DEPTH_ BT_CALLSTACK_DEPTH
#else
#define BT_MEM_DEPTH_ 0
#endif

/* BT_ZONE_NC(ctx, "name", 0xRRGGBB, active) declares bt_zone ctx for the
 * enclosing block; close it with BT_ZONE_END(ctx). */
#define BT_ZONE_NCD(ctx, name, color, depth, active)                      \
    static const struct bt_srcloc BT_CONCAT(bt_srcloc_, __LINE__) = {     \
        name, __func__, __FILE__, (uint32_t)__LINE__, (uint32_t)(color)}; \
    bt_zone ctx = bt_zone_begin(&BT_CONCAT(bt_srcloc_, __LINE__), (depth), (active))
#define BT_ZONE_NC(ctx, name, color, active) BT_ZONE_NCD(ctx, name, color, BT_ZONE_DEPTH_, active)
#define BT_ZONE_N(ctx, name, active)         BT_ZONE_NC(ctx, name, 0, active)
#define BT_ZONE(ctx, active)                 BT_ZONE_NC(ctx, NULL, 0, active)
#define BT_ZONE_END(ctx)                     bt_zone_end(ctx)
#define BT_ZONE_TEXT(ctx, text, len)         bt_zone_text((ctx), (text), (len))
#define BT_ZONE_NAME(ctx, text, len)         bt_zone_name((ctx), (text), (len))
#define BT_ZONE_COLOR(ctx, color)            bt_zone_color((ctx), (color))
#define BT_ZONE_VALUE(ctx, value)            bt_zone_value((ctx), (value))

#define BT_MESSAGE(text, len)             bt_message((text), (len), BT_SEVERITY_INFO, 0)
#define BT_MESSAGE_C(text, len, color)    bt_message_color((text), (len), (color), BT_SEVERITY_INFO, 0)
#define BT_MESSAGE_L(text)                bt_message_literal((text), BT_SEVERITY_INFO, 0)
#define BT_MESSAGE_LC(text, color)        bt_message_literal_color((text), (color), BT_SEVERITY_INFO, 0)
#define BT_MESSAGE_S(text, len, sev)      bt_message((text), (len), (sev), 0)
#define BT_APP_INFO(text, len)            bt_app_info((text), (len))
#define BT_PLOT(name, value)              bt_plot_double((name), (value))
#define BT_PLOT_F(name, value)            bt_plot_float((name), (value))
#define BT_PLOT_I(name, value)            bt_plot_int((name), (value))
#define BT_PLOT_CONFIG(name, f, s, fl, c) bt_plot_config((name), (f), (s), (fl), (c))
#define BT_FRAME_MARK                     bt_frame_mark(NULL)
#define BT_FRAME_MARK_NAMED(name)         bt_frame_mark(name)
#define BT_FRAME_MARK_START(name)         bt_frame_mark_start(name)
#define BT_FRAME_MARK_END(name)           bt_frame_mark_end(name)
#define BT_THREAD_NAME(name)              bt_thread_set_name(name)
#define BT_THREAD_NAME_HINT(name, hint)   bt_thread_set_name_hint(name, hint)

#if BT_TRACING_MODE >= 2
#define BT_ALLOC(ptr, size)         bt_mem_alloc((ptr), (size), NULL, BT_MEM_DEPTH_)
#define BT_FREE(ptr)                bt_mem_free((ptr), NULL, BT_MEM_DEPTH_)
#define BT_ALLOC_N(ptr, size, pool) bt_mem_alloc((ptr), (size), (pool), BT_MEM_DEPTH_)
#define BT_FREE_N(ptr, pool)        bt_mem_free((ptr), (pool), BT_MEM_DEPTH_)
#define BT_MEM_DISCARD(pool)        bt_mem_discard((pool), BT_MEM_DEPTH_)
#else
#define BT_ALLOC(ptr, size)         (BT_UNUSED_(ptr), BT_UNUSED_(size))
#define BT_FREE(ptr)                BT_UNUSED_(ptr)
#define BT_ALLOC_N(ptr, size, pool) (BT_UNUSED_(ptr), BT_UNUSED_(size))
#define BT_FREE_N(ptr, pool)        BT_UNUSED_(ptr)
#define BT_MEM_DISCARD(pool)        BT_UNUSED_(pool)
#endif

/* BT_LOCK_ANNOUNCE(handle) assigns a struct bt_lock * for a lock created here. */
#define BT_LOCK_ANNOUNCE(handle)                                           \
    do {                                                                   \
        static const struct bt_srcloc BT_CONCAT(bt_lockloc_, __LINE__) = { \
            NULL, __func__, __FILE__, (uint32_t)__LINE__, 0};              \
        (handle) = bt_lock_announce(&BT_CONCAT(bt_lockloc_, __LINE__));    \
    } while (0)
#define BT_LOCK_TERMINATE(handle)          bt_lock_terminate(handle)
#define BT_LOCK_BEFORE_LOCK(handle)        bt_lock_before_lock(handle)
#define BT_LOCK_AFTER_LOCK(handle)         bt_lock_after_lock(handle)
#define BT_LOCK_AFTER_UNLOCK(handle)       bt_lock_after_unlock(handle)
#define BT_LOCK_AFTER_TRY_LOCK(handle, ok) bt_lock_after_try_lock((handle), (ok))
#define BT_LOCK_NAME(handle, name, len)    bt_lock_set_name((handle), (name), (len))

#else /* !BT_RUNTIME_TRACING: no code, no symbols */

/* Arguments go into BT_UNUSED_; macros taking a zone context expand to
 * nothing, since the context does not exist. */

#define BT_ZONE_NCD(ctx, name, color, depth, active)
#define BT_ZONE_NC(ctx, name, color, active)
#define BT_ZONE_N(ctx, name, active)
#define BT_ZONE(ctx, active)
#define BT_ZONE_END(ctx)                   ((void)0)
#define BT_ZONE_TEXT(ctx, text, len)       (BT_UNUSED_(text), BT_UNUSED_(len))
#define BT_ZONE_NAME(ctx, text, len)       (BT_UNUSED_(text), BT_UNUSED_(len))
#define BT_ZONE_COLOR(ctx, color)          BT_UNUSED_(color)
#define BT_ZONE_VALUE(ctx, value)          BT_UNUSED_(value)
#define BT_MESSAGE(text, len)              (BT_UNUSED_(text), BT_UNUSED_(len))
#define BT_MESSAGE_C(text, len, color)     (BT_UNUSED_(text), BT_UNUSED_(len), BT_UNUSED_(color))
#define BT_MESSAGE_L(text)                 BT_UNUSED_(text)
#define BT_MESSAGE_LC(text, color)         (BT_UNUSED_(text), BT_UNUSED_(color))
#define BT_MESSAGE_S(text, len, sev)       (BT_UNUSED_(text), BT_UNUSED_(len), BT_UNUSED_(sev))
#define BT_APP_INFO(text, len)             (BT_UNUSED_(text), BT_UNUSED_(len))
#define BT_PLOT(name, value)               (BT_UNUSED_(name), BT_UNUSED_(value))
#define BT_PLOT_F(name, value)             (BT_UNUSED_(name), BT_UNUSED_(value))
#define BT_PLOT_I(name, value)             (BT_UNUSED_(name), BT_UNUSED_(value))
#define BT_PLOT_CONFIG(name, f, s, fl, c)  BT_UNUSED_(name)
#define BT_FRAME_MARK                      ((void)0)
#define BT_FRAME_MARK_NAMED(name)          BT_UNUSED_(name)
#define BT_FRAME_MARK_START(name)          BT_UNUSED_(name)
#define BT_FRAME_MARK_END(name)            BT_UNUSED_(name)
#define BT_THREAD_NAME(name)               BT_UNUSED_(name)
#define BT_THREAD_NAME_HINT(name, hint)    (BT_UNUSED_(name), BT_UNUSED_(hint))
#define BT_ALLOC(ptr, size)                (BT_UNUSED_(ptr), BT_UNUSED_(size))
#define BT_FREE(ptr)                       BT_UNUSED_(ptr)
#define BT_ALLOC_N(ptr, size, pool)        (BT_UNUSED_(ptr), BT_UNUSED_(size))
#define BT_FREE_N(ptr, pool)               BT_UNUSED_(ptr)
#define BT_MEM_DISCARD(pool)               ((void)0)
#define BT_LOCK_ANNOUNCE(handle)           BT_UNUSED_(handle)
#define BT_LOCK_TERMINATE(handle)          BT_UNUSED_(handle)
#define BT_LOCK_BEFORE_LOCK(handle)        BT_UNUSED_(handle)
#define BT_LOCK_AFTER_LOCK(handle)         BT_UNUSED_(handle)
#define BT_LOCK_AFTER_UNLOCK(handle)       BT_UNUSED_(handle)
#define BT_LOCK_AFTER_TRY_LOCK(handle, ok) (BT_UNUSED_(handle), BT_UNUSED_(ok))
#define BT_LOCK_NAME(handle, name, len)    (BT_UNUSED_(handle), BT_UNUSED_(name))

#endif /* BT_RUNTIME_TRACING */

#ifdef __cplusplus
}
#endif

#endif
