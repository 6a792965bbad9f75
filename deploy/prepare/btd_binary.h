/* The program and the capture as the host sees them: their ELF headers,
 * size, toolchain and tracing, and what is sent to the board (a stripped
 * copy, its name and SHA-256 there). */
#ifndef BTD_BINARY_H
#define BTD_BINARY_H

#include "btd_elf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A local binary to put on the board. */
struct btd_binary {
    const char *path;
    const char *arch;
    struct btd_elf_info elf;
    char toolchain[256];
    bool has_symbols;    /* .symtab present */
    bool traced;         /* program: a Tracy client is in it (ours or upstream's) */
    char bt_version[32]; /* from its boardtrace ELF note, "" none */
    int tracing_mode;    /* from the note, 0 none */
    uint64_t size;
    char upload[4096];    /* the stripped copy sent instead of path, "" none */
    uint64_t upload_size; /* bytes sent: size, or the stripped copy's */
    char name[128];       /* file name on the board */
    char remote[1200];    /* full path on the board */
    char sha[65];
};

/* Reads a binary's ELF header (and size, toolchain). */
int btd_binary_load(struct btd_binary *b, const char *path, const char *role);
/* Reads what tracing a loaded program holds (its boardtrace note, a Tracy
 * client) and warns, before anything is uploaded, when it has none. */
void btd_program_tracing(struct btd_binary *program);

/* Finds the default capture for ARCH (search order in --help); fills path
 * storage in out. Returns 0, or BTD_EXIT_LOCAL after naming where it looked. */
int btd_find_capture(const char *arch, char *out, size_t outlen);

#endif
