/* The board-side supervisor of `boardtrace run` and `live`: a busybox sh
 * script that verifies the uploads, starts the capture, then the program,
 * checks readiness, bounds every wait, reports on stderr with tagged lines,
 * and runs on when the SSH connection is lost (the logs keep everything). */
#ifndef BTD_SUPERVISOR_H
#define BTD_SUPERVISOR_H

#include "btd_buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btd_supervisor {
    const char *dir;          /* private folder on the board */
    const char *token;        /* tag of report lines: "<token> <event> ..." */
    const char *program;      /* file name in dir */
    const char *program_host; /* the unstripped program's path on the host, for fetch
                               * to name the frames with (program.host); NULL none */
    const char *program_sha;  /* SHA-256 the upload must have */
    const char *loader;       /* file name in dir/lib: start the program through it with
                               * dir/lib as its library path (brought libraries); NULL none */
    bool loader_glibc;        /* the loader takes --inhibit-cache */
    char *const *args;
    int arg_count;
    const char *const *env; /* NAME=VALUE, names already validated */
    int env_count;
    const char *capture; /* file name in dir, NULL for live (no capture) */
    const char *capture_sha;
    int port;                       /* TRACY_PORT */
    int seconds;                    /* capture -s, 0 none */
    int memory;                     /* capture -m (percent of the board's memory), 0 none */
    const char *file_version;       /* capture --file-version, NULL: the client's release */
    int ready_timeout;              /* seconds for the program to listen on port */
    const char *const *extra_names; /* --upload files in dir, verified like the program */
    const char *const *extra_shas;
    int extra_count;
    const char *cwd; /* the program's working folder (relative: to dir), NULL dir */
    /* run --python: the board's python3 runs python_script (a file in dir)
     * under -m boardtrace, the program being the extension, laid out with
     * the package files (extra names "bt-python-PKG-FILE") in dir/bt-python,
     * the folder on PYTHONPATH. NULL: the program runs itself. */
    const char *python;
    const char *python_script;
    /* run --python's -p and -l for python3 -m boardtrace, and -m's module
     * (then no script: python_script NULL). */
    bool python_partial, python_lines;
    const char *python_module;
};

/* Appends the script to cmd. Every value from the user is quoted. */
void btd_supervisor_script(struct btd_buf *cmd, const struct btd_supervisor *s);

/* A command that streams a running (or finished) run's out.log to stdout
 * and err.log to stderr from the given byte offsets, until the supervisor
 * has finished: what a host that lost its connection runs to pick up where
 * it was. */
void btd_follower_script(struct btd_buf *cmd, const char *dir, uint64_t out_bytes,
                         uint64_t err_bytes);

#endif
