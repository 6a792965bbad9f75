/* The capture's instruction decoder (tools/capture/model/btc_disasm.c). Oracle:
 * the full recording, where upstream's server disassembled the code of 672
 * x86-64 symbols with its disassembler and asked for a frame at every
 * instruction and direct branch target: every address our decoder finds in
 * that code must be one upstream asked for. Plus hand-made AArch64 and
 * x86-64 encodings. Usage: test_capture_disasm FULL_SESSION_DIR */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"
#include "bt_test_server.h"
#include "btc_disasm.h"

static const char *full_dir;

static uint8_t *read_file(const char *name, size_t *len)
{
    uint8_t *buf = bt_ts_read_file(full_dir, name, len);
    if (!buf)
        fail_msg("cannot read %s/%s", full_dir, name);
    return buf;
}

struct oracle {
    struct bt_ts_map asked; /* frame addresses upstream asked for */
    uint64_t symbols, instructions, targets, missing;
};

static int check_insn(void *ctx, uint64_t address, uint64_t target)
{
    struct oracle *o = ctx;
    o->instructions++;
    o->missing += !bt_ts_map_get(&o->asked, address, 0);
    if (target) {
        o->targets++;
        o->missing += !bt_ts_map_get(&o->asked, target, 0);
    }
    return 0;
}

static void on_event(void *ctx, const uint8_t *ev, size_t size, int64_t time)
{
    (void)size;
    (void)time;
    struct oracle *o = ctx;
    if (ev[0] != BT_EV_SYMBOL_CODE)
        return;
    o->symbols++;
    btc_disasm_walk(BT_CPU_ARCH_X64, ev + 13, bt_wire_get_u32(ev + 9), bt_wire_get_u64(ev + 1),
                    check_insn, o);
}

static void every_instruction_found_is_one_upstream_asked_for(void **state)
{
    (void)state;
    static struct oracle o;
    size_t n;
    uint8_t *q = read_file("server-to-client.bin", &n);
    for (size_t off = 12; off + BT_QUERY_SIZE <= n; off += BT_QUERY_SIZE)
        if (q[off] == BT_QUERY_CALLSTACK_FRAME)
            *bt_ts_map_get(&o.asked, bt_wire_get_u64(q + off + 1), 1) = 1;
    free(q);
    assert_int_equal(o.asked.count, 84344); /* README: callstack frames */
    uint8_t *c = read_file("client-to-server.bin", &n);
    struct bt_ts_decoder d;
    assert_int_equal(bt_ts_decoder_init(&d, on_event, &o), 0);
    for (size_t off = 1 + BT_WELCOME_SIZE; off + 4 <= n;) {
        uint32_t len = bt_wire_get_u32(c + off);
        if (bt_ts_decoder_frame(&d, c + off + 4, len) != 0)
            fail_msg("%s", d.error);
        off += 4 + len;
    }
    bt_ts_decoder_free(&d);
    free(c);
    assert_int_equal(o.symbols, 672);
    assert_int_equal(o.instructions, 83913);
    assert_int_equal(o.targets, 16825);
    assert_int_equal(o.missing, 0);
    free(o.asked.keys);
    free(o.asked.values);
    free(o.asked.used);
}

struct seen {
    uint64_t address[16], target[16];
    size_t n;
};

static int record(void *ctx, uint64_t address, uint64_t target)
{
    struct seen *s = ctx;
    s->address[s->n] = address;
    s->target[s->n] = target;
    return ++s->n == 16;
}

static void aarch64_branches_name_their_targets(void **state)
{
    (void)state;
    /* b +8; bl -4; b.ne +16; cbz x0, +8 (two operands: no target); ret */
    const uint32_t insns[] = {0x14000002, 0x97FFFFFF, 0x54000081, 0xB4000040, 0xD65F03C0};
    uint8_t code[sizeof(insns)];
    for (size_t i = 0; i < 5; i++)
        bt_wire_put_u32(code + 4 * i, insns[i]);
    struct seen s = {0};
    assert_int_equal(btc_disasm_walk(BT_CPU_ARCH_ARM64, code, sizeof(code) + 2, 0x1000, record, &s),
                     5);
    const uint64_t want[5] = {0x1008, 0x1000, 0x1018, 0, 0};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(s.address[i], 0x1000 + 4 * i);
        assert_int_equal(s.target[i], want[i]);
    }
}

static void x64_lengths_of_the_encodings_compilers_emit(void **state)
{
    (void)state;
    static const struct {
        uint8_t bytes[16];
        size_t len;
        int branch;
        int64_t rel;
    } cases[] = {
        {{0xF3, 0x0F, 0x1E, 0xFA}, 4, 0, 0},                         /* endbr64 */
        {{0x48, 0x8B, 0x44, 0x24, 0x08}, 5, 0, 0},                   /* mov rax, [rsp+8] */
        {{0x48, 0xB8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 0, 0},            /* movabs rax, imm64 */
        {{0x66, 0xB8, 1, 2}, 4, 0, 0},                               /* mov ax, imm16 */
        {{0xE8, 0xFB, 0xFF, 0xFF, 0xFF}, 5, 1, -5},                  /* call self */
        {{0x0F, 0x84, 0x10, 0, 0, 0}, 6, 1, 16},                     /* je +16 */
        {{0x75, 0xFE}, 2, 1, -2},                                    /* jne self */
        {{0xFF, 0x25, 0, 0, 0, 0}, 6, 0, 0},                         /* jmp [rip] */
        {{0xF6, 0x05, 0, 0, 0, 0, 1}, 7, 0, 0},                      /* test byte [rip], 1 */
        {{0xF7, 0xD8}, 2, 0, 0},                                     /* neg eax */
        {{0xC5, 0xF8, 0x77}, 3, 0, 0},                               /* vzeroupper */
        {{0xC4, 0xE3, 0x79, 0x16, 0xC0, 0x01}, 6, 0, 0},             /* vpextrd eax, xmm0, 1 */
        {{0x62, 0xF1, 0x7C, 0x48, 0x10, 0x44, 0x24, 0x01}, 8, 0, 0}, /* vmovups zmm0, [rsp+64] */
        {{0x66, 0x0F, 0x3A, 0x0F, 0xC1, 0x08}, 6, 0, 0},             /* palignr */
        {{0x4C, 0x46, 0x02, 0x01}, 4, 0, 0},                         /* two REX: the last counts */
        {{0x48, 0xA1, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 0, 0},            /* mov rax, moffs64 */
        {{0x06}, 0, 0, 0},       /* no instruction in 64-bit mode */
        {{0x48, 0x8B}, 0, 0, 0}, /* cut short */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t avail = cases[i].len ? cases[i].len : (cases[i].bytes[0] == 0x06 ? 1 : 2);
        int64_t rel;
        int branch;
        size_t got = btc_x64_length(cases[i].bytes, avail, &rel, &branch);
        if (got != cases[i].len || branch != cases[i].branch || (branch && rel != cases[i].rel))
            fail_msg("case %zu: length %zu (want %zu), branch %d rel %lld", i, got, cases[i].len,
                     branch, (long long)rel);
    }
}

static void other_architectures_are_left_alone(void **state)
{
    (void)state;
    const uint8_t code[8] = {0x13, 0, 0, 0, 0x13, 0, 0, 0}; /* two RISC-V nops */
    struct seen s = {0};
    assert_int_equal(btc_disasm_walk(BT_CPU_ARCH_UNKNOWN, code, sizeof(code), 0, record, &s), 0);
    assert_int_equal(s.n, 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FULL_SESSION_DIR\n", argv[0]);
        return 2;
    }
    full_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_instruction_found_is_one_upstream_asked_for),
        cmocka_unit_test(aarch64_branches_name_their_targets),
        cmocka_unit_test(x64_lengths_of_the_encodings_compilers_emit),
        cmocka_unit_test(other_architectures_are_left_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
