/* The releases' file versions (see btc_file_versions.h; facts from
 * tools/tracy-versions.md §0 and §4). */
#include "btc_file_versions.h"

#include <stdio.h>
#include <string.h>

#include "btc_format.h"

#define V BTC_FILE_VERSION

static const struct btc_file_release releases[] = {
    {"0.14.0", V(0, 14, 0), 82, 10}, {"0.13.1", V(0, 13, 1), 76, 9}, {"0.13.0", V(0, 13, 0), 76, 9},
    {"0.12.2", V(0, 12, 2), 74, 8},  {"0.12.1", V(0, 12, 1), 74, 8}, {"0.12.0", V(0, 12, 0), 74, 8},
    {"0.11.2", V(0, 11, 2), 72, 7},  {"0.11.1", V(0, 11, 1), 69, 5}, {"0.11.0", V(0, 11, 0), 66, 5},
    {"0.10.0", V(0, 10, 0), 64, 5},
};
#define RELEASES (sizeof releases / sizeof releases[0])

/* A series names the version all its GUIs open: its first. */
static const struct {
    const char *series, *release;
} series[] = {
    {"0.14", "0.14.0"}, {"0.13", "0.13.0"}, {"0.12", "0.12.0"},
    {"0.11", "0.11.1"}, {"0.10", "0.10.0"}, {"0.10.0-tt", "0.10.0"},
};

const struct btc_file_release *btc_file_release_of(uint32_t version)
{
    for (size_t i = 0; i < RELEASES; i++)
        if (releases[i].version == version)
            return &releases[i];
    return NULL;
}

const struct btc_file_release *btc_file_release_named(const char *name)
{
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++)
        if (strcmp(name, series[i].series) == 0)
            name = series[i].release;
    for (size_t i = 0; i < RELEASES; i++)
        if (strcmp(releases[i].name, name) == 0)
            return &releases[i];
    return NULL;
}

uint32_t btc_file_version_for_protocol(uint32_t protocol)
{
    /* The newest release of each protocol is listed first; its series'
     * first release is the one every GUI of that protocol opens. */
    const struct btc_file_release *found = NULL;
    for (size_t i = 0; i < RELEASES; i++)
        if (releases[i].protocol == protocol)
            found = &releases[i];
    return found ? found->version : BTC_FILE_VERSION_0_14_0;
}

const char *btc_file_releases_text(void)
{
    /* the table's names, newest first; built on every call (it is only
     * for messages), the same each time */
    static char text[RELEASES * 8];
    size_t n = 0;
    for (size_t i = 0; i < RELEASES; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", i ? ", " : "", releases[i].name);
    return text;
}

uint8_t btc_file_gpu_context_type(uint32_t version, uint8_t type)
{
    const struct btc_file_release *r = btc_file_release_of(version);
    uint8_t max = r ? r->max_gpu_context_type : 10;
    if (type <= max || (type == 6 && version < BTC_GATE_DIES))
        return type;
    return max >= 7 ? 7 : 0;
}
