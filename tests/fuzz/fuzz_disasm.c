/* libFuzzer target for the capture's instruction decoder (btc_disasm.c),
 * which reads symbol code a client sent: arbitrary bytes as x86-64 (first
 * byte even) or AArch64 (odd) code. Every instruction must lie inside the
 * code, in order, and an x86-64 one be at most 15 bytes long. */
#include <stdint.h>
#include <stdlib.h>

#include "boardtrace/wire.h"
#include "btc_disasm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
    uint64_t base, end, last;
    int arm;
};

static int check(void *ctx, uint64_t address, uint64_t target)
{
    (void)target; /* any value: the capture only asks the client about it */
    struct walk *w = ctx;
    if (address < w->base || address >= w->end || (w->last && address <= w->last))
        abort();
    if (w->last && !w->arm && address - w->last > 15)
        abort();
    w->last = address;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct walk w = {0x400000, 0x400000 + (size - 1), 0, data[0] & 1};
    size_t n = btc_disasm_walk(w.arm ? BT_CPU_ARCH_ARM64 : BT_CPU_ARCH_X64, data + 1, size - 1,
                               w.base, check, &w);
    if (n > size)
        abort();
    return 0;
}
