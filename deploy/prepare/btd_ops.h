/* The four operations of the CLI and the steps run and live share: local
 * checks, connecting, the board probe and architecture check, uploading with
 * verification. Each returns an exit status from btd_msg.h. */
#ifndef BTD_OPS_H
#define BTD_OPS_H

#include "btd_args.h"
#include "btd_board.h"
#include "btd_elf.h"
#include "btd_interrupt.h"
#include "btd_libs.h"
#include "btd_run.h"
#include "btd_ssh.h"
#include "btd_xfer.h"

/* A local binary to put on the board. */
struct btd_binary {
    const char *path;
    const char *arch;
    struct btd_elf_info elf;
    char toolchain[256];
    bool has_symbols;    /* .symtab present */
    bool traced;         /* program: a Tracy client is in it (ours or upstream's) */
    char bt_version[32]; /* from its boardtrace ELF note, "" none */
    int tracing_mode;    /* from the note, 0 none */
    uint64_t size;
    char upload[4096];    /* the stripped copy sent instead of path, "" none */
    uint64_t upload_size; /* bytes sent: size, or the stripped copy's */
    char name[128];       /* file name on the board */
    char remote[1200];    /* full path on the board */
    char sha[65];
};

/* State shared by the steps of run and live. */
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

int btd_cmd_run(const struct btd_options *o);
int btd_cmd_live(const struct btd_options *o);
int btd_cmd_fetch(const struct btd_options *o);
int btd_cmd_check(const struct btd_options *o);
int btd_cmd_status(const struct btd_options *o);

/* Whether a file of that name in a run's folder would be one of the
 * supervisor's or the capture's own. */
bool btd_board_name_reserved(const char *name);

/* --upload: checks each file here (regular, readable, a name of its own in
 * the folder), then uploads them beside the program (btd_uploads.c). */
int btd_uploads_check(struct btd_deploy *d);
int btd_uploads_send(struct btd_deploy *d);

/* The script: a regular file here. */
int btd_python_check_script(const char *script);
/* After the board probe: the board's python3 there and of the version the
 * extension for its architecture is built for; that extension loaded as the
 * program. Errors say what the board has and what is needed. */
int btd_python_prepare(struct btd_deploy *d);

/* Reads a binary's ELF header (and size, toolchain). */
int btd_binary_load(struct btd_binary *b, const char *path, const char *role);
/* Reads what tracing a loaded program holds (its boardtrace note, a Tracy
 * client) and warns, before anything is uploaded, when it has none. */
void btd_program_tracing(struct btd_binary *program);

/* Finds the default capture for ARCH (search order in --help); fills path
 * storage in out. Returns 0, or BTD_EXIT_LOCAL after naming where it looked. */
int btd_find_capture(const char *arch, char *out, size_t outlen);

/* Connects with the connection options of o. */
int btd_deploy_connect(struct btd_deploy *d);

/* Probe with a private folder, architecture and space checks, upload of the
 * program (and capture); the supervisor verifies their SHA-256 on the board. */
int btd_deploy_prepare(struct btd_deploy *d);

/* Before the upload: a dynamically linked program that needs a newer glibc
 * than the board has (from the probe) is refused, naming both versions,
 * unless a new enough glibc can be brought from the sysroot. */
int btd_deploy_libc_check(struct btd_deploy *d);

/* For a dynamically linked program already uploaded: asks the board's loader
 * what it lacks and brings the loader and libraries from the sysroot (or,
 * with --no-bring-libs, refuses naming each missing piece). Called by
 * btd_deploy_prepare. */
int btd_deploy_libs(struct btd_deploy *d);

/* Connects, then prepares; a failure while interrupted reports
 * BTD_EXIT_INTERRUPTED, since the signal is the cause the user needs to see. */
int btd_deploy_start(struct btd_deploy *d);

/* Names the frames of TRACE from PROGRAM (unstripped) with
 * boardtrace-report symbolize; its summary line into summary. Returns 0, or
 * -1 after a warning (the trace stays as it was). */
int btd_symbolize_trace(const char *trace, const char *program, char *summary, size_t len);

/* Removes the board folder unless --keep (says so either way). Returns
 * whether it was removed. */
bool btd_deploy_cleanup(struct btd_deploy *d, bool keep);

/* The connection was lost before the supervisor started (mid-upload): the
 * folder holds only partial uploads, so connect once more and remove it.
 * True when it is gone (board.dir is then ""), false after saying why not. */
bool btd_deploy_cleanup_lost(struct btd_deploy *d);

#endif
