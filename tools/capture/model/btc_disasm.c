/* Instruction boundaries of symbol code (see btc_disasm.h). */
#include "btc_disasm.h"

#include "boardtrace/wire.h"

/* What follows an x86 opcode byte. */
enum {
    X_NONE = 0,
    X_M = 1 << 0,     /* a ModRM byte (and SIB, displacement) */
    X_I8 = 1 << 1,    /* 1-byte immediate */
    X_IZ = 1 << 2,    /* 2-byte (operand-size prefix) or 4-byte immediate */
    X_IV = 1 << 3,    /* 2, 4 or 8 bytes (REX.W): mov r, imm */
    X_I16 = 1 << 4,   /* 2-byte immediate */
    X_REL8 = 1 << 5,  /* 1-byte branch displacement */
    X_REL32 = 1 << 6, /* 4-byte branch displacement */
    X_MOFFS = 1 << 7, /* 8-byte address (4 with the address-size prefix) */
    X_GRP3 = 1 << 8,  /* F6/F7: an immediate only for /0 and /1 */
    X_BAD = 1 << 9,   /* not an instruction in 64-bit mode */
};

static uint16_t one_byte(uint8_t op)
{
    if (op < 0x40) {
        if ((op & 7) <= 3)
            return X_M;
        if ((op & 7) == 4)
            return X_I8;
        if ((op & 7) == 5)
            return X_IZ;
        /* 06 07 0E 16 17 1E 1F 27 2F 37 3F (and 0F, 26 2E 36 3E: escapes and
         * prefixes, handled before) */
        return X_BAD;
    }
    if (op < 0x60)
        return X_NONE; /* push/pop (40-4F are REX, handled before) */
    if (op >= 0x70 && op <= 0x7F)
        return X_REL8;
    if (op >= 0x91 && op <= 0x99)
        return X_NONE;
    if (op >= 0xB0 && op <= 0xB7)
        return X_I8;
    if (op >= 0xB8 && op <= 0xBF)
        return X_IV;
    if (op >= 0xD8 && op <= 0xDF)
        return X_M;
    switch (op) {
    case 0x63:
    case 0x84:
    case 0x85:
    case 0x86:
    case 0x87:
    case 0x88:
    case 0x89:
    case 0x8A:
    case 0x8B:
    case 0x8C:
    case 0x8D:
    case 0x8E:
    case 0x8F:
    case 0xD0:
    case 0xD1:
    case 0xD2:
    case 0xD3:
    case 0xFE:
    case 0xFF:
        return X_M;
    case 0x69:
    case 0x81:
    case 0xC7:
        return X_M | X_IZ;
    case 0x6B:
    case 0x80:
    case 0x83:
    case 0xC0:
    case 0xC1:
    case 0xC6:
        return X_M | X_I8;
    case 0x68:
    case 0xA9:
        return X_IZ;
    case 0x6A:
    case 0xA8:
    case 0xCD:
    case 0xE4:
    case 0xE5:
    case 0xE6:
    case 0xE7:
        return X_I8;
    case 0x6C:
    case 0x6D:
    case 0x6E:
    case 0x6F:
    case 0x90:
    case 0x9B:
    case 0x9C:
    case 0x9D:
    case 0x9E:
    case 0x9F:
    case 0xA4:
    case 0xA5:
    case 0xA6:
    case 0xA7:
    case 0xAA:
    case 0xAB:
    case 0xAC:
    case 0xAD:
    case 0xAE:
    case 0xAF:
    case 0xC3:
    case 0xC9:
    case 0xCB:
    case 0xCC:
    case 0xCF:
    case 0xD7:
    case 0xEC:
    case 0xED:
    case 0xEE:
    case 0xEF:
    case 0xF1:
    case 0xF4:
    case 0xF5:
    case 0xF8:
    case 0xF9:
    case 0xFA:
    case 0xFB:
    case 0xFC:
    case 0xFD:
        return X_NONE;
    case 0xA0:
    case 0xA1:
    case 0xA2:
    case 0xA3:
        return X_MOFFS;
    case 0xC2:
    case 0xCA:
        return X_I16;
    case 0xC8:
        return X_I16 | X_I8;
    case 0xE0:
    case 0xE1:
    case 0xE2:
    case 0xE3:
    case 0xEB:
        return X_REL8;
    case 0xE8:
    case 0xE9:
        return X_REL32;
    case 0xF6:
    case 0xF7:
        return X_M | X_GRP3;
    default: /* 60 61 62 (EVEX, before) 82 9A C4 C5 (VEX, before) CE D4 D5 D6 EA */
        return X_BAD;
    }
}

static uint16_t two_byte(uint8_t op)
{
    if (op >= 0x80 && op <= 0x8F)
        return X_REL32;
    if (op >= 0xC8 && op <= 0xCF)
        return X_NONE; /* bswap */
    switch (op) {
    case 0x05:
    case 0x06:
    case 0x07:
    case 0x08:
    case 0x09:
    case 0x0B:
    case 0x0E:
    case 0x30:
    case 0x31:
    case 0x32:
    case 0x33:
    case 0x34:
    case 0x35:
    case 0x37:
    case 0x77:
    case 0xA0:
    case 0xA1:
    case 0xA2:
    case 0xA8:
    case 0xA9:
    case 0xAA:
        return X_NONE;
    case 0x70:
    case 0x71:
    case 0x72:
    case 0x73:
    case 0xA4:
    case 0xAC:
    case 0xBA:
    case 0xC2:
    case 0xC4:
    case 0xC5:
    case 0xC6:
        return X_M | X_I8;
    case 0x04:
    case 0x0A:
    case 0x0C:
    case 0x24:
    case 0x25:
    case 0x26:
    case 0x27:
    case 0x36:
    case 0x39:
    case 0x3B:
    case 0x3C:
    case 0x3D:
    case 0x3E:
    case 0x3F:
    case 0x7A:
    case 0x7B:
        return X_BAD;
    default:
        return X_M;
    }
}

/* ModRM, SIB and displacement bytes at p: their count, 0 if past avail. */
static size_t modrm_length(const uint8_t *p, size_t avail)
{
    if (avail < 1)
        return 0;
    uint8_t m = p[0], mod = m >> 6, rm = m & 7;
    size_t n = 1;
    if (mod == 3)
        return n;
    if (rm == 4) {
        if (avail < 2)
            return 0;
        n++;
        if (mod == 0 && (p[1] & 7) == 5)
            n += 4;
    } else if (mod == 0 && rm == 5) {
        n += 4; /* RIP-relative */
    }
    n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
    return n <= avail ? n : 0;
}

static int64_t signed_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    if (n < 8 && (v >> (8 * n - 1)) & 1)
        v |= ~0ull << (8 * n);
    return (int64_t)v;
}

size_t btc_x64_length(const uint8_t *p, size_t avail, int64_t *rel, int *is_branch)
{
    size_t i = 0;
    int opsize16 = 0, addr32 = 0, rex_w = 0;
    *is_branch = 0;
    *rel = 0;
    /* legacy prefixes and REX; a REX counts only right before the opcode
     * (an earlier one is ignored, as the processor does) */
    for (; i < avail && i < 15; i++) {
        uint8_t b = p[i];
        if ((b & 0xF0) == 0x40) {
            rex_w = (b >> 3) & 1;
            continue;
        }
        if (b == 0x66)
            opsize16 = 1;
        else if (b == 0x67)
            addr32 = 1;
        else if (!(b == 0xF0 || b == 0xF2 || b == 0xF3 || b == 0x2E || b == 0x36 || b == 0x3E ||
                   b == 0x26 || b == 0x64 || b == 0x65))
            break;
        rex_w = 0;
    }
    if (i >= avail)
        return 0;
    uint8_t op = p[i++];
    uint16_t f;
    if (op == 0xC4 || op == 0xC5 || op == 0x62 || (op == 0x8F && i < avail && (p[i] & 0x1F) >= 8)) {
        /* VEX (3 or 2 bytes), EVEX (4) or XOP (3): the map comes with it */
        unsigned map;
        if (op == 0xC5) {
            map = 1;
            i += 1;
        } else if (op == 0x62) {
            if (i >= avail)
                return 0;
            map = p[i] & 7;
            i += 3;
        } else {
            if (i >= avail)
                return 0;
            map = p[i] & 0x1F;
            if (op == 0x8F)
                map = map == 8 ? 3 : 2; /* XOP map 8 has an immediate, 9 and 10 none */
            i += 2;
        }
        if (i >= avail)
            return 0;
        uint8_t op2 = p[i++];
        if (map == 1)
            f = op2 == 0x77 ? X_NONE : (two_byte(op2) & X_I8) ? X_M | X_I8 : X_M;
        else if (map == 3)
            f = X_M | X_I8;
        else
            f = X_M;
        if (op == 0xC5 || op == 0xC4)
            if (map == 0 || map > 3)
                return 0;
    } else if (op == 0x0F) {
        if (i >= avail)
            return 0;
        uint8_t op2 = p[i++];
        if (op2 == 0x38) {
            i++;
            f = X_M;
        } else if (op2 == 0x3A) {
            i++;
            f = X_M | X_I8;
        } else if (op2 == 0x0F) {
            f = X_M | X_I8; /* 3DNow!: the opcode is the trailing byte */
        } else {
            f = two_byte(op2);
        }
        if (i > avail)
            return 0;
    } else {
        f = one_byte(op);
    }
    if (f & X_BAD)
        return 0;
    if (f & X_M) {
        size_t m = modrm_length(p + i, avail - i);
        if (!m)
            return 0;
        if ((f & X_GRP3) && ((p[i] >> 3) & 7) <= 1)
            f |= op == 0xF6 ? X_I8 : X_IZ;
        i += m;
    }
    size_t imm = 0;
    if (f & X_I8)
        imm += 1;
    if (f & X_I16)
        imm += 2;
    if (f & X_IZ)
        imm += opsize16 ? 2 : 4;
    if (f & X_IV)
        imm += rex_w ? 8 : opsize16 ? 2 : 4;
    if (f & X_MOFFS)
        imm += addr32 ? 4 : 8;
    if (f & (X_REL8 | X_REL32)) {
        size_t n = f & X_REL8 ? 1 : 4;
        if (i + n > avail)
            return 0;
        *rel = signed_le(p + i, n);
        *is_branch = 1;
        imm += n;
    }
    i += imm;
    /* the processor refuses anything longer than 15 bytes */
    return i <= avail && i <= 15 ? i : 0;
}

static size_t walk_x64(const uint8_t *code, size_t len, uint64_t address, btc_insn_fn fn, void *ctx)
{
    size_t n = 0;
    for (size_t off = 0; off < len;) {
        int64_t rel;
        int branch;
        size_t l = btc_x64_length(code + off, len - off, &rel, &branch);
        if (!l)
            break;
        uint64_t next = address + off + l;
        n++;
        if (fn(ctx, address + off, branch ? next + (uint64_t)rel : 0))
            break;
        off += l;
    }
    return n;
}

static int64_t sign_extend(uint32_t v, unsigned bits)
{
    return (v >> (bits - 1)) & 1 ? (int64_t)v - ((int64_t)1 << bits) : (int64_t)v;
}

static size_t walk_arm64(const uint8_t *code, size_t len, uint64_t address, btc_insn_fn fn,
                         void *ctx)
{
    size_t n = 0;
    for (size_t off = 0; off + 4 <= len; off += 4) {
        uint32_t insn = bt_wire_get_u32(code + off);
        uint64_t at = address + off, target = 0;
        if ((insn & 0x7C000000) == 0x14000000) /* B, BL: imm26 */
            target = at + 4 * (uint64_t)sign_extend(insn & 0x3FFFFFF, 26);
        else if ((insn & 0xFF000010) == 0x54000000) /* B.cond: imm19 */
            target = at + 4 * (uint64_t)sign_extend(insn >> 5 & 0x7FFFF, 19);
        n++;
        if (fn(ctx, at, target))
            break;
    }
    return n;
}

size_t btc_disasm_walk(uint8_t cpu_arch, const uint8_t *code, size_t len, uint64_t address,
                       btc_insn_fn fn, void *ctx)
{
    switch (cpu_arch) {
    case BT_CPU_ARCH_X64:
        return walk_x64(code, len, address, fn, ctx);
    case BT_CPU_ARCH_ARM64:
        return walk_arm64(code, len, address, fn, ctx);
    default:
        return 0;
    }
}
