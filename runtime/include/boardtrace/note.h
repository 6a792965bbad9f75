/* The mark a traced program carries: an ELF note (section .note.boardtrace,
 * owner "boardtrace", type 1) whose text is "version=V mode=M", the
 * boardtrace version and the tracing mode the program was compiled with.
 * `boardtrace run` reads it before uploading (a program without it, or
 * without upstream Tracy's client, never opens a tracing port) and records
 * it. Every file including <boardtrace/trace.h> or <tracy/TracyC.h> emits
 * it into one COMDAT group, so the linker keeps a single copy. */
#ifndef BOARDTRACE_NOTE_H
#define BOARDTRACE_NOTE_H

#include <boardtrace/config.h>

#if BT_RUNTIME_TRACING && defined(__ELF__) && !defined(BT_BUILDING_RUNTIME) && \
    !defined(BT_NO_ELF_NOTE)
#define BT_NOTE_STR2(x) #x
#define BT_NOTE_STR(x)  BT_NOTE_STR2(x)
__asm__(".pushsection .note.boardtrace,\"aG\",%note,.note.boardtrace,comdat\n"
        ".balign 4\n"
        ".long 11\n"
        ".long 92f - 91f\n"
        ".long 1\n"
        ".asciz \"boardtrace\"\n"
        ".balign 4\n"
        "91: .asciz \"version=" BT_VERSION_STRING
        " mode=" BT_NOTE_STR(BT_TRACING_MODE) "\"\n"
                                              "92: .balign 4\n"
                                              ".popsection\n");
#undef BT_NOTE_STR
#undef BT_NOTE_STR2
#endif

#endif
