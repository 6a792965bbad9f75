/* The state of one run's or live's deploy: what it was asked (the options),
 * the connection, the board, the binaries and the files sent beside them.
 * Shared by the deploy's steps (btd_deploy.c, btd_python.c, btd_uploads.c,
 * btd_deploy_libs.c) and by what uses their result (run/, cmd/). */
#ifndef BTD_DEPLOY_STATE_H
#define BTD_DEPLOY_STATE_H

#include "btd_binary.h"
#include "btd_board.h"
#include "btd_libs.h"
#include "btd_options.h"
#include "btd_ssh.h"
#include "btd_xfer.h"

/* A file uploaded beside the program (--upload). */
struct btd_extra {
    const char *path;
    char name[256];    /* its own name: the program finds it by that */
    char remote[1400]; /* full path on the board */
    char sha[65];
    uint64_t size;
};

struct btd_deploy {
    const struct btd_options *o;
    struct btd_conn conn;
    struct btd_board board;
    struct btd_xfer_options xo;
    struct btd_binary program;
    struct btd_binary capture;
    bool has_capture;  /* capture loaded (run) */
    bool want_capture; /* run: find the default capture for the board if not loaded */
    char capture_path[4096];
    struct btd_libs *libs;    /* brought to the board for a dynamic program, NULL none */
    struct btd_extra *extras; /* --upload files, extra_count of them */
    int extra_count;
    bool python;           /* run --python: the program is python_ext, run by the board's python3 */
    char python_dir[4096]; /* the board build's Python folder */
    char python_ext[4400]; /* the extension in it, for the board's Python */
    char (*python_paths)[4200]; /* the package files uploaded (BTD_PYTHON_FILES) */
    double t_start, t_preflight, t_upload, t_run, t_pull;
    int connect_timeout_s; /* for btd_deploy_connect; 0: 20 s */
    char tag[11];          /* in the board folder's name: found again after a lost answer */
};

#endif
