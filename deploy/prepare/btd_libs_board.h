/* Board side of bringing libraries (btd_libs_board.c; see btd_libs.h): what
 * the board's own loader says of the uploaded program, and bringing the
 * files btd_libs_resolve found into the board's cache. */
#ifndef BTD_LIBS_BOARD_H
#define BTD_LIBS_BOARD_H

#include "btd_buf.h"
#include "btd_libs.h"
#include "btd_ssh.h"
#include "btd_xfer.h"

#include <stdbool.h>
#include <stddef.h>

/* What the board's own loader says of the uploaded program. */
struct btd_libs_check {
    bool interp_present;     /* the program's interpreter exists on the board */
    bool listed;             /* the loader's --list ran and exited 0 */
    struct btd_buf problems; /* one line per missing library or version */
};

/* Asks the board: does the interpreter exist, and what does it say with
 * --list about REMOTE_PROGRAM (missing libraries, missing versions)? Returns
 * 0, or -1 with err when the command itself failed. */
int btd_libs_board_check(struct btd_conn *c, const char *interp, const char *remote_program,
                         struct btd_libs_check *out, char *err, size_t errlen);

/* Parses the output of a loader's --list (glibc's or musl's) into problem
 * lines (exposed for tests). */
void btd_libs_parse_list(const char *text, struct btd_buf *problems);

/* Brings libs to the board: the files missing from the cache beside
 * RUN_DIR (boardtrace-libs-<uid>, private, by SHA-256) are uploaded and
 * verified, then RUN_DIR/lib holds a link per name. When the cache cannot be
 * used the files go into RUN_DIR/lib itself. Returns 0, or -1 with err. */
int btd_libs_bring(struct btd_conn *c, const struct btd_xfer_options *xo, const char *run_dir,
                   struct btd_libs *libs, char *err, size_t errlen);

void btd_libs_check_free(struct btd_libs_check *c);

#endif
