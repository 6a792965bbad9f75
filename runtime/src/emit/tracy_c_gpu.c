/* Tracy's C API by its own names (see tracy_c.c), GPU timelines: the plain
 * and the _serial forms differ only in the queue. A unit of its own, so that
 * a program that traces no GPU does not link it. */
#define _GNU_SOURCE
#include "tracy_c.h"

#define GPU_BEGIN(name, made, serial)                                                           \
    void name(const struct ___tracy_gpu_zone_begin_data data)                                   \
    {                                                                                           \
        bt_gpu_zone_begin_at(data.srcloc, made, data.queryId, data.context, 0, serial, CALLER); \
    }
#define GPU_BEGIN_CALLSTACK(name, made, serial)                                                 \
    void name(const struct ___tracy_gpu_zone_begin_callstack_data data)                         \
    {                                                                                           \
        bt_gpu_zone_begin_at(data.srcloc, made, data.queryId, data.context, data.depth, serial, \
                             CALLER);                                                           \
    }

GPU_BEGIN(___tracy_emit_gpu_zone_begin, 0, 0)
GPU_BEGIN(___tracy_emit_gpu_zone_begin_serial, 0, 1)
GPU_BEGIN(___tracy_emit_gpu_zone_begin_alloc, 1, 0)
GPU_BEGIN(___tracy_emit_gpu_zone_begin_alloc_serial, 1, 1)
GPU_BEGIN_CALLSTACK(___tracy_emit_gpu_zone_begin_callstack, 0, 0)
GPU_BEGIN_CALLSTACK(___tracy_emit_gpu_zone_begin_callstack_serial, 0, 1)
GPU_BEGIN_CALLSTACK(___tracy_emit_gpu_zone_begin_alloc_callstack, 1, 0)
GPU_BEGIN_CALLSTACK(___tracy_emit_gpu_zone_begin_alloc_callstack_serial, 1, 1)

void ___tracy_emit_gpu_zone_end(const struct ___tracy_gpu_zone_end_data data)
{
    bt_gpu_zone_end(data.queryId, data.context, 0);
}

void ___tracy_emit_gpu_zone_end_serial(const struct ___tracy_gpu_zone_end_data data)
{
    bt_gpu_zone_end(data.queryId, data.context, 1);
}

void ___tracy_emit_gpu_time(const struct ___tracy_gpu_time_data data)
{
    bt_gpu_time(data.gpuTime, data.queryId, data.context, 0);
}

void ___tracy_emit_gpu_time_serial(const struct ___tracy_gpu_time_data data)
{
    bt_gpu_time(data.gpuTime, data.queryId, data.context, 1);
}

void ___tracy_emit_gpu_new_context(const struct ___tracy_gpu_new_context_data data)
{
    bt_gpu_new_context(data.context, data.gpuTime, data.period, data.flags, data.type, 0);
}

void ___tracy_emit_gpu_new_context_serial(const struct ___tracy_gpu_new_context_data data)
{
    bt_gpu_new_context(data.context, data.gpuTime, data.period, data.flags, data.type, 1);
}

void ___tracy_emit_gpu_context_name(const struct ___tracy_gpu_context_name_data data)
{
    bt_gpu_context_name(data.context, data.name, data.len, 0);
}

void ___tracy_emit_gpu_context_name_serial(const struct ___tracy_gpu_context_name_data data)
{
    bt_gpu_context_name(data.context, data.name, data.len, 1);
}

void ___tracy_emit_gpu_calibration(const struct ___tracy_gpu_calibration_data data)
{
    bt_gpu_calibration(data.context, data.gpuTime, data.cpuDelta, 0);
}

void ___tracy_emit_gpu_calibration_serial(const struct ___tracy_gpu_calibration_data data)
{
    bt_gpu_calibration(data.context, data.gpuTime, data.cpuDelta, 1);
}

void ___tracy_emit_gpu_time_sync(const struct ___tracy_gpu_time_sync_data data)
{
    bt_gpu_time_sync(data.context, data.gpuTime, 0);
}

void ___tracy_emit_gpu_time_sync_serial(const struct ___tracy_gpu_time_sync_data data)
{
    bt_gpu_time_sync(data.context, data.gpuTime, 1);
}
