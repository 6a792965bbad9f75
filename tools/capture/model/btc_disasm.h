/* Instruction boundaries of received symbol code. Upstream's server
 * disassembles every symbol's code and asks for a callstack frame at each
 * instruction (and at the target of each direct jump or call), so that the
 * GUI's assembly view can show the source line of every instruction; the
 * capture does the same with this decoder instead of a disassembler library.
 * It knows instruction lengths and direct branch targets only: x86-64
 * (legacy, REX, VEX, EVEX and XOP encodings) and AArch64. As upstream, it
 * does nothing for other architectures (RISC-V has no value in the protocol)
 * and stops at the first byte sequence that is no instruction. */
#ifndef BTC_DISASM_H
#define BTC_DISASM_H

#include <stddef.h>
#include <stdint.h>

/* Called per instruction: its address and, for a direct jump or call, the
 * address it goes to (else 0). A non-zero return stops the walk. */
typedef int (*btc_insn_fn)(void *ctx, uint64_t address, uint64_t target);

/* Walks code (loaded at address) for the welcome's CPU architecture.
 * Returns the number of instructions visited. */
size_t btc_disasm_walk(uint8_t cpu_arch, const uint8_t *code, size_t len, uint64_t address,
                       btc_insn_fn fn, void *ctx);

/* The length of the x86-64 instruction at p (at most avail bytes), 0 when
 * it is none or runs past avail. For a direct jump or call, *is_branch is
 * set and *rel is its displacement from the instruction's end. */
size_t btc_x64_length(const uint8_t *p, size_t avail, int64_t *rel, int *is_branch);

#endif
