/* Board probe (see btd_board.h): one shell script for busybox sh whose
 * "key value" lines are parsed here, so a slow link costs one round trip. */
#define _GNU_SOURCE
#include "btd_board.h"

#include "btd_elf.h"
#include "btd_quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every process costs on a board (under qemu user mode some 10 ms each), so
 * the script starts few: uname, mktemp, the exec test (chmod and the script
 * itself), df, sed and readlink; the rest are shell builtins. The test
 * script is left for the supervisor's first rm. */
static const char probe_script[] =
    "u=$(uname -snrvm)\n"
    "printf 'arch %s\\nuname %s\\n' \"${u##* }\" \"$u\"\n"
    "where=$base; made=\n"
    "if [ \"$make\" = 1 ]; then\n"
    "  if [ ! -d \"$base\" ]; then\n"
    "    printf 'direrror there is no folder %s on the board\\n' \"$base\"\n"
    "  elif ! d=$(umask 077 && mktemp -d \"$base/boardtrace.${tag}XXXXXX\" 2>&1); then\n"
    "    printf 'direrror cannot create a folder in %s: %s\\n' \"$base\" \"$(echo $d)\"\n"
    "  else\n"
    "    printf 'dir %s\\n' \"$d\" && where=$d && made=$d\n"
    "  fi\n"
    "fi\n"
    "df -Pk \"$where\" 2>/dev/null | { l=; while IFS= read -r x; do l=$x; done; printf 'df %s\\n' "
    "\"$l\"; }\n"
    "if [ -n \"$made\" ]; then\n"
    "  printf '#!/bin/sh\\nexit 0\\n' > \"$made/.exec\" && chmod 700 \"$made/.exec\" &&\n"
    "    if \"$made/.exec\" 2>/dev/null; then echo 'exec 1'; else echo 'exec 0'; fi\n"
    "fi\n"
    "sed -n 's/^ *[0-9]*: [0-9A-F]*:\\([0-9A-F]\\{4\\}\\) [0-9A-F]*:\\([0-9A-F]\\{4\\}\\) .*/port "
    "\\1 \\2/p' "
    "/proc/net/tcp /proc/net/tcp6 2>/dev/null\n"
    "if [ -r /proc/self/maps ]; then echo 'maps 1'; else echo 'maps 0'; fi\n"
    "if [ -n \"$(readlink /proc/self/exe 2>/dev/null)\" ]; then echo 'exe 1'; else echo 'exe 0'; "
    "fi\n"
    /* Not the shell's read: it reads a byte at a time, and a sysctl file
     * answers a read past its start with end of file ("-1" read as "-"). */
    "grep -H . /proc/sys/net/ipv4/ip_local_port_range /proc/sys/kernel/perf_event_paranoid "
    "2>/dev/null\n"
    /* The board's own C library: the dynamic loader of its architecture (a
     * glob, no process), and with one, glibc's version. */
    "case ${u##* } in\n"
    "riscv64) g='/lib/ld-linux-riscv64-*.so.1 /lib/ld-musl-riscv64.so.1' ;;\n"
    "aarch64) g='/lib/ld-linux-aarch64.so.1 /lib/ld-musl-aarch64.so.1' ;;\n"
    "x86_64) g='/lib64/ld-linux-x86-64.so.2 /lib/ld-musl-x86_64.so.1' ;;\n"
    "arm*) g='/lib/ld-linux-armhf.so.3 /lib/ld-linux.so.3 /lib/ld-musl-armhf.so.1' ;;\n"
    "i?86) g='/lib/ld-linux.so.2 /lib/ld-musl-i386.so.1' ;;\n"
    "*) g= ;;\n"
    "esac\n"
    "for l in $g; do\n"
    "  if [ -e \"$l\" ]; then\n"
    "    printf 'loader %s\n' \"$l\"; getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/^/libc /'\n"
    "    break\n"
    "  fi\n"
    "done\n"
    /* Its Python for `run --python`: found on PATH by the shell, its version
     * from the file python3 leads to (python3.13), so no interpreter starts. */
    "if p=$(command -v python3 2>/dev/null); then\n"
    "  printf 'python %s %s\\n' \"$(readlink -f \"$p\" 2>/dev/null || echo \"$p\")\" \"$p\"\n"
    "fi\n";

/* "REAL PATH": the interpreter's real file (python3.13) and how PATH named
 * it; X.Y from the real file's name, "" when it has none. */
static void board_python(struct btd_board *b, const char *val)
{
    const char *sp = strchr(val, ' ');
    size_t real_len = sp ? (size_t)(sp - val) : strlen(val);
    snprintf(b->python, sizeof b->python, "%s", sp ? sp + 1 : val);
    snprintf(b->python_real, sizeof b->python_real, "%.*s", (int)real_len, val);
    b->python_version[0] = '\0';
    const char *base = strrchr(b->python_real, '/');
    base = base ? base + 1 : b->python_real;
    unsigned major, minor;
    char tail;
    if (sscanf(base, "python%u.%u%c", &major, &minor, &tail) == 2)
        snprintf(b->python_version, sizeof b->python_version, "%u.%u", major, minor);
}

void btd_board_parse(const char *text, struct btd_board *b)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[2048];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (nl ? 1 : 0);
        /* grep -H's "FILE:VALUE" lines, as KEY VALUE */
        static const struct {
            const char *file, *key;
        } sysctls[] = {{"/proc/sys/net/ipv4/ip_local_port_range:", "ephemeral "},
                       {"/proc/sys/kernel/perf_event_paranoid:", "paranoid "}};
        for (size_t i = 0; i < sizeof sysctls / sizeof sysctls[0]; i++) {
            size_t n = strlen(sysctls[i].file), k = strlen(sysctls[i].key);
            if (strncmp(line, sysctls[i].file, n) == 0 && k <= n) {
                memmove(line + k, line + n, strlen(line + n) + 1);
                memcpy(line, sysctls[i].key, k);
            }
        }
        char *sp = strchr(line, ' ');
        const char *val = sp ? sp + 1 : "";
        if (sp)
            *sp = '\0';
        if (strcmp(line, "arch") == 0)
            snprintf(b->uname_m, sizeof b->uname_m, "%s", val);
        else if (strcmp(line, "uname") == 0)
            snprintf(b->uname, sizeof b->uname, "%s", val);
        else if (strcmp(line, "dir") == 0)
            snprintf(b->dir, sizeof b->dir, "%s", val);
        else if (strcmp(line, "direrror") == 0)
            snprintf(b->dir_error, sizeof b->dir_error, "%s", val);
        else if (strcmp(line, "exec") == 0)
            b->exec_ok = atoi(val);
        else if (strcmp(line, "maps") == 0)
            b->maps_readable = atoi(val) == 1;
        else if (strcmp(line, "exe") == 0)
            b->exe_link = atoi(val) == 1;
        else if (strcmp(line, "loader") == 0)
            snprintf(b->loader, sizeof b->loader, "%s", val);
        else if (strcmp(line, "libc") == 0)
            snprintf(b->libc, sizeof b->libc, "%s", val);
        else if (strcmp(line, "python") == 0)
            board_python(b, val);
        else if (strcmp(line, "paranoid") == 0)
            snprintf(b->perf_paranoid, sizeof b->perf_paranoid, "%s", val);
        else if (strcmp(line, "port") == 0) {
            /* Local and remote port of a TCP socket: a port still in a
             * connection to it (TIME_WAIT) would look ready to the
             * supervisor, so neither is chosen. */
            char *end;
            long local = strtol(val, &end, 16);
            long remote = strtol(end, NULL, 16);
            if (b->nports < BTD_BOARD_MAX_PORTS)
                b->ports[b->nports++] = (int)local;
            if (remote && b->nports < BTD_BOARD_MAX_PORTS)
                b->ports[b->nports++] = (int)remote;
        } else if (strcmp(line, "ephemeral") == 0) {
            long lo = 0, hi = 0;
            if (sscanf(val, "%ld %ld", &lo, &hi) == 2 && lo >= 1 && lo <= hi && hi <= 65535) {
                b->ephemeral_lo = (int)lo;
                b->ephemeral_hi = (int)hi;
            }
        } else if (strcmp(line, "df") == 0) {
            /* POSIX df: Filesystem 1024-blocks Used Available Capacity Mounted */
            char fs[512];
            unsigned long long blocks, used, avail;
            if (sscanf(val, "%511s %llu %llu %llu", fs, &blocks, &used, &avail) == 4) {
                b->free_bytes = avail * 1024;
                b->free_known = true;
            }
        }
    }
    b->arch = btd_arch_normalize(b->uname_m);
}

/* base= and tag= for a script: base quoted, or the board's own default. */
static void base_and_tag(struct btd_buf *cmd, const char *base, const char *tag)
{
    if (base) {
        btd_buf_puts(cmd, "base=");
        btd_quote_append(cmd, base);
    } else {
        btd_buf_puts(cmd, "base=${TMPDIR:-/tmp}");
    }
    btd_buf_puts(cmd, "; tag=");
    btd_quote_append(cmd, tag ? tag : "");
}

int btd_board_probe(struct btd_conn *c, const char *base, const char *tag, bool make_dir,
                    struct btd_board *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->exec_ok = -1;
    struct btd_buf cmd = {0}, out = {0}, errout = {0};
    base_and_tag(&cmd, base, tag);
    btd_buf_printf(&cmd, "; make=%d\n%s", make_dir ? 1 : 0, probe_script);
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &out, &errout, 60, err, errlen);
    if (rc == 0) {
        btd_board_parse(btd_buf_str(&out), b);
        if (!b->uname_m[0]) {
            snprintf(err, errlen, "the board's shell gave no `uname -m` answer (stderr: %.200s)",
                     btd_buf_str(&errout));
            rc = -1;
        }
    } else if (rc > 0) {
        snprintf(err, errlen, "the probe script failed on the board (exit %d): %.300s", rc,
                 btd_buf_str(&errout));
        rc = -1;
    }
    btd_buf_free(&cmd);
    btd_buf_free(&out);
    btd_buf_free(&errout);
    return rc;
}

int btd_board_free_port(const struct btd_board *b)
{
    /* Outside the board's ephemeral range: a port the kernel may hand to any
     * outgoing connection or bind(0) could be taken by another program (or by
     * the capture's own connection attempt) between this choice and the
     * program's listen. Linux's default range is 32768-60999. */
    int lo = b->ephemeral_lo ? b->ephemeral_lo : 32768;
    int hi = b->ephemeral_hi ? b->ephemeral_hi : 60999;
    int below = lo > BTD_PORT_MIN ? lo - BTD_PORT_MIN : 0; /* MIN..lo-1 */
    int above = hi < BTD_PORT_MAX ? BTD_PORT_MAX - hi : 0; /* hi+1..MAX */
    if (below + above == 0) /* the whole range is ephemeral: no better choice */
        below = BTD_PORT_MAX + 1 - BTD_PORT_MIN;
    static unsigned calls;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned seed = (unsigned)ts.tv_sec ^ (unsigned)ts.tv_nsec ^ (unsigned)getpid() << 16 ^
                    ++calls * 2654435761u;
    int port = BTD_PORT_MIN;
    for (int tries = 0; tries < 1000; tries++) {
        int k = (int)(rand_r(&seed) % (unsigned)(below + above));
        port = k < below ? BTD_PORT_MIN + k : hi + 1 + (k - below);
        bool used = false;
        for (int i = 0; i < b->nports; i++)
            used |= b->ports[i] == port;
        if (!used)
            return port;
    }
    return port;
}

int btd_board_remove_dir(struct btd_conn *c, const char *dir, char *err, size_t errlen)
{
    struct btd_buf cmd = {0}, errout = {0};
    btd_buf_puts(&cmd, "rm -rf ");
    btd_quote_append(&cmd, dir);
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, NULL, &errout, 60, err, errlen);
    if (rc > 0)
        snprintf(err, errlen, "rm -rf %s failed on the board: %.300s", dir, btd_buf_str(&errout));
    btd_buf_free(&cmd);
    btd_buf_free(&errout);
    return rc == 0 ? 0 : -1;
}

int btd_board_remove_tagged(struct btd_conn *c, const char *base, const char *tag, char *err,
                            size_t errlen)
{
    struct btd_buf cmd = {0}, out = {0};
    base_and_tag(&cmd, base, tag);
    btd_buf_puts(&cmd, "\n[ -n \"$tag\" ] || exit 1\n"
                       "for d in \"$base\"/boardtrace.\"$tag\"??????; do\n"
                       "  [ -d \"$d\" ] && [ -O \"$d\" ] && [ ! -L \"$d\" ] || continue\n"
                       "  rm -rf \"$d\" && printf '%s\\n' \"$d\"\n"
                       "done\nexit 0\n");
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &out, NULL, 60, err, errlen);
    if (rc > 0)
        snprintf(err, errlen, "no tag for the folder to remove");
    int removed = 0;
    for (size_t i = 0; rc == 0 && i < out.len; i++)
        removed += out.data[i] == '\n';
    btd_buf_free(&cmd);
    btd_buf_free(&out);
    return rc == 0 ? removed : -1;
}

bool btd_board_name_reserved(const char *name)
{
    /* The supervisor's and the capture's own files in the folder
     * (btd_supervisor.c, btd_recover.c). */
    static const char *const reserved[] = {"trace.tracy",    "trace.tracy.journal",
                                           "cap.fifo",       "stop",
                                           "out.fifo",       "err.fifo",
                                           "out.log",        "err.log",
                                           "supervisor.pid", "finished",
                                           "program.name",   "program.host",
                                           "capture.name",   "lib",
                                           ".exec"};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(name, reserved[i]) == 0)
            return true;
    /* run --python's package files and the folder they are laid out in. */
    return strncmp(name, "bt-python", strlen("bt-python")) == 0;
}
