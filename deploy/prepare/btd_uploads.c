/* Files uploaded beside the program (--upload): data a program expects next
 * to itself (upstream Tracy's test program reads image.jpg there). Checked
 * here before anything travels, sent after the program, and verified on the
 * board by SHA-256 with it (btd_supervisor.c). */
#define _GNU_SOURCE
#include "btd_uploads.h"
#include "btd_interrupt.h"
#include "btd_msg.h"
#include "btd_python.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int btd_uploads_check(struct btd_deploy *d)
{
    const struct btd_options *o = d->o;
    /* run --python: the script (none with -m) and the packages' files after
     * the user's. */
    int script = d->python && !o->python_module;
    int total = o->upload_count + script + (d->python ? BTD_PYTHON_FILES : 0);
    if (!total)
        return BTD_EXIT_OK;
    d->extras = calloc((size_t)total, sizeof *d->extras);
    if (d->python)
        d->python_paths = calloc(BTD_PYTHON_FILES, sizeof *d->python_paths);
    if (!d->extras || (d->python && !d->python_paths)) {
        btd_error("out of memory");
        return BTD_EXIT_LOCAL;
    }
    for (int i = 0; i < total; i++) {
        struct btd_extra *x = &d->extras[i];
        /* the package file's index, -1 the script, -2 the user's */
        int py = i < o->upload_count ? -2 : i - o->upload_count - script;
        const char *opt = py >= -1 ? "--python" : "--upload";
        x->path = py >= 0 ? d->python_paths[py] : py == -1 ? o->program : o->uploads[i];
        if (py >= 0)
            snprintf(d->python_paths[py], sizeof d->python_paths[py], "%s/%s", d->python_dir,
                     btd_python_files[py]);
        struct stat st;
        if (stat(x->path, &st) != 0) {
            btd_error("%s %s: cannot read: %s", opt, x->path, strerror(errno));
            return BTD_EXIT_LOCAL;
        }
        if (!S_ISREG(st.st_mode)) {
            btd_error("%s %s: expected a regular file", opt, x->path);
            return BTD_EXIT_LOCAL;
        }
        const char *base = strrchr(x->path, '/');
        base = base ? base + 1 : x->path;
        if (py >= 0) {
            btd_python_board_name(btd_python_files[py], x->name, sizeof x->name);
        } else if ((size_t)snprintf(x->name, sizeof x->name, "%s", base) >= sizeof x->name) {
            btd_error("%s %s: the file name is longer than %zu bytes", opt, x->path,
                      sizeof x->name - 1);
            return BTD_EXIT_LOCAL;
        }
        /* The program finds the file by its own name: one the run's folder
         * uses itself, or that another upload takes, cannot be. */
        const char *clash = py >= 0                            ? NULL
                            : btd_board_name_reserved(x->name) ? "one of boardtrace's own files"
                            : strcmp(x->name, d->program.name) == 0 ? "the program's"
                            : d->has_capture && strcmp(x->name, d->capture.name) == 0
                                ? "the capture's"
                                : NULL;
        for (int k = 0; !clash && k < i; k++)
            if (strcmp(x->name, d->extras[k].name) == 0)
                clash = "another --upload's";
        if (clash) {
            btd_error("%s %s: its name %s on the board is %s; rename the file", opt, x->path,
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
