/* Which machine an executable is for: reads the ELF header of the program and
 * capture so a wrong binary is refused before anything is uploaded, and maps
 * both ELF machines and `uname -m` answers onto one architecture name. */
#ifndef BTD_ELF_H
#define BTD_ELF_H

#include <stddef.h>
#include <stdint.h>

struct btd_elf_info {
    uint16_t machine; /* e_machine */
    int bits;         /* 32 or 64 */
    int little;       /* 1 little-endian, 0 big-endian */
    uint16_t type;    /* e_type: 2 executable, 3 shared (PIE) */
};

/* Parses the first bytes of a file. Returns 0, or -1 with a reason in err
 * ("not an ELF file: first bytes are ...", "truncated ELF header: 20 bytes"). */
int btd_elf_parse(const unsigned char *data, size_t len, struct btd_elf_info *info, char *err,
                  size_t errlen);

/* Reads and parses PATH's header. Returns 0, or -1 with err naming the path. */
int btd_elf_read(const char *path, struct btd_elf_info *info, char *err, size_t errlen);

/* The toolchain that built PATH, from its .comment section ("GCC: (Debian
 * 12.2.0-14) 12.2.0"); several entries are joined with "; ". Returns 0, or -1
 * when the file has no readable .comment (out is then ""). */
int btd_elf_comment(const char *path, char *out, size_t outlen);

/* 1 when PATH has a symbol table (.symtab), which the runtime needs to name
 * callstack frames (tracing modes 3-4); 0 when stripped; -1 unreadable. */
int btd_elf_has_symbols(const char *path);

/* The boardtrace ELF note of PATH (<boardtrace/note.h>): the boardtrace
 * version and the tracing mode the program was compiled with. Returns 1
 * when found, 0 when PATH has none, -1 when unreadable. */
int btd_elf_boardtrace_note(const char *path, char *version, size_t vlen, int *mode);

/* 1 when PATH contains a Tracy client (boardtrace's or upstream's: the name
 * of the TRACY_NO_EXIT variable both read), 0 when not, -1 unreadable. */
int btd_elf_has_tracy_client(const char *path);

/* Architecture name in `uname -m` spelling ("riscv64", "aarch64", "x86_64",
 * "arm", "i386", "riscv32", ...), or NULL when boardtrace does not know it. */
const char *btd_elf_arch(const struct btd_elf_info *info);

/* Normalizes a `uname -m` answer ("arm64" -> "aarch64", "armv7l" -> "arm",
 * "i686" -> "i386", "amd64" -> "x86_64"); unknown names come back unchanged. */
const char *btd_arch_normalize(const char *uname_m);

#endif
