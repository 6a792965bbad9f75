/* Host symbolization of a trace's frames (see btr_symbolize.h): two passes
 * over the file, the first to find the frames and the names they need, the
 * second to write them (btc_tracy_rewrite). The ELF reading is our own:
 * 64-bit little-endian files (riscv64, aarch64, x86_64), .symtab function
 * symbols and the runtime's DWARF line reader. */
#define _GNU_SOURCE
#include "btr_symbolize.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btc_tracy.h"
#include "btc_util.h"
#include "dwarf_line.h"

struct sym {
    uint64_t value, size;
    const char *name;
};

struct image {
    const char *path;
    const uint8_t *map;
    size_t size;
    char build_id[41];
    int fixed; /* ET_EXEC: loaded at its own addresses, so a frame's address is its own */
    struct sym *syms;
    size_t nsyms;
    struct bt_line_table lines;
};

static const Elf64_Shdr *shdrs(const struct image *im, const Elf64_Ehdr *eh)
{
    if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > im->size ||
        (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > im->size - eh->e_shoff)
        return NULL;
    return (const Elf64_Shdr *)(im->map + eh->e_shoff);
}

static const uint8_t *section(const struct image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                              const char *name, size_t *len)
{
    if (eh->e_shstrndx >= eh->e_shnum)
        return NULL;
    const Elf64_Shdr *names = &sh[eh->e_shstrndx];
    if (names->sh_offset > im->size || names->sh_size > im->size - names->sh_offset)
        return NULL;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= names->sh_size || sh[i].sh_type == SHT_NOBITS)
            continue;
        const char *n = (const char *)im->map + names->sh_offset + sh[i].sh_name;
        if (strncmp(n, name, names->sh_size - sh[i].sh_name) != 0)
            continue;
        if (sh[i].sh_offset > im->size || sh[i].sh_size > im->size - sh[i].sh_offset ||
            (sh[i].sh_flags & SHF_COMPRESSED))
            return NULL;
        *len = sh[i].sh_size;
        return im->map + sh[i].sh_offset;
    }
    return NULL;
}

static void read_build_id(struct image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *sh)
{
    size_t len = 0;
    const uint8_t *p = section(im, eh, sh, ".note.gnu.build-id", &len);
    if (!p || len < 16)
        return;
    uint32_t namesz, descsz, type;
    memcpy(&namesz, p, 4);
    memcpy(&descsz, p + 4, 4);
    memcpy(&type, p + 8, 4);
    size_t desc = 12 + ((namesz + 3u) & ~3u);
    if (type != 3 || namesz != 4 || memcmp(p + 12, "GNU", 4) != 0 || descsz == 0 || descsz > 20 ||
        desc + descsz > len)
        return;
    for (uint32_t k = 0; k < descsz; k++)
        snprintf(im->build_id + 2 * k, 3, "%02x", p[desc + k]);
}

static int sym_order(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

static void read_symbols(struct image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *sh)
{
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > im->size || sh[i].sh_size > im->size - sh[i].sh_offset ||
            strs->sh_offset > im->size || strs->sh_size > im->size - strs->sh_offset)
            return;
        const Elf64_Sym *syms = (const Elf64_Sym *)(im->map + sh[i].sh_offset);
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        im->syms = calloc(n ? n : 1, sizeof *im->syms);
        if (!im->syms)
            return;
        const char *names = (const char *)im->map + strs->sh_offset;
        for (size_t k = 0; k < n; k++) {
            unsigned type = ELF64_ST_TYPE(syms[k].st_info);
            if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !syms[k].st_value ||
                syms[k].st_name >= strs->sh_size ||
                !memchr(names + syms[k].st_name, 0, strs->sh_size - syms[k].st_name))
                continue;
            im->syms[im->nsyms++] =
                (struct sym){syms[k].st_value, syms[k].st_size, names + syms[k].st_name};
        }
        qsort(im->syms, im->nsyms, sizeof *im->syms, sym_order);
        return;
    }
}

static int image_load(struct image *im, const char *path, char *err, size_t errlen)
{
    memset(im, 0, sizeof *im);
    im->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    im->size = (size_t)st.st_size;
    im->map = im->size >= sizeof(Elf64_Ehdr) ? mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, fd, 0)
                                             : MAP_FAILED;
    close(fd);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->map;
    if (im->map == MAP_FAILED || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
        if (im->map != MAP_FAILED)
            munmap((void *)im->map, im->size);
        im->map = NULL;
        snprintf(err, errlen, "%s: not a 64-bit little-endian ELF file (riscv64, aarch64, x86_64)",
                 path);
        return -1;
    }
    const Elf64_Shdr *sh = shdrs(im, eh);
    if (!sh) {
        snprintf(err, errlen, "%s: no section headers", path);
        return -1;
    }
    read_build_id(im, eh, sh);
    im->fixed = eh->e_type == ET_EXEC;
    read_symbols(im, eh, sh);
    struct bt_dwarf_sections s = {0};
    s.line = section(im, eh, sh, ".debug_line", &s.line_size);
    s.line_str = section(im, eh, sh, ".debug_line_str", &s.line_str_size);
    s.str = section(im, eh, sh, ".debug_str", &s.str_size);
    if (s.line)
        bt_line_table_build(&im->lines, &s);
    return 0;
}

static void image_free(struct image *im)
{
    free(im->syms);
    bt_line_table_free(&im->lines);
    if (im->map)
        munmap((void *)im->map, im->size);
}

static const struct sym *symbol_at(const struct image *im, uint64_t a)
{
    size_t lo = 0, hi = im->nsyms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (im->syms[mid].value <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym *s = &im->syms[lo - 1];
    return s->size && a >= s->value + s->size ? NULL : s;
}

/* What a frame becomes. */
struct naming {
    uint32_t name, file, line; /* name, file: string index */
    uint64_t sym_addr;
};

struct ctx {
    struct image *images;
    int count;
    struct btc_strtab extra; /* new strings, indexed from base */
    uint64_t base;           /* the file's own string count */
    struct btc_map done;     /* frame address -> slot in namings + 1 */
    struct btc_vec namings;  /* struct naming */
    struct btr_symbolize_result *res;
    int failed;
};

static uint32_t extra_string(struct ctx *c, const char *s)
{
    int64_t idx = btc_strtab_intern(&c->extra, s, strlen(s));
    if (idx < 0) {
        c->failed = 1;
        return UINT32_MAX;
    }
    return (uint32_t)(c->base + (uint64_t)idx);
}

/* A frame upstream's client could not resolve, kept by the capture as its
 * address alone ("0x37a2", file "[unknown]"): its absolute address, or 0. */
static uint64_t address_only(const char *name, const char *file)
{
    if (strncmp(name, "0x", 2) != 0 || !name[2] || strcmp(file, "[unknown]") != 0)
        return 0;
    char *end;
    uint64_t a = strtoull(name + 2, &end, 16);
    return *end ? 0 : a;
}

/* First pass: which frames are IMAGE+0xOFFSET with a build-id we have, or
 * an address alone inside a fixed-address program we have. */
static void find_frame(void *vc, const struct btc_trace *t, uint64_t addr,
                       struct btc_rewrite_sub *sub, unsigned n)
{
    struct ctx *c = vc;
    c->res->frames++;
    c->base = btc_strtab_count(&t->strings);
    if (n != 1 || sub[0].file == UINT32_MAX || sub[0].name == UINT32_MAX)
        return;
    const char *file = btc_trace_string(t, sub[0].file);
    const char *name = btc_trace_string(t, sub[0].name);
    uint64_t absolute = address_only(name, file);
    const char *plus = strstr(name, "+0x");
    if (!plus && !absolute)
        return;
    for (const char *q; plus && (q = strstr(plus + 1, "+0x"));)
        plus = q;
    c->res->unresolved++;
    char id[41] = "";
    if (!absolute && sscanf(file, "[build-id %40[0-9a-f]]", id) != 1)
        return;
    uint64_t off = absolute ? absolute : strtoull(plus + 3, NULL, 16);
    for (int i = 0; i < c->count; i++) {
        struct image *im = &c->images[i];
        if ((absolute ? !im->fixed : strcmp(im->build_id, id) != 0) || off == 0)
            continue;
        if (absolute && !symbol_at(im, off - 1))
            continue; /* not this program's address */
        /* The frame is a return address: its call is the byte before. */
        const struct sym *s = symbol_at(im, off - 1);
        if (!s)
            return;
        struct naming *g = btc_vec_push(&c->namings);
        if (!g || btc_map_put(&c->done, addr, c->namings.len) < 0) {
            c->failed = 1;
            return;
        }
        g->name = extra_string(c, s->name);
        g->file = extra_string(c, "[unknown]"); /* the build-id has served */
        g->line = 0;
        g->sym_addr = addr - off + s->value;
        const struct bt_line_file *lf;
        uint32_t line;
        if (bt_line_table_find(&im->lines, off - 1, &lf, &line) && lf->name) {
            char path[2048];
            if (lf->dir && lf->name[0] != '/')
                snprintf(path, sizeof path, "%s/%s", lf->dir, lf->name);
            else
                snprintf(path, sizeof path, "%s", lf->name);
            g->file = extra_string(c, path);
            g->line = line;
            c->res->with_line++;
        }
        c->res->named++;
        return;
    }
}

/* Second pass: the frames found get their names. */
static void name_frame(void *vc, const struct btc_trace *t, uint64_t addr,
                       struct btc_rewrite_sub *sub, unsigned n)
{
    (void)t;
    struct ctx *c = vc;
    uint64_t *slot = btc_map_get(&c->done, addr);
    if (!slot || n != 1)
        return;
    const struct naming *g = btc_vec_at(&c->namings, (size_t)*slot - 1);
    sub[0].name = g->name;
    sub[0].file = g->file;
    sub[0].line = g->line;
    sub[0].sym_addr = g->sym_addr;
}

int btr_symbolize(const char *trace, const char *out, const char *const *binaries, int count,
                  struct btr_symbolize_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    struct ctx c = {.count = count, .res = res};
    c.images = calloc((size_t)(count ? count : 1), sizeof *c.images);
    if (!c.images) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    btc_strtab_init(&c.extra);
    btc_map_init(&c.done);
    btc_vec_init(&c.namings, sizeof(struct naming));
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++)
        rc = image_load(&c.images[i], binaries[i], err, errlen);
    if (rc == 0) {
        struct btc_rewrite first = {.frame = find_frame, .ctx = &c};
        if (btc_tracy_rewrite(trace, NULL, &first, err, errlen) < 0)
            rc = -1;
    }
    if (rc == 0 && c.failed) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    /* Nothing to name in place: the file stays as it is. */
    bool unchanged = rc == 0 && res->named == 0 && strcmp(trace, out) == 0;
    if (rc == 0 && !unchanged) {
        size_t k = btc_strtab_count(&c.extra);
        const char **strs = calloc(k ? k : 1, sizeof *strs);
        uint32_t *lens = calloc(k ? k : 1, sizeof *lens);
        if (!strs || !lens) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        for (size_t i = 0; rc == 0 && i < k; i++)
            strs[i] = btc_strtab_get(&c.extra, (uint32_t)i, &lens[i]);
        struct btc_rewrite second = {
            .frame = name_frame, .ctx = &c, .extra = strs, .extra_len = lens, .extra_count = k};
        if (rc == 0 && btc_tracy_rewrite(trace, out, &second, err, errlen) < 0)
            rc = -1;
        free(strs);
        free(lens);
    }
    for (int i = 0; i < count; i++)
        image_free(&c.images[i]);
    free(c.images);
    btc_strtab_free(&c.extra);
    btc_map_free(&c.done);
    btc_vec_free(&c.namings);
    return rc;
}
