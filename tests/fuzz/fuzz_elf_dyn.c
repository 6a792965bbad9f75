/* libFuzzer target for the deploy's ELF reader (btd_elf_dyn.c), which reads
 * any program the user names and the libraries of any sysroot: interpreter,
 * dynamic section, version needs and definitions. Whatever it accepts must
 * hold terminated strings within their fields and counts within bounds. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "btd_elf_dyn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct btd_elf_dyn d;
    char err[300];
    if (btd_elf_dyn_parse(data, size, &d, err, sizeof err) != 0)
        return 0;
    if (d.needed_count < 0 || d.needed_count > BTD_DYN_MAX_NEEDED || d.needs_count < 0 ||
        d.needs_count > BTD_DYN_MAX_VERSIONS || d.defines_count < 0 ||
        d.defines_count > BTD_DYN_MAX_VERSIONS)
        abort();
    if (strnlen(d.interp, sizeof d.interp) == sizeof d.interp ||
        strnlen(d.soname, sizeof d.soname) == sizeof d.soname ||
        strnlen(d.runpath, sizeof d.runpath) == sizeof d.runpath)
        abort();
    for (int i = 0; i < d.needed_count; i++)
        if (strnlen(d.needed[i], sizeof d.needed[i]) == sizeof d.needed[i])
            abort();
    for (int i = 0; i < d.needs_count; i++)
        (void)btd_elf_dyn_defines(&d, d.needs[i].version);
    return 0;
}
