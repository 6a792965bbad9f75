/* Each command's own help (`boardtrace run --help`, `boardtrace help run`):
 * its usage, every option it takes, an example and its exit statuses, as git
 * and curl give them; `boardtrace --help` stays the overview (btd_args.c). */
#include "btd_help.h"

static const char connection[] =
    "Connection:\n"
    "  --host [USER@]HOST[:PORT]  the board; HOST may be a ~/.ssh/config alias\n"
    "                             (default: $BOARDTRACE_HOST)\n"
    "  -i, --identity FILE        private key to try first (then ssh-agent and the\n"
    "                             default keys); passphrases are asked on the terminal\n"
    "  -F, --ssh-config FILE      SSH config to read (default ~/.ssh/config and\n"
    "                             /etc/ssh/ssh_config)\n"
    "  --known-hosts FILE         known_hosts to verify against (default\n"
    "                             ~/.ssh/known_hosts); a changed key is always refused,\n"
    "                             whatever the SSH config says\n"
    "  --accept-new-host-key      record the key of a board not yet in known_hosts\n"
    "  --no-sftp                  stream over exec channels even when SFTP exists\n"
    "  --stall-timeout N          give up a transfer when nothing moves for N\n"
    "                             seconds (default 60)\n"
    "  --remote-dir DIR           folder on the board for the runs' private folders\n"
    "                             (default ${TMPDIR:-/tmp} on the board)\n"
    "  -v, --verbose              more detail (twice: SSH protocol too)\n"
    "  -q, --quiet                errors and the summary only\n"
    "  -h, --help                 this text\n";

static const char exits[] =
    "Exit status: 0 ok; 2 usage; 3 local files; 4 connect; 5 host key;\n"
    "6 authentication; 7 board preflight; 8 upload; 9 start; 10 capture; 11 pull;\n"
    "12 output; 13 the program exited non-zero or was killed by a signal;\n"
    "130 interrupted. `boardtrace --help` has them in full.\n";

static const char run_about[] =
    "Usage: boardtrace run [OPTIONS] PROGRAM [-- ARGS...]\n"
    "       boardtrace run [OPTIONS] --python [-p] [-l] SCRIPT [-- ARGS...]\n"
    "       boardtrace run [OPTIONS] --python [-p] [-l] -m MODULE [ARGS...]\n"
    "Uploads PROGRAM and a capture for the board, runs both there, pulls the\n"
    "trace back to OUT, writes the run's record to OUT.json and prints a summary.\n"
    "With --python, SCRIPT runs on the board's own python3 under\n"
    "`python3 -m boardtrace`, with the extension built for that Python.\n"
    "\n"
    "Run:\n"
    "  -o, --output OUT           the trace (default PROGRAM.tracy); OUT.part while\n"
    "                             it arrives, OUT.json the record\n"
    "  --html                     also write the trace's HTML report to OUT.html:\n"
    "                             one self-contained page (boardtrace-report html);\n"
    "                             a report that fails is a warning, the trace stays\n"
    "  -f, --force                replace an existing OUT, OUT.part and OUT.json\n"
    "                             (never one that is the program or the capture)\n"
    "  --capture PATH             tracy-capture compatible binary for the board\n"
    "                             (default: boardtrace-capture for its architecture)\n"
    "  -s, --seconds N            capture at most N seconds, then stop the program\n"
    "  --env NAME=VALUE           set a variable for the program (repeatable)\n"
    "  --upload FILE              upload FILE too, beside the program (repeatable;\n"
    "                             verified like it)\n"
    "  --cwd DIR                  the program's working folder on the board\n"
    "                             (relative: to the run's folder, the default)\n"
    "  --python                   PROGRAM is a Python script: every call a zone\n"
    "  -p, -l                     --python, before PROGRAM: profile only between\n"
    "                             Profiler().enable() and .disable(); a zone per\n"
    "                             line too (python3 -m boardtrace's -p and -l)\n"
    "  -m MODULE                  --python: run MODULE (python -m MODULE) instead of\n"
    "                             a script; all that follows is its arguments\n"
    "  --python-path DIR          the board build's Python folder (boardtrace/ with\n"
    "                             the extension, tracy/, tracy_client/; default:\n"
    "                             this build's cross/ARCH/runtime/python)\n"
    "  --ready-timeout N          seconds the program has to open its tracing port\n"
    "                             (default 30)\n"
    "  --capture-memory PERCENT   the capture stops capturing (keeping its trace)\n"
    "                             past PERCENT of the board's memory (default 50;\n"
    "                             0: no limit)\n"
    "  --file-version V           the .tracy version to write, for the GUI that opens\n"
    "                             it (0.10.0 ... 0.14.0; default:\n"
    "                             $BOARDTRACE_FILE_VERSION, else the program's own\n"
    "                             Tracy release's: 0.14.0 for boardtrace's runtime)\n"
    "  --detach                   return once the program traces; the run goes on\n"
    "                             (see status, fetch)\n"
    "  --reconnect N              after a lost connection, try N times over about a\n"
    "                             minute (default 6; 0: say how to fetch it later)\n"
    "  --keep                     keep the board's folder afterwards\n"
    "  --no-strip                 upload program and capture with their symbols\n"
    "                             (default: without; frames are named here)\n"
    "  --sysroot DIR              where a dynamic PROGRAM's loader and libraries come\n"
    "                             from when the board lacks them\n"
    "  --no-bring-libs            refuse instead of bringing them\n"
    "\n";
static const char run_after[] =
    "\n"
    "Ctrl-C once stops the program and keeps what was captured (the trace is still\n"
    "pulled); twice leaves at once, the board's folder stays for fetch.\n"
    "\n"
    "Example:\n"
    "  boardtrace run --host root@board -o app.tracy ./app -- --its-args\n"
    "  boardtrace run --host root@board --upload image.jpg ./test   # a data file beside it\n"
    "\n";

static const char live_about[] =
    "Usage: boardtrace live [OPTIONS] PROGRAM [-- ARGS...]\n"
    "Uploads PROGRAM, runs it on the board and forwards a port on 127.0.0.1 to its\n"
    "tracing port through the SSH connection, for the Tracy GUI (or a capture)\n"
    "on this machine, until the program exits.\n"
    "\n"
    "Live:\n"
    "  -L, --local-port PORT      the port on 127.0.0.1 (default 8086; 0: a free one)\n"
    "  --env NAME=VALUE           set a variable for the program (repeatable)\n"
    "  --upload FILE              upload FILE too, beside the program (repeatable;\n"
    "                             verified like it)\n"
    "  --cwd DIR                  the program's working folder on the board\n"
    "                             (relative: to the run's folder, the default)\n"
    "  --ready-timeout N          seconds the program has to open its tracing port\n"
    "                             (default 30)\n"
    "  --keep                     keep the board's folder afterwards\n"
    "  --sysroot DIR              where a dynamic PROGRAM's loader and libraries come\n"
    "                             from when the board lacks them\n"
    "  --no-bring-libs            refuse instead of bringing them\n"
    "\n";
static const char live_after[] =
    "\n"
    "Which GUI: a program traced with boardtrace's runtime answers any Tracy GUI from\n"
    "0.10 to 0.14.0, in the GUI's own protocol (tenstorrent's 0.10 fork, as\n"
    "tt-metal pins it: --env BOARDTRACE_TRACY_FLAVOR=tt); a program built with\n"
    "upstream's client only its own release's GUI.\n"
    "\n"
    "Example:\n"
    "  boardtrace live --host root@board -L 8086 ./app   # then connect the GUI to\n"
    "                                                    # 127.0.0.1:8086\n"
    "\n";

static const char fetch_about[] =
    "Usage: boardtrace fetch [OPTIONS] [REMOTE]\n"
    "Pulls (resuming) a trace left on the board: REMOTE is a trace file or a run's\n"
    "folder (default: the newest finished run). A run's folder is removed once its\n"
    "trace is verified here. A run still going on is refused unless --stop.\n"
    "\n"
    "Fetch:\n"
    "  -o, --output OUT           where the trace goes (default its name on the\n"
    "                             board); resumed from OUT.part\n"
    "  -f, --force                replace an existing OUT (refused otherwise)\n"
    "  --stop                     stop a run still going on, let its capture finish,\n"
    "                             then fetch it\n"
    "  --recover                  rebuild the trace of the run folder REMOTE from\n"
    "                             the journal its capture kept (the disk was full)\n"
    "  --keep                     keep the run's folder on the board\n"
    "\n";
static const char fetch_after[] =
    "\n"
    "Example:\n"
    "  boardtrace status --host root@board\n"
    "  boardtrace fetch --host root@board -o app.tracy /tmp/boardtrace.AbC123\n"
    "\n";

static const char status_about[] =
    "Usage: boardtrace status [OPTIONS]\n"
    "Lists the runs on the board: their folder, state (running, finished: its\n"
    "trace ready to fetch, stopped), trace size, start time and program.\n"
    "\n";
static const char status_after[] = "\n"
                                   "Example:\n"
                                   "  boardtrace status --host root@board\n"
                                   "\n";

static const char check_about[] =
    "Usage: boardtrace check [OPTIONS]\n"
    "The preflight alone, as a report: reachability, host key, authentication,\n"
    "architecture, transfer (SFTP or not), the private folder and free space, the\n"
    "board's C library, what callstacks need, the ports in use.\n"
    "\n";
static const char check_after[] = "\n"
                                  "Example:\n"
                                  "  boardtrace check --host root@board\n"
                                  "\n";

void btd_help_print(enum btd_command cmd, FILE *out)
{
    static const struct {
        const char *about, *after;
    } texts[] = {[BTD_CMD_RUN] = {run_about, run_after},
                 [BTD_CMD_LIVE] = {live_about, live_after},
                 [BTD_CMD_FETCH] = {fetch_about, fetch_after},
                 [BTD_CMD_CHECK] = {check_about, check_after},
                 [BTD_CMD_STATUS] = {status_about, status_after}};
    fputs(texts[cmd].about, out);
    fputs(connection, out);
    fputs(texts[cmd].after, out);
    fputs(exits, out);
}
