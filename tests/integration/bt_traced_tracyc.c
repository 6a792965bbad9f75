/* The "tracyc" scenario of bt_traced: every macro and call of Tracy's C API
 * once, through boardtrace's tracy/TracyC.h, so the test can check that each
 * compiles and emits what it should. Counts are in the test's expectations. */
#include <stdint.h>
#include <string.h>

#include "tracy/TracyC.h"

int scenario_tracyc(void);

static const struct ___tracy_source_location_data raw_loc = {"raw_zone", "scenario_tracyc",
                                                             "bt_traced_tracyc.c", 1, 0};

int scenario_tracyc(void)
{
    static char block[64];
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

    TracyCMessage("message", 7);
    TracyCMessageL("literal");
    TracyCMessageC("colored", 7, 0xFF0000);
    TracyCMessageLC("literal colored", 0x00FF00);
    TracyCMessageS("with callstack", 14, 4);
    TracyCMessageLS("literal with callstack", 4);
    TracyCMessageCS("colored with callstack", 22, 0x0000FF, 4);
    TracyCMessageLCS("literal colored with callstack", 0xFFFFFF, 4);

    TracyCPlotConfig("tracyc-plot", TracyPlotFormatPercentage, 1, 1, 0x00FF00);
    TracyCPlot("tracyc-plot", 1.5);
    TracyCPlotF("tracyc-plot-f", 2.5f);
    TracyCPlotI("tracyc-plot-i", 3);

    TracyCFrameMark;
    TracyCFrameMarkNamed("tracyc-frame");
    TracyCFrameMarkStart("tracyc-span");
    TracyCFrameMarkEnd("tracyc-span");

    TracyCLockCtx(lock);
    TracyCLockAnnounce(lock);
    TracyCLockCustomName(lock, "tracyc-lock", 11);
    if (TracyCLockBeforeLock(lock))
        TracyCLockAfterLock(lock);
    TracyCLockMark(lock);
    TracyCLockAfterUnlock(lock);
    TracyCLockAfterTryLock(lock, 1);
    TracyCLockAfterUnlock(lock);
    TracyCLockAfterTryLock(lock, 0);
    TracyCLockTerminate(lock);
    return TracyCIsStarted && (TracyCIsConnected || !TracyCIsConnected) ? 0 : 1;
}
