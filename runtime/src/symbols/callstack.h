/* Callstacks: capturing return addresses on the emitting thread, and the
 * worker's answers to the capture's CallstackFrame and Symbol queries. */
#ifndef BT_CALLSTACK_H
#define BT_CALLSTACK_H

#include <stdint.h>

#include "code.h"
#include "encode/encoder.h"

/* Captures up to depth return addresses, innermost first, starting at
 * `caller` (the return address into the program, taken in the public
 * function; 0 = the caller of this function). Returns the count. */
int bt_callstack_capture(uint64_t *frames, int depth, uintptr_t caller);

/* Makes addresses safe for upstream's pointer packing (protocol notes 8.5)
 * unless NO_POINTER_COMPRESSION is set. */
uint64_t bt_address_canonical(uint64_t address);

/* Frame-record walk: from the frame pointer fp, follow the chain within
 * [lo, hi) (the thread's stack). The record layout is the target's: on
 * x86-64 and AArch64 [fp] = previous fp, [fp+8] = return address; on RISC-V
 * fp is the caller's sp, with the return address at fp-8 and the previous fp
 * at fp-16. Returns the number of return addresses stored. */
int bt_callstack_walk_frames(uintptr_t fp, uintptr_t lo, uintptr_t hi, uint64_t *frames, int depth);

/* Answers ServerQueryCallstackFrame(address): image name, then one frame.
 * The frame's symbol and file are offered to code transfer. */
void bt_callstack_answer_frame(struct bt_encoder *e, struct bt_code *code, uint64_t address);
/* Answers ServerQuerySymbol(address): file and line of a symbol. */
void bt_callstack_answer_symbol(struct bt_encoder *e, struct bt_code *code, uint64_t address);
/* Whether the line tables of a loaded module name this file, as "name" or
 * "dir/name" (code transfer sends only such files: the worker hands this
 * to bt_code_init). */
int bt_callstack_debug_names_file(const char *path);

#endif
