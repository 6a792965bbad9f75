/* Argument parsing and help for the boardtrace CLI (see btd_args.h). Every
 * option is listed in --help with what it does; exit statuses too. */
#define _GNU_SOURCE
#include "btd_args.h"

#include "btd_buf.h"
#include "btd_decimal.h"
#include "btd_help.h"
#include "btd_msg.h"
#include "btd_quote.h"

#include <boardtrace/config.h>
#include <errno.h>
#include <getopt.h>
#include <libssh/libssh.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "Usage: boardtrace COMMAND [OPTIONS] ...\n"
    "Profile a program on an embedded Linux board with Tracy, over SSH.\n"
    "\n"
    "Commands:\n"
    "  run [OPTIONS] PROGRAM [-- ARGS...]  upload PROGRAM and a capture, run both on the\n"
    "                                      board, pull the trace back, print a summary\n"
    "  live [OPTIONS] PROGRAM [-- ARGS...] run PROGRAM on the board and forward a local\n"
    "                                      port to it for the Tracy GUI, until it exits\n"
    "  fetch [OPTIONS] [REMOTE]            pull (resuming) a trace left on the board;\n"
    "                                      REMOTE is a trace file or a run's folder,\n"
    "                                      default the newest finished run there; a\n"
    "                                      run's folder is removed once its trace is\n"
    "                                      verified here (unless --keep)\n"
    "  status [OPTIONS]                    list the runs on the board: running,\n"
    "                                      finished (trace ready to fetch), stopped\n"
    "  check [OPTIONS]                     preflight report: reachability, host key,\n"
    "                                      authentication, architecture, disk, tracing\n"
    "  farm run --lava URL --device-type T [--count N] -o DIR PROGRAM [-- ARGS...]\n"
    "                                      run on N boards of a LAVA lab at once, then\n"
    "                                      compare them (boardtrace farm run --help)\n"
    "\n"
    "Connection options (all commands but farm run, whose boards LAVA names):\n"
    "  --host [USER@]HOST[:PORT]  the board; HOST may be a ~/.ssh/config alias\n"
    "                             (default: $BOARDTRACE_HOST)\n"
    "  -i, --identity FILE        private key to try first (then ssh-agent and the\n"
    "                             default keys); passphrases are asked on the terminal\n"
    "  -F, --ssh-config FILE      SSH config to read (default ~/.ssh/config and\n"
    "                             /etc/ssh/ssh_config)\n"
    "  --known-hosts FILE         known_hosts to verify against (default\n"
    "                             ~/.ssh/known_hosts)\n"
    "  --accept-new-host-key      record the key of a board not yet in known_hosts;\n"
    "                             a changed key is always refused\n"
    "  --no-sftp                  stream over exec channels even when SFTP exists\n"
    "  --stall-timeout N          give up a transfer when nothing moves for N\n"
    "                             seconds (default 60)\n"
    "  -v, --verbose              more detail (twice: SSH protocol too)\n"
    "  -q, --quiet                errors and the summary only\n"
    "  -h, --help                 this text (after a command, or `help COMMAND`: that\n"
    "                             command's options and an example); --version\n"
    "\n"
    "run and live options:\n"
    "  --capture PATH             tracy-capture compatible binary for the board\n"
    "                             (run; default: boardtrace-capture for the board's\n"
    "                             architecture, see below)\n"
    "  -o, --output FILE          trace file to write (run, fetch; default\n"
    "                             PROGRAM.tracy, or the remote name for fetch); the\n"
    "                             record goes to FILE.json\n"
    "  --html                     run: also write the trace's HTML report (one\n"
    "                             self-contained page, boardtrace-report html) to\n"
    "                             FILE.html; a report that fails is a warning, the\n"
    "                             trace is kept\n"
    "  -f, --force                run: replace an existing FILE, FILE.part and\n"
    "                             FILE.json; fetch: an existing FILE (refused\n"
    "                             otherwise; never an input)\n"
    "  -s, --seconds N            capture at most N seconds, then stop the program\n"
    "  --env NAME=VALUE           set a variable for the program (repeatable)\n"
    "  --upload FILE              run, live: upload FILE too, beside the program\n"
    "                             (repeatable; verified like it)\n"
    "  --cwd DIR                  run, live: the program's working folder on the\n"
    "                             board (relative: to the run's folder, the default)\n"
    "  --python                   run: PROGRAM is a Python script: the board's python3\n"
    "                             runs it under python3 -m boardtrace\n"
    "  -p, -l, -m MODULE          run --python: python3 -m boardtrace's (and python -m\n"
    "                             tracy's) own, given before PROGRAM: profile only\n"
    "                             between Profiler().enable() and .disable(); a zone\n"
    "                             per line too; run MODULE (uploaded with --upload\n"
    "                             or the board's own) instead of a script, every\n"
    "                             argument after it being its own\n"
    "  --python-path DIR          run --python: the board build's Python folder\n"
    "                             (default: this build's cross/ARCH/runtime/python)\n"
    "  --remote-dir DIR           folder on the board for the private temporary\n"
    "                             folder (default ${TMPDIR:-/tmp} on the board)\n"
    "  --keep                     keep the board's folder (default: removed after a\n"
    "                             successful run or fetch)\n"
    "  --detach                   run: return once the program traces; the run goes\n"
    "                             on on the board (see status, fetch)\n"
    "  --stop                     fetch: stop a run still going on, then fetch it\n"
    "  --recover                  fetch: rebuild the trace of the run folder REMOTE\n"
    "                             from the journal its capture kept (the disk was\n"
    "                             full), with the capture's --recover, then fetch it\n"
    "  --reconnect N              run: after a lost connection, try N times over\n"
    "                             about a minute to connect again (default 6; 0: do\n"
    "                             not, say how to fetch the run later)\n"
    "  --ready-timeout N          seconds the program has to open its tracing port\n"
    "                             (default 30)\n"
    "  --capture-memory PERCENT   run: the capture stops capturing (and keeps its\n"
    "                             trace) once it uses more than PERCENT of the\n"
    "                             board's memory (its -m; default 50; 0: no limit)\n"
    "  --file-version V           run: the .tracy version the capture writes, for the\n"
    "                             GUI that opens it (0.10.0 ... 0.14.0; default:\n"
    "                             $BOARDTRACE_FILE_VERSION, else the program's Tracy\n"
    "                             release's)\n"
    "  -L, --local-port PORT      live: port on 127.0.0.1 for the GUI (default 8086;\n"
    "                             0 picks a free one)\n"
    "  --sysroot DIR              a dynamically linked PROGRAM's libraries and loader\n"
    "                             come from DIR when the board lacks them (default:\n"
    "                             $BOARDTRACE_SYSROOT, else the cross compiler's,\n"
    "                             else /usr/<triple>)\n"
    "  --no-strip                 run: upload the program and capture as they are\n"
    "                             (default: copies without symbols and debug\n"
    "                             information, the trace's frames named on the host\n"
    "                             afterwards; live always sends them as they are)\n"
    "  --no-bring-libs            refuse, naming what is missing, instead of bringing\n"
    "                             libraries the board lacks\n"
    "\n"
    "A dynamically linked PROGRAM whose loader, libraries or symbol versions the\n"
    "board lacks runs through a loader and libraries brought from the sysroot:\n"
    "uploaded once into ${TMPDIR:-/tmp}/boardtrace-libs on the board (checked by\n"
    "SHA-256, reused by later runs), never over the board's own.\n"
    "\n"
    "Default capture (run without --capture), the first that exists, <arch> being\n"
    "the board's `uname -m`:\n"
    "  $BOARDTRACE_CAPTURE_DIR/<arch>/boardtrace-capture\n"
    "  <boardtrace's folder>/../share/boardtrace/<arch>/boardtrace-capture (installed)\n"
    "  run from its build tree: <build>/cross/<arch>/tools/capture/boardtrace-capture\n"
    "    (BT_CROSS_TARGETS), <source>/build/<arch>/tools/capture/boardtrace-capture\n"
    "  <install prefix>/share/boardtrace/<arch>/boardtrace-capture\n"
    "\n"
    "Ctrl-C once stops the program on the board and keeps what was captured (run\n"
    "still pulls it); twice leaves at once, the board's folder stays for fetch.\n"
    "A run outlives a lost SSH connection: run connects again (for about a\n"
    "minute) and follows it where it was, or says how to fetch it later.\n"
    "\n"
    "Exit status: 0 ok; 2 usage; 3 local files (unreadable, not ELF or cut short,\n"
    "architectures disagree, no capture); 4 connect; 5 host key; 6 authentication;\n"
    "7 board preflight (architecture, free space, folder); 8 upload; 9 start (capture\n"
    "or program did not start, or the board stopped answering); 10 capture (failed or\n"
    "no trace); 11 pull; 12 output (local trace or record); 13 the program exited\n"
    "non-zero or was killed by a signal (a trace it left was still pulled);\n"
    "130 interrupted.\n";

enum {
    OPT_HOST = 1000,
    OPT_KNOWN_HOSTS,
    OPT_ACCEPT_NEW,
    OPT_NO_SFTP,
    OPT_CAPTURE,
    OPT_ENV,
    OPT_REMOTE_DIR,
    OPT_KEEP,
    OPT_READY_TIMEOUT,
    OPT_STALL_TIMEOUT,
    OPT_CAPTURE_MEMORY,
    OPT_FILE_VERSION,
    OPT_SYSROOT,
    OPT_NO_BRING_LIBS,
    OPT_DETACH,
    OPT_NO_STRIP,
    OPT_HTML,
    OPT_STOP,
    OPT_RECOVER,
    OPT_UPLOAD,
    OPT_CWD,
    OPT_PYTHON,
    OPT_PYTHON_PATH,
    OPT_RECONNECT,
    OPT_HELP,
    OPT_VERSION,
};

static const struct option long_options[] = {
    {"host", required_argument, NULL, OPT_HOST},
    {"identity", required_argument, NULL, 'i'},
    {"ssh-config", required_argument, NULL, 'F'},
    {"known-hosts", required_argument, NULL, OPT_KNOWN_HOSTS},
    {"accept-new-host-key", no_argument, NULL, OPT_ACCEPT_NEW},
    {"no-sftp", no_argument, NULL, OPT_NO_SFTP},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"capture", required_argument, NULL, OPT_CAPTURE},
    {"output", required_argument, NULL, 'o'},
    {"seconds", required_argument, NULL, 's'},
    {"env", required_argument, NULL, OPT_ENV},
    {"upload", required_argument, NULL, OPT_UPLOAD},
    {"cwd", required_argument, NULL, OPT_CWD},
    {"python", no_argument, NULL, OPT_PYTHON},
    {"python-path", required_argument, NULL, OPT_PYTHON_PATH},
    {"remote-dir", required_argument, NULL, OPT_REMOTE_DIR},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"force", no_argument, NULL, 'f'},
    {"ready-timeout", required_argument, NULL, OPT_READY_TIMEOUT},
    {"stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT},
    {"capture-memory", required_argument, NULL, OPT_CAPTURE_MEMORY},
    {"file-version", required_argument, NULL, OPT_FILE_VERSION},
    {"local-port", required_argument, NULL, 'L'},
    {"sysroot", required_argument, NULL, OPT_SYSROOT},
    {"no-bring-libs", no_argument, NULL, OPT_NO_BRING_LIBS},
    {"detach", no_argument, NULL, OPT_DETACH},
    {"no-strip", no_argument, NULL, OPT_NO_STRIP},
    {"html", no_argument, NULL, OPT_HTML},
    {"stop", no_argument, NULL, OPT_STOP},
    {"recover", no_argument, NULL, OPT_RECOVER},
    {"reconnect", required_argument, NULL, OPT_RECONNECT},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int parse_int(const char *what, const char *s, long low, long high, int *out)
{
    long v;
    if (btd_parse_decimal(s, &v) != 0 || v < low || v > high) {
        btd_error("%s: expected a whole number from %ld to %ld, found '%s'", what, low, high, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* A release: digits and dots (boardtrace-capture names the versions it
 * writes if this is not one). WHAT is where it came from. */
static bool file_version_valid(const char *what, const char *v)
{
    if (!v[0] || strlen(v) > 16 || strspn(v, "0123456789.") != strlen(v)) {
        btd_error("%s %s: expected a Tracy release such as 0.11.2 or 0.10.0", what, v);
        return false;
    }
    return true;
}

/* Options that make sense for a command; others are refused by name. */
static int option_allowed(enum btd_command c, int opt)
{
    switch (opt) {
    case OPT_CAPTURE:
    case 's':
        return c == BTD_CMD_RUN;
    case 'o':
    case 'f':
        return c == BTD_CMD_RUN || c == BTD_CMD_FETCH;
    case OPT_DETACH:
    case OPT_RECONNECT:
    case OPT_NO_STRIP:
    case OPT_PYTHON:
    case OPT_PYTHON_PATH:
    case 'p':
    case 'l':
    case 'm':
        return c == BTD_CMD_RUN;
    case OPT_STOP:
    case OPT_RECOVER:
        return c == BTD_CMD_FETCH;
    case OPT_KEEP:
        return c == BTD_CMD_RUN || c == BTD_CMD_LIVE || c == BTD_CMD_FETCH;
    case OPT_ENV:
    case OPT_UPLOAD:
    case OPT_CWD:
    case OPT_READY_TIMEOUT:
    case OPT_SYSROOT:
    case OPT_NO_BRING_LIBS:
        return c == BTD_CMD_RUN || c == BTD_CMD_LIVE;
    case 'L':
        return c == BTD_CMD_LIVE;
    default:
        return 1;
    }
}

int btd_args_parse(int argc, char **argv, struct btd_options *o)
{
    memset(o, 0, sizeof *o);
    o->local_port = 8086;
    o->ready_timeout = 30;
    o->stall_timeout = 60;
    o->capture_memory = 50;
    o->reconnect_tries = 6;
    if (argc < 2) {
        fputs(usage_text, stderr);
        return BTD_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        /* `boardtrace help run`: that command's own help. */
        static const char *const names[] = {[BTD_CMD_RUN] = "run",
                                            [BTD_CMD_LIVE] = "live",
                                            [BTD_CMD_FETCH] = "fetch",
                                            [BTD_CMD_CHECK] = "check",
                                            [BTD_CMD_STATUS] = "status"};
        for (size_t i = 0; argc > 2 && i < sizeof names / sizeof *names; i++) {
            if (strcmp(argv[2], names[i]) == 0) {
                btd_help_print((enum btd_command)i, stdout);
                return 1;
            }
        }
        fputs(usage_text, stdout);
        return 1;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("boardtrace %s (libssh %s, %s)\n", BT_VERSION_STRING, ssh_version(0),
               BT_BUILD_COMPILER);
        return 1;
    }
    if (strcmp(cmd, "run") == 0)
        o->command = BTD_CMD_RUN;
    else if (strcmp(cmd, "live") == 0)
        o->command = BTD_CMD_LIVE;
    else if (strcmp(cmd, "fetch") == 0)
        o->command = BTD_CMD_FETCH;
    else if (strcmp(cmd, "check") == 0)
        o->command = BTD_CMD_CHECK;
    else if (strcmp(cmd, "status") == 0)
        o->command = BTD_CMD_STATUS;
    else {
        btd_error("unknown command '%s' (expected run, live, fetch, status or check; see --help)",
                  cmd);
        return BTD_EXIT_USAGE;
    }
    o->env = btd_xmalloc(sizeof *o->env * (size_t)argc);
    o->uploads = btd_xmalloc(sizeof *o->uploads * (size_t)argc);
    /* Parse argv[1..] as if the command were the program name; optind 0
     * makes glibc start afresh, so parsing twice (tests) behaves the same. */
    int sub_argc = argc - 1;
    char **sub_argv = argv + 1;
    optind = 0;
    opterr = 0;
    int opt;
    /* '+': options stop at PROGRAM, whose own arguments are never ours. */
    while ((opt = getopt_long(sub_argc, sub_argv, "+:i:F:vqo:fs:L:hplm:", long_options, NULL)) !=
           -1) {
        if (opt == '?' || opt == ':') {
            const char *bad = sub_argv[optind - 1];
            btd_error(opt == ':' ? "%s %s: option needs a value"
                                 : "%s %s: unknown option (see "
                                   "boardtrace --help)",
                      cmd, bad);
            return BTD_EXIT_USAGE;
        }
        if (!option_allowed(o->command, opt)) {
            btd_error("%s: option %s does not apply to this command", cmd, sub_argv[optind - 1]);
            return BTD_EXIT_USAGE;
        }
        switch (opt) {
        case OPT_HOST:
            o->host = optarg;
            break;
        case 'i':
            o->identity = optarg;
            break;
        case 'F':
            o->ssh_config = optarg;
            break;
        case OPT_KNOWN_HOSTS:
            o->known_hosts = optarg;
            break;
        case OPT_ACCEPT_NEW:
            o->accept_new_host_key = true;
            break;
        case OPT_NO_SFTP:
            o->no_sftp = true;
            break;
        case 'v':
            btd_verbosity = btd_verbosity < 1 ? 2 : btd_verbosity + 1;
            break;
        case 'q':
            btd_verbosity = 0;
            break;
        case OPT_CAPTURE:
            o->capture = optarg;
            break;
        case 'o':
            o->output = optarg;
            break;
        case 's':
            if (parse_int("-s/--seconds", optarg, 1, 86400 * 7, &o->seconds) != 0)
                return BTD_EXIT_USAGE;
            break;
        case OPT_ENV: {
            const char *eq = strchr(optarg, '=');
            if (!eq || !btd_env_name_valid(optarg, (size_t)(eq - optarg))) {
                btd_error("--env %s: expected NAME=VALUE with NAME of letters, digits and _ "
                          "(not starting with a digit)",
                          optarg);
                return BTD_EXIT_USAGE;
            }
            size_t nlen = (size_t)(eq - optarg);
            if ((nlen == 10 && strncmp(optarg, "TRACY_PORT", nlen) == 0) ||
                (nlen == 13 && strncmp(optarg, "TRACY_NO_EXIT", nlen) == 0) ||
                (nlen == 20 && strncmp(optarg, "TRACY_ONLY_LOCALHOST", nlen) == 0)) {
                btd_error("--env %s: boardtrace sets %.*s itself (the port is chosen on the "
                          "board; the capture needs the program to wait and listen locally)",
                          optarg, (int)nlen, optarg);
                return BTD_EXIT_USAGE;
            }
            o->env[o->env_count++] = optarg;
            break;
        }
        case OPT_UPLOAD:
            if (!optarg[0]) {
                btd_error("--upload: expected a file");
                return BTD_EXIT_USAGE;
            }
            if (o->upload_count == BTD_MAX_UPLOADS) {
                btd_error("--upload %s: at most %d files", optarg, BTD_MAX_UPLOADS);
                return BTD_EXIT_USAGE;
            }
            o->uploads[o->upload_count++] = optarg;
            break;
        case OPT_PYTHON:
            o->python = true;
            break;
        case 'p':
            o->python_partial = true;
            break;
        case 'l':
            o->python_lines = true;
            break;
        case 'm':
            if (!optarg[0]) {
                btd_error("run -m: expected a Python module's name");
                return BTD_EXIT_USAGE;
            }
            o->python_module = optarg;
            break;
        case OPT_PYTHON_PATH:
            if (!optarg[0]) {
                btd_error("--python-path: expected a folder");
                return BTD_EXIT_USAGE;
            }
            o->python_path = optarg;
            break;
        case OPT_CWD:
            if (!optarg[0]) {
                btd_error("--cwd: expected a folder on the board");
                return BTD_EXIT_USAGE;
            }
            o->cwd = optarg;
            break;
        case OPT_REMOTE_DIR:
            if (!optarg[0]) {
                btd_error("--remote-dir: expected a folder, found an empty string");
                return BTD_EXIT_USAGE;
            }
            o->remote_dir = optarg;
            break;
        case OPT_KEEP:
            o->keep = true;
            break;
        case 'f':
            o->force = true;
            break;
        case OPT_READY_TIMEOUT:
            if (parse_int("--ready-timeout", optarg, 1, 3600, &o->ready_timeout) != 0)
                return BTD_EXIT_USAGE;
            break;
        case OPT_STALL_TIMEOUT:
            if (parse_int("--stall-timeout", optarg, 1, 3600, &o->stall_timeout) != 0)
                return BTD_EXIT_USAGE;
            break;
        case OPT_FILE_VERSION:
            if (!file_version_valid("--file-version", optarg))
                return BTD_EXIT_USAGE;
            o->file_version = optarg;
            break;
        case OPT_CAPTURE_MEMORY:
            /* the range boardtrace-capture and tracy-capture take for -m */
            if (parse_int("--capture-memory", optarg, 0, 999, &o->capture_memory) != 0)
                return BTD_EXIT_USAGE;
            break;
        case 'L':
            if (parse_int("-L/--local-port", optarg, 0, 65535, &o->local_port) != 0)
                return BTD_EXIT_USAGE;
            break;
        case OPT_SYSROOT:
            if (!optarg[0]) {
                btd_error("--sysroot: expected a folder, found an empty string");
                return BTD_EXIT_USAGE;
            }
            o->sysroot = optarg;
            break;
        case OPT_NO_BRING_LIBS:
            o->no_bring_libs = true;
            break;
        case OPT_DETACH:
            o->detach = true;
            break;
        case OPT_NO_STRIP:
            o->no_strip = true;
            break;
        case OPT_HTML:
            o->html = true;
            break;
        case OPT_STOP:
            o->stop = true;
            break;
        case OPT_RECOVER:
            o->recover = true;
            break;
        case OPT_RECONNECT:
            if (parse_int("--reconnect", optarg, 0, 6, &o->reconnect_tries) != 0)
                return BTD_EXIT_USAGE;
            break;
        case 'h':
        case OPT_HELP:
            btd_help_print(o->command, stdout);
            return 1;
        case OPT_VERSION:
            printf("boardtrace %s\n", BT_VERSION_STRING);
            return 1;
        }
        /* -m MODULE ends the options, as python's does: the rest is the
         * module's. */
        if (o->python_module)
            break;
    }
    /* The user's GUI release, set once, when the command line names none. */
    const char *env_version = getenv("BOARDTRACE_FILE_VERSION");
    if (!o->file_version && o->command == BTD_CMD_RUN && env_version && env_version[0]) {
        if (!file_version_valid("BOARDTRACE_FILE_VERSION", env_version))
            return BTD_EXIT_USAGE;
        o->file_version = env_version;
    }
    if (!o->host)
        o->host = getenv("BOARDTRACE_HOST");
    if (!o->host || !o->host[0]) {
        btd_error("%s: no board given: use --host [USER@]HOST[:PORT] or set BOARDTRACE_HOST", cmd);
        return BTD_EXIT_USAGE;
    }
    /* The report is written from the pulled trace: a detached run pulls
     * none (fetch does, later). */
    if (o->html && (o->command != BTD_CMD_RUN || o->detach)) {
        btd_error("%s: --html writes the report of the trace run pulls: it is for run, without "
                  "--detach (boardtrace-report html -o OUT.html TRACE writes one of any trace)",
                  cmd);
        return BTD_EXIT_USAGE;
    }
    int rest = sub_argc - optind;
    char **restv = sub_argv + optind;
    switch (o->command) {
    case BTD_CMD_RUN:
    case BTD_CMD_LIVE:
        if ((o->python_partial || o->python_lines || o->python_module) && !o->python) {
            btd_error("run: -p, -l and -m are for a Python program: add --python");
            return BTD_EXIT_USAGE;
        }
        if (o->python_module) {
            /* No script: what follows -m MODULE is all the module's. */
            o->program = o->python_module;
            o->args = restv;
            o->arg_count = rest;
            break;
        }
        if (rest < 1) {
            btd_error("%s: no PROGRAM given (usage: boardtrace %s [OPTIONS] PROGRAM [-- ARGS...])",
                      cmd, cmd);
            return BTD_EXIT_USAGE;
        }
        if (o->python_path && !o->python) {
            btd_error("run: --python-path is for a Python script: add --python");
            return BTD_EXIT_USAGE;
        }
        o->program = restv[0];
        o->args = restv + 1;
        o->arg_count = rest - 1;
        if (o->arg_count > 0 && strcmp(o->args[0], "--") == 0) {
            o->args++;
            o->arg_count--;
        }
        break;
    case BTD_CMD_FETCH:
        if (rest > 1) {
            btd_error("fetch: expected at most one REMOTE path, found %d arguments", rest);
            return BTD_EXIT_USAGE;
        }
        o->remote_path = rest ? restv[0] : NULL;
        if (o->recover && !o->remote_path) {
            btd_error("fetch --recover: name the run's folder on the board (REMOTE)");
            return BTD_EXIT_USAGE;
        }
        break;
    case BTD_CMD_CHECK:
    case BTD_CMD_STATUS:
        if (rest > 0) {
            btd_error("%s: unexpected argument '%s'", cmd, restv[0]);
            return BTD_EXIT_USAGE;
        }
        break;
    }
    return 0;
}

void btd_args_free(struct btd_options *o)
{
    free(o->env);
    o->env = NULL;
    free(o->uploads);
    o->uploads = NULL;
}
