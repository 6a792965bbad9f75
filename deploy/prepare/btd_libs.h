/* Dynamically linked programs on boards that lack their loader, libraries or
 * symbol versions: what the program needs (read on the host), what the
 * board lacks (asked of the board's own loader), and bringing the loader
 * and every library from the toolchain's sysroot into a per-board cache the
 * program is started from, without touching the board's own libraries.
 *
 * Host side here (btd_libs.c); board side in btd_libs_board.h. */
#ifndef BTD_LIBS_H
#define BTD_LIBS_H

#include "btd_elf_dyn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { BTD_LIBS_MAX = 64 };

/* One file brought to the board: its name there (the name it is asked for
 * by, DT_NEEDED or the interpreter's file name) and its file on the host. */
struct btd_lib {
    char name[BTD_DYN_NAME];
    char path[4096];
    uint64_t size;
    char sha[65];
    bool cached; /* already in the board's cache (btd_libs_bring) */
};

struct btd_libs {
    char sysroot[4096];
    char interp[256]; /* the program's PT_INTERP */
    bool glibc;       /* the loader takes glibc's options (--inhibit-cache) */
    int loader;       /* index in libs of the interpreter */
    struct btd_lib libs[BTD_LIBS_MAX];
    int count;
    uint64_t bytes;
    /* Filled by btd_libs_bring: */
    char cache[1200];    /* the board's cache folder, "" when none could be used */
    int uploaded;        /* files sent this run */
    uint64_t sent_bytes; /* their bytes */
};

/* The GNU triple boardtrace's toolchain files use for ARCH, or NULL. */
const char *btd_libs_triple(const char *arch);

/* The sysroot to bring libraries from: GIVEN (--sysroot), else
 * $BOARDTRACE_SYSROOT, else the cross compiler's for ARCH (asked with
 * -print-sysroot, then -print-file-name=libc.so.6), else /usr/<triple>.
 * Returns 0, or -1 with err listing where it looked. */
int btd_libs_sysroot(const char *arch, const char *given, char *out, size_t outlen, char *err,
                     size_t errlen);

/* Everything PROGRAM (parsed as prog) loads, resolved in SYSROOT: its
 * interpreter and the closure of DT_NEEDED (searching each file's runpath,
 * then the sysroot's library folders), every file checked to be an ELF of
 * the program's machine and to define each symbol version asked of it.
 * Returns 0, or -1 with err naming the missing file or version. */
int btd_libs_resolve(const char *program, const struct btd_elf_dyn *prog, const char *sysroot,
                     struct btd_libs *libs, char *err, size_t errlen);

#endif
