/* Every public name of upstream Tracy v0.14.0's tracy/TracyC.h (its macros
 * in both builds, the types and enums, ___tracy_set_thread_name), used once,
 * so that the build fails if boardtrace's header lacks one or takes other
 * arguments. Compiled with tracing on (tests/build) and off
 * (check_tracing_off.cmake); built only, never run. */
#define TRACY_FIBERS
#include <stddef.h>
#include <stdint.h>

#include <tracy/TracyC.h>

static void zones(void)
{
    TracyCZone(z1, 1);
    TracyCZoneText(z1, "t", 1);
    TracyCZoneTextF(z1, "t %d", 1);
    TracyCZoneName(z1, "n", 1);
    TracyCZoneNameF(z1, "n %d", 1);
    TracyCZoneColor(z1, 0x10);
    TracyCZoneValue(z1, 1);
    TracyCZoneEnd(z1);
    TracyCZoneN(z2, "n", 1);
    TracyCZoneEnd(z2);
    TracyCZoneC(z3, 0x10, 1);
    TracyCZoneEnd(z3);
    TracyCZoneNC(z4, "nc", 0x10, 1);
    TracyCZoneEnd(z4);
    TracyCZoneS(z5, 2, 1);
    TracyCZoneEnd(z5);
    TracyCZoneNS(z6, "ns", 2, 1);
    TracyCZoneEnd(z6);
    TracyCZoneCS(z7, 0x10, 2, 1);
    TracyCZoneEnd(z7);
    TracyCZoneNCS(z8, "ncs", 0x10, 2, 1);
    TracyCZoneEnd(z8);
}

static void memory(void)
{
    static char block[16];
    (void)block;
    TracyCAlloc(block, 1);
    TracyCFree(block);
    TracyCAllocN(block + 1, 1, "pool");
    TracyCFreeN(block + 1, "pool");
    TracyCAllocS(block + 2, 1, 2);
    TracyCFreeS(block + 2, 2);
    TracyCAllocNS(block + 3, 1, 2, "pool");
    TracyCFreeNS(block + 3, 2, "pool");
    TracyCMemoryDiscard("pool");
    TracyCMemoryDiscardS("pool", 2);
}

static void locks(void)
{
    TracyCLockCtx lock = NULL;
    (void)lock;
    TracyCLockAnnounce(lock);
    TracyCLockCustomName(lock, "l", 1);
    TracyCLockBeforeLock(lock);
    TracyCLockAfterLock(lock);
    TracyCLockMark(lock);
    TracyCLockAfterUnlock(lock);
    TracyCLockAfterTryLock(lock, 0);
    TracyCLockTerminate(lock);

    TracyCSharedLockCtx shared = NULL;
    (void)shared;
    TracyCSharedLockAnnounce(shared);
    TracyCSharedLockTerminate(shared);
    TracyCSharedLockAnnonce(shared);
    TracyCSharedLockCustomName(shared, "s", 1);
    TracyCSharedLockBeforeLock(shared);
    TracyCSharedLockAfterLock(shared);
    TracyCSharedLockAfterUnlock(shared);
    TracyCSharedLockAfterTryLock(shared, 0);
    TracyCSharedLockBeforeSharedLock(shared);
    TracyCSharedLockAfterSharedLock(shared);
    TracyCSharedLockMark(shared);
    TracyCSharedLockAfterSharedUnlock(shared);
    TracyCSharedLockAfterTrySharedLock(shared, 0);
    TracyCSharedLockTerminate(shared);
}

static int the_rest(void)
{
    static unsigned char image[4 * 4 * 4];
    (void)image;
    ___tracy_set_thread_name("names-c");
    TracyCSetThreadName("names-c");
    TracyCMessage("m", 1);
    TracyCMessageL("m");
    TracyCMessageC("m", 1, 0x10);
    TracyCMessageLC("m", 0x10);
    TracyCMessageS("m", 1, 2);
    TracyCMessageLS("m", 2);
    TracyCMessageCS("m", 1, 0x10, 2);
    TracyCMessageLCS("m", 0x10, 2);
    TracyCAppInfo("a", 1);
    TracyCPlot("p", 1.0);
    TracyCPlotF("p", 1.0f);
    TracyCPlotI("p", 1);
    TracyCPlotConfig("p", TracyPlotFormatNumber, 0, 1, 0);
    TracyCFrameMark;
    TracyCFrameMarkNamed("f");
    TracyCFrameMarkStart("s");
    TracyCFrameMarkEnd("s");
    TracyCFrameImage(image, 4, 4, 0, 0);
    TracyCFiberEnter("fiber");
    TracyCFiberLeave;
    int sampling = TracyCBeginSamplingProfiling();
    TracyCEndSamplingProfiling();
    enum TracyMessageSeverity severity = TracyMessageSeverityFatal;
    enum TracyPlotFormatEnum format = TracyPlotFormatWatt;
    const char *where = TracyFile;
    const char *function = TracyFunction;
    unsigned line = TracyLine;
    return (TracyCIsConnected || TracyCIsStarted || !TracyCIsStarted) && sampling == 0 &&
                   severity && format && where && function && line
               ? 0
               : 1;
}

int main(void)
{
    zones();
    memory();
    locks();
    return the_rest();
}
