/* The board-side supervisor script (see btd_supervisor.h). Written for busybox ash:
 * no bash-isms, no coreutils; processes are watched through /proc so a
 * finished child is noticed without blocking in `wait`. */
#include "btd_supervisor.h"
#include "btd_options.h"
#include "btd_python.h"
#include "btd_quote.h"

#include <string.h>

/* Readiness: a socket on the tracing port in any state, or the capture's
 * connection to it. A fast program may have been connected to, drained and
 * closed between two looks; whichever side closed first then still shows in
 * TIME_WAIT. Connections still being attempted (SYN_SENT, 02) do not count. */

/* The run outlives the SSH connection: the supervisor and what it starts
 * write into two FIFOs whose readers are `tee`s appending to out.log and
 * err.log in the folder and copying to the channel. The tees ignore SIGPIPE,
 * so when the host goes away they keep the logs and nothing upstream of
 * them notices; the host that reconnects follows the logs from the byte it
 * had reached (btd_follower_script). At the end the supervisor writes
 * `finished`; the shell that started it then waits on the channel for the
 * host's verdict on the folder (removed once the host has the trace).
 *
 * Background jobs of a non-interactive shell ignore SIGINT, so the program
 * is stopped with TERM; the capture gets INT first because tracy-capture
 * installs a handler for it and saves what it has. */

/* Timings in hundredths of a second of the board's clock (now_cs), so they
 * hold however slow each look is. Right after the program starts and right
 * after it ends, when the next change is likely soon, the loops look every
 * 20 ms for FAST_LOOKS looks, so a short run is not stretched to the next
 * tenth of a second twice. */
enum {
    FAST_LOOKS = 25,
    CAPTURE_GRACE_CS = 12000, /* capture may take 2 min to save after the program */
    PROGRAM_GRACE_CS = 1000,  /* program gets 10 s after the capture ended (run only) */
    KILL_AFTER_CS = 500,      /* then 5 s between INT, TERM and KILL */
    HEARTBEAT_CS = 500,
};
enum { SMALL_TRACE_BYTES = 4 << 20 };
enum { CONNECT_AFTER_READY_S = 30 };

static const char script_head[] =
    "say() { printf '%s %s\\n' \"$T\" \"$*\" >&2; }\n"
    /* Every way out goes through here; `finished` is written after the
     * last report, so a follower that sees it has all of err.log. */
    "finish() {\n"
    "  say finished\n"
    "  : > finished\n"
    /* the folder, the trace and the marker on the board's storage: a
     * board that loses power or resets later still has them */
    "  sync\n"
    "  exit 0\n"
    "}\n"
    /* The board's clock in hundredths of a second, read without starting a
     * process (under load or emulation a process costs more than a tick):
     * deadlines are kept in real time, not counted in loop rounds. */
    "now_cs() { read -r now _ < /proc/uptime; now=${now%%.*}${now#*.}; }\n"
    "alive() {\n"
    "  [ -r /proc/$1/stat ] || return 1\n"
    "  read -r s < /proc/$1/stat 2>/dev/null || return 1\n"
    "  s=${s##*) }\n"
    "  case $s in Z*|X*|x*) return 1 ;; esac\n"
    "}\n"
    /* The program holds a UDP socket (its fds' socket inodes in the UDP
     * tables): upstream's client broadcasts its presence from one. The
     * tables are read first (a program that ends meanwhile then has no fds
     * to match), with the shell's own read: ls is the one process a look
     * starts, since processes are slow on an emulated or small board. */
    "udp_held() {\n"
    "  u=\n"
    "  for t in /proc/net/udp /proc/net/udp6; do\n"
    "    [ -r $t ] || continue\n"
    "    while read -r _ _ _ _ _ _ _ _ _ i _; do u=\"$u $i \"; done < $t\n"
    "  done\n"
    "  ls -l /proc/$pp/fd > .fds 2>/dev/null || return 1\n"
    "  while read -r l; do\n"
    "    case $l in *socket:\\[*\\]) i=${l##*socket:\\[}; i=${i%\\]}\n"
    "      case $u in *\" $i \"*) return 0 ;; esac ;;\n"
    "    esac\n"
    "  done < .fds\n"
    "  return 1\n"
    "}\n"
    "listening() {\n"
    "  grep -q -e \"^ *[0-9]*: [0-9A-F]*:$H \" -e \"^ *[0-9]*: [0-9A-F]*:[0-9A-F]* "
    "[0-9A-F]*:$H 0[1456789AB] \" /proc/net/tcp /proc/net/tcp6 2>/dev/null\n"
    "}\n";

/* Starting the capture: its output reaches the host through a FIFO, each
 * line tagged, so it never mixes with the program's. It connects to
 * "localhost", both loopback addresses, as the readiness check looks at
 * both: upstream's clients under TRACY_ONLY_LOCALHOST listen on [::1] only.
 * It gives up CONNECT_AFTER_READY_S after the readiness bound, naming what
 * listens on the port, so a client it cannot reach never holds the run. A capture that cannot
 * start (not executable, bad arguments) is gone within a few milliseconds;
 * one still there after 50 ms is taken as started, so the program does not
 * wait longer for it. */
static const char script_capture[] =
    "( trap '' PIPE\n"
    "  while IFS= read -r l; do printf '%%s capture %%s\\n' \"$T\" \"$l\"; done < cap.fifo >&2 ) "
    "&\n"
    "rp=$!\n"
    "./\"$CAP\" -o trace.tracy -a localhost -p \"$P\" --connect-timeout $((RT+%d)) -f $CAPSECS "
    "$CAPMEM $CAPVER > cap.fifo 2>&1 "
    "< "
    "/dev/null 3>&- "
    "&\n"
    "cp=$!\n"
    "alive $cp && sleep 0.05\n"
    "if ! alive $cp; then wait $cp; c=$?; wait $rp; say capture-failed $c; finish; fi\n"
    "say capture-started $cp\n";

/* A program that ends before it listens is reported with its status here,
 * so the host can say it exited rather than that it was slow to start. */
static const char script_ready[] =
    "pp=$!\n"
    "trap '' PIPE\n"
    "say program-started $pp\n"
    "f=0; ready=0; pe=\n"
    "now_cs; rd=$((now+RT*100))\n"
    "while :; do\n"
    "  if listening; then ready=1; break; fi\n"
    "  alive $pp || { wait $pp; pe=$?; say program-exit $pe; break; }\n"
    "  [ -e stop ] && break\n"
    "  now_cs; [ $now -ge $rd ] && break\n"
    "  if [ $f -lt %d ]; then f=$((f+1)); sleep 0.02; else sleep 0.1; fi\n"
    "done\n"
    "[ $ready = 1 ] || ! listening || ready=1\n"
    "if [ $ready = 1 ]; then say ready; else say not-ready; fi\n";

/* The uploads are checked where they will run, in the same round trip that
 * starts them: sha256sum prints "DIGEST  NAME" per file. */
static void verify_uploads(struct btd_buf *cmd, const struct btd_supervisor *s)
{
    const char *names[2 + BTD_MAX_EXTRAS] = {s->program, s->capture};
    const char *shas[2 + BTD_MAX_EXTRAS] = {s->program_sha, s->capture_sha};
    int n = s->capture ? 2 : 1, programs = n;
    for (int i = 0; i < s->extra_count && i < BTD_MAX_EXTRAS; i++) {
        names[n] = s->extra_names[i];
        shas[n++] = s->extra_shas[i];
    }
    btd_buf_puts(cmd, "chmod 700");
    for (int i = 0; i < programs; i++) {
        btd_buf_puts(cmd, " ");
        btd_quote_append(cmd, names[i]);
    }
    btd_buf_puts(cmd, " && set -- $(sha256sum");
    for (int i = 0; i < n; i++) {
        btd_buf_puts(cmd, " ");
        btd_quote_append(cmd, names[i]);
    }
    btd_buf_puts(cmd, ") || set --\n");
    for (int i = 0; i < n; i++) {
        btd_buf_printf(cmd, "[ \"${%d-}\" = ", 2 * i + 1);
        btd_quote_append(cmd, shas[i] ? shas[i] : "");
        btd_buf_puts(cmd, " ] || { say corrupt ");
        btd_quote_append(cmd, names[i]);
        btd_buf_printf(cmd, " \"${%d:-none}\"; finish; }\n", 2 * i + 1);
    }
    btd_buf_puts(cmd, "say verified\n");
}

/* run --python: the verified files linked into the package folders on
 * PYTHONPATH (a failure shows as the program's import error). */
static void python_layout(struct btd_buf *cmd, const struct btd_supervisor *s)
{
    /* Each package's folder, from its files' paths (a package's files are
     * listed together: each folder once). */
    btd_buf_puts(cmd, "mkdir -p");
    int last = 0;
    for (int i = 0; i < BTD_PYTHON_FILES; i++) {
        const char *f = btd_python_files[i], *slash = strrchr(f, '/');
        int len = slash ? (int)(slash - f) : 0;
        const char *prev = i ? btd_python_files[i - 1] : "";
        if (i && len == last && strncmp(f, prev, (size_t)len) == 0)
            continue;
        btd_buf_printf(cmd, " " BTD_PYTHON_DIR "/%.*s", len, f);
        last = len;
    }
    btd_buf_puts(cmd, " && ln -sf \"$D\"/");
    btd_quote_append(cmd, s->program);
    btd_buf_puts(cmd, " " BTD_PYTHON_DIR "/boardtrace/");
    btd_quote_append(cmd, s->program);
    for (int i = 0; i < BTD_PYTHON_FILES; i++) {
        char name[256];
        btd_python_board_name(btd_python_files[i], name, sizeof name);
        btd_buf_printf(cmd, " && ln -sf \"$D\"/%s " BTD_PYTHON_DIR "/%s", name,
                       btd_python_files[i]);
    }
    btd_buf_puts(cmd, "\n");
}

void btd_supervisor_script(struct btd_buf *cmd, const struct btd_supervisor *s)
{
    btd_buf_puts(cmd, "D=");
    btd_quote_append(cmd, s->dir);
    btd_buf_puts(cmd, "\ncd \"$D\" || exit 125\nT=");
    btd_quote_append(cmd, s->token);
    /* One rm and one mkfifo for everything (the probe's exec test included). */
    btd_buf_printf(cmd,
                   "\nrm -f out.fifo err.fifo cap.fifo finished .exec && mkfifo out.fifo "
                   "err.fifo%s || { printf '%%s fifo-failed\\n' \"$T\" >&2; exit 125; }\n"
                   "printf '%%s\\n' ",
                   s->capture ? " cap.fifo" : "");
    btd_quote_append(cmd, s->program);
    btd_buf_puts(cmd, " > program.name\n");
    if (s->program_host) {
        btd_buf_puts(cmd, "printf '%s\\n' ");
        btd_quote_append(cmd, s->program_host);
        btd_buf_puts(cmd, " > program.host\n");
    }
    btd_buf_puts(cmd, "( trap '' PIPE; exec tee -a out.log ) < out.fifo &\n"
                      "( trap '' PIPE; exec tee -a err.log >&2 ) < err.fifo &\n"
                      "(\n");
    btd_buf_printf(cmd, "P=%d\nH=%04X\nRT=%d\n", s->port, s->port, s->ready_timeout);
    btd_buf_puts(cmd, script_head);
    verify_uploads(cmd, s);
    if (s->python)
        python_layout(cmd, s);
    if (s->capture) {
        btd_buf_puts(cmd, "CAP=");
        btd_quote_append(cmd, s->capture);
        if (s->seconds > 0)
            btd_buf_printf(cmd, "\nCAPSECS='-s %d'\n", s->seconds);
        else
            btd_buf_puts(cmd, "\nCAPSECS=\n");
        if (s->memory > 0)
            btd_buf_printf(cmd, "CAPMEM='-m %d'\n", s->memory);
        else
            btd_buf_puts(cmd, "CAPMEM=\n");
        /* checked to be digits and dots (btd_args.c): quoted all the same */
        btd_buf_puts(cmd, "CAPVER=");
        if (s->file_version) {
            struct btd_buf v = {0};
            btd_buf_puts(&v, "--file-version ");
            btd_buf_puts(&v, s->file_version);
            btd_quote_append(cmd, btd_buf_str(&v));
            btd_buf_free(&v);
        }
        btd_buf_puts(cmd, "\n");
        btd_buf_printf(cmd, script_capture, CONNECT_AFTER_READY_S);
    }
    /* In its own working folder the program is started by its full path,
     * from a subshell that moved there (a folder that is not there ends it
     * with 126 and the shell's message, before it could listen). */
    const char *here = "./";
    if (s->cwd) {
        btd_buf_puts(cmd, "( cd ");
        btd_quote_append(cmd, s->cwd);
        btd_buf_puts(cmd, " || exit 126\nexport");
        here = "\"$D\"/";
    }
    btd_buf_printf(
        cmd, " TRACY_NO_EXIT=1 TRACY_ONLY_LOCALHOST=1 TRACY_NO_BROADCAST=1 TRACY_PORT=%d", s->port);
    if (s->python)
        btd_buf_puts(cmd, " PYTHONPATH=\"$D\"/" BTD_PYTHON_DIR);
    for (int i = 0; i < s->env_count; i++) {
        const char *eq = strchr(s->env[i], '=');
        btd_buf_puts(cmd, " ");
        btd_buf_append(cmd, s->env[i], (size_t)(eq - s->env[i]) + 1);
        btd_quote_append(cmd, eq + 1);
    }
    if (s->cwd)
        btd_buf_puts(cmd, "\nexec");
    if (s->python) {
        /* The board's own python3, the script by its full path. */
        btd_buf_puts(cmd, " ");
        btd_quote_append(cmd, s->python);
        btd_buf_puts(cmd, " -m boardtrace");
        if (s->python_partial)
            btd_buf_puts(cmd, " -p");
        if (s->python_lines)
            btd_buf_puts(cmd, " -l");
        if (s->python_module) {
            btd_buf_puts(cmd, " -m ");
            btd_quote_append(cmd, s->python_module);
        } else {
            btd_buf_puts(cmd, " \"$D\"/");
            btd_quote_append(cmd, s->python_script);
        }
    } else if (s->loader) {
        /* The board's own loader and libraries are not used: ours runs the
         * program by its full path, so it still knows its own file. */
        btd_buf_printf(cmd, " %slib/", here);
        btd_quote_append(cmd, s->loader);
        btd_buf_printf(cmd, " --library-path \"$D/lib\"%s \"$D\"/",
                       s->loader_glibc ? " --inhibit-cache" : "");
    } else {
        btd_buf_printf(cmd, " %s", here);
    }
    if (!s->python)
        btd_quote_append(cmd, s->program);
    for (int i = 0; i < s->arg_count; i++) {
        btd_buf_puts(cmd, " ");
        btd_quote_append(cmd, s->args[i]);
    }
    btd_buf_puts(cmd, s->cwd ? " ) < /dev/null 3>&- &\n" : " < /dev/null 3>&- &\n");
    btd_buf_printf(cmd, script_ready, FAST_LOOKS);
    if (!s->capture)
        btd_buf_puts(cmd, "cp=\nrp=\n");
    /* The watch loop: report each end, stop on request (the host creates
     * `stop`), give the other side a bounded grace, never wait forever. */
    btd_buf_printf(
        cmd,
        "ce=; gp=; gc=; cs=-1; css=; stopping=0; f=0; now_cs; hb=$now; ub=0; uc=$now; un=0\n"
        "[ -n \"$cp\" ] || ce=none\n"
        "if [ $ready = 0 ]; then stopping=1; cs=0; kill -TERM $pp 2>/dev/null; fi\n"
        "while :; do\n"
        "  if [ -z \"$pe\" ] && ! alive $pp; then wait $pp; pe=$?; f=0;"
        " if [ $stopping = 1 ]; then say program-exit $pe stopped; else say program-exit $pe; fi;"
        " fi\n"
        "  if [ -z \"$ce\" ] && ! alive $cp; then wait $cp; ce=$?; fi\n"
        "  [ -n \"$pe\" ] && [ -n \"$ce\" ] && break\n"
        "  if [ $stopping = 0 ] && [ -e stop ]; then stopping=1;"
        " if [ -z \"$pe\" ]; then say stopping; kill -TERM $pp 2>/dev/null;"
        " else say stopping capture; [ $cs -ge 0 ] || cs=0; fi; fi\n"
        /* -s N: the capture's end is the run's end; the program is stopped
         * as asked, not left to the grace period. */
        "  if [ $stopping = 0 ] && [ -n \"${CAPSECS-}\" ] && [ -n \"$ce\" ] && [ -z \"$pe\" ];"
        " then stopping=1; say stopping seconds; kill -TERM $pp 2>/dev/null; fi\n"
        /* The UDP socket upstream's client broadcasts from is bound (and
         * listed) once it first sends, just after it listens or is
         * connected to: looked for at once, every round for the first few
         * (a short program may end within a second of listening; a look
         * starts one process), then with each heartbeat. */
        "  if [ $ub = 0 ] && [ -z \"$pe\" ]; then\n"
        "    now_cs\n"
        "    if [ $now -ge $uc ]; then\n"
        "      un=$((un+1)); if [ $un -lt 8 ]; then uc=$now; else uc=$((now+%d)); fi\n"
        "      udp_held && { ub=1; say program-udp; }\n"
        "    fi\n"
        "  fi\n"
        "  if [ $f -lt %d ]; then f=$((f+1)); [ $((f %% 5)) = 0 ] || { sleep 0.02; continue; }; "
        "fi\n"
        "  now_cs\n"
        /* Each grace starts when its cause is first seen (gp, gc: the time
         * then) and runs on the board's clock. */
        "  if [ -z \"$pe\" ]; then\n"
        "    if [ -z \"$gp\" ] && { [ $stopping = 1 ] || { [ -n \"$cp\" ] && [ -n \"$ce\" ]; }; };"
        " then gp=$now; gs=0; fi\n"
        "    if [ -n \"$gp\" ]; then\n"
        "      [ $gs = 0 ] && [ $((now-gp)) -ge %d ] && { gs=1; say program-timeout;"
        " kill -TERM $pp 2>/dev/null; }\n"
        "      [ $gs = 1 ] && [ $((now-gp)) -ge %d ] && { gs=2; kill -KILL $pp 2>/dev/null; }\n"
        "    fi\n"
        "  elif [ -z \"$ce\" ]; then\n"
        "    [ -n \"$gc\" ] || gc=$now\n"
        "    [ $cs -lt 0 ] && [ $((now-gc)) -ge %d ] && { say capture-timeout; cs=0; }\n"
        "  fi\n"
        "  if [ $cs -ge 0 ] && [ -z \"$ce\" ]; then\n"
        "    [ $cs = 0 ] && { cs=1; css=$now; kill -INT $cp 2>/dev/null; }\n"
        "    [ $cs = 1 ] && [ $((now-css)) -ge %d ] && { cs=2; kill -TERM $cp 2>/dev/null; }\n"
        "    [ $cs = 2 ] && [ $((now-css)) -ge %d ] && { cs=3; kill -KILL $cp 2>/dev/null; }\n"
        "  fi\n"
        /* A heartbeat, so the host can tell a quiet run from a dead link.
         * live (no capture) also sends it on the channel itself (fd 3): a
         * channel that no longer takes it means the viewer's host is gone,
         * and the program, waiting for a viewer, is stopped. */
        "  if [ $((now-hb)) -ge %d ]; then\n"
        "    hb=$now\n"
        "    say alive\n"
        "    if [ -z \"$cp\" ] && ! printf '%%s alive\\n' \"$T\" >&3 2>/dev/null &&"
        " [ $stopping = 0 ]; then\n"
        "      stopping=1; [ -n \"$pe\" ] || kill -TERM $pp 2>/dev/null\n"
        "    fi\n"
        "  fi\n"
        "  if [ $f -lt %d ]; then sleep 0.02; else sleep 0.1; fi\n"
        "done\n"
        "[ -z \"$rp\" ] || wait $rp\n"
        "say capture-exit $ce\n"
        /* A small trace's digest comes with its size: the host then checks
         * its pull against it without starting sha256sum on the board (a
         * big one is hashed by the board during the pull instead). */
        "if [ -f trace.tracy ]; then set -- $(wc -c < trace.tracy)\n"
        "  if [ \"${1:-0}\" -le %d ]; then set -- $1 $(sha256sum trace.tracy); fi\n"
        "  say trace $1 $2\n"
        "fi\n"
        "finish\n"
        ") > out.fifo 2> err.fifo 3>&2 < /dev/null &\n"
        "echo $! > supervisor.pid\n"
        "wait\n"
        /* Still on the channel that started the run: the host's verdict
         * on the folder, with no round trip of its own ("clean" once it has
         * the trace, else "keep"; a host gone away gives EOF: keep). */
        "printf '%%s await\\n' \"$T\" >&2\n"
        "read -r verdict || verdict=keep\n"
        "if [ \"$verdict\" = clean ]; then cd / && rm -rf \"$D\" && printf '%%s cleaned\\n' \"$T\" "
        ">&2; fi\n",
        HEARTBEAT_CS, FAST_LOOKS, PROGRAM_GRACE_CS, PROGRAM_GRACE_CS + KILL_AFTER_CS,
        CAPTURE_GRACE_CS, KILL_AFTER_CS, 2 * KILL_AFTER_CS, HEARTBEAT_CS, FAST_LOOKS,
        SMALL_TRACE_BYTES);
}

void btd_follower_script(struct btd_buf *cmd, const char *dir, uint64_t out_bytes,
                         uint64_t err_bytes)
{
    btd_buf_puts(cmd, "cd ");
    btd_quote_append(cmd, dir);
    /* busybox tail -f looks once a second: after `finished` appears, two
     * looks more bring the last bytes before the tails are stopped. */
    /* 125: the folder is gone, and the run with it (a reboot emptied
     * the board's /tmp) */
    btd_buf_printf(cmd,
                   " 2>/dev/null || exit 125\n"
                   "tail -c +%llu -f out.log & a=$!\n"
                   "tail -c +%llu -f err.log >&2 & b=$!\n"
                   "p=$(cat supervisor.pid 2>/dev/null)\n"
                   "while [ ! -e finished ] && [ -n \"$p\" ] && [ -d /proc/$p ]; do sleep 1; done\n"
                   "sleep 2\n"
                   "kill $a $b 2>/dev/null\n",
                   (unsigned long long)out_bytes + 1, (unsigned long long)err_bytes + 1);
}
