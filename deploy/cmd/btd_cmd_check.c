/* `boardtrace check`: the preflight of run alone, as a report a person reads:
 * reachability, host key, authentication, architecture, transfer, disk and
 * what tracing modes 3-4 need on the board. */
#define _GNU_SOURCE
#include "btd_cmd.h"
#include "btd_deploy.h"
#include "btd_escape.h"
#include "btd_msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void line(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  %-22s ", what);
    btd_escape_vfprintf(stdout, fmt, ap); /* board text: uname, paths, errors */
    printf("\n");
    va_end(ap);
}

int btd_cmd_check(const struct btd_options *o)
{
    struct btd_deploy d = {.o = o};
    printf("boardtrace check %s\n", o->host);
    fflush(stdout);
    int status = btd_deploy_connect(&d);
    if (status != BTD_EXIT_OK) {
        printf("  FAILED at step: %s (exit status %d)\n", btd_exit_step(status), status);
        btd_conn_close(&d.conn);
        return status;
    }
    line("reachable", "yes, %s", d.conn.where);
    line("host key", "%s, matches known_hosts", d.conn.hostkey);
    line("authentication", "ok (%s)", d.conn.auth_method);
    char err[600];
    struct btd_board *b = &d.board;
    if (btd_board_probe(&d.conn, o->remote_dir, NULL, true, b, err, sizeof err) != 0) {
        btd_error("preflight on %s: %s", d.conn.where, err);
        printf("  FAILED at step: %s (exit status %d)\n", btd_exit_step(BTD_EXIT_BOARD),
               BTD_EXIT_BOARD);
        btd_conn_close(&d.conn);
        return BTD_EXIT_BOARD;
    }
    char arch[700];
    snprintf(arch, sizeof arch, "%s (%s)", b->uname_m, b->uname);
    line("architecture", "%s", arch);
    bool sftp = !o->no_sftp && btd_conn_sftp(&d.conn);
    line("transfer", "%s",
         sftp ? "SFTP" : "no SFTP: streaming over exec channels (cat), verified the same way");
    if (b->dir[0]) {
        char dir[1200];
        snprintf(dir, sizeof dir, "%s (mode 0700, %s)", b->dir,
                 b->exec_ok == 1   ? "programs run there"
                 : b->exec_ok == 0 ? "NOT executable: noexec mount"
                                   : "exec not tested");
        line("temporary folder", "%s", dir);
    } else {
        line("temporary folder", "FAILED: %s", b->dir_error);
        status = BTD_EXIT_BOARD;
    }
    if (b->free_known) {
        char s[32];
        btd_format_size((double)b->free_bytes, s, sizeof s);
        line("free disk", "%s", s);
    } else {
        line("free disk", "%s", "unknown (df gave no answer)");
    }
    /* Callstacks (modes 3-4) are unwound in the program and named from its own
     * symbol table, which the runtime finds through /proc/self/exe. */
    line("tracing modes 3-4", "/proc/self/exe %s; /proc/self/maps %s; perf_event_paranoid %s",
         b->exe_link ? "resolves (callstacks can be named)" : "does NOT resolve",
         b->maps_readable ? "readable" : "NOT readable",
         b->perf_paranoid[0] ? b->perf_paranoid : "unknown");
    if (!b->exe_link)
        status = status ? status : BTD_EXIT_BOARD;
    if (b->exec_ok == 0)
        status = BTD_EXIT_BOARD;
    /* Dynamic programs run on the board's own libc when it has one; else
     * run brings the loader and libraries from the toolchain's sysroot. */
    if (b->loader[0])
        line("C library", "%s, loader %s: dynamic programs use the board's own",
             b->libc[0] ? b->libc : "unknown version", b->loader);
    else
        line("C library", "%s",
             "none (no dynamic loader): static programs run as they are, dynamic ones with "
             "the loader and libraries run brings");
    /* Python programs (`run --python`) run on the board's own python3. */
    if (b->python[0] && b->python_version[0])
        line("Python", "%s (%s): `run --python` needs the extension built for Python %s",
             b->python_version, b->python_real, b->python_version);
    else if (b->python[0])
        line("Python", "%s (%s): its version is not in its file name", b->python, b->python_real);
    else
        line("Python", "%s", "none (no python3 on PATH): `run --python` cannot run here");
    char ports[64];
    snprintf(ports, sizeof ports, "%d TCP ports in use (local and remote ends)", b->nports);
    line("network", "%s", ports);
    btd_deploy_cleanup(&d, false);
    printf("  %s\n", status == BTD_EXIT_OK ? "ready for boardtrace run" : "NOT ready");
    btd_conn_close(&d.conn);
    return status;
}
