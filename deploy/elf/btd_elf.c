/* ELF header parsing and architecture names (see btd_elf.h); the section
 * headers are read only to find .comment (toolchain), .symtab and the
 * boardtrace note. */
#define _GNU_SOURCE
#include "btd_elf.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum {
    ELF_HEADER_MIN = 20, /* e_ident (16) + e_type (2) + e_machine (2) */
    EM_386 = 3,
    EM_ARM = 40,
    EM_X86_64 = 62,
    EM_AARCH64 = 183,
    EM_RISCV = 243,
};

int btd_elf_parse(const unsigned char *data, size_t len, struct btd_elf_info *info, char *err,
                  size_t errlen)
{
    if (len < 4 || memcmp(data, "\177ELF", 4) != 0) {
        snprintf(err, errlen, "not an ELF file (expected bytes 7f 45 4c 46, found %zu bytes%s)",
                 len, len >= 4 ? " starting differently" : "");
        return -1;
    }
    if (len < ELF_HEADER_MIN) {
        snprintf(err, errlen, "truncated ELF header (expected at least %d bytes, found %zu)",
                 ELF_HEADER_MIN, len);
        return -1;
    }
    if (data[4] != 1 && data[4] != 2) {
        snprintf(err, errlen, "bad ELF class %u at offset 4 (expected 1 or 2)", data[4]);
        return -1;
    }
    if (data[5] != 1 && data[5] != 2) {
        snprintf(err, errlen, "bad ELF data encoding %u at offset 5 (expected 1 or 2)", data[5]);
        return -1;
    }
    info->bits = data[4] == 1 ? 32 : 64;
    info->little = data[5] == 1;
    if (info->little) {
        info->type = (uint16_t)(data[16] | data[17] << 8);
        info->machine = (uint16_t)(data[18] | data[19] << 8);
    } else {
        info->type = (uint16_t)(data[17] | data[16] << 8);
        info->machine = (uint16_t)(data[19] | data[18] << 8);
    }
    return 0;
}

static uint64_t get(const unsigned char *p, int size, int little)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++)
        v |= (uint64_t)p[little ? i : size - 1 - i] << (8 * i);
    return v;
}

static int read_at(FILE *f, uint64_t off, void *buf, size_t len)
{
    if (fseeko(f, (off_t)off, SEEK_SET) != 0)
        return -1;
    return fread(buf, 1, len, f) == len ? 0 : -1;
}

/* A file cut short (an interrupted copy, a full disk) still has a good
 * header; what gives it away is a program header, a segment or the section
 * headers reaching past its end. */
static int check_complete(FILE *f, const unsigned char *h, size_t n,
                          const struct btd_elf_info *info, uint64_t size, char *why, size_t whylen)
{
    int w = info->bits == 64 ? 8 : 4, le = info->little;
    if (n < (w == 8 ? 64u : 52u)) {
        snprintf(why, whylen, "truncated ELF file: %zu bytes, shorter than its %d-byte header", n,
                 w == 8 ? 64 : 52);
        return -1;
    }
    uint64_t phoff = get(h + (w == 8 ? 0x20 : 0x1c), w, le);
    unsigned phentsize = (unsigned)get(h + (w == 8 ? 0x36 : 0x2a), 2, le);
    unsigned phnum = (unsigned)get(h + (w == 8 ? 0x38 : 0x2c), 2, le);
    uint64_t shoff = get(h + (w == 8 ? 0x28 : 0x20), w, le);
    unsigned shentsize = (unsigned)get(h + (w == 8 ? 0x3a : 0x2e), 2, le);
    unsigned shnum = (unsigned)get(h + (w == 8 ? 0x3c : 0x30), 2, le);
    if (phnum && (phoff > size || (uint64_t)phnum * phentsize > size - phoff)) {
        snprintf(why, whylen,
                 "truncated ELF file: its program headers end at byte %llu but the file has "
                 "%llu bytes",
                 (unsigned long long)(phoff + (uint64_t)phnum * phentsize),
                 (unsigned long long)size);
        return -1;
    }
    if (phnum && phentsize < (w == 8 ? 56u : 32u)) {
        snprintf(why, whylen, "bad ELF program header size %u", phentsize);
        return -1;
    }
    for (unsigned i = 0; i < phnum; i++) {
        unsigned char ph[56];
        if (read_at(f, phoff + (uint64_t)i * phentsize, ph, w == 8 ? 56 : 32) != 0) {
            snprintf(why, whylen, "cannot read ELF program header %u", i);
            return -1;
        }
        uint64_t off = get(ph + (w == 8 ? 8 : 4), w, le);
        uint64_t filesz = get(ph + (w == 8 ? 0x20 : 0x10), w, le);
        if (filesz && (off > size || filesz > size - off)) {
            snprintf(why, whylen,
                     "truncated ELF file: segment %u ends at byte %llu but the file has %llu "
                     "bytes",
                     i, (unsigned long long)(off + filesz), (unsigned long long)size);
            return -1;
        }
    }
    if (shoff && shnum && (shoff > size || (uint64_t)shnum * shentsize > size - shoff)) {
        snprintf(why, whylen,
                 "truncated ELF file: its section headers end at byte %llu but the file has "
                 "%llu bytes",
                 (unsigned long long)(shoff + (uint64_t)shnum * shentsize),
                 (unsigned long long)size);
        return -1;
    }
    return 0;
}

int btd_elf_read(const char *path, struct btd_elf_info *info, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    unsigned char head[64];
    size_t n = fread(head, 1, sizeof head, f);
    char why[200];
    struct stat st;
    int rc = btd_elf_parse(head, n, info, why, sizeof why);
    if (rc == 0 && fstat(fileno(f), &st) != 0) {
        snprintf(why, sizeof why, "cannot stat: %s", strerror(errno));
        rc = -1;
    }
    if (rc == 0)
        rc = check_complete(f, head, n, info, (uint64_t)st.st_size, why, sizeof why);
    fclose(f);
    static const char not_elf[] = "not an ELF file";
    if (rc != 0 && strncmp(why, not_elf, sizeof not_elf - 1) == 0)
        snprintf(err, errlen, "%s is not an ELF executable%s", path, why + sizeof not_elf - 1);
    else if (rc != 0)
        snprintf(err, errlen, "%s: %s", path, why);
    return rc;
}

/* Finds section NAME (at most 31 characters) in F: its file offset and size.
 * Returns 0, or -1 when F has no such section or bad section headers. */
static int find_section(FILE *f, const char *name, uint64_t *offset, uint64_t *size)
{
    unsigned char h[64], sh[64];
    struct btd_elf_info info;
    char why[160];
    rewind(f);
    size_t n = fread(h, 1, sizeof h, f);
    if (btd_elf_parse(h, n, &info, why, sizeof why) != 0 || n < (info.bits == 64 ? 64u : 52u))
        return -1;
    int w = info.bits == 64 ? 8 : 4, le = info.little;
    uint64_t shoff = get(h + (w == 8 ? 0x28 : 0x20), w, le);
    unsigned shentsize = (unsigned)get(h + (w == 8 ? 0x3a : 0x2e), 2, le);
    unsigned shnum = (unsigned)get(h + (w == 8 ? 0x3c : 0x30), 2, le);
    unsigned shstrndx = (unsigned)get(h + (w == 8 ? 0x3e : 0x32), 2, le);
    if (!shoff || shentsize < (w == 8 ? 64u : 40u) || shstrndx >= shnum || shnum > 65535)
        return -1;
    /* sh_name at 0, sh_offset at 0x18 (64) / 0x10 (32), sh_size next. */
    unsigned off_at = w == 8 ? 0x18 : 0x10;
    size_t entry = shentsize > 64 ? 64 : shentsize;
    if (read_at(f, shoff + (uint64_t)shstrndx * shentsize, sh, entry))
        return -1;
    uint64_t stroff = get(sh + off_at, w, le);
    size_t want = strlen(name) + 1;
    for (unsigned i = 0; i < shnum; i++) {
        char found[32] = {0};
        if (read_at(f, shoff + (uint64_t)i * shentsize, sh, entry) ||
            read_at(f, stroff + get(sh, 4, le), found, want) != 0 || memcmp(found, name, want))
            continue;
        *offset = get(sh + off_at, w, le);
        *size = get(sh + off_at + w, w, le);
        return 0;
    }
    return -1;
}

int btd_elf_comment(const char *path, char *out, size_t outlen)
{
    out[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint64_t off, size;
    char *data = NULL;
    if (find_section(f, ".comment", &off, &size) == 0 && size > 0 && size <= 65536 &&
        (data = malloc(size + 1)) && read_at(f, off, data, size) == 0) {
        data[size] = '\0';
        size_t used = 0;
        for (uint64_t p = 0; p < size; p += strlen(data + p) + 1) {
            if (!data[p] || strstr(out, data + p))
                continue;
            int k = snprintf(out + used, outlen - used, "%s%s", used ? "; " : "", data + p);
            if (k < 0 || (size_t)k >= outlen - used)
                break;
            used += (size_t)k;
        }
    }
    free(data);
    fclose(f);
    return out[0] ? 0 : -1;
}

int btd_elf_has_symbols(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint64_t off, size;
    int rc = find_section(f, ".symtab", &off, &size) == 0 && size > 0;
    fclose(f);
    return rc;
}

int btd_elf_boardtrace_note(const char *path, char *version, size_t vlen, int *mode)
{
    version[0] = '\0';
    *mode = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char h[64];
    struct btd_elf_info info;
    char why[160];
    size_t n = fread(h, 1, sizeof h, f);
    uint64_t off, size;
    unsigned char note[256];
    int found = 0;
    if (btd_elf_parse(h, n, &info, why, sizeof why) == 0 &&
        find_section(f, ".note.boardtrace", &off, &size) == 0 && size >= 24 &&
        size <= sizeof note && read_at(f, off, note, size) == 0) {
        /* namesz, descsz, type, "boardtrace\0" padded to 12, then the text. */
        uint64_t namesz = get(note, 4, info.little), descsz = get(note + 4, 4, info.little);
        if (namesz == 11 && memcmp(note + 12, "boardtrace", 11) == 0 && 24 + descsz <= size &&
            descsz > 0 && note[24 + descsz - 1] == '\0') {
            const char *text = (const char *)note + 24;
            const char *v = strstr(text, "version="), *m = strstr(text, "mode=");
            if (v)
                snprintf(version, vlen, "%.*s", (int)strcspn(v + 8, " "), v + 8);
            if (m)
                *mode = atoi(m + 5);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

int btd_elf_has_tracy_client(const char *path)
{
    static const char marker[] = "TRACY_NO_EXIT";
    const size_t k = sizeof marker - 1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    /* Blocks overlap by the marker's length so a match across two is found. */
    static char buf[1 << 16];
    size_t have = 0, n;
    int found = 0;
    while (!found && (n = fread(buf + have, 1, sizeof buf - have, f)) > 0) {
        have += n;
        found = memmem(buf, have, marker, k) != NULL;
        if (have >= k) {
            memmove(buf, buf + have - (k - 1), k - 1);
            have = k - 1;
        }
    }
    int bad = ferror(f);
    fclose(f);
    return bad ? -1 : found;
}

const char *btd_elf_arch(const struct btd_elf_info *info)
{
    switch (info->machine) {
    case EM_RISCV:
        return info->bits == 64 ? "riscv64" : "riscv32";
    case EM_AARCH64:
        return "aarch64";
    case EM_X86_64:
        return "x86_64";
    case EM_ARM:
        return "arm";
    case EM_386:
        return "i386";
    default:
        return NULL;
    }
}

const char *btd_arch_normalize(const char *m)
{
    if (strcmp(m, "arm64") == 0)
        return "aarch64";
    if (strncmp(m, "armv", 4) == 0 || strcmp(m, "arm") == 0)
        return "arm";
    if (strcmp(m, "amd64") == 0)
        return "x86_64";
    if (strcmp(m, "i486") == 0 || strcmp(m, "i586") == 0 || strcmp(m, "i686") == 0)
        return "i386";
    return m;
}
