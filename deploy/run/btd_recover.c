/* Recovering a trace from the capture's journal on the board (see
 * btd_recover.h). */
#define _GNU_SOURCE
#include "btd_recover.h"

#include "btd_msg.h"
#include "btd_quote.h"

#include <stdio.h>

int btd_recover_kept(struct btd_conn *c, const char *dir, const char *capture_name)
{
    struct btd_buf cmd = {0}, out = {0};
    btd_buf_puts(&cmd, "cd ");
    btd_quote_append(&cmd, dir);
    btd_buf_puts(&cmd, " && [ -s trace.tracy.journal ] || exit 0\nprintf '%s\\n' ");
    btd_quote_append(&cmd, capture_name);
    btd_buf_puts(&cmd, " > capture.name && echo journal\n");
    char err[600];
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &out, NULL, 60, err, sizeof err);
    int kept = rc == 0 ? btd_buf_str(&out)[0] == 'j' : -1;
    if (rc != 0)
        btd_warn("cannot look for the capture's journal in %s: %s", dir,
                 rc < 0 ? err : "the command failed");
    btd_buf_free(&cmd);
    btd_buf_free(&out);
    return kept;
}

int btd_recover_trace(struct btd_conn *c, const char *dir)
{
    struct btd_buf cmd = {0}, out = {0}, errout = {0};
    btd_buf_puts(&cmd, "cd ");
    btd_quote_append(&cmd, dir);
    /* 124: nothing to recover; 123: no capture recorded for it */
    btd_buf_puts(&cmd, " || exit 125\n[ -f trace.tracy.journal ] || exit 124\n"
                       "c=$(cat capture.name 2>/dev/null)\n[ -n \"$c\" ] && [ -x \"./$c\" ] || "
                       "exit 123\n./\"$c\" --recover trace.tracy.journal -o trace.tracy -f\n");
    char err[600];
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &out, &errout, 600, err, sizeof err);
    int status = BTD_EXIT_OK;
    if (rc < 0) {
        btd_error("recovering the trace in %s: %s", dir, err);
        status = BTD_EXIT_PULL;
    } else if (rc == 125 || rc == 124) {
        btd_error("fetch --recover: %s on %s %s", dir, c->where,
                  rc == 125 ? "is no folder" : "holds no trace.tracy.journal to recover from");
        status = BTD_EXIT_PULL;
    } else if (rc == 123) {
        btd_error("fetch --recover: %s on %s does not name the capture that wrote its journal "
                  "(capture.name)",
                  dir, c->where);
        status = BTD_EXIT_PULL;
    } else if (rc != 0) {
        btd_error("the capture's --recover in %s on %s failed with status %d (the journal stays "
                  "there; free space on the board and try again):\n%s%s",
                  dir, c->where, rc, btd_buf_str(&out), btd_buf_str(&errout));
        status = BTD_EXIT_CAPTURE;
    } else {
        btd_note("rebuilt %s/trace.tracy from the capture's journal", dir);
    }
    btd_buf_free(&cmd);
    btd_buf_free(&out);
    btd_buf_free(&errout);
    return status;
}
