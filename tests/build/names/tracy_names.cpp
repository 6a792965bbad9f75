// Every public name of upstream Tracy v0.14.0's tracy/Tracy.hpp (its macros
// in both builds, TracyParamType*, tracy::Color and the tracy:: helpers it
// declares whether or not TRACY_ENABLE is defined), used once, so that the
// build fails if boardtrace's header lacks one or takes other arguments.
// Compiled with tracing on (tests/build) and off (check_tracing_off.cmake,
// which also checks it links nothing of boardtrace); built only, never run.
// What the off build drops is marked [[maybe_unused]].
#include <mutex>
#include <shared_mutex>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tracy/Tracy.hpp>

static TracyLockable(std::mutex, names_mutex);
static TracyLockableN(std::mutex, names_named_mutex, "names-mutex");
static TracySharedLockable(std::shared_mutex, names_shared);
static TracySharedLockableN(std::shared_mutex, names_named_shared, "names-shared");

[[maybe_unused]] static void on_parameter(void *data, uint32_t idx, int32_t val)
{
    (void)data;
    (void)idx;
    (void)val;
}

[[maybe_unused]] static char *source_of(void *data, const char *filename, size_t &size)
{
    (void)data;
    (void)filename;
    size = 0;
    return nullptr;
}

static void zones()
{
    ZoneScoped;
    ZoneText("t", 1);
    ZoneTextF("t %d", 1);
    ZoneName("n", 1);
    ZoneNameF("n %d", 1);
    ZoneColor(tracy::Color::Red);
    ZoneValue(1);
    bool active = ZoneIsActive;
    (void)active;
    {
        ZoneScopedN("n");
    }
    {
        ZoneScopedC(tracy::Color::Blue);
    }
    {
        ZoneScopedNC("nc", tracy::Color::RebeccaPurple);
    }
    {
        ZoneScopedS(2);
    }
    {
        ZoneScopedNS("ns", 2);
    }
    {
        ZoneScopedCS(0x112233, 2);
    }
    {
        ZoneScopedNCS("ncs", 0x112233, 2);
    }
    {
        ZoneNamed(z1, true);
        ZoneTextV(z1, "t", 1);
        ZoneTextVF(z1, "t %d", 1);
        ZoneNameV(z1, "n", 1);
        ZoneNameVF(z1, "n %d", 1);
        ZoneColorV(z1, 0x445566);
        ZoneValueV(z1, 2);
        bool on = ZoneIsActiveV(z1);
        (void)on;
    }
    {
        ZoneNamedN(z2, "named", true);
    }
    {
        ZoneNamedC(z3, 0x10, true);
    }
    {
        ZoneNamedNC(z4, "named-c", 0x10, true);
    }
    {
        ZoneNamedS(z5, 2, true);
    }
    {
        ZoneNamedNS(z6, "named-s", 2, true);
    }
    {
        ZoneNamedCS(z7, 0x10, 2, true);
    }
    {
        ZoneNamedNCS(z8, "named-cs", 0x10, 2, true);
    }
    {
        ZoneTransient(z9, true);
    }
    {
        ZoneTransientN(z10, "transient", true);
    }
    {
        ZoneTransientNC(z11, "transient-c", 0x10, true);
    }
    {
        ZoneTransientS(z12, 2, true);
    }
    {
        ZoneTransientNS(z13, "transient-s", 2, true);
    }
}

static void locks()
{
    {
        std::lock_guard<LockableBase(std::mutex)> guard(names_mutex);
        LockMark(names_mutex);
    }
    LockableName(names_named_mutex, "renamed", 7);
    {
        std::shared_lock<SharedLockableBase(std::shared_mutex)> reader(names_shared);
    }
    {
        std::unique_lock<SharedLockableBase(std::shared_mutex)> writer(names_named_shared);
    }
}

static void memory()
{
    [[maybe_unused]] static char block[16];
    TracyAlloc(block, 1);
    TracyFree(block);
    TracyAllocN(block + 1, 1, "pool");
    TracyFreeN(block + 1, "pool");
    TracyAllocS(block + 2, 1, 2);
    TracyFreeS(block + 2, 2);
    TracyAllocNS(block + 3, 1, 2, "pool");
    TracyFreeNS(block + 3, 2, "pool");
    TracyMemoryDiscard("pool");
    TracyMemoryDiscardS("pool", 2);
}

static void messages_plots_frames()
{
    TracyMessage("m", 1);
    TracyMessageL("m");
    TracyMessageC("m", 1, 0x10);
    TracyMessageLC("m", 0x10);
    TracyMessageS("m", 1, 2);
    TracyMessageLS("m", 2);
    TracyMessageCS("m", 1, 0x10, 2);
    TracyMessageLCS("m", 0x10, 2);
    TracyAppInfo("a", 1);
    TracyLogString(tracy::MessageSeverity::Info, 0, TRACY_CALLSTACK, "log");
    TracyPlot("plot", int64_t(1));
    TracyPlotConfig("plot", tracy::PlotFormatType::Number, false, true, 0);
    [[maybe_unused]] static unsigned char image[4 * 4 * 4];
    FrameMark;
    FrameMarkNamed("frame");
    FrameMarkStart("span");
    FrameMarkEnd("span");
    FrameImage(image, 4, 4, 0, false);
}

static void the_rest()
{
    TracyNoop;
    TracySourceCallbackRegister(source_of, nullptr);
    TracyParameterRegister(on_parameter, nullptr);
    TracyParameterSetup(0, "int", TracyParamTypeInt, 1);
    TracyParameterSetup(1, "bool", TracyParamTypeBool, 0);
    TracyParameterSetup(2, "trigger", TracyParamTypeTrigger, 0);
    bool connected = TracyIsConnected;
    bool started = TracyIsStarted;
    (void)connected;
    (void)started;
    TracySetProgramName("names");
    TracySetThreadName("names-main");
    TracySectionSetup(1, "category %d", 1);
    [[maybe_unused]] uint32_t section = TracySectionEnter("section %s", "a");
    [[maybe_unused]] uint32_t in_category = TracySectionEnterCategory(1, "section %d", 2);
    TracySectionLeave(in_category);
    TracySectionLeave(section);
    TracyFiberEnter("fiber");
    TracyFiberLeave;
    TracyFiberEnterHint("fiber", 1);
    TracyFiberLeave;
}

// tracy:: helpers declared in both builds.
static int system_helpers()
{
    tracy::SetThreadName("names-helpers");
    tracy::SetThreadNameWithHint("names-helpers", 2);
    uint32_t self = tracy::GetThreadHandle();
    uint32_t impl = tracy::detail::GetThreadHandleImpl();
    const char *name = tracy::GetThreadName(self);
    const char *path = tracy::GetEnvVar("PATH");
    const char *login = tracy::GetUserLogin();
    const char *full = tracy::GetUserFullName();
    uint32_t color = tracy::Color::Snow + tracy::Color::X11Gray + tracy::Color::WebGrey;
    return (self == impl && name && login && color && (path || !path) && (full || !full)) ? 0 : 1;
}

int main()
{
    zones();
    locks();
    memory();
    messages_plots_frames();
    the_rest();
    return system_helpers();
}
