/* Dynamic section, interpreter and symbol version tables of an ELF file (see
 * btd_elf_dyn.h). Every offset read from the file is checked against its
 * length: the input may be any file the user names. */
#define _GNU_SOURCE
#include "btd_elf_dyn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    PT_LOAD_ = 1,
    PT_DYNAMIC_ = 2,
    PT_INTERP_ = 3,
    DT_NEEDED_ = 1,
    DT_STRTAB_ = 5,
    DT_STRSZ_ = 10,
    DT_SONAME_ = 14,
    DT_RPATH_ = 15,
    DT_RUNPATH_ = 29,
    DT_VERDEF_ = 0x6ffffffc,
    DT_VERDEFNUM_ = 0x6ffffffd,
    DT_VERNEED_ = 0x6ffffffe,
    DT_VERNEEDNUM_ = 0x6fffffff,
    VER_FLG_BASE_ = 1,
    MAX_PHDRS = 256,
    MAX_DYNAMIC = 4096,
};

struct image {
    const unsigned char *p;
    size_t len;
    int w, le;
    uint64_t phoff;
    unsigned phentsize, phnum;
};

static uint64_t get(const struct image *im, uint64_t off, int size)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++)
        v |= (uint64_t)im->p[off + (im->le ? i : size - 1 - i)] << (8 * i);
    return v;
}

static bool inside(const struct image *im, uint64_t off, uint64_t n)
{
    return off <= im->len && n <= im->len - off;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Program header i: type, file offset, virtual address, size in the file. */
static void phdr(const struct image *im, unsigned i, uint32_t *type, uint64_t *off, uint64_t *vaddr,
                 uint64_t *filesz)
{
    uint64_t at = im->phoff + (uint64_t)i * im->phentsize;
    *type = (uint32_t)get(im, at, 4);
    if (im->w == 8) {
        *off = get(im, at + 8, 8);
        *vaddr = get(im, at + 16, 8);
        *filesz = get(im, at + 32, 8);
    } else {
        *off = get(im, at + 4, 4);
        *vaddr = get(im, at + 8, 4);
        *filesz = get(im, at + 16, 4);
    }
}

/* The file offset of a virtual address, through the PT_LOAD segment that
 * holds it; false when none does. */
static bool vaddr_offset(const struct image *im, uint64_t vaddr, uint64_t *out)
{
    for (unsigned i = 0; i < im->phnum; i++) {
        uint32_t type;
        uint64_t off, va, filesz;
        phdr(im, i, &type, &off, &va, &filesz);
        if (type == PT_LOAD_ && vaddr >= va && vaddr - va < filesz) {
            *out = off + (vaddr - va);
            return true;
        }
    }
    return false;
}

struct strtab {
    uint64_t off, size;
};

/* Copies string table entry at into out; false when it is outside the
 * table or does not fit out. */
static bool str_at(const struct image *im, const struct strtab *st, uint64_t at, char *out,
                   size_t outlen)
{
    if (at >= st->size)
        return false;
    const char *s = (const char *)im->p + st->off + at;
    size_t max = (size_t)(st->size - at);
    size_t n = strnlen(s, max);
    if (n == max || n >= outlen)
        return false;
    memcpy(out, s, n + 1);
    return true;
}

static int read_verneed(const struct image *im, const struct strtab *st, uint64_t off,
                        uint64_t count, struct btd_elf_dyn *d, char *err, size_t errlen)
{
    for (uint64_t i = 0; i < count; i++) {
        if (!inside(im, off, 16))
            return fail(err, errlen, "version needs entry %llu outside the file",
                        (unsigned long long)i);
        uint64_t cnt = get(im, off + 2, 2), file = get(im, off + 4, 4);
        uint64_t aux = get(im, off + 8, 4), next = get(im, off + 12, 4);
        char fname[BTD_DYN_NAME];
        if (!str_at(im, st, file, fname, sizeof fname))
            return fail(err, errlen, "version needs entry %llu has a bad file name",
                        (unsigned long long)i);
        uint64_t a = off + aux;
        for (uint64_t k = 0; k < cnt; k++) {
            if (!inside(im, a, 16))
                return fail(err, errlen, "version needed from %s outside the file", fname);
            if (d->needs_count >= BTD_DYN_MAX_VERSIONS)
                return fail(err, errlen, "more than %d needed versions", BTD_DYN_MAX_VERSIONS);
            struct btd_elf_version_need *v = &d->needs[d->needs_count];
            if (!str_at(im, st, get(im, a + 8, 4), v->version, sizeof v->version))
                return fail(err, errlen, "a version needed from %s has a bad name", fname);
            memcpy(v->file, fname, sizeof fname);
            d->needs_count++;
            uint64_t anext = get(im, a + 12, 4);
            if (!anext)
                break;
            a += anext;
        }
        if (!next)
            break;
        off += next;
    }
    return 0;
}

static int read_verdef(const struct image *im, const struct strtab *st, uint64_t off,
                       uint64_t count, struct btd_elf_dyn *d, char *err, size_t errlen)
{
    for (uint64_t i = 0; i < count; i++) {
        if (!inside(im, off, 20))
            return fail(err, errlen, "version definition %llu outside the file",
                        (unsigned long long)i);
        uint64_t flags = get(im, off + 2, 2), cnt = get(im, off + 6, 2);
        uint64_t aux = get(im, off + 12, 4), next = get(im, off + 16, 4);
        /* The first auxiliary entry names the version; the base entry is
         * the file's own name, not a version. */
        if (cnt && !(flags & VER_FLG_BASE_)) {
            if (!inside(im, off + aux, 8))
                return fail(err, errlen, "version definition %llu outside the file",
                            (unsigned long long)i);
            if (d->defines_count >= BTD_DYN_MAX_VERSIONS)
                return fail(err, errlen, "more than %d defined versions", BTD_DYN_MAX_VERSIONS);
            if (!str_at(im, st, get(im, off + aux, 4), d->defines[d->defines_count],
                        sizeof d->defines[0]))
                return fail(err, errlen, "version definition %llu has a bad name",
                            (unsigned long long)i);
            d->defines_count++;
        }
        if (!next)
            break;
        off += next;
    }
    return 0;
}

int btd_elf_dyn_parse(const unsigned char *data, size_t len, struct btd_elf_dyn *d, char *err,
                      size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (len < 52 || memcmp(data, "\177ELF", 4) != 0 || (data[4] != 1 && data[4] != 2) ||
        (data[5] != 1 && data[5] != 2))
        return fail(err, errlen, "not an ELF file");
    struct image im = {.p = data, .len = len, .w = data[4] == 2 ? 8 : 4, .le = data[5] == 1};
    if (im.w == 8 && len < 64)
        return fail(err, errlen, "truncated ELF header");
    d->bits = im.w * 8;
    d->machine = (uint16_t)get(&im, 18, 2);
    im.phoff = get(&im, im.w == 8 ? 0x20 : 0x1c, im.w);
    im.phentsize = (unsigned)get(&im, im.w == 8 ? 0x36 : 0x2a, 2);
    im.phnum = (unsigned)get(&im, im.w == 8 ? 0x38 : 0x2c, 2);
    if (im.phnum > MAX_PHDRS || (im.phnum && im.phentsize < (im.w == 8 ? 56u : 32u)) ||
        !inside(&im, im.phoff, (uint64_t)im.phnum * im.phentsize))
        return fail(err, errlen, "bad or truncated program headers");

    uint64_t dyn_off = 0, dyn_size = 0;
    for (unsigned i = 0; i < im.phnum; i++) {
        uint32_t type;
        uint64_t off, va, filesz;
        phdr(&im, i, &type, &off, &va, &filesz);
        if (type == PT_INTERP_) {
            if (!inside(&im, off, filesz) || filesz == 0 || filesz > sizeof d->interp ||
                data[off + filesz - 1] != '\0')
                return fail(err, errlen, "bad interpreter (PT_INTERP) entry");
            memcpy(d->interp, data + off, filesz);
        } else if (type == PT_DYNAMIC_) {
            if (!inside(&im, off, filesz))
                return fail(err, errlen, "dynamic section outside the file");
            dyn_off = off;
            dyn_size = filesz;
            d->dynamic = true;
        }
    }
    if (!d->dynamic)
        return 0;

    /* Two passes: the string table's address comes from the same array as
     * the entries that point into it. */
    uint64_t strtab = 0, strsz = 0, verneed = 0, verneednum = 0, verdef = 0, verdefnum = 0;
    uint64_t entry = 2u * (unsigned)im.w, n = dyn_size / entry;
    if (n > MAX_DYNAMIC)
        n = MAX_DYNAMIC;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t tag = get(&im, dyn_off + i * entry, im.w);
        uint64_t val = get(&im, dyn_off + i * entry + (unsigned)im.w, im.w);
        if (tag == 0)
            break;
        switch (tag) {
        case DT_STRTAB_:
            strtab = val;
            break;
        case DT_STRSZ_:
            strsz = val;
            break;
        case DT_VERNEED_:
            verneed = val;
            break;
        case DT_VERNEEDNUM_:
            verneednum = val;
            break;
        case DT_VERDEF_:
            verdef = val;
            break;
        case DT_VERDEFNUM_:
            verdefnum = val;
            break;
        default:
            break;
        }
    }
    struct strtab st = {0, 0};
    if (!vaddr_offset(&im, strtab, &st.off) || !inside(&im, st.off, strsz))
        return fail(err, errlen, "dynamic string table outside the file");
    st.size = strsz;
    char rpath[sizeof d->runpath] = "";
    for (uint64_t i = 0; i < n; i++) {
        uint64_t tag = get(&im, dyn_off + i * entry, im.w);
        uint64_t val = get(&im, dyn_off + i * entry + (unsigned)im.w, im.w);
        if (tag == 0)
            break;
        bool ok = true;
        if (tag == DT_NEEDED_) {
            if (d->needed_count >= BTD_DYN_MAX_NEEDED)
                return fail(err, errlen, "more than %d needed libraries", BTD_DYN_MAX_NEEDED);
            ok = str_at(&im, &st, val, d->needed[d->needed_count++], sizeof d->needed[0]);
        } else if (tag == DT_SONAME_) {
            ok = str_at(&im, &st, val, d->soname, sizeof d->soname);
        } else if (tag == DT_RUNPATH_) {
            ok = str_at(&im, &st, val, d->runpath, sizeof d->runpath);
        } else if (tag == DT_RPATH_) {
            ok = str_at(&im, &st, val, rpath, sizeof rpath);
        }
        if (!ok)
            return fail(err, errlen, "dynamic entry %llu (tag %llu) has a bad string",
                        (unsigned long long)i, (unsigned long long)tag);
    }
    if (!d->runpath[0])
        memcpy(d->runpath, rpath, sizeof rpath);
    uint64_t off;
    if (verneed && verneednum) {
        if (!vaddr_offset(&im, verneed, &off))
            return fail(err, errlen, "version needs table outside the file");
        if (read_verneed(&im, &st, off, verneednum, d, err, errlen) != 0)
            return -1;
    }
    if (verdef && verdefnum) {
        if (!vaddr_offset(&im, verdef, &off))
            return fail(err, errlen, "version definitions outside the file");
        if (read_verdef(&im, &st, off, verdefnum, d, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int btd_elf_dyn_read(const char *path, struct btd_elf_dyn *d, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return fail(err, errlen, "%s: empty or unreadable", path);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return fail(err, errlen, "%s: cannot map: %s", path, strerror(errno));
    char why[300];
    int rc = btd_elf_dyn_parse(map, (size_t)st.st_size, d, why, sizeof why);
    munmap(map, (size_t)st.st_size);
    if (rc != 0)
        snprintf(err, errlen, "%s: %s", path, why);
    return rc;
}

bool btd_elf_dyn_defines(const struct btd_elf_dyn *d, const char *version)
{
    for (int i = 0; i < d->defines_count; i++)
        if (strcmp(d->defines[i], version) == 0)
            return true;
    return false;
}
