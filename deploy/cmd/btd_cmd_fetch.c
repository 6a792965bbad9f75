/* `boardtrace fetch`: pull the trace of a run left on the board (detached,
 * interrupted, or whose host lost its connection), continuing a partial
 * download (FILE.part) where it stopped; the run's folder goes once the
 * trace is verified here. */
#define _GNU_SOURCE
#include "btd_claim.h"
#include "btd_cmd.h"
#include "btd_deploy.h"
#include "btd_escape.h"
#include "btd_interrupt.h"
#include "btd_json.h"
#include "btd_msg.h"
#include "btd_quote.h"
#include "btd_recover.h"
#include "btd_runs.h"
#include "btd_sha256.h"
#include "btd_symbolize.h"

#include <boardtrace/config.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What to fetch: a run's folder (REMOTE itself, or the newest run with a
 * trace that is not still going on) or a bare trace file. */
struct target {
    char trace[1200];
    bool is_run;
    struct btd_run_info run;
};

static int find_run(struct btd_deploy *d, const char *only, struct target *t)
{
    const struct btd_options *o = d->o;
    struct btd_runs runs;
    char err[600];
    if (btd_runs_list(&d->conn, o->remote_dir, only, &runs, err, sizeof err) != 0) {
        btd_error("%s: %s", d->conn.where, err);
        return BTD_EXIT_PULL;
    }
    int pick = -1, running = -1;
    for (int i = 0; i < runs.count && pick < 0; i++) {
        /* A run still going on is never stopped without --stop, be it the
         * newest or the one named. */
        if (runs.runs[i].state == BTD_RUN_RUNNING && !o->stop) {
            if (running < 0)
                running = i;
            continue;
        }
        if (runs.runs[i].has_trace || runs.runs[i].state == BTD_RUN_RUNNING)
            pick = i;
    }
    int status = BTD_EXIT_OK;
    if (pick >= 0) {
        t->is_run = true;
        t->run = runs.runs[pick];
        snprintf(t->trace, sizeof t->trace, "%s/trace.tracy", t->run.dir);
    } else if (running >= 0) {
        btd_error("the run in %s on %s is still going on; fetch it once it has finished "
                  "(boardtrace status shows it), or add --stop to stop its program now",
                  runs.runs[running].dir, d->conn.where);
        status = BTD_EXIT_PULL;
    } else if (!only) {
        btd_error("no trace left by a run on %s under %s/boardtrace.*/", d->conn.where,
                  o->remote_dir ? o->remote_dir : "${TMPDIR:-/tmp}");
        status = BTD_EXIT_PULL;
    } else {
        status = -1; /* not a run's folder */
    }
    btd_runs_free(&runs);
    return status;
}

/* REMOTE as a plain trace file. */
static int find_file(struct btd_deploy *d, struct target *t)
{
    struct btd_buf cmd = {0}, res = {0};
    btd_buf_puts(&cmd, "r=");
    btd_quote_append(&cmd, d->o->remote_path);
    btd_buf_puts(&cmd, "; [ -f \"$r\" ] && printf '%s\\n' \"$r\"");
    char err[600];
    int rc = btd_ssh_exec(&d->conn, btd_buf_str(&cmd), NULL, 0, &res, NULL, 60, err, sizeof err);
    size_t n = res.len;
    while (n && res.data[n - 1] == '\n')
        n--;
    int status = BTD_EXIT_OK;
    if (rc < 0) {
        btd_error("%s", err);
        status = BTD_EXIT_PULL;
    } else if (n == 0 || n >= sizeof t->trace) {
        btd_error("%s: no trace there on %s (expected a trace file or a run's folder holding "
                  "trace.tracy)",
                  d->o->remote_path, d->conn.where);
        status = BTD_EXIT_PULL;
    } else {
        memcpy(t->trace, res.data, n);
        t->trace[n] = '\0';
    }
    btd_buf_free(&cmd);
    btd_buf_free(&res);
    return status;
}

/* --stop: asks the run's supervisor to stop its program, then waits (up to
 * the capture's own grace) until the run has finished. */
static int stop_run(struct btd_deploy *d, struct target *t)
{
    struct btd_buf cmd = {0};
    btd_buf_puts(&cmd, "touch ");
    btd_quote_append(&cmd, t->run.dir);
    btd_buf_puts(&cmd, "/stop");
    char err[600];
    int rc = btd_ssh_exec(&d->conn, btd_buf_str(&cmd), NULL, 0, NULL, NULL, 30, err, sizeof err);
    btd_buf_free(&cmd);
    if (rc != 0) {
        btd_error("cannot ask the run in %s to stop: %s", t->run.dir,
                  rc < 0 ? err : "touch failed");
        return BTD_EXIT_PULL;
    }
    btd_note("asked the run in %s to stop its program; waiting for its trace", t->run.dir);
    for (double end = btd_now() + 180; btd_now() < end && btd_interrupted == 0;) {
        sleep(1);
        struct btd_runs runs;
        if (btd_runs_list(&d->conn, NULL, t->run.dir, &runs, err, sizeof err) != 0) {
            btd_error("%s: %s", d->conn.where, err);
            return BTD_EXIT_PULL;
        }
        bool done = runs.count == 1 && runs.runs[0].state != BTD_RUN_RUNNING;
        if (done)
            t->run = runs.runs[0];
        btd_runs_free(&runs);
        if (!done)
            continue;
        if (t->run.has_trace)
            return BTD_EXIT_OK;
        btd_error("the run in %s left no trace", t->run.dir);
        return BTD_EXIT_CAPTURE;
    }
    btd_error("the run in %s did not finish within 3 minutes of being asked to stop", t->run.dir);
    return btd_interrupted ? BTD_EXIT_INTERRUPTED : BTD_EXIT_PULL;
}

/* What run does after its pull, for a run fetched instead: a program sent
 * without its symbols has its frames named here from the file the run was
 * given (program.host), when this host has it. summary gets symbolize's
 * line, "" when nothing was named. */
static void name_frames(const struct target *t, const char *out, char *summary, size_t len)
{
    summary[0] = '\0';
    if (!t->is_run || !t->run.program_host[0])
        return;
    if (access(t->run.program_host, R_OK) != 0) {
        btd_warn("the run's program %s is not here: its frames stay unnamed; name them with "
                 "boardtrace-report symbolize %s PROGRAM",
                 t->run.program_host, out);
        return;
    }
    if (btd_symbolize_trace(out, t->run.program_host, summary, len) != 0 ||
        strstr(summary, ": 0 frames,"))
        summary[0] = '\0';
    else
        btd_note("%s", summary);
}

/* OUT.json, as run writes it at its end: what was fetched, from where, and
 * what was done to it. An existing file that is not a boardtrace record is
 * left alone; a run's own record (one whose run was lost) is replaced. */
static int write_record(const struct btd_deploy *d, const struct target *t, const char *out,
                        uint64_t size, const char *pulled_sha, const char *summary)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s.json", out);
    FILE *old = fopen(path, "r");
    if (old) {
        char head[64] = "";
        size_t n = fread(head, 1, sizeof head - 1, old);
        head[n] = '\0';
        fclose(old);
        if (!strstr(head, "\"record\": \"boardtrace")) {
            btd_warn("%s is not a boardtrace record: left as it is, no record written", path);
            return BTD_EXIT_OK;
        }
    }
    char sha[65];
    unsigned long long final_size = size;
    if (btd_sha256_file(out, sha, &final_size) != 0)
        snprintf(sha, sizeof sha, "%s", pulled_sha);
    struct btd_json j = {0};
    btd_json_begin_object(&j, NULL);
    btd_json_string(&j, "record", "boardtrace fetch");
    btd_json_begin_object(&j, "boardtrace");
    btd_json_string(&j, "version", BT_VERSION_STRING);
    btd_json_end_object(&j);
    btd_json_begin_object(&j, "board");
    btd_json_string(&j, "target", d->conn.where);
    btd_json_string(&j, "host_key", d->conn.hostkey);
    btd_json_end_object(&j);
    btd_json_string(&j, "run", t->is_run ? t->run.dir : NULL);
    btd_json_string(&j, "remote", t->trace);
    btd_json_string(&j, "program", t->is_run && t->run.program[0] ? t->run.program : NULL);
    btd_json_string(&j, "program_host",
                    t->is_run && t->run.program_host[0] ? t->run.program_host : NULL);
    btd_json_begin_object(&j, "trace");
    btd_json_string(&j, "path", out);
    btd_json_int(&j, "size", (int64_t)final_size);
    btd_json_string(&j, "sha256", sha);
    btd_json_string(&j, "pulled_sha256", pulled_sha);
    btd_json_end_object(&j);
    btd_json_string(&j, "symbolized", summary[0] ? summary : NULL);
    btd_json_int(&j, "exit_status", BTD_EXIT_OK);
    btd_json_end_object(&j);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(j.out.data, 1, j.out.len, f) == j.out.len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok) {
        btd_error("cannot write the record %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    btd_buf_free(&j.out);
    return ok ? BTD_EXIT_OK : BTD_EXIT_OUTPUT;
}

int btd_cmd_fetch(const struct btd_options *o)
{
    struct btd_deploy d = {.o = o, .t_start = btd_now()};
    btd_install_signals();
    int status = btd_deploy_connect(&d);
    struct target t = {0};
    if (status == BTD_EXIT_OK && o->recover)
        status = btd_recover_trace(&d.conn, o->remote_path);
    if (status == BTD_EXIT_OK) {
        status = find_run(&d, o->remote_path, &t);
        if (status == -1)
            status = find_file(&d, &t);
    }
    if (status == BTD_EXIT_OK && t.is_run && t.run.state == BTD_RUN_RUNNING)
        status = stop_run(&d, &t);
    if (status == BTD_EXIT_OK) {
        const char *base = strrchr(t.trace, '/');
        const char *out = o->output ? o->output : base ? base + 1 : t.trace;
        struct stat st;
        if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
            btd_error("-o %s: expected a file name for the trace, found a folder", out);
            btd_conn_close(&d.conn);
            return BTD_EXIT_USAGE;
        }
        /* OUT.part is resumed, so only one command at a time may write it. */
        struct btd_claim claim;
        status = btd_claim_output(&claim, out, false, o->force, NULL);
        uint64_t size = 0;
        char sha[65];
        btd_interrupt_step("pull", true);
        if (status == BTD_EXIT_OK)
            status =
                btd_pull(&d.conn, &d.xo, t.trace, out, true, BTD_SIZE_UNKNOWN, NULL, &size, sha);
        if (status != BTD_EXIT_OK && btd_interrupt_gave_up())
            status = BTD_EXIT_INTERRUPTED;
        btd_claim_release(&claim);
        if (status == BTD_EXIT_OK) {
            char s[32];
            btd_format_size((double)size, s, sizeof s);
            /* The remote path, and an OUT named after it, are the board's. */
            char trace_text[4 * sizeof t.trace], out_text[4 * sizeof t.trace];
            printf("fetched %s:%s -> %s (%s, %" PRIu64 " bytes, SHA-256 %s verified)\n",
                   d.conn.where, btd_escape_field(t.trace, trace_text, sizeof trace_text),
                   btd_escape_field(out, out_text, sizeof out_text), s, size, sha);
            char summary[300];
            name_frames(&t, out, summary, sizeof summary);
            status = write_record(&d, &t, out, size, sha, summary);
            /* The run's folder has served its purpose once its trace is
             * verified here. */
            char err[600];
            if (t.is_run && o->keep)
                btd_note("kept %s on %s", t.run.dir, d.conn.where);
            else if (t.is_run && btd_board_remove_dir(&d.conn, t.run.dir, err, sizeof err) != 0)
                btd_warn("%s", err);
            else if (t.is_run)
                btd_note("removed %s from %s", t.run.dir, d.conn.where);
        }
    }
    btd_conn_close(&d.conn);
    return status;
}
