/* Tracy's C API as a program compiled against upstream v0.14.0's TracyC.h
 * sees it: the structs and the ___tracy_* prototypes, written here from the
 * list of names and signatures (no upstream file), and nothing of
 * boardtrace's headers. This unit takes the address of every function, so
 * the test program links only if libboardtrace exports them all, and
 * reports its struct layouts for the test to compare with boardtrace's. */
#include <stddef.h>
#include <stdint.h>

#include "tracy_c_abi.h"

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
typedef struct ___tracy_c_zone_context TracyCZoneCtx;
typedef struct __tracy_lockable_context_data *L;
typedef struct __tracy_shared_lockable_context_data *S;
typedef const struct ___tracy_source_location_data *Loc;

void ___tracy_set_thread_name(const char *);
void ___tracy_startup_profiler(void);
void ___tracy_shutdown_profiler(void);
int32_t ___tracy_profiler_started(void);
uint64_t ___tracy_alloc_srcloc(uint32_t, const char *, size_t, const char *, size_t, uint32_t);
uint64_t ___tracy_alloc_srcloc_name(uint32_t, const char *, size_t, const char *, size_t,
                                    const char *, size_t, uint32_t);
TracyCZoneCtx ___tracy_emit_zone_begin(Loc, int32_t);
TracyCZoneCtx ___tracy_emit_zone_begin_callstack(Loc, int32_t, int32_t);
TracyCZoneCtx ___tracy_emit_zone_begin_alloc(uint64_t, int32_t);
TracyCZoneCtx ___tracy_emit_zone_begin_alloc_callstack(uint64_t, int32_t, int32_t);
void ___tracy_emit_zone_end(TracyCZoneCtx);
void ___tracy_emit_zone_text(TracyCZoneCtx, const char *, size_t);
void ___tracy_emit_zone_text_fmt(TracyCZoneCtx, const char *, ...);
void ___tracy_emit_zone_name(TracyCZoneCtx, const char *, size_t);
void ___tracy_emit_zone_name_fmt(TracyCZoneCtx, const char *, ...);
void ___tracy_emit_zone_color(TracyCZoneCtx, uint32_t);
void ___tracy_emit_zone_value(TracyCZoneCtx, uint64_t);
void ___tracy_emit_gpu_zone_begin(const struct ___tracy_gpu_zone_begin_data);
void ___tracy_emit_gpu_zone_begin_callstack(const struct ___tracy_gpu_zone_begin_callstack_data);
void ___tracy_emit_gpu_zone_begin_alloc(const struct ___tracy_gpu_zone_begin_data);
void ___tracy_emit_gpu_zone_begin_alloc_callstack(
    const struct ___tracy_gpu_zone_begin_callstack_data);
void ___tracy_emit_gpu_zone_end(const struct ___tracy_gpu_zone_end_data);
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
void ___tracy_emit_gpu_zone_end_serial(const struct ___tracy_gpu_zone_end_data);
void ___tracy_emit_gpu_time_serial(const struct ___tracy_gpu_time_data);
void ___tracy_emit_gpu_new_context_serial(const struct ___tracy_gpu_new_context_data);
void ___tracy_emit_gpu_context_name_serial(const struct ___tracy_gpu_context_name_data);
void ___tracy_emit_gpu_calibration_serial(const struct ___tracy_gpu_calibration_data);
void ___tracy_emit_gpu_time_sync_serial(const struct ___tracy_gpu_time_sync_data);
int32_t ___tracy_connected(void);
void ___tracy_emit_memory_alloc(const void *, size_t);
void ___tracy_emit_memory_alloc_callstack(const void *, size_t, int32_t);
void ___tracy_emit_memory_free(const void *);
void ___tracy_emit_memory_free_callstack(const void *, int32_t);
void ___tracy_emit_memory_alloc_named(const void *, size_t, const char *);
void ___tracy_emit_memory_alloc_callstack_named(const void *, size_t, int32_t, const char *);
void ___tracy_emit_memory_free_named(const void *, const char *);
void ___tracy_emit_memory_free_callstack_named(const void *, int32_t, const char *);
void ___tracy_emit_memory_discard(const char *);
void ___tracy_emit_memory_discard_callstack(const char *, int32_t);
void ___tracy_emit_logString(int8_t, int32_t, int32_t, size_t, const char *);
void ___tracy_emit_logStringL(int8_t, int32_t, int32_t, const char *);
void ___tracy_emit_frame_mark(const char *);
void ___tracy_emit_frame_mark_start(const char *);
void ___tracy_emit_frame_mark_end(const char *);
void ___tracy_emit_frame_image(const void *, uint16_t, uint16_t, uint8_t, int32_t);
void ___tracy_emit_plot(const char *, double);
void ___tracy_emit_plot_float(const char *, float);
void ___tracy_emit_plot_int(const char *, int64_t);
void ___tracy_emit_plot_config(const char *, int32_t, int32_t, int32_t, uint32_t);
void ___tracy_emit_message_appinfo(const char *, size_t);
L ___tracy_announce_lockable_ctx(Loc);
void ___tracy_terminate_lockable_ctx(L);
int32_t ___tracy_before_lock_lockable_ctx(L);
void ___tracy_after_lock_lockable_ctx(L);
void ___tracy_after_unlock_lockable_ctx(L);
void ___tracy_after_try_lock_lockable_ctx(L, int32_t);
void ___tracy_mark_lockable_ctx(L, Loc);
void ___tracy_custom_name_lockable_ctx(L, const char *, size_t);
S ___tracy_announce_shared_lockable_ctx(Loc);
void ___tracy_terminate_shared_lockable_ctx(S);
int32_t ___tracy_before_lock_shared_lockable_ctx(S);
void ___tracy_after_lock_shared_lockable_ctx(S);
void ___tracy_after_unlock_shared_lockable_ctx(S);
void ___tracy_after_try_lock_shared_lockable_ctx(S, int32_t);
int32_t ___tracy_before_lock_shared_shared_lockable_ctx(S);
void ___tracy_after_lock_shared_shared_lockable_ctx(S);
void ___tracy_after_unlock_shared_shared_lockable_ctx(S);
void ___tracy_after_try_lock_shared_shared_lockable_ctx(S, int32_t);
void ___tracy_mark_shared_lockable_ctx(S, Loc);
void ___tracy_custom_name_shared_lockable_ctx(S, const char *, size_t);
int ___tracy_begin_sampling_profiling(void);
void ___tracy_end_sampling_profiling(void);
void ___tracy_fiber_enter(const char *);
void ___tracy_fiber_leave(void);
int64_t ___tracy_get_time(void);

#define F(name)                     \
    {                               \
#name, (void (*)(void))name \
    }

const struct tracy_c_abi_function tracy_c_abi_functions[] = {
    F(___tracy_set_thread_name),
    F(___tracy_startup_profiler),
    F(___tracy_shutdown_profiler),
    F(___tracy_profiler_started),
    F(___tracy_alloc_srcloc),
    F(___tracy_alloc_srcloc_name),
    F(___tracy_emit_zone_begin),
    F(___tracy_emit_zone_begin_callstack),
    F(___tracy_emit_zone_begin_alloc),
    F(___tracy_emit_zone_begin_alloc_callstack),
    F(___tracy_emit_zone_end),
    F(___tracy_emit_zone_text),
    F(___tracy_emit_zone_text_fmt),
    F(___tracy_emit_zone_name),
    F(___tracy_emit_zone_name_fmt),
    F(___tracy_emit_zone_color),
    F(___tracy_emit_zone_value),
    F(___tracy_emit_gpu_zone_begin),
    F(___tracy_emit_gpu_zone_begin_callstack),
    F(___tracy_emit_gpu_zone_begin_alloc),
    F(___tracy_emit_gpu_zone_begin_alloc_callstack),
    F(___tracy_emit_gpu_zone_end),
    F(___tracy_emit_gpu_time),
    F(___tracy_emit_gpu_new_context),
    F(___tracy_emit_gpu_context_name),
    F(___tracy_emit_gpu_calibration),
    F(___tracy_emit_gpu_time_sync),
    F(___tracy_emit_gpu_zone_begin_serial),
    F(___tracy_emit_gpu_zone_begin_callstack_serial),
    F(___tracy_emit_gpu_zone_begin_alloc_serial),
    F(___tracy_emit_gpu_zone_begin_alloc_callstack_serial),
    F(___tracy_emit_gpu_zone_end_serial),
    F(___tracy_emit_gpu_time_serial),
    F(___tracy_emit_gpu_new_context_serial),
    F(___tracy_emit_gpu_context_name_serial),
    F(___tracy_emit_gpu_calibration_serial),
    F(___tracy_emit_gpu_time_sync_serial),
    F(___tracy_connected),
    F(___tracy_emit_memory_alloc),
    F(___tracy_emit_memory_alloc_callstack),
    F(___tracy_emit_memory_free),
    F(___tracy_emit_memory_free_callstack),
    F(___tracy_emit_memory_alloc_named),
    F(___tracy_emit_memory_alloc_callstack_named),
    F(___tracy_emit_memory_free_named),
    F(___tracy_emit_memory_free_callstack_named),
    F(___tracy_emit_memory_discard),
    F(___tracy_emit_memory_discard_callstack),
    F(___tracy_emit_logString),
    F(___tracy_emit_logStringL),
    F(___tracy_emit_frame_mark),
    F(___tracy_emit_frame_mark_start),
    F(___tracy_emit_frame_mark_end),
    F(___tracy_emit_frame_image),
    F(___tracy_emit_plot),
    F(___tracy_emit_plot_float),
    F(___tracy_emit_plot_int),
    F(___tracy_emit_plot_config),
    F(___tracy_emit_message_appinfo),
    F(___tracy_announce_lockable_ctx),
    F(___tracy_terminate_lockable_ctx),
    F(___tracy_before_lock_lockable_ctx),
    F(___tracy_after_lock_lockable_ctx),
    F(___tracy_after_unlock_lockable_ctx),
    F(___tracy_after_try_lock_lockable_ctx),
    F(___tracy_mark_lockable_ctx),
    F(___tracy_custom_name_lockable_ctx),
    F(___tracy_announce_shared_lockable_ctx),
    F(___tracy_terminate_shared_lockable_ctx),
    F(___tracy_before_lock_shared_lockable_ctx),
    F(___tracy_after_lock_shared_lockable_ctx),
    F(___tracy_after_unlock_shared_lockable_ctx),
    F(___tracy_after_try_lock_shared_lockable_ctx),
    F(___tracy_before_lock_shared_shared_lockable_ctx),
    F(___tracy_after_lock_shared_shared_lockable_ctx),
    F(___tracy_after_unlock_shared_shared_lockable_ctx),
    F(___tracy_after_try_lock_shared_shared_lockable_ctx),
    F(___tracy_mark_shared_lockable_ctx),
    F(___tracy_custom_name_shared_lockable_ctx),
    F(___tracy_begin_sampling_profiling),
    F(___tracy_end_sampling_profiling),
    F(___tracy_fiber_enter),
    F(___tracy_fiber_leave),
    F(___tracy_get_time),
};
const size_t tracy_c_abi_function_count =
    sizeof(tracy_c_abi_functions) / sizeof(tracy_c_abi_functions[0]);

#define L2(type, field)                                                     \
    {                                                                       \
#type "." #field, offsetof(struct type, field), sizeof(struct type) \
    }

const struct tracy_c_abi_field tracy_c_abi_fields[] = {
    L2(___tracy_source_location_data, name),
    L2(___tracy_source_location_data, function),
    L2(___tracy_source_location_data, file),
    L2(___tracy_source_location_data, line),
    L2(___tracy_source_location_data, color),
    L2(___tracy_c_zone_context, id),
    L2(___tracy_c_zone_context, active),
    L2(___tracy_gpu_time_data, gpuTime),
    L2(___tracy_gpu_time_data, queryId),
    L2(___tracy_gpu_time_data, context),
    L2(___tracy_gpu_zone_begin_data, srcloc),
    L2(___tracy_gpu_zone_begin_data, queryId),
    L2(___tracy_gpu_zone_begin_data, context),
    L2(___tracy_gpu_zone_begin_callstack_data, srcloc),
    L2(___tracy_gpu_zone_begin_callstack_data, depth),
    L2(___tracy_gpu_zone_begin_callstack_data, queryId),
    L2(___tracy_gpu_zone_begin_callstack_data, context),
    L2(___tracy_gpu_zone_end_data, queryId),
    L2(___tracy_gpu_zone_end_data, context),
    L2(___tracy_gpu_new_context_data, gpuTime),
    L2(___tracy_gpu_new_context_data, period),
    L2(___tracy_gpu_new_context_data, context),
    L2(___tracy_gpu_new_context_data, flags),
    L2(___tracy_gpu_new_context_data, type),
    L2(___tracy_gpu_context_name_data, context),
    L2(___tracy_gpu_context_name_data, name),
    L2(___tracy_gpu_context_name_data, len),
    L2(___tracy_gpu_calibration_data, gpuTime),
    L2(___tracy_gpu_calibration_data, cpuDelta),
    L2(___tracy_gpu_calibration_data, context),
    L2(___tracy_gpu_time_sync_data, gpuTime),
    L2(___tracy_gpu_time_sync_data, context),
};
const size_t tracy_c_abi_field_count = sizeof(tracy_c_abi_fields) / sizeof(tracy_c_abi_fields[0]);
