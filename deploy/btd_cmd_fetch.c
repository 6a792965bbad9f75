/* `boardtrace fetch`: pull a trace an interrupted run left on the board,
 * continuing a partial download (FILE.part) where it stopped. */
#define _GNU_SOURCE
#include "btd_msg.h"
#include "btd_ops.h"
#include "btd_quote.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The trace to fetch: REMOTE itself, REMOTE/trace.tracy for a run's folder,
 * or the newest run folder's trace under the base folder. */
static int resolve_remote(struct btd_deploy *d, char *out, size_t outlen)
{
    const struct btd_options *o = d->o;
    struct btd_buf cmd = {0}, res = {0}, errout = {0};
    if (o->remote_path) {
        btd_buf_puts(&cmd, "r=");
        btd_quote_append(&cmd, o->remote_path);
        btd_buf_puts(&cmd, "; if [ -d \"$r\" ]; then r=$r/trace.tracy; fi; "
                           "[ -f \"$r\" ] && printf '%s\\n' \"$r\"");
    } else {
        btd_buf_puts(&cmd, "base=");
        if (o->remote_dir)
            btd_quote_append(&cmd, o->remote_dir);
        else
            btd_buf_puts(&cmd, "${TMPDIR:-/tmp}");
        btd_buf_puts(&cmd, "; ls -dt \"$base\"/boardtrace.*/trace.tracy 2>/dev/null | head -n 1");
    }
    char err[600];
    int rc = btd_ssh_exec(&d->conn, btd_buf_str(&cmd), NULL, 0, &res, &errout, 60, err, sizeof err);
    int status = BTD_EXIT_OK;
    size_t n = res.len;
    while (n && res.data[n - 1] == '\n')
        n--;
    if (rc < 0) {
        btd_error("%s", err);
        status = BTD_EXIT_PULL;
    } else if (n == 0 || n >= outlen) {
        if (o->remote_path)
            btd_error("%s: no trace there on %s (expected a trace file or a run's folder "
                      "holding trace.tracy)",
                      o->remote_path, d->conn.where);
        else
            btd_error("no trace left by a run on %s under %s/boardtrace.*/", d->conn.where,
                      o->remote_dir ? o->remote_dir : "${TMPDIR:-/tmp}");
        status = BTD_EXIT_PULL;
    } else {
        memcpy(out, res.data, n);
        out[n] = '\0';
    }
    btd_buf_free(&cmd);
    btd_buf_free(&res);
    btd_buf_free(&errout);
    return status;
}

int btd_cmd_fetch(const struct btd_options *o)
{
    struct btd_deploy d = {.o = o, .t_start = btd_now()};
    btd_install_signals();
    int status = btd_deploy_connect(&d);
    char remote[1200];
    if (status == BTD_EXIT_OK)
        status = resolve_remote(&d, remote, sizeof remote);
    if (status == BTD_EXIT_OK) {
        const char *base = strrchr(remote, '/');
        const char *out = o->output ? o->output : base ? base + 1 : remote;
        struct stat st;
        if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
            btd_error("-o %s: expected a file name for the trace, found a folder", out);
            btd_conn_close(&d.conn);
            return BTD_EXIT_USAGE;
        }
        uint64_t size = 0;
        char sha[65];
        status = btd_pull(&d.conn, &d.xo, remote, out, true, BTD_SIZE_UNKNOWN, &size, sha);
        if (status == BTD_EXIT_OK) {
            char s[32];
            btd_format_size((double)size, s, sizeof s);
            printf("fetched %s:%s -> %s (%s, %" PRIu64 " bytes, SHA-256 %s verified)\n",
                   d.conn.where, remote, out, s, size, sha);
        }
    }
    btd_conn_close(&d.conn);
    return status;
}
