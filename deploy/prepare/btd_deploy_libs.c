/* The deploy step for dynamically linked programs (see
 * btd_deploy_libs.h): the board's own loader is asked first, and only what it
 * cannot run natively goes through a brought loader. */
#define _GNU_SOURCE
#include "btd_deploy_libs.h"
#include "btd_libs_board.h"
#include "btd_msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Says what the board lacks, one piece per line, for the refusal. */
static void describe_missing(const struct btd_libs_check *chk, const char *interp,
                             struct btd_buf *out)
{
    if (!chk->interp_present) {
        btd_buf_printf(out, "\n  the loader %s (the program's interpreter) is not on the board",
                       interp);
        return;
    }
    for (const char *p = btd_buf_str(&chk->problems); *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        btd_buf_puts(out, "\n  ");
        btd_buf_append(out, p, n);
        p += n + (nl ? 1 : 0);
    }
}

/* What the sysroot supplies for the program: its loader and the closure of
 * its libraries, in a new *libs (NULL with err on failure). */
static int resolve_in_sysroot(const struct btd_deploy *d, const struct btd_elf_dyn *dyn,
                              char *sysroot, size_t sysroot_len, struct btd_libs **libs, char *err,
                              size_t errlen)
{
    *libs = malloc(sizeof **libs);
    if (!*libs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (btd_libs_sysroot(d->program.arch, d->o->sysroot, sysroot, sysroot_len, err, errlen) != 0 ||
        btd_libs_resolve(d->program.path, dyn, sysroot, *libs, err, errlen) != 0) {
        free(*libs);
        *libs = NULL;
        return -1;
    }
    return 0;
}

/* A "GLIBC_2.38" or "glibc 2.38" version as 2 * 1000 + 38; 0 when it is
 * none. */
static int glibc_version(const char *s)
{
    const char *v = strncmp(s, "GLIBC_", 6) == 0   ? s + 6
                    : strncmp(s, "glibc ", 6) == 0 ? s + 6
                                                   : "";
    int major, minor;
    return sscanf(v, "%d.%d", &major, &minor) == 2 ? major * 1000 + minor : 0;
}

int btd_deploy_libc_check(struct btd_deploy *d)
{
    const struct btd_options *o = d->o;
    int board = glibc_version(d->board.libc);
    if (!board)
        return BTD_EXIT_OK; /* no glibc of its own, or it did not say: checked after upload */
    char err[1200];
    struct btd_elf_dyn *dyn = malloc(sizeof *dyn);
    if (!dyn) {
        btd_error("out of memory");
        return BTD_EXIT_LOCAL;
    }
    int status = BTD_EXIT_OK;
    if (btd_elf_dyn_read(d->program.path, dyn, err, sizeof err) != 0) {
        btd_error("program %s", err);
        status = BTD_EXIT_LOCAL;
        goto done;
    }
    int need = 0;
    for (int i = 0; dyn->interp[0] && i < dyn->needs_count; i++)
        if (strcmp(dyn->needs[i].file, "libc.so.6") == 0 &&
            glibc_version(dyn->needs[i].version) > need)
            need = glibc_version(dyn->needs[i].version);
    if (need <= board)
        goto done;
    char needs[32], has[32];
    snprintf(needs, sizeof needs, "%d.%d", need / 1000, need % 1000);
    snprintf(has, sizeof has, "%d.%d", board / 1000, board % 1000);
    if (o->no_bring_libs) {
        btd_error("the program %s needs glibc %s (it asks libc.so.6 for GLIBC_%s: it was linked "
                  "against a newer glibc) but %s has glibc %s; nothing was uploaded. Run it on a "
                  "board with glibc %s or later, build it against the board's glibc, or let "
                  "boardtrace bring a glibc %s or later from a sysroot (drop --no-bring-libs, "
                  "--sysroot DIR)",
                  d->program.path, needs, needs, d->conn.where, has, needs, needs);
        status = BTD_EXIT_BOARD;
        goto done;
    }
    /* The program can still run with a glibc brought from the sysroot, if
     * the sysroot's is new enough: asked now, before anything travels. */
    char sysroot[4096];
    struct btd_libs *libs;
    if (resolve_in_sysroot(d, dyn, sysroot, sizeof sysroot, &libs, err, sizeof err) != 0) {
        btd_error("the program %s needs glibc %s (it asks libc.so.6 for GLIBC_%s: it was linked "
                  "against a newer glibc) but %s has glibc %s, and no glibc %s can be brought: "
                  "%s; nothing was uploaded. Run it on a board with glibc %s or later, build it "
                  "against the board's glibc, or give --sysroot DIR with glibc %s or later",
                  d->program.path, needs, needs, d->conn.where, has, needs, err, needs, needs);
        status = BTD_EXIT_LOCAL;
    } else {
        btd_note("%s has glibc %s and the program needs %s: glibc comes from %s", d->conn.where,
                 has, needs, sysroot);
    }
    free(libs);
done:
    free(dyn);
    return status;
}

int btd_deploy_libs(struct btd_deploy *d)
{
    const struct btd_options *o = d->o;
    char err[1200];
    struct btd_elf_dyn *dyn = malloc(sizeof *dyn);
    if (!dyn) {
        btd_error("out of memory");
        return BTD_EXIT_LOCAL;
    }
    if (btd_elf_dyn_read(d->program.path, dyn, err, sizeof err) != 0) {
        btd_error("program %s", err);
        free(dyn);
        return BTD_EXIT_LOCAL;
    }
    if (!dyn->interp[0]) {
        free(dyn); /* static: nothing to load */
        return BTD_EXIT_OK;
    }
    struct btd_libs_check chk;
    if (btd_libs_board_check(&d->conn, dyn->interp, d->program.remote, &chk, err, sizeof err) !=
        0) {
        btd_error("preflight on %s: %s", d->conn.where, err);
        free(dyn);
        return BTD_EXIT_BOARD;
    }
    int status = BTD_EXIT_OK;
    if (chk.interp_present && !chk.problems.len) {
        if (chk.listed)
            btd_debug("the board's loader %s has everything the program needs", dyn->interp);
        else
            btd_warn("the board's loader %s could not list the program's libraries; starting "
                     "it as it is",
                     dyn->interp);
        goto done;
    }
    struct btd_buf missing = {0};
    describe_missing(&chk, dyn->interp, &missing);
    if (o->no_bring_libs) {
        btd_error("the program %s is dynamically linked and %s lacks what it needs:%s\nlet "
                  "boardtrace bring the loader and libraries from the sysroot (drop "
                  "--no-bring-libs), install them on the board, or link the program statically "
                  "(-static)",
                  d->program.path, d->conn.where, btd_buf_str(&missing));
        btd_buf_free(&missing);
        status = BTD_EXIT_BOARD;
        goto done;
    }
    btd_debug("the board lacks:%s", btd_buf_str(&missing));
    btd_buf_free(&missing);
    char sysroot[4096];
    struct btd_libs *libs;
    if (resolve_in_sysroot(d, dyn, sysroot, sizeof sysroot, &libs, err, sizeof err) != 0) {
        btd_error("the program %s is dynamically linked and %s lacks its loader or libraries, "
                  "which cannot be brought: %s",
                  d->program.path, d->conn.where, err);
        status = BTD_EXIT_LOCAL;
        goto done;
    }
    if (btd_libs_bring(&d->conn, &d->xo, d->board.dir, libs, err, sizeof err) != 0) {
        btd_error("bringing the program's libraries to %s failed: %s", d->conn.where, err);
        free(libs);
        status = BTD_EXIT_UPLOAD;
        goto done;
    }
    char sent[32], total[32];
    btd_format_size((double)libs->sent_bytes, sent, sizeof sent);
    btd_format_size((double)libs->bytes, total, sizeof total);
    const char *lacks = chk.interp_present ? "libraries" : "loader";
    const char *libraries = libs->count - 1 == 1 ? "library" : "libraries";
    if (libs->uploaded == libs->count)
        btd_note("%s lacks the program's %s: it runs through the loader and %d %s from %s "
                 "(%s, now cached on the board for later runs)",
                 d->conn.where, lacks, libs->count - 1, libraries, sysroot, total);
    else if (libs->uploaded == 0)
        btd_note("%s lacks the program's %s: it runs through the loader and %d %s from %s "
                 "(%s, all from the board's cache)",
                 d->conn.where, lacks, libs->count - 1, libraries, sysroot, total);
    else
        btd_note("%s lacks the program's %s: it runs through the loader and %d %s from %s "
                 "(%s; %d of %d files sent, %s, the rest from the board's cache)",
                 d->conn.where, lacks, libs->count - 1, libraries, sysroot, total, libs->uploaded,
                 libs->count, sent);
    d->libs = libs;
done:
    btd_libs_check_free(&chk);
    free(dyn);
    return status;
}
