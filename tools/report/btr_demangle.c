/* C++ names as people write them: every report that prints a function or
 * zone name passes it through btr_demangle, so `_ZL9Fibonaccii` reads
 * `Fibonacci(int)`. The CSV export is the exception: it prints names as
 * stored, as tracy-csvexport does, so its rows match upstream's.
 *
 * The demangler is libstdc++'s __cxa_demangle (extern "C"): every GCC
 * toolchain we build with, the cross ones for the boards included, ships
 * libstdc++ for its target, while libiberty-dev is a host-only Debian
 * package with no riscv64 or arm64 build to link a board's report with. */
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Demangled names by the address of their stored name: the trace's strings
 * stay put while a report runs, and a name is demangled once however many
 * zones carry it. Values are the malloc'ed demangled name, or 0 when the
 * name is not a mangled one. */
static struct btc_map cache;
static int cache_ready;

const char *btr_demangle(const char *name)
{
    /* Itanium C++ ABI names start with _Z; anything else (C names, names
     * already demangled by the client) is shown as it is. */
    if (!name || name[0] != '_' || name[1] != 'Z')
        return name ? name : "";
    if (!cache_ready) {
        btc_map_init(&cache);
        cache_ready = 1;
    }
    uint64_t key = (uint64_t)(uintptr_t)name;
    uint64_t *hit = btc_map_get(&cache, key);
    if (hit)
        return *hit ? (const char *)(uintptr_t)*hit : name;
    int status = 0;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(d);
        d = NULL;
    }
    if (btc_map_put(&cache, key, (uint64_t)(uintptr_t)d) < 0) {
        free(d);
        return name; /* out of memory for the cache: the stored name */
    }
    return d ? d : name;
}

void btr_demangle_free(void)
{
    if (!cache_ready)
        return;
    for (size_t i = 0; i < cache.cap; i++)
        if (cache.used[i])
            free((void *)(uintptr_t)cache.vals[i]);
    btc_map_free(&cache);
    cache_ready = 0;
}
