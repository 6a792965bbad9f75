/* Host side of bringing libraries (see btd_libs.h): finding the sysroot and
 * resolving the closure of what a program loads, with its symbol versions. */
#define _GNU_SOURCE
#include "btd_libs.h"

#include "btd_sha256.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *arch, *triple;
} triples[] = {
    {"riscv64", "riscv64-linux-gnu"}, {"aarch64", "aarch64-linux-gnu"},
    {"arm", "arm-linux-gnueabihf"},   {"x86_64", "x86_64-linux-gnu"},
    {"i386", "i686-linux-gnu"},
};

const char *btd_libs_triple(const char *arch)
{
    for (size_t i = 0; i < sizeof triples / sizeof *triples; i++)
        if (strcmp(triples[i].arch, arch) == 0)
            return triples[i].triple;
    return NULL;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* First line of `<triple>-gcc ARG`, "" when the compiler is not there. The
 * triple comes from the table above, so the command holds nothing of the
 * user's. */
static void ask_compiler(const char *triple, const char *arg, char *out, size_t outlen)
{
    out[0] = '\0';
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s-gcc %s 2>/dev/null", triple, arg);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    if (fgets(out, (int)outlen, p))
        out[strcspn(out, "\n")] = '\0';
    else
        out[0] = '\0';
    pclose(p);
}

int btd_libs_sysroot(const char *arch, const char *given, char *out, size_t outlen, char *err,
                     size_t errlen)
{
    if (given) {
        if (!is_dir(given)) {
            snprintf(err, errlen, "--sysroot %s: not a folder", given);
            return -1;
        }
        snprintf(out, outlen, "%s", given);
        return 0;
    }
    const char *env = getenv("BOARDTRACE_SYSROOT");
    if (env && env[0]) {
        if (!is_dir(env)) {
            snprintf(err, errlen, "BOARDTRACE_SYSROOT=%s: not a folder", env);
            return -1;
        }
        snprintf(out, outlen, "%s", env);
        return 0;
    }
    const char *triple = btd_libs_triple(arch);
    if (!triple) {
        snprintf(err, errlen, "no default sysroot for %s; give --sysroot DIR", arch);
        return -1;
    }
    char answer[PATH_MAX];
    ask_compiler(triple, "-print-sysroot", answer, sizeof answer);
    if (answer[0] && strcmp(answer, "/") != 0 && is_dir(answer)) {
        snprintf(out, outlen, "%s", answer);
        return 0;
    }
    /* Debian's cross compilers answer "/" above; where they find libc.so.6
     * is the sysroot's library folder: <sysroot>/lib or <sysroot>/lib/<triple>. */
    ask_compiler(triple, "-print-file-name=libc.so.6", answer, sizeof answer);
    char real[PATH_MAX];
    if (answer[0] == '/' && realpath(answer, real)) {
        char *dir = dirname(real);
        size_t n = strlen(dir), t = strlen(triple);
        if (n > t && strcmp(dir + n - t, triple) == 0 && dir[n - t - 1] == '/')
            dir[n - t - 1] = '\0';
        char *root = dirname(dir);
        if (is_dir(root) && strcmp(root, "/") != 0) {
            snprintf(out, outlen, "%s", root);
            return 0;
        }
    }
    char debian[256];
    snprintf(debian, sizeof debian, "/usr/%s", triple);
    if (is_dir(debian)) {
        snprintf(out, outlen, "%s", debian);
        return 0;
    }
    snprintf(err, errlen,
             "no sysroot for %s: no --sysroot, no BOARDTRACE_SYSROOT, %s-gcc names none and %s "
             "does not exist (Debian's libc6-dev-%s-cross provides it)",
             arch, triple, debian, arch);
    return -1;
}

/* A file resolved so far, with what it asks for. */
struct object {
    char path[4096];
    struct btd_elf_dyn dyn;
};

struct resolver {
    const char *sysroot;
    const char *triple;
    uint16_t machine;
    int bits;
    struct object *objects[BTD_LIBS_MAX + 1]; /* [0] the program */
    int count;
    struct btd_libs *libs;
};

/* Whether PATH is an ELF for the program's machine; fills o->dyn. */
static bool usable(struct resolver *r, const char *path, struct object *o)
{
    char why[300];
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    if (btd_elf_dyn_read(path, &o->dyn, why, sizeof why) != 0)
        return false;
    return o->dyn.machine == r->machine && o->dyn.bits == r->bits;
}

/* Tries DIR/NAME. */
static bool try_dir(struct resolver *r, const char *dir, const char *name, struct object *o)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return false;
    if (!usable(r, path, o))
        return false;
    if (!realpath(path, o->path))
        snprintf(o->path, sizeof o->path, "%s", path);
    return true;
}

/* The folders of a runpath entry: $ORIGIN is the folder of the file that
 * names it; an absolute folder is looked for in the sysroot first, then as
 * it is (a program's build tree on this host). */
static bool try_runpath(struct resolver *r, const struct object *from, const char *name,
                        struct object *o)
{
    char list[sizeof from->dyn.runpath];
    snprintf(list, sizeof list, "%s", from->dyn.runpath);
    char origin[4096];
    snprintf(origin, sizeof origin, "%s", from->path);
    char *odir = dirname(origin);
    for (char *save = NULL, *e = strtok_r(list, ":", &save); e; e = strtok_r(NULL, ":", &save)) {
        char dir[4096];
        if (strncmp(e, "$ORIGIN", 7) == 0 || strncmp(e, "${ORIGIN}", 9) == 0) {
            const char *rest = e + (e[1] == '{' ? 9 : 7);
            snprintf(dir, sizeof dir, "%s%s", odir, rest);
            if (try_dir(r, dir, name, o))
                return true;
        } else if (e[0] == '/') {
            snprintf(dir, sizeof dir, "%s%s", r->sysroot, e);
            if (try_dir(r, dir, name, o) || try_dir(r, e, name, o))
                return true;
        }
    }
    return false;
}

static bool try_sysroot(struct resolver *r, const char *name, struct object *o)
{
    /* A trailing '/' takes the triple: Debian's multiarch folders. */
    const char *dirs[] = {"lib",  "usr/lib",  "lib64",       "usr/lib64",
                          "lib/", "usr/lib/", "lib64/lp64d", "usr/lib64/lp64d"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char dir[4096];
        bool multiarch = dirs[i][strlen(dirs[i]) - 1] == '/';
        if (multiarch && !r->triple)
            continue;
        snprintf(dir, sizeof dir, "%s/%s%s", r->sysroot, dirs[i], multiarch ? r->triple : "");
        if (try_dir(r, dir, name, o))
            return true;
    }
    return false;
}

static int find_lib(const struct btd_libs *libs, const char *name)
{
    for (int i = 0; i < libs->count; i++)
        if (strcmp(libs->libs[i].name, name) == 0)
            return i;
    return -1;
}

/* Adds the file o under NAME, taking o. */
static int add(struct resolver *r, const char *name, struct object *o, char *err, size_t errlen)
{
    struct btd_libs *libs = r->libs;
    if (libs->count >= BTD_LIBS_MAX) {
        snprintf(err, errlen, "the program loads more than %d libraries", BTD_LIBS_MAX);
        free(o);
        return -1;
    }
    struct btd_lib *l = &libs->libs[libs->count];
    snprintf(l->name, sizeof l->name, "%s", name);
    snprintf(l->path, sizeof l->path, "%s", o->path);
    unsigned long long size = 0;
    if (btd_sha256_file(o->path, l->sha, &size) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", o->path, strerror(errno));
        free(o);
        return -1;
    }
    l->size = size;
    libs->bytes += size;
    libs->count++;
    r->objects[r->count++] = o;
    return 0;
}

static int resolve_interp(struct resolver *r, const char *interp, char *err, size_t errlen)
{
    struct object *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char copy[256];
    snprintf(copy, sizeof copy, "%s", interp);
    const char *base = basename(copy);
    char path[4096];
    snprintf(path, sizeof path, "%s%s", r->sysroot, interp);
    if (usable(r, path, o)) {
        if (!realpath(path, o->path))
            snprintf(o->path, sizeof o->path, "%s", path);
    } else if (!try_sysroot(r, base, o)) {
        snprintf(err, errlen, "the program's loader %s is not in the sysroot %s", interp,
                 r->sysroot);
        free(o);
        return -1;
    }
    r->libs->loader = r->libs->count;
    return add(r, base, o, err, errlen);
}

/* Each version a file asks of a library must be defined by the file found
 * for it; a sysroot older than the program's build lacks some. */
static int check_versions(struct resolver *r, char *err, size_t errlen)
{
    for (int i = 0; i < r->count; i++) {
        const struct object *o = r->objects[i];
        for (int k = 0; k < o->dyn.needs_count; k++) {
            const struct btd_elf_version_need *v = &o->dyn.needs[k];
            int li = find_lib(r->libs, v->file);
            if (li < 0)
                continue; /* a file not in DT_NEEDED: the loader ignores it too */
            const struct object *lib = r->objects[li + 1]; /* [0] is the program */
            if (!btd_elf_dyn_defines(&lib->dyn, v->version)) {
                snprintf(err, errlen,
                         "%s in the sysroot %s (%s) lacks version %s that %s needs: the sysroot "
                         "is not the one the program was built against; give that one with "
                         "--sysroot",
                         v->file, r->sysroot, lib->path, v->version,
                         i == 0 ? "the program" : r->libs->libs[i - 1].name);
                return -1;
            }
        }
    }
    return 0;
}

int btd_libs_resolve(const char *program, const struct btd_elf_dyn *prog, const char *sysroot,
                     struct btd_libs *libs, char *err, size_t errlen)
{
    memset(libs, 0, sizeof *libs);
    snprintf(libs->sysroot, sizeof libs->sysroot, "%s", sysroot);
    snprintf(libs->interp, sizeof libs->interp, "%s", prog->interp);
    libs->glibc = strstr(prog->interp, "/ld-linux") != NULL;
    struct resolver r = {
        .sysroot = sysroot, .machine = prog->machine, .bits = prog->bits, .libs = libs};
    const char *arch = NULL;
    switch (prog->machine) {
    case 243:
        arch = prog->bits == 64 ? "riscv64" : NULL;
        break;
    case 183:
        arch = "aarch64";
        break;
    case 40:
        arch = "arm";
        break;
    case 62:
        arch = "x86_64";
        break;
    case 3:
        arch = "i386";
        break;
    default:
        break;
    }
    r.triple = arch ? btd_libs_triple(arch) : NULL;
    struct object *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!realpath(program, p->path))
        snprintf(p->path, sizeof p->path, "%s", program);
    p->dyn = *prog;
    r.objects[r.count++] = p;
    int rc = 0;
    if (prog->interp[0])
        rc = resolve_interp(&r, prog->interp, err, errlen);
    /* Breadth first, in DT_NEEDED order, as the loader does. */
    for (int i = 0; rc == 0 && i < r.count; i++) {
        const struct object *from = r.objects[i];
        for (int k = 0; rc == 0 && k < from->dyn.needed_count; k++) {
            const char *name = from->dyn.needed[k];
            if (find_lib(libs, name) >= 0)
                continue;
            struct object *o = calloc(1, sizeof *o);
            if (!o) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            if (strchr(name, '/') ? try_dir(&r, sysroot, name, o)
                                  : try_runpath(&r, from, name, o) || try_sysroot(&r, name, o)) {
                rc = add(&r, name, o, err, errlen);
            } else {
                snprintf(err, errlen, "%s, which %s needs, is not in the sysroot %s%s%s", name,
                         i == 0 ? "the program" : libs->libs[i - 1].name, sysroot,
                         from->dyn.runpath[0] ? " nor its runpath " : "", from->dyn.runpath);
                free(o);
                rc = -1;
            }
        }
    }
    if (rc == 0)
        rc = check_versions(&r, err, errlen);
    for (int i = 0; i < r.count; i++)
        free(r.objects[i]);
    return rc;
}
