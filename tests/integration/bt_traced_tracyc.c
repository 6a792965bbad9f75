/* The "tracyc" scenario of bt_traced: every name of Tracy's C API (upstream
 * v0.14.0's TracyC.h) once or a few times, through boardtrace's
 * tracy/TracyC.h, so the test can check that each compiles and emits what it
 * should. Counts are in the test's expectations. */
#define TRACY_FIBERS
#define TRACY_MANUAL_LIFETIME
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "tracy/TracyC.h"

int scenario_tracyc(void);

static const struct ___tracy_source_location_data raw_loc = {"raw_zone", "scenario_tracyc",
                                                             "bt_traced_tracyc.c", 1, 0};
static const struct ___tracy_source_location_data gpu_loc = {"gpu_zone", "scenario_tracyc",
                                                             "bt_traced_tracyc.c", 2, 0};

static const char fiber_name[] = "tracyc-fiber";

/* Zones on a fiber that starts on one thread and ends on another. */
static void *fiber_second_half(void *arg)
{
    TracyCZoneCtx *outer = arg;
    TracyCFiberEnter(fiber_name);
    TracyCZoneN(inner, "fiber_inner", 1);
    TracyCZoneEnd(inner);
    TracyCZoneEnd(*outer);
    TracyCFiberLeave;
    return NULL;
}

static void fibers(void)
{
    TracyCZoneN(around, "around_fiber", 1);
    TracyCFiberEnter(fiber_name);
    TracyCZoneN(outer, "fiber_outer", 1);
    TracyCFiberLeave;
    pthread_t t;
    if (pthread_create(&t, NULL, fiber_second_half, &outer) == 0)
        pthread_join(t, NULL);
    TracyCZoneEnd(around);
}

static void gpu(void)
{
    struct ___tracy_gpu_new_context_data ctx = {1000, 1.0f, 3, 1, 1}; /* calibrated */
    ___tracy_emit_gpu_new_context(ctx);
    struct ___tracy_gpu_context_name_data name = {3, "tracyc-gpu", 10};
    ___tracy_emit_gpu_context_name(name);
    struct ___tracy_gpu_calibration_data cal = {1100, 100, 3}; /* 100 GPU ticks = 100 ns */
    ___tracy_emit_gpu_calibration(cal);
    struct ___tracy_gpu_time_sync_data sync = {1200, 3};
    ___tracy_emit_gpu_time_sync(sync);

    static const char file[] = "bt_traced_tracyc.c", function[] = "gpu", zname[] = "gpu_made";
    uint16_t q = 0;
    int64_t t = 2000;
    struct ___tracy_gpu_zone_begin_data plain = {(uint64_t)(uintptr_t)&gpu_loc, q++, 3};
    ___tracy_emit_gpu_zone_begin(plain);
    struct ___tracy_gpu_zone_end_data end = {q++, 3};
    ___tracy_emit_gpu_zone_end(end);
    struct ___tracy_gpu_zone_begin_callstack_data cs = {(uint64_t)(uintptr_t)&gpu_loc, 4, q++, 3};
    ___tracy_emit_gpu_zone_begin_callstack(cs);
    end.queryId = q++;
    ___tracy_emit_gpu_zone_end(end);
    struct ___tracy_gpu_zone_begin_data alloc = {
        ___tracy_alloc_srcloc_name(20, file, strlen(file), function, strlen(function), zname,
                                   strlen(zname), 0),
        q++, 3};
    ___tracy_emit_gpu_zone_begin_alloc(alloc);
    end.queryId = q++;
    ___tracy_emit_gpu_zone_end(end);
    struct ___tracy_gpu_zone_begin_callstack_data alloc_cs = {
        ___tracy_alloc_srcloc(21, file, strlen(file), function, strlen(function), 0), 0, q++, 3};
    ___tracy_emit_gpu_zone_begin_alloc_callstack(alloc_cs); /* depth 0: a plain begin */
    end.queryId = q++;
    ___tracy_emit_gpu_zone_end(end);
    for (uint16_t i = 0; i < q; i++) {
        struct ___tracy_gpu_time_data time = {t, i, 3};
        t += 100;
        ___tracy_emit_gpu_time(time);
    }

    /* the serial forms, on a second context */
    struct ___tracy_gpu_new_context_data ctx2 = {5000, 1.0f, 4, 1, 1};
    ___tracy_emit_gpu_new_context_serial(ctx2);
    struct ___tracy_gpu_context_name_data name2 = {4, "tracyc-gpu-serial", 17};
    ___tracy_emit_gpu_context_name_serial(name2);
    struct ___tracy_gpu_calibration_data cal2 = {5100, 100, 4};
    ___tracy_emit_gpu_calibration_serial(cal2);
    struct ___tracy_gpu_time_sync_data sync2 = {5200, 4};
    ___tracy_emit_gpu_time_sync_serial(sync2);
    q = 0;
    t = 6000;
    plain.context = cs.context = alloc.context = alloc_cs.context = end.context = 4;
    plain.queryId = q++;
    ___tracy_emit_gpu_zone_begin_serial(plain);
    end.queryId = q++;
    ___tracy_emit_gpu_zone_end_serial(end);
    cs.queryId = q++;
    ___tracy_emit_gpu_zone_begin_callstack_serial(cs);
    end.queryId = q++;
    ___tracy_emit_gpu_zone_end_serial(end);
    alloc.srcloc = ___tracy_alloc_srcloc(22, file, strlen(file), function, strlen(function), 0);
    alloc.queryId = q++;
    ___tracy_emit_gpu_zone_begin_alloc_serial(alloc);
    end.queryId = q++;
    ___tracy_emit_gpu_zone_end_serial(end);
    alloc_cs.srcloc = ___tracy_alloc_srcloc(23, file, strlen(file), function, strlen(function), 0);
    alloc_cs.depth = 4;
    alloc_cs.queryId = q++;
    ___tracy_emit_gpu_zone_begin_alloc_callstack_serial(alloc_cs);
    end.queryId = q++;
    ___tracy_emit_gpu_zone_end_serial(end);
    for (uint16_t i = 0; i < q; i++) {
        struct ___tracy_gpu_time_data time = {t, i, 4};
        t += 100;
        ___tracy_emit_gpu_time_serial(time);
    }
}

static void locks(void)
{
    TracyCLockCtx lock;
    TracyCLockAnnounce(lock);
    TracyCLockCustomName(lock, "tracyc-lock", 11);
    TracyCLockBeforeLock(lock);
    TracyCLockAfterLock(lock);
    TracyCLockMark(lock);
    TracyCLockAfterUnlock(lock);
    TracyCLockAfterTryLock(lock, 1);
    TracyCLockAfterUnlock(lock);
    TracyCLockAfterTryLock(lock, 0);
    TracyCLockTerminate(lock);

    TracyCSharedLockCtx shared;
    TracyCSharedLockAnnounce(shared);
    TracyCSharedLockCustomName(shared, "tracyc-shared", 13);
    TracyCSharedLockBeforeLock(shared);
    TracyCSharedLockAfterLock(shared);
    TracyCSharedLockAfterUnlock(shared);
    TracyCSharedLockAfterTryLock(shared, 0);
    TracyCSharedLockBeforeSharedLock(shared);
    TracyCSharedLockAfterSharedLock(shared);
    TracyCSharedLockMark(shared);
    TracyCSharedLockAfterSharedUnlock(shared);
    TracyCSharedLockAfterTrySharedLock(shared, 1);
    TracyCSharedLockAfterSharedUnlock(shared);
    TracyCSharedLockAfterTrySharedLock(shared, 0);
    TracyCSharedLockTerminate(shared);
}

int scenario_tracyc(void)
{
    static char block[64];
    static uint8_t image[8 * 4 * 4];
    ___tracy_startup_profiler();
    TracyCSetThreadName("tracyc-main");
    TracyCAppInfo("tracyc", 6);

    TracyCZone(z1, 1);
    TracyCZoneN(z2, "zone_n", 1);
    TracyCZoneC(z3, 0xFF0000, 1);
    TracyCZoneNC(z4, "zone_nc", 0x00FF00, 1);
    TracyCZoneText(z4, "text", 4);
    TracyCZoneName(z4, "renamed", 7);
    TracyCZoneColor(z4, 0x0000FF);
    TracyCZoneValue(z4, 42);
    TracyCZoneTextF(z4, "text %d", 2);
    TracyCZoneNameF(z4, "renamed %s", "again");
    TracyCZoneS(z5, 4, 1);
    TracyCZoneNS(z6, "zone_ns", 4, 1);
    TracyCZoneCS(z7, 0x808080, 4, 1);
    TracyCZoneNCS(z8, "zone_ncs", 0x404040, 4, 1);
    TracyCZoneN(inactive, "never", 0);
    TracyCZoneEnd(inactive);
    TracyCZoneEnd(z8);
    TracyCZoneEnd(z7);
    TracyCZoneEnd(z6);
    TracyCZoneEnd(z5);
    TracyCZoneEnd(z4);
    TracyCZoneEnd(z3);
    TracyCZoneEnd(z2);
    TracyCZoneEnd(z1);

    static const char file[] = "bt_traced_tracyc.c", function[] = "made", name[] = "made_named";
    TracyCZoneCtx m1 = ___tracy_emit_zone_begin_alloc(
        ___tracy_alloc_srcloc(10, file, strlen(file), function, strlen(function), 0), 1);
    TracyCZoneEnd(m1);
    TracyCZoneCtx m2 = ___tracy_emit_zone_begin_alloc_callstack(
        ___tracy_alloc_srcloc_name(11, file, strlen(file), function, strlen(function), name,
                                   strlen(name), 0),
        4, 1);
    ___tracy_emit_zone_end(m2);
    TracyCZoneCtx r = ___tracy_emit_zone_begin(&raw_loc, 1);
    ___tracy_emit_zone_text(r, "raw", 3);
    ___tracy_emit_zone_end(r);

    TracyCAlloc(block, 1);
    TracyCFree(block);
    TracyCAllocN(block + 1, 1, "tracyc-pool");
    TracyCFreeN(block + 1, "tracyc-pool");
    TracyCAllocS(block + 2, 1, 4);
    TracyCFreeS(block + 2, 4);
    TracyCAllocNS(block + 3, 1, 4, "tracyc-pool");
    TracyCFreeNS(block + 3, 4, "tracyc-pool");
    TracyCSecureAlloc(block + 4, 1);
    TracyCSecureFree(block + 4);
    TracyCSecureAllocN(block + 5, 1, "tracyc-pool");
    TracyCSecureFreeN(block + 5, "tracyc-pool");
    TracyCSecureAllocS(block + 6, 1, 4);
    TracyCSecureFreeS(block + 6, 4);
    TracyCSecureAllocNS(block + 7, 1, 4, "tracyc-pool");
    TracyCSecureFreeNS(block + 7, 4, "tracyc-pool");
    TracyCAllocN(block + 8, 1, "tracyc-pool");
    TracyCMemoryDiscard("tracyc-pool");
    TracyCMemoryDiscardS("tracyc-pool", 4);
    TracyCSecureMemoryDiscard("tracyc-pool");
    TracyCSecureMemoryDiscardS("tracyc-pool", 4);
    /* the functions themselves, whatever the mode */
    ___tracy_emit_memory_alloc(block + 9, 1);
    ___tracy_emit_memory_free(block + 9);
    ___tracy_emit_memory_alloc_named(block + 10, 1, "tracyc-raw");
    ___tracy_emit_memory_free_named(block + 10, "tracyc-raw");
    ___tracy_emit_memory_alloc_named(block + 11, 1, "tracyc-raw");
    ___tracy_emit_memory_discard("tracyc-raw");

    TracyCMessage("message", 7);
    TracyCMessageL("literal");
    TracyCMessageC("colored", 7, 0xFF0000);
    TracyCMessageLC("literal colored", 0x00FF00);
    TracyCMessageS("with callstack", 14, 4);
    TracyCMessageLS("literal with callstack", 4);
    TracyCMessageCS("colored with callstack", 22, 0x0000FF, 4);
    TracyCMessageLCS("literal colored with callstack", 0xFFFFFF, 4);
    ___tracy_emit_logString(TracyMessageSeverityTrace, 0, 0, 5, "trace");
    ___tracy_emit_logString(TracyMessageSeverityDebug, 0, 0, 5, "debug");
    ___tracy_emit_logString(TracyMessageSeverityWarning, 0xFFFF00, 0, 7, "warning");
    ___tracy_emit_logStringL(TracyMessageSeverityError, 0, 0, "error");
    ___tracy_emit_logStringL(TracyMessageSeverityFatal, 0xFF0000, 4, "fatal");

    TracyCPlotConfig("tracyc-plot", TracyPlotFormatPercentage, 1, 1, 0x00FF00);
    TracyCPlot("tracyc-plot", 1.5);
    TracyCPlotF("tracyc-plot-f", 2.5f);
    TracyCPlotI("tracyc-plot-i", 3);

    TracyCFrameMark;
    TracyCFrameMarkNamed("tracyc-frame");
    TracyCFrameMarkStart("tracyc-span");
    TracyCFrameMarkEnd("tracyc-span");
    for (size_t i = 0; i < sizeof(image); i++)
        image[i] = (uint8_t)(i * 7);
    TracyCFrameImage(image, 8, 4, 0, 0);
    TracyCFrameMark;

    locks();
    gpu();
    fibers();

    int sampling = TracyCBeginSamplingProfiling();
    TracyCEndSamplingProfiling();
    int64_t now = ___tracy_get_time();
    int ok =
        TracyCIsStarted && (TracyCIsConnected || !TracyCIsConnected) && sampling == 0 && now > 0;
    return ok ? 0 : 1;
}
