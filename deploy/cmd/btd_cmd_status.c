/* `boardtrace status`: the runs on the board, newest first, with what to do
 * next for each state. */
#define _GNU_SOURCE
#include "btd_cmd.h"
#include "btd_deploy.h"
#include "btd_escape.h"
#include "btd_msg.h"
#include "btd_runs.h"

#include <stdio.h>
#include <string.h>

int btd_cmd_status(const struct btd_options *o)
{
    struct btd_deploy d = {.o = o, .t_start = btd_now()};
    int status = btd_deploy_connect(&d);
    if (status != BTD_EXIT_OK)
        return status;
    struct btd_runs runs;
    char err[600];
    if (btd_runs_list(&d.conn, o->remote_dir, NULL, &runs, err, sizeof err) != 0) {
        btd_error("%s: %s", d.conn.where, err);
        btd_conn_close(&d.conn);
        return BTD_EXIT_BOARD;
    }
    if (!runs.count) {
        btd_escape_printf("no runs on %s under %s\n", d.conn.where,
                          o->remote_dir ? o->remote_dir : "${TMPDIR:-/tmp}");
    } else {
        /* The folder column as wide as its longest path, so the columns
         * after it stay aligned. */
        char dir[4 * sizeof runs.runs[0].dir];
        int w = 36;
        for (int i = 0; i < runs.count; i++)
            if ((int)strlen(btd_escape_field(runs.runs[i].dir, dir, sizeof dir)) > w)
                w = (int)strlen(dir);
        printf("%-*s %-9s %-11s %-19s %s\n", w, "RUN FOLDER", "STATE", "TRACE", "STARTED",
               "PROGRAM");
        for (int i = 0; i < runs.count; i++) {
            const struct btd_run_info *r = &runs.runs[i];
            char size[32] = "-", started[4 * sizeof r->started], program[4 * sizeof r->program];
            if (r->has_trace)
                btd_format_size((double)r->trace_size, size, sizeof size);
            /* Each field is the board's: escaped on its own, so a newline in
             * one cannot start a row of its own. */
            printf("%-*s %-9s %-11s %-19s %s\n", w, btd_escape_field(r->dir, dir, sizeof dir),
                   btd_run_state_name(r->state), size,
                   r->started[0] ? btd_escape_field(r->started, started, sizeof started) : "-",
                   r->program[0] ? btd_escape_field(r->program, program, sizeof program) : "-");
        }
        printf("\nfetch a run's trace (its folder is removed once the trace is here): "
               "boardtrace fetch --host %s FOLDER\n"
               "a run still going on: add --stop to stop its program first\n",
               o->host);
    }
    btd_runs_free(&runs);
    btd_conn_close(&d.conn);
    return BTD_EXIT_OK;
}
