/* What a dynamically linked ELF file asks of the system that loads it: its
 * interpreter (PT_INTERP), the libraries it names (DT_NEEDED), where it looks
 * for them (DT_RUNPATH, DT_RPATH), its own soname, the symbol versions it
 * needs from each library (.gnu.version_r) and those it defines
 * (.gnu.version_d). Read from the file on the host, never run. */
#ifndef BTD_ELF_DYN_H
#define BTD_ELF_DYN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    BTD_DYN_MAX_NEEDED = 64,
    BTD_DYN_MAX_VERSIONS = 256,
    BTD_DYN_NAME = 128,
    BTD_DYN_VERSION = 64,
};

/* A version one file needs from another: "GLIBC_2.34" from "libc.so.6". */
struct btd_elf_version_need {
    char file[BTD_DYN_NAME];
    char version[BTD_DYN_VERSION];
};

struct btd_elf_dyn {
    uint16_t machine;
    int bits;
    bool dynamic;     /* has PT_DYNAMIC: loaded by an interpreter, or a library */
    char interp[256]; /* PT_INTERP, "" for a static program or a library */
    char soname[BTD_DYN_NAME];
    char runpath[1024]; /* DT_RUNPATH, else DT_RPATH, as written ("$ORIGIN/../lib:...") */
    char needed[BTD_DYN_MAX_NEEDED][BTD_DYN_NAME];
    int needed_count;
    struct btd_elf_version_need needs[BTD_DYN_MAX_VERSIONS];
    int needs_count;
    char defines[BTD_DYN_MAX_VERSIONS][BTD_DYN_VERSION];
    int defines_count;
};

/* Parses an ELF image in memory. Returns 0, or -1 with a reason in err
 * (bad or truncated headers, a table outside the file, too many entries). */
int btd_elf_dyn_parse(const unsigned char *data, size_t len, struct btd_elf_dyn *d, char *err,
                      size_t errlen);

/* Reads PATH and parses it. Returns 0, or -1 with err naming the path. */
int btd_elf_dyn_read(const char *path, struct btd_elf_dyn *d, char *err, size_t errlen);

/* Whether d defines VERSION (from .gnu.version_d). */
bool btd_elf_dyn_defines(const struct btd_elf_dyn *d, const char *version);

#endif
