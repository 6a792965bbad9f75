/* Callstack capture and symbolization. Capture uses the unwinder of the
 * toolchain's runtime (libgcc's _Unwind_Backtrace, driven by .eh_frame, so
 * programs need no frame pointers), or with BOARDTRACE_UNWIND=fp a frame-record
 * walk for programs built with -fno-omit-frame-pointer. Answers name the
 * module, the function from the module's ELF symbol table, and the source
 * file and line from its DWARF line table when it has one (built with -g). */
#define _GNU_SOURCE
#include "callstack.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unwind.h>

#include "boardtrace/wire.h"
#include "dwarf_line.h"
#include "boardtrace/config.h"

#define UNKNOWN "[unknown]"

struct unwind_state {
    uint64_t *frames;
    int max;
    int count;
};

static _Unwind_Reason_Code unwind_step(struct _Unwind_Context *ctx, void *arg)
{
    struct unwind_state *s = arg;
    uintptr_t ip = _Unwind_GetIP(ctx);
    if (ip == 0)
        return _URC_END_OF_STACK;
    s->frames[s->count++] = ip;
    return s->count < s->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

int bt_callstack_walk_frames(uintptr_t fp, uintptr_t lo, uintptr_t hi, uint64_t *frames, int depth)
{
    int n = 0;
    while (n < depth) {
#if defined(__riscv)
        if (fp < lo + 16 || fp > hi || (fp & 7))
            break;
        uintptr_t ra = ((const uintptr_t *)fp)[-1];
        uintptr_t prev = ((const uintptr_t *)fp)[-2];
#else
        if (fp < lo || fp + 16 > hi || (fp & 7))
            break;
        uintptr_t prev = ((const uintptr_t *)fp)[0];
        uintptr_t ra = ((const uintptr_t *)fp)[1];
#endif
        if (ra == 0)
            break;
        frames[n++] = ra;
        if (prev <= fp) /* stacks grow down: callers' frames are higher */
            break;
        fp = prev;
    }
    return n;
}

static int use_frame_pointers = -1;

static int unwind_mode_fp(void)
{
    if (use_frame_pointers < 0) {
        const char *v = getenv("BOARDTRACE_UNWIND");
        use_frame_pointers = v && strcmp(v, "fp") == 0;
        if (v && *v && !use_frame_pointers && strcmp(v, "eh_frame") != 0)
            fprintf(stderr,
                    "boardtrace: BOARDTRACE_UNWIND=%s is not fp or eh_frame; using eh_frame\n", v);
    }
    return use_frame_pointers;
}

static _Thread_local uintptr_t stack_lo, stack_hi;
static _Thread_local int stack_looked; /* once per thread, found or not */

/* The mapping that holds address, from /proc/self/maps (what
 * pthread_getattr_np reads for the main thread's stack too, but with sscanf,
 * which would bring 45 KB of libc's float parsing into every static
 * program): 0 with its range in *lo..*hi and its file in path ("" when it
 * has none, as the vDSO's "[vdso]"; path may be NULL), -1 when the maps could
 * not be read or no mapping holds it. */
static int mapping_of(uintptr_t address, uintptr_t *lo_out, uintptr_t *hi_out, char *path,
                      size_t size)
{
    if (path)
        path[0] = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    int found = -1;
    char line[768];
    int at_start = 1; /* a long path's rest is not a line */
    while (f && fgets(line, sizeof line, f)) {
        int starts = at_start;
        at_start = strchr(line, '\n') != NULL;
        char *end;
        uintptr_t lo = (uintptr_t)strtoull(line, &end, 16);
        if (!starts || *end != '-')
            continue;
        uintptr_t hi = (uintptr_t)strtoull(end + 1, NULL, 16);
        if (address < lo || address >= hi)
            continue;
        char *file = strchr(line, '/');
        if (path && file && at_start) {
            file[strcspn(file, "\n")] = 0;
            snprintf(path, size, "%s", file);
        }
        *lo_out = lo;
        *hi_out = hi;
        found = 0;
        break;
    }
    if (f)
        fclose(f);
    return found;
}

/* The mapping that holds this thread's stack: a frame walk that stays
 * inside it reads only mapped memory. */
static void stack_bounds(void)
{
    uintptr_t lo, hi;
    if (mapping_of((uintptr_t)__builtin_frame_address(0), &lo, &hi, NULL, 0) == 0) {
        stack_lo = lo;
        stack_hi = hi;
    }
}

/* Frames the runtime itself may add above the program's (capture, emit, the
 * public function, and what the unwinder reports of itself). */
#define RUNTIME_FRAMES 8

__attribute__((noinline)) int bt_callstack_capture(uint64_t *frames, int depth, uintptr_t caller)
{
    uint64_t all[64 + RUNTIME_FRAMES];
    int want = depth + RUNTIME_FRAMES, n;
    if (unwind_mode_fp()) {
        if (!stack_looked) {
            stack_looked = 1;
            stack_bounds();
        }
        n = bt_callstack_walk_frames((uintptr_t)__builtin_frame_address(0), stack_lo, stack_hi, all,
                                     want);
    } else {
        struct unwind_state s = {all, want, 0};
        _Unwind_Backtrace(unwind_step, &s);
        n = s.count;
    }
    /* the program's frames start at `caller`; without it (or if the walk
     * never meets it) only this function's own frame is left out, which the
     * unwinder reports and the frame walk does not */
    int first = n > 0 && !unwind_mode_fp() ? 1 : 0;
    for (int i = 0; caller && i < n; i++)
        if (all[i] == caller) {
            first = i;
            break;
        }
    int kept = n - first < depth ? n - first : depth;
    memcpy(frames, all + first, 8u * (size_t)kept);
    return kept;
}

uint64_t bt_address_canonical(uint64_t address)
{
#if BT_NO_POINTER_COMPRESSION
    return address;
#else
    /* Upstream packs bits 63:62 from 61:60; anything else is a tag (top-byte
     * ignore, pointer masking) or garbage, and sign-extending bit 55 removes
     * the tag while keeping user (0x0...) and kernel (0xF...) addresses. */
    if (((address & 0x3000000000000000ull) << 2) == (address & 0xC000000000000000ull))
        return address;
    return (uint64_t)((int64_t)(address << 8) >> 8);
#endif
}

/* Symbols of one loaded module, read from its ELF file. */
struct symbol {
    uint64_t value;
    uint64_t size;
    const char *name;
};

struct module {
    char path[512];
    uintptr_t bias;
    struct symbol *symbols;
    size_t count;
    struct bt_line_table lines;
    const uint8_t *map; /* the ELF file: names and paths point into it */
    size_t map_size;
    int loaded;
    char build_id[41]; /* hex of NT_GNU_BUILD_ID from the loaded notes, "" none */
};

#define MODULE_CACHE 16
static struct module modules[MODULE_CACHE]; /* worker thread only */

struct find_state {
    uintptr_t address;
    const char *name;
    uintptr_t bias;
    int found;
    char build_id[41];
};

/* The GNU build-id among a loaded module's notes (PT_NOTE segments, which
 * strip keeps): what lets the host find the unstripped file of a frame
 * this process could not name. */
static void note_build_id(const struct dl_phdr_info *info, char *out, size_t outlen)
{
    out[0] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (end - p >= 12) {
            uint32_t namesz, descsz, type;
            memcpy(&namesz, p, 4);
            memcpy(&descsz, p + 4, 4);
            memcpy(&type, p + 8, 4);
            size_t name_pad = (namesz + 3u) & ~3u, desc_pad = (descsz + 3u) & ~3u;
            if ((size_t)(end - p) - 12 < name_pad + desc_pad)
                break;
            const uint8_t *desc = p + 12 + name_pad;
            if (type == 3 && namesz == 4 && memcmp(p + 12, "GNU", 4) == 0 && descsz > 0 &&
                descsz * 2 < outlen) {
                for (uint32_t k = 0; k < descsz; k++)
                    snprintf(out + 2 * k, 3, "%02x", desc[k]);
                return;
            }
            p += 12 + name_pad + desc_pad;
        }
    }
}

static int find_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find_state *s = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (s->address >= start && s->address < start + ph->p_memsz) {
            s->name = info->dlpi_name;
            s->bias = info->dlpi_addr;
            s->found = 1;
            note_build_id(info, s->build_id, sizeof(s->build_id));
            return 1;
        }
    }
    return 0;
}

static int symbol_order(const void *a, const void *b)
{
    const struct symbol *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* A section's bytes by name, NULL when absent, empty or compressed. */
static const uint8_t *section(const uint8_t *base, size_t size, const ElfW(Ehdr) * eh,
                              const ElfW(Shdr) * sh, const char *name, size_t *len)
{
    if (eh->e_shstrndx >= eh->e_shnum)
        return NULL;
    const ElfW(Shdr) *names = &sh[eh->e_shstrndx];
    if (names->sh_offset + names->sh_size > size)
        return NULL;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= names->sh_size || sh[i].sh_type == SHT_NOBITS ||
            (sh[i].sh_flags & SHF_COMPRESSED) || sh[i].sh_offset + sh[i].sh_size > size)
            continue;
        const char *n = (const char *)base + names->sh_offset + sh[i].sh_name;
        if (strncmp(n, name, names->sh_size - sh[i].sh_name) == 0) {
            *len = sh[i].sh_size;
            return base + sh[i].sh_offset;
        }
    }
    return NULL;
}

static void module_load_lines(struct module *m, const uint8_t *base, size_t size,
                              const ElfW(Ehdr) * eh, const ElfW(Shdr) * sh)
{
    struct bt_dwarf_sections s;
    memset(&s, 0, sizeof(s));
    s.line = section(base, size, eh, sh, ".debug_line", &s.line_size);
    if (!s.line)
        return;
    s.line_str = section(base, size, eh, sh, ".debug_line_str", &s.line_str_size);
    s.str = section(base, size, eh, sh, ".debug_str", &s.str_size);
    /* a unit it cannot read ends the table; the rows before it stay usable */
    bt_line_table_build(&m->lines, &s);
}

/* Reads the function symbols of an ELF file (.symtab, else .dynsym) and its
 * line table. The file stays mapped while the module is cached. */
static void module_read(struct module *m, const uint8_t *base, size_t size);

/* The module's file. The program's own may be where its user cannot reach
 * it by path (a folder it may not search, a service account's private
 * one): /proc/self/exe opens the very file that was run all the same. */
static int module_open(const struct module *m)
{
    int fd = open(m->path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 || (errno != EACCES && errno != EPERM && errno != ENOENT))
        return fd;
    char exe[sizeof m->path];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe - 1)
        return -1;
    exe[n] = 0;
    return strcmp(exe, m->path) == 0 ? open("/proc/self/exe", O_RDONLY | O_CLOEXEC) : -1;
}

static void module_load(struct module *m)
{
    m->loaded = 1;
    int fd = module_open(m);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        close(fd);
        return;
    }
    size_t size = (size_t)st.st_size;
    const uint8_t *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return;
    module_read(m, base, size);
    if (m->count == 0 && m->lines.count == 0) {
        munmap((void *)base, size);
        return;
    }
    m->map = base;
    m->map_size = size;
}

static void module_read(struct module *m, const uint8_t *base, size_t size)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0 ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > size)
        return;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
    module_load_lines(m, base, size, eh, sh);
    const ElfW(Shdr) *table = NULL;
    for (int pass = 0; pass < 2 && !table; pass++) {
        unsigned want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (unsigned i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == want && sh[i].sh_link < eh->e_shnum) {
                table = &sh[i];
                break;
            }
    }
    if (!table)
        return;
    const ElfW(Shdr) *strs = &sh[table->sh_link];
    if (table->sh_offset + table->sh_size > size || strs->sh_offset + strs->sh_size > size)
        return;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)(base + table->sh_offset);
    size_t n = table->sh_size / sizeof(ElfW(Sym));
    m->symbols = calloc(n ? n : 1, sizeof(struct symbol));
    if (!m->symbols)
        return;
    const char *names = (const char *)(base + strs->sh_offset);
    for (size_t i = 0; i < n; i++) {
        unsigned type = ELF64_ST_TYPE(syms[i].st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || syms[i].st_value == 0 ||
            syms[i].st_name >= strs->sh_size)
            continue;
        m->symbols[m->count].value = syms[i].st_value;
        m->symbols[m->count].size = syms[i].st_size;
        m->symbols[m->count].name = names + syms[i].st_name;
        m->count++;
    }
    qsort(m->symbols, m->count, sizeof(struct symbol), symbol_order);
}

/* The cached module of the ELF file at path (loaded on first use). */
static struct module *module_get(const char *path, uintptr_t bias)
{
    struct module *free_slot = NULL;
    for (int i = 0; i < MODULE_CACHE; i++) {
        if (modules[i].loaded && strcmp(modules[i].path, path) == 0)
            return &modules[i];
        if (!modules[i].loaded && !free_slot)
            free_slot = &modules[i];
    }
    if (!free_slot)
        free_slot = &modules[0]; /* more modules than slots: reuse (the first is rare) */
    free(free_slot->symbols);
    bt_line_table_free(&free_slot->lines);
    if (free_slot->map)
        munmap((void *)free_slot->map, free_slot->map_size);
    memset(free_slot, 0, sizeof(*free_slot));
    snprintf(free_slot->path, sizeof(free_slot->path), "%s", path);
    free_slot->bias = bias;
    module_load(free_slot);
    return free_slot;
}

/* The main program's file, found once by where it is mapped: not
 * /proc/self/exe, which names the loader when the loader was run as a
 * program (`ld.so --library-path ... PROGRAM`, how boardtrace runs a program
 * with the libraries it brought). */
static uintptr_t main_bias;
static char main_path[512];
static int main_looked;

/* A module's file: its loader name, or for the main program (no name) the
 * file mapped at one of its addresses. */
static int module_path(const char *name, uintptr_t bias, uintptr_t inside, char *path, size_t size)
{
    if (name && name[0]) {
        snprintf(path, size, "%s", name);
        return 0;
    }
    if (!main_looked || main_bias != bias) {
        main_looked = 1;
        main_bias = bias;
        uintptr_t lo, hi;
        if (mapping_of(inside, &lo, &hi, main_path, sizeof(main_path)) != 0) {
            ssize_t n = readlink("/proc/self/exe", main_path, sizeof(main_path) - 1);
            main_path[n > 0 ? n : 0] = 0;
        }
    }
    if (!main_path[0])
        return -1;
    snprintf(path, size, "%s", main_path);
    return 0;
}

static struct module *module_for(uint64_t address)
{
    struct find_state s = {(uintptr_t)address, NULL, 0, 0, ""};
    dl_iterate_phdr(find_module_cb, &s);
    char path[512];
    if (!s.found || module_path(s.name, s.bias, s.address, path, sizeof(path)) != 0)
        return NULL;
    struct module *m = module_get(path, s.bias);
    memcpy(m->build_id, s.build_id, sizeof(m->build_id));
    return m;
}

static int names_file(const struct module *m, const char *path)
{
    for (size_t i = 0; i < m->lines.file_count; i++) {
        const struct bt_line_file *f = &m->lines.files[i];
        if (!f->name)
            continue;
        if (strcmp(f->name, path) == 0)
            return 1;
        size_t d = f->dir ? strlen(f->dir) : 0;
        if (d && strncmp(path, f->dir, d) == 0 && path[d] == '/' &&
            strcmp(path + d + 1, f->name) == 0)
            return 1;
    }
    return 0;
}

struct names_state {
    const char *path;
    int found;
};

static int names_file_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct names_state *s = arg;
    uintptr_t inside = 0;
    for (int i = 0; i < info->dlpi_phnum && !inside; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD)
            inside = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    char path[512];
    if (module_path(info->dlpi_name, info->dlpi_addr, inside, path, sizeof(path)) != 0)
        return 0;
    /* the vDSO and other modules without a file have no line table */
    if (info->dlpi_name && info->dlpi_name[0] && access(path, R_OK) != 0)
        return 0;
    s->found = names_file(module_get(path, info->dlpi_addr), s->path);
    return s->found;
}

int bt_callstack_debug_names_file(const char *path)
{
    struct names_state s = {path, 0};
    dl_iterate_phdr(names_file_cb, &s);
    return s.found;
}

static const struct symbol *symbol_for(const struct module *m, uint64_t address)
{
    if (!m || m->count == 0)
        return NULL;
    uint64_t a = address - m->bias;
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->symbols[mid].value <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct symbol *s = &m->symbols[lo - 1];
    if (s->size && a >= s->value + s->size)
        return NULL;
    return s;
}

/* "dir/name:line" pieces for a module-relative address; "[unknown]", 0 if none. */
static uint32_t source_for(const struct module *m, uint64_t address, char *file, size_t size)
{
    const struct bt_line_file *f;
    uint32_t line;
    if (!m || !bt_line_table_find(&m->lines, address - m->bias, &f, &line)) {
        snprintf(file, size, "%s", UNKNOWN);
        return 0;
    }
    if (f->dir)
        snprintf(file, size, "%s/%s", f->dir, f->name);
    else
        snprintf(file, size, "%s", f->name);
    return line;
}

void bt_callstack_answer_frame(struct bt_encoder *e, struct bt_code *code, uint64_t address)
{
    const struct module *m = module_for(address);
    /* a return address points after the call; the call itself is one byte back */
    uint64_t call = address ? address - 1 : 0;
    const struct symbol *s = symbol_for(m, call);
    const char *image = m ? m->path : UNKNOWN;
    const char *slash = strrchr(image, '/');
    if (slash && slash[1])
        image = slash + 1;
    /* A frame this process cannot name (a stripped upload) says where it
     * is in its file, IMAGE+0xOFFSET, and the file's build-id in place of
     * a source file: enough for the host to name it from the unstripped
     * file (boardtrace-report symbolize). */
    char hex[560];
    const char *function = s ? s->name : hex;
    if (!s && m)
        snprintf(hex, sizeof(hex), "%s+0x%llx", image,
                 (unsigned long long)(address - (uint64_t)m->bias));
    else if (!s)
        snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)address);
    uint64_t sym_addr = s ? bt_address_canonical(m->bias + s->value) : 0;
    uint32_t sym_len = s ? (uint32_t)(s->size > UINT32_MAX ? UINT32_MAX : s->size) : 0;
    char file[1024];
    uint32_t line = source_for(m, call, file, sizeof(file));
    if (!s && !line && m && m->build_id[0])
        snprintf(file, sizeof(file), "[build-id %s]", m->build_id);
    bt_code_offer_symbol(code, sym_addr, sym_len);
    if (line)
        bt_code_offer_file(code, file);
    bt_enc_callstack_frame_size(e, address, 1, image, strlen(image));
    bt_enc_callstack_frame(e, function, strlen(function), file, strlen(file), line, sym_addr,
                           sym_len);
}

void bt_callstack_answer_symbol(struct bt_encoder *e, struct bt_code *code, uint64_t address)
{
    char file[1024];
    uint32_t line = source_for(module_for(address), address, file, sizeof(file));
    if (line)
        bt_code_offer_file(code, file);
    bt_enc_symbol_information(e, file, strlen(file), line, address);
}
