// A user's C++ program built against the installed package: Tracy's C++ API
// (<tracy/Tracy.hpp>, with the headers it includes: tracy::Color and the
// thread helpers) with scoped zones, a message and a frame mark, nobody
// connected, so it exits at once. Prints how many zones it opened.
#include <cstdio>

#include <tracy/Tracy.hpp>

static int leaf(int i)
{
    ZoneScoped;
    return i * 2;
}

int main()
{
    int zones = 1;
    tracy::SetThreadNameWithHint("consumer-main", 1);
    {
        ZoneScopedNC("consumer_cpp", tracy::Color::SteelBlue);
        for (int i = 0; i < 2; i++)
            zones += leaf(i) >= 0;
        TracyMessageL("consumer C++ API");
    }
    FrameMark;
    std::printf("consumer-cpp: C++ API %d zones\n", zones);
    return 0;
}
