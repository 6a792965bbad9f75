// The installed package's C++ API (<tracy/Tracy.hpp>) in the same program:
// scoped zones, a frame mark and a message, as a C++ user's code has them.
#include <tracy/Tracy.hpp>

extern "C" int consumer_cpp(void);

static int leaf(int i)
{
    ZoneScoped;
    return i * 2;
}

extern "C" int consumer_cpp(void)
{
    ZoneScopedN("consumer_cpp");
    int zones = 1;
    for (int i = 0; i < 2; i++)
        zones += leaf(i) >= 0;
    TracyMessageL("consumer C++ API");
    FrameMark;
    return zones;
}
