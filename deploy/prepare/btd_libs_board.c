/* Board side of bringing libraries (see btd_libs.h): asking the board's
 * loader what it lacks, and the per-board cache the brought files live in.
 *
 * The cache is boardtrace-libs-<uid> beside the run folders: made private
 * (0700) and used only when it is a real folder this user owns. Files in it
 * are named by their SHA-256 and checked with sha256sum each time they are
 * used, so a file cut short by an interrupted upload is sent again, never
 * loaded. A run's lib/ folder holds one link per name into the cache. */
#define _GNU_SOURCE
#include "btd_libs_board.h"

#include "btd_quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BOARD_TIMEOUT_S = 60 };

void btd_libs_parse_list(const char *text, struct btd_buf *problems)
{
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[600];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
        p = nl ? nl + 1 : NULL;
        char *s = line + strspn(line, " \t");
        /* glibc: "libx.so.1 => not found", "...: version `V' not found
         * (required by ...)"; musl: "Error loading shared library ...",
         * "Error relocating ...: symbol not found". */
        if (strstr(s, "not found") || strncmp(s, "Error loading", 13) == 0 ||
            strncmp(s, "Error relocating", 16) == 0 || strstr(s, "cannot open shared object")) {
            btd_buf_puts(problems, s);
            btd_buf_puts(problems, "\n");
        }
    }
}

int btd_libs_board_check(struct btd_conn *c, const char *interp, const char *remote_program,
                         struct btd_libs_check *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct btd_buf cmd = {0}, res = {0};
    btd_buf_puts(&cmd, "I=");
    btd_quote_append(&cmd, interp);
    btd_buf_puts(&cmd, "; P=");
    btd_quote_append(&cmd, remote_program);
    /* Only the loader's listing mode runs: it maps the libraries and checks
     * versions without starting the program (glibc and musl alike). */
    btd_buf_puts(&cmd, "\nif [ -e \"$I\" ]; then echo 'interp 1'\n"
                       "  o=$(\"$I\" --list \"$P\" 2>&1 < /dev/null); s=$?\n"
                       "  printf '%s\\n' \"$o\" | sed 's/^/list /'; echo \"status $s\"\n"
                       "else echo 'interp 0'; fi\n");
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &res, NULL, BOARD_TIMEOUT_S, err, errlen);
    if (rc == 0) {
        struct btd_buf listing = {0};
        for (const char *p = btd_buf_str(&res); *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            if (n == 8 && strncmp(p, "interp 1", 8) == 0)
                out->interp_present = true;
            else if (n >= 5 && strncmp(p, "list ", 5) == 0) {
                btd_buf_append(&listing, p + 5, n - 5);
                btd_buf_puts(&listing, "\n");
            } else if (n == 8 && strncmp(p, "status 0", 8) == 0)
                out->listed = true;
            p += n + (nl ? 1 : 0);
        }
        btd_libs_parse_list(btd_buf_str(&listing), &out->problems);
        btd_buf_free(&listing);
    } else if (rc > 0) {
        snprintf(err, errlen, "checking the program's libraries failed (status %d)", rc);
        rc = -1;
    }
    btd_buf_free(&cmd);
    btd_buf_free(&res);
    return rc;
}

void btd_libs_check_free(struct btd_libs_check *c)
{
    btd_buf_free(&c->problems);
}

/* Makes the cache and says which of libs it already holds intact. */
static int open_cache(struct btd_conn *c, const char *run_dir, struct btd_libs *libs, char *err,
                      size_t errlen)
{
    struct btd_buf cmd = {0}, res = {0};
    btd_buf_puts(&cmd, "D=");
    btd_quote_append(&cmd, run_dir);
    btd_buf_puts(&cmd, "\nC=${D%/*}/boardtrace-libs-$(id -u)\n"
                       "if (umask 077 && mkdir -p \"$C\") && [ -d \"$C\" ] && [ ! -L \"$C\" ] &&"
                       " [ -O \"$C\" ] && chmod 700 \"$C\" && cd \"$C\"; then\n"
                       "  printf 'cache %s\\n' \"$C\"\n  sha256sum");
    for (int i = 0; i < libs->count; i++) {
        btd_buf_puts(&cmd, " ");
        btd_quote_append(&cmd, libs->libs[i].sha);
    }
    btd_buf_puts(&cmd, " 2>/dev/null\nfi\nexit 0\n");
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &res, NULL, BOARD_TIMEOUT_S, err, errlen);
    for (const char *p = btd_buf_str(&res); rc == 0 && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > 6 && strncmp(p, "cache ", 6) == 0) {
            snprintf(libs->cache, sizeof libs->cache, "%.*s", (int)(n - 6), p + 6);
        } else if (n == 64 + 2 + 64) {
            /* "DIGEST  NAME": intact when the name (the expected digest)
             * is the digest found. */
            for (int i = 0; i < libs->count; i++)
                if (memcmp(p, libs->libs[i].sha, 64) == 0 && memcmp(p + 66, p, 64) == 0)
                    libs->libs[i].cached = true;
        }
        p += n + (nl ? 1 : 0);
    }
    btd_buf_free(&cmd);
    btd_buf_free(&res);
    return rc == 0 ? 0 : -1;
}

int btd_libs_bring(struct btd_conn *c, const struct btd_xfer_options *xo, const char *run_dir,
                   struct btd_libs *libs, char *err, size_t errlen)
{
    if (open_cache(c, run_dir, libs, err, errlen) != 0)
        return -1;
    const char *base = strrchr(run_dir, '/');
    base = base ? base + 1 : run_dir;
    struct btd_buf mk = {0}, res = {0};
    btd_buf_puts(&mk, "mkdir -p ");
    {
        struct btd_buf lib = {0};
        btd_buf_printf(&lib, "%s/lib", run_dir);
        btd_quote_append(&mk, btd_buf_str(&lib));
        btd_buf_free(&lib);
    }
    int rc = btd_ssh_exec(c, btd_buf_str(&mk), NULL, 0, NULL, NULL, BOARD_TIMEOUT_S, err, errlen);
    btd_buf_free(&mk);
    if (rc != 0) {
        if (rc > 0)
            snprintf(err, errlen, "cannot make %s/lib on the board", run_dir);
        return -1;
    }
    /* Each missing file goes to a name of its own for this run, and becomes
     * the cache's once its digest is checked there. */
    struct btd_buf fin = {0};
    btd_buf_puts(&fin, "L=");
    {
        struct btd_buf lib = {0};
        btd_buf_printf(&lib, "%s/lib", run_dir);
        btd_quote_append(&fin, btd_buf_str(&lib));
        btd_buf_free(&lib);
    }
    btd_buf_puts(&fin, "\nC=");
    btd_quote_append(&fin, libs->cache);
    btd_buf_puts(&fin, "\ncheck() { e=$2; set -- $(sha256sum \"$1\") && [ \"$1\" = \"$e\" ]; }\n");
    for (int i = 0; i < libs->count; i++) {
        struct btd_lib *l = &libs->libs[i];
        if (libs->cache[0] && l->cached)
            continue;
        char remote[1400], label[200];
        if (libs->cache[0])
            snprintf(remote, sizeof remote, "%s/%s.part-%s", libs->cache, l->sha, base);
        else
            snprintf(remote, sizeof remote, "%s/lib/%s", run_dir, l->name);
        snprintf(label, sizeof label, "upload %.120s", l->name);
        char sha[65];
        if (btd_upload(c, xo, l->path, remote, label, sha, err, errlen) != 0) {
            btd_buf_free(&fin);
            return -1;
        }
        if (strcmp(sha, l->sha) != 0) {
            snprintf(err, errlen, "%s changed while it was read (SHA-256 %s, then %s)", l->path,
                     l->sha, sha);
            btd_buf_free(&fin);
            return -1;
        }
        libs->uploaded++;
        libs->sent_bytes += l->size;
        btd_buf_puts(&fin, "check ");
        btd_quote_append(&fin, remote);
        btd_buf_puts(&fin, " ");
        btd_quote_append(&fin, l->sha);
        if (libs->cache[0]) {
            btd_buf_puts(&fin, " && mv -f ");
            btd_quote_append(&fin, remote);
            btd_buf_puts(&fin, " \"$C\"/");
            btd_quote_append(&fin, l->sha);
        }
        btd_buf_puts(&fin, " || echo bad ");
        btd_quote_append(&fin, l->name);
        btd_buf_puts(&fin, "\n");
    }
    if (libs->cache[0]) {
        for (int i = 0; i < libs->count; i++) {
            btd_buf_puts(&fin, "ln -sf \"$C\"/");
            btd_quote_append(&fin, libs->libs[i].sha);
            btd_buf_puts(&fin, " \"$L\"/");
            btd_quote_append(&fin, libs->libs[i].name);
            btd_buf_puts(&fin, " || echo bad ");
            btd_quote_append(&fin, libs->libs[i].name);
            btd_buf_puts(&fin, "\n");
        }
    }
    btd_buf_puts(&fin, "echo done\n");
    rc = btd_ssh_exec(c, btd_buf_str(&fin), NULL, 0, &res, NULL, BOARD_TIMEOUT_S, err, errlen);
    btd_buf_free(&fin);
    const char *out = btd_buf_str(&res);
    const char *bad = strstr(out, "bad ");
    if (rc == 0 && bad) {
        snprintf(err, errlen, "%.*s did not arrive intact on the board",
                 (int)strcspn(bad + 4, "\n"), bad + 4);
        rc = -1;
    } else if (rc == 0 && !strstr(out, "done")) {
        snprintf(err, errlen, "the board did not confirm the libraries in %s/lib", run_dir);
        rc = -1;
    }
    btd_buf_free(&res);
    return rc == 0 ? 0 : -1;
}
