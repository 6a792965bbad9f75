// A C++ program written for upstream Tracy's tracy/Tracy.hpp, built against
// boardtrace's: every macro of the C++ API once or a few times. The test
// (test_runtime_session, every_tracy_cpp_macro_emits_its_event) counts what
// arrives.
#define TRACY_FIBERS
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "tracy/Tracy.hpp"

static TracyLockable(std::mutex, cpp_mutex);
static TracyLockableN(std::mutex, cpp_named_mutex, "cpp-named-mutex");
static TracySharedLockable(std::shared_mutex, cpp_shared);
static TracySharedLockableN(std::shared_mutex, cpp_named_shared, "cpp-named-shared");

struct Guarded {
    LockableBase(std::mutex) mutex{[]() -> const tracy::SourceLocationData * {
        static constexpr tracy::SourceLocationData loc{nullptr, "Guarded::mutex", __FILE__,
                                                       __LINE__, 0};
        return &loc;
    }()};
    SharedLockableBase(std::shared_mutex) shared{[]() -> const tracy::SourceLocationData * {
        static constexpr tracy::SourceLocationData loc{nullptr, "Guarded::shared", __FILE__,
                                                       __LINE__, 0};
        return &loc;
    }()};
};

static void zones()
{
    ZoneScoped;
    ZoneText("text", 4);
    ZoneTextF("text %d", 2);
    ZoneName("renamed", 7);
    ZoneNameF("renamed %s", "again");
    ZoneColor(0x112233);
    ZoneValue(42);
    if (!ZoneIsActive)
        return;
    {
        ZoneScopedN("cpp_n");
    }
    {
        ZoneScopedC(0xFF0000);
    }
    {
        ZoneScopedNC("cpp_nc", 0x00FF00);
    }
    {
        ZoneScopedS(4);
    }
    {
        ZoneScopedNS("cpp_ns", 4);
    }
    {
        ZoneScopedCS(0x0000FF, 4);
    }
    {
        ZoneScopedNCS("cpp_ncs", 0x00FFFF, 4);
    }
    {
        ZoneNamed(a, true);
        ZoneNamedN(b, "cpp_named_n", true);
        ZoneNamedC(c, 0x123456, true);
        ZoneNamedNC(d, "cpp_named_nc", 0x654321, true);
        ZoneNamedS(e, 4, true);
        ZoneNamedNS(f, "cpp_named_ns", 4, true);
        ZoneNamedCS(g, 0x111111, 4, true);
        ZoneNamedNCS(h, "cpp_named_ncs", 0x222222, 4, true);
        ZoneNamedN(off, "cpp_never", false);
        ZoneTextV(b, "v", 1);
        ZoneTextVF(b, "v%d", 2);
        ZoneNameV(d, "cpp_renamed_v", 13);
        ZoneNameVF(d, "cpp_renamed_%s", "vf");
        ZoneColorV(c, 0x333333);
        ZoneValueV(c, 7);
        if (ZoneIsActiveV(off) || !ZoneIsActiveV(a))
            return;
    }
    {
        ZoneTransient(t1, true);
        ZoneTransientN(t2, "cpp_transient_n", true);
        ZoneTransientNC(t3, "cpp_transient_nc", 0x444444, true);
        ZoneTransientS(t4, 4, true);
        ZoneTransientNS(t5, "cpp_transient_ns", 4, true);
    }
}

static void locks()
{
    LockableName(cpp_mutex, "cpp-mutex", 9);
    {
        std::lock_guard<LockableBase(std::mutex)> guard(cpp_mutex);
        LockMark(cpp_mutex);
    }
    if (cpp_named_mutex.try_lock())
        cpp_named_mutex.unlock();
    {
        std::unique_lock<SharedLockableBase(std::shared_mutex)> writer(cpp_shared);
    }
    {
        std::shared_lock<SharedLockableBase(std::shared_mutex)> reader(cpp_shared);
        LockMark(cpp_shared);
    }
    if (cpp_named_shared.try_lock_shared())
        cpp_named_shared.unlock_shared();
    Guarded g;
    std::lock_guard<LockableBase(std::mutex)> guard(g.mutex);
}

static void memory()
{
    static char block[32];
    TracyAlloc(block, 1);
    TracyFree(block);
    TracyAllocN(block + 1, 1, "cpp-pool");
    TracyFreeN(block + 1, "cpp-pool");
    TracyAllocS(block + 2, 1, 4);
    TracyFreeS(block + 2, 4);
    TracyAllocNS(block + 3, 1, 4, "cpp-pool");
    TracyFreeNS(block + 3, 4, "cpp-pool");
    TracySecureAlloc(block + 4, 1);
    TracySecureFree(block + 4);
    TracySecureAllocN(block + 5, 1, "cpp-pool");
    TracySecureFreeN(block + 5, "cpp-pool");
    TracySecureAllocS(block + 6, 1, 4);
    TracySecureFreeS(block + 6, 4);
    TracySecureAllocNS(block + 7, 1, 4, "cpp-pool");
    TracySecureFreeNS(block + 7, 4, "cpp-pool");
    TracyAllocN(block + 8, 1, "cpp-pool");
    TracyMemoryDiscard("cpp-pool");
    TracyMemoryDiscardS("cpp-pool", 4);
    TracySecureMemoryDiscard("cpp-pool");
    TracySecureMemoryDiscardS("cpp-pool", 4);
}

static const char fiber[] = "cpp-fiber";

// A parameter the test server changes: say so on stdout for the test.
static void on_parameter(void *data, uint32_t idx, int32_t val)
{
    std::printf("parameter %u = %d (%s)\n", (unsigned)idx, (int)val, (const char *)data);
    std::fflush(stdout);
}

// The source of a file that is nowhere on disk.
static char *virtual_source(void *data, const char *filename, size_t &size)
{
    static const char text[] = "cpp virtual source\n";
    if (std::strcmp(filename, (const char *)data) != 0)
        return nullptr;
    char *copy = static_cast<char *>(std::malloc(sizeof text - 1));
    if (copy) {
        std::memcpy(copy, text, sizeof text - 1);
        size = sizeof text - 1;
    }
    return copy;
}

static void sections_parameters_sources()
{
    static const char virtual_file[] = "cpp-virtual.src";
    TracySourceCallbackRegister(virtual_source, (void *)virtual_file);
    {
        static constexpr tracy::SourceLocationData loc{"cpp_virtual", "virtual", virtual_file, 1,
                                                       0};
        tracy::ScopedZone zone(&loc);
    }
    TracyParameterRegister(on_parameter, (void *)"cpp");
    TracyParameterSetup(4, "cpp-param", TracyParamTypeInt, 6);
    TracySectionSetup(1, "cpp-category %d", 1);
    uint32_t outer = TracySectionEnter("cpp-section %s", "outer");
    uint32_t inner = TracySectionEnterCategory(1, "cpp-section %d", 2);
    TracySectionLeave(inner);
    TracySectionLeave(outer);
    TracySetProgramName("cpp-program");
}

int main()
{
    TracySetThreadName("cpp-main");
    TracyAppInfo("cpp", 3);
    zones();
    locks();
    memory();

    TracyMessage("message", 7);
    TracyMessageL("literal");
    TracyMessageC("colored", 7, 0xFF0000);
    TracyMessageLC("literal colored", 0x00FF00);
    TracyMessageS("with callstack", 14, 4);
    TracyMessageLS("literal with callstack", 4);
    TracyMessageCS("colored with callstack", 22, 0x0000FF, 4);
    TracyMessageLCS("literal colored with callstack", 0xFFFFFF, 4);
    TracyLogString(tracy::MessageSeverity::Warning, 0, 0, 7, "warning");
    TracyLogString(tracy::MessageSeverity::Error, 0, 0, "error");

    TracyPlotConfig("cpp-plot", tracy::PlotFormatType::Memory, true, false, 0x00FF00);
    TracyPlot("cpp-plot", int64_t(1));
    TracyPlot("cpp-plot-f", 2.5f);
    TracyPlot("cpp-plot-d", 3.5);

    static unsigned char image[4 * 4 * 4];
    FrameMark;
    FrameMarkNamed("cpp-frame");
    FrameMarkStart("cpp-span");
    FrameMarkEnd("cpp-span");
    FrameImage(image, 4, 4, 0, false);
    FrameMark;

    TracyFiberEnter(fiber);
    {
        ZoneScopedN("cpp_fiber_zone");
    }
    TracyFiberLeave;
    TracyFiberEnterHint(fiber, 1);
    TracyFiberLeave;

    sections_parameters_sources();

    std::thread worker([] {
        tracy::SetThreadNameWithHint("cpp-worker", 3);
        ZoneScopedN("cpp_worker");
    });
    worker.join();
    return TracyIsStarted && (TracyIsConnected || !TracyIsConnected) ? 0 : 1;
}
