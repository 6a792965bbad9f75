/* What a command was asked to do: the options the command line
 * (cmd/btd_args.c) fills in and the operations read. */
#ifndef BTD_OPTIONS_H
#define BTD_OPTIONS_H

#include <stdbool.h>

/* --upload files a run may take. */
enum { BTD_MAX_UPLOADS = 64 };
/* Files uploaded beside the program: those, and run --python's script and
 * its four package files. */
enum { BTD_MAX_EXTRAS = BTD_MAX_UPLOADS + 5 };

enum btd_command {
    BTD_CMD_RUN,
    BTD_CMD_LIVE,
    BTD_CMD_FETCH,
    BTD_CMD_CHECK,
    BTD_CMD_STATUS,
};

struct btd_options {
    enum btd_command command;
    const char *host; /* --host, else $BOARDTRACE_HOST */
    const char *identity;
    const char *known_hosts;
    const char *ssh_config;
    bool accept_new_host_key;
    bool no_sftp;
    const char *capture; /* run */
    const char *output;  /* run, fetch */
    int seconds;         /* run: capture limit, 0 none */
    const char **env;    /* NAME=VALUE, validated */
    int env_count;
    const char **uploads; /* run, live: files placed beside the program */
    int upload_count;
    const char *cwd;           /* run, live: the program's working folder on the board */
    bool python;               /* run: PROGRAM is a Python script, run by the board's python3 */
    const char *python_path;   /* run --python: the board build's Python folder */
    bool python_partial;       /* run --python -p: profile between Profiler().enable()/disable() */
    bool python_lines;         /* run --python -l: a zone per executed line too */
    const char *python_module; /* run --python -m MODULE: run it, not a script (PROGRAM) */
    const char *remote_dir;    /* base folder on the board, default ${TMPDIR:-/tmp} */
    bool keep;
    bool force;               /* run: replace an existing output */
    int local_port;           /* live: 127.0.0.1 port for the GUI */
    int ready_timeout;        /* seconds for the program to open its port */
    int stall_timeout;        /* seconds a transfer may stand still */
    int capture_memory;       /* run: the capture's -m, percent of the board's memory, 0 none */
    const char *file_version; /* run: the capture's --file-version; NULL: its default */
    const char *sysroot;      /* run, live: where brought libraries come from */
    bool no_bring_libs;       /* run, live: refuse instead of bringing them */
    bool detach;              /* run: return once the program traces */
    bool no_strip;            /* run, live: upload the binaries as they are */
    bool html;                /* run: write the trace's HTML report to OUT.html */
    bool stop;                /* fetch: stop a run still going on first */
    bool recover;             /* fetch: rebuild the trace from the capture's journal first */
    int reconnect_tries;      /* run: after a lost connection, 0 none */
    const char *program;
    char **args;
    int arg_count;
    const char *remote_path; /* fetch: trace or run folder on the board */
};

#endif
