/* Files uploaded beside the program (--upload): data a program expects next
 * to itself (upstream Tracy's test program reads image.jpg there). Checked
 * here before anything travels, sent after the program, and verified on the
 * board by SHA-256 with it (btd_supervisor.c). */
#define _GNU_SOURCE
#include "btd_msg.h"
#include "btd_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int btd_uploads_check(struct btd_deploy *d)
{
    const struct btd_options *o = d->o;
    if (!o->upload_count)
        return BTD_EXIT_OK;
    d->extras = calloc((size_t)o->upload_count, sizeof *d->extras);
    if (!d->extras) {
        btd_error("out of memory");
        return BTD_EXIT_LOCAL;
    }
    for (int i = 0; i < o->upload_count; i++) {
        struct btd_extra *x = &d->extras[i];
        x->path = o->uploads[i];
        struct stat st;
        if (stat(x->path, &st) != 0) {
            btd_error("--upload %s: cannot read: %s", x->path, strerror(errno));
            return BTD_EXIT_LOCAL;
        }
        if (!S_ISREG(st.st_mode)) {
            btd_error("--upload %s: expected a regular file", x->path);
            return BTD_EXIT_LOCAL;
        }
        const char *base = strrchr(x->path, '/');
        base = base ? base + 1 : x->path;
        if ((size_t)snprintf(x->name, sizeof x->name, "%s", base) >= sizeof x->name) {
            btd_error("--upload %s: the file name is longer than %zu bytes", x->path,
                      sizeof x->name - 1);
            return BTD_EXIT_LOCAL;
        }
        /* The program finds the file by its own name: one the run's folder
         * uses itself, or that another upload takes, cannot be. */
        const char *clash = btd_board_name_reserved(x->name) ? "one of boardtrace's own files"
                            : strcmp(x->name, d->program.name) == 0 ? "the program's"
                            : d->has_capture && strcmp(x->name, d->capture.name) == 0
                                ? "the capture's"
                                : NULL;
        for (int k = 0; !clash && k < i; k++)
            if (strcmp(x->name, d->extras[k].name) == 0)
                clash = "another --upload's";
        if (clash) {
            btd_error("--upload %s: its name %s on the board is %s; rename the file", x->path,
                      x->name, clash);
            return BTD_EXIT_LOCAL;
        }
        x->size = (uint64_t)st.st_size;
        snprintf(x->remote, sizeof x->remote, "%s/%s", d->board.dir, x->name);
        d->extra_count = i + 1;
    }
    return BTD_EXIT_OK;
}

int btd_uploads_send(struct btd_deploy *d)
{
    char err[600];
    for (int i = 0; i < d->extra_count; i++) {
        struct btd_extra *x = &d->extras[i];
        char label[300];
        snprintf(label, sizeof label, "upload %.200s", x->name);
        if (btd_upload(&d->conn, &d->xo, x->path, x->remote, label, x->sha, err, sizeof err) != 0) {
            btd_error("upload of %s to %s failed: %s", x->path, d->conn.where, err);
            return BTD_EXIT_UPLOAD;
        }
        if (btd_interrupted)
            return BTD_EXIT_INTERRUPTED;
    }
    return BTD_EXIT_OK;
}
