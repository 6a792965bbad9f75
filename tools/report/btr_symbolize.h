/* Naming the callstack frames a program could not name itself (it ran
 * stripped): frames recorded as IMAGE+0xOFFSET with "[build-id HEX]" for a
 * file are looked up in the unstripped binaries given, matched by build-id,
 * through their symbol table and DWARF line table, and the trace is
 * rewritten with function names, source files and lines. */
#ifndef BTR_SYMBOLIZE_H
#define BTR_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct btr_symbolize_result {
    uint64_t frames;     /* callstack frames in the trace */
    uint64_t unresolved; /* of them, recorded as IMAGE+0xOFFSET */
    uint64_t named;      /* of those, named from a binary */
    uint64_t with_line;  /* of those, with a source line */
};

/* Rewrites TRACE into OUT (OUT may be TRACE: replaced once complete) with
 * the frames named from BINARIES. Returns 0, or -1 with err (a binary that
 * is not a 64-bit little-endian ELF file, an unreadable trace). */
int btr_symbolize(const char *trace, const char *out, const char *const *binaries, int count,
                  struct btr_symbolize_result *res, char *err, size_t errlen);

#endif
