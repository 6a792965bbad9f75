/* `boardtrace run`: preflight, upload, capture on the board, pull, record,
 * summary. The exit status names the first step that failed. */
#define _GNU_SOURCE
#include "btd_claim.h"
#include "btd_cmd.h"
#include "btd_deploy.h"
#include "btd_escape.h"
#include "btd_interrupt.h"
#include "btd_json.h"
#include "btd_msg.h"
#include "btd_python.h"
#include "btd_quote.h"
#include "btd_recover.h"
#include "btd_report.h"
#include "btd_session.h"
#include "btd_sha256.h"
#include "btd_status.h"
#include "btd_symbolize.h"

#include <boardtrace/config.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct run_result {
    int status;
    bool pulled;
    uint64_t trace_size;
    char trace_sha[65];
    const char *output;
    char record_path[4096];
    char html_path[4096]; /* --html: OUT.html */
    bool html_written;
    char symbolized[300]; /* boardtrace-report symbolize's summary, "" none */
    char pulled_sha[65];  /* before symbolizing, as verified against the board */
};

static void binary_json(struct btd_json *j, const char *key, const struct btd_binary *b)
{
    btd_json_begin_object(j, key);
    btd_json_string(j, "path", b->path);
    btd_json_string(j, "arch", b->arch);
    btd_json_int(j, "size", (int64_t)b->size);
    btd_json_int(j, "uploaded_size", (int64_t)(b->upload_size ? b->upload_size : b->size));
    btd_json_bool(j, "uploaded_without_symbols", b->upload_size && b->upload_size < b->size);
    btd_json_string(j, "sha256", b->sha[0] ? b->sha : NULL);
    btd_json_string(j, "toolchain", b->toolchain[0] ? b->toolchain : NULL);
    if (b->tracing_mode) {
        btd_json_string(j, "boardtrace_version", b->bt_version);
        btd_json_int(j, "tracing_mode", b->tracing_mode);
    } else {
        btd_json_null(j, "boardtrace_version");
        btd_json_null(j, "tracing_mode");
    }
    btd_json_end_object(j);
}

/* Every "Key: value" line the capture printed, for the record. */
static void capture_stats_json(struct btd_json *j, const char *log)
{
    btd_json_begin_object(j, "statistics");
    struct btd_buf seen = {0};
    for (const char *p = log; p && *p;) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        const char *line = p;
        for (const char *q = p; q < end; q++)
            if (*q == '\r')
                line = q + 1;
        const char *colon = memchr(line, ':', (size_t)(end - line));
        if (colon && colon > line && colon - line < 40 && colon + 1 < end && colon[1] == ' ') {
            char key[48], val[256];
            snprintf(key, sizeof key, "%.*s", (int)(colon - line), line);
            bool plain = strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz "
                                     "0123456789_-") == strlen(key);
            char marker[64];
            snprintf(marker, sizeof marker, "\n%s\n", key);
            if (plain && !strstr(btd_buf_str(&seen), marker) &&
                btd_capture_stat(log, key, val, sizeof val)) {
                btd_json_string(j, key, val);
                btd_buf_puts(&seen, marker);
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    btd_buf_free(&seen);
    btd_json_end_object(j);
}

static int write_record(const struct btd_deploy *d, const struct btd_session *s,
                        const struct run_result *r)
{
    const struct btd_options *o = d->o;
    struct btd_json j = {0};
    btd_json_begin_object(&j, NULL);
    btd_json_string(&j, "record", "boardtrace run");
    btd_json_begin_object(&j, "boardtrace");
    btd_json_string(&j, "version", BT_VERSION_STRING);
    btd_json_string(&j, "libssh", ssh_version(0));
    btd_json_string(&j, "compiler", BT_BUILD_COMPILER);
    btd_json_begin_object(&j, "build_options");
    btd_json_bool(&j, "ENABLE_TRACY", BT_ENABLE_TRACY);
    btd_json_bool(&j, "RUNTIME_TRACING", BT_RUNTIME_TRACING);
    btd_json_int(&j, "TRACING_MODE", BT_TRACING_MODE);
    btd_json_bool(&j, "NO_POINTER_COMPRESSION", BT_NO_POINTER_COMPRESSION);
    btd_json_int(&j, "TRACING_CALLSTACK_DEPTH", BT_CALLSTACK_DEPTH);
    btd_json_end_object(&j);
    btd_json_end_object(&j);
    btd_json_begin_object(&j, "board");
    btd_json_string(&j, "host", d->conn.where);
    btd_json_string(&j, "uname", d->board.uname[0] ? d->board.uname : NULL);
    btd_json_string(&j, "arch", d->board.uname_m[0] ? d->board.uname_m : NULL);
    btd_json_string(&j, "transfer", d->conn.sftp_state > 0 ? "sftp" : "exec");
    btd_json_string(&j, "folder", d->board.dir[0] ? d->board.dir : NULL);
    btd_json_end_object(&j);
    binary_json(&j, "program", &d->program);
    /* run --python: the program above is the extension; what ran it. */
    if (d->python) {
        btd_json_begin_object(&j, "python");
        btd_json_string(&j, "script", o->python_module ? NULL : o->program);
        btd_json_string(&j, "module", o->python_module);
        btd_json_string(&j, "interpreter", d->board.python[0] ? d->board.python_real : NULL);
        btd_json_string(&j, "version", d->board.python_version[0] ? d->board.python_version : NULL);
        btd_json_string(&j, "extension", d->python_ext[0] ? d->python_ext : NULL);
        btd_json_end_object(&j);
    }
    btd_json_begin_object(&j, "libraries");
    if (d->libs) {
        btd_json_string(&j, "sysroot", d->libs->sysroot);
        btd_json_string(&j, "loader", d->libs->interp);
        btd_json_begin_array(&j, "brought");
        for (int i = 0; i < d->libs->count; i++)
            btd_json_string(&j, NULL, d->libs->libs[i].name);
        btd_json_end_array(&j);
        btd_json_int(&j, "bytes", (int64_t)d->libs->bytes);
        btd_json_int(&j, "uploaded", d->libs->uploaded);
        btd_json_int(&j, "uploaded_bytes", (int64_t)d->libs->sent_bytes);
        btd_json_string(&j, "cache", d->libs->cache[0] ? d->libs->cache : NULL);
    }
    btd_json_end_object(&j);
    btd_json_begin_array(&j, "arguments");
    for (int i = 0; i < o->arg_count; i++)
        btd_json_string(&j, NULL, o->args[i]);
    btd_json_end_array(&j);
    btd_json_begin_object(&j, "environment");
    for (int i = 0; i < o->env_count; i++) {
        const char *eq = strchr(o->env[i], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - o->env[i]), o->env[i]);
        btd_json_string(&j, name, eq + 1);
    }
    btd_json_end_object(&j);
    btd_json_begin_object(&j, "capture");
    btd_json_string(&j, "path", d->capture.path);
    btd_json_int(&j, "size", (int64_t)d->capture.size);
    btd_json_int(&j, "uploaded_size",
                 (int64_t)(d->capture.upload_size ? d->capture.upload_size : d->capture.size));
    btd_json_string(&j, "sha256", d->capture.sha[0] ? d->capture.sha : NULL);
    btd_json_string(&j, "toolchain", d->capture.toolchain[0] ? d->capture.toolchain : NULL);
    btd_json_int(&j, "tracy_port", s->port);
    btd_json_int(&j, "seconds_limit", o->seconds);
    if (s->capture_exited)
        btd_json_int(&j, "exit_status", s->capture_exit);
    else
        btd_json_null(&j, "exit_status");
    capture_stats_json(&j, btd_buf_str(&s->capture_log));
    struct btd_capture_summary sum;
    btd_capture_summarize(btd_buf_str(&s->capture_log), &sum);
    btd_json_begin_object(&j, "summary");
    btd_json_string(&j, "events", sum.events[0] ? sum.events : NULL);
    btd_json_string(&j, "zones", sum.zones[0] ? sum.zones : NULL);
    btd_json_string(&j, "frames", sum.frames[0] ? sum.frames : NULL);
    btd_json_string(&j, "duration", sum.duration[0] ? sum.duration : NULL);
    btd_json_string(&j, "capture_time", sum.capture_time[0] ? sum.capture_time : NULL);
    btd_json_string(&j, "end", sum.end[0] ? sum.end : NULL);
    btd_json_string(&j, "tracy_protocol", sum.protocol[0] ? sum.protocol : NULL);
    btd_json_end_object(&j);
    btd_json_begin_array(&j, "output");
    for (const char *p = btd_buf_str(&s->capture_log); *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[600];
        snprintf(line, sizeof line, "%.*s", (int)(n < 599 ? n : 599), p);
        btd_json_string(&j, NULL, line);
        p += n + (nl ? 1 : 0);
    }
    btd_json_end_array(&j);
    btd_json_end_object(&j);
    btd_json_begin_object(&j, "trace");
    btd_json_string(&j, "path", r->pulled ? r->output : NULL);
    btd_json_int(&j, "size", r->pulled ? (int64_t)r->trace_size : 0);
    btd_json_string(&j, "sha256", r->pulled ? r->trace_sha : NULL);
    btd_json_string(&j, "symbolized", r->symbolized[0] ? r->symbolized : NULL);
    btd_json_string(&j, "pulled_sha256", r->pulled_sha[0] ? r->pulled_sha : NULL);
    btd_json_string(&j, "html", r->html_written ? r->html_path : NULL);
    btd_json_end_object(&j);
    if (s->program_exited)
        btd_json_int(&j, "program_exit_status", s->program_exit);
    else
        btd_json_null(&j, "program_exit_status");
    btd_json_string(&j, "program_signal",
                    s->program_exited ? btd_status_signal(s->program_exit) : NULL);
    btd_json_begin_object(&j, "seconds");
    double t0 = d->t_start;
    btd_json_double(&j, "preflight", d->t_preflight ? d->t_preflight - t0 : 0);
    btd_json_double(&j, "upload", d->t_upload ? d->t_upload - d->t_preflight : 0);
    btd_json_double(&j, "run", d->t_run ? d->t_run - d->t_upload : 0);
    btd_json_double(&j, "pull", d->t_pull ? d->t_pull - d->t_run : 0);
    btd_json_double(&j, "total", btd_now() - t0);
    btd_json_end_object(&j);
    btd_json_int(&j, "exit_status", r->status);
    btd_json_string(&j, "exit_step", btd_exit_step(r->status));
    btd_json_end_object(&j);

    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->record_path);
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(j.out.data, 1, j.out.len, f) == j.out.len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, r->record_path) != 0)
        ok = 0;
    if (!ok) {
        btd_error("cannot write the record %s: %s", r->record_path, strerror(errno));
        unlink(tmp);
    }
    btd_buf_free(&j.out);
    return ok ? BTD_EXIT_OK : BTD_EXIT_OUTPUT;
}

/* One line of the summary, on stderr: the program's own output keeps
 * stdout to itself. Everything in it may come from the board or the
 * capture's last lines, so every control byte is shown escaped. */
static void summary_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void summary_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    btd_escape_vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static void print_summary(const struct btd_deploy *d, const struct btd_session *s,
                          const struct run_result *r)
{
    char size[32];
    btd_format_size((double)r->trace_size, size, sizeof size);
    struct btd_capture_summary sum;
    btd_capture_summarize(btd_buf_str(&s->capture_log), &sum);
    fflush(stdout);
    summary_line("\nboardtrace run summary\n");
    summary_line("  board     %s (%s)\n", d->conn.where, d->board.uname_m);
    char zones[sizeof sum.zones + sizeof sum.frames + 32] = "";
    if (sum.zones[0] || sum.frames[0])
        snprintf(zones, sizeof zones, " (%s zones, %s frames)", sum.zones[0] ? sum.zones : "-",
                 sum.frames[0] ? sum.frames : "-");
    summary_line("  events    %s%s\n", sum.events[0] ? sum.events : "-", zones);
    summary_line("  duration  %s%s\n", sum.duration[0] ? sum.duration : "(the capture did not say)",
                 sum.duration[0] ? " (the trace's span)" : "");
    if (sum.end[0] || sum.capture_time[0])
        summary_line("  capture   %s%s%s\n", sum.end[0] ? sum.end : "ended",
                     sum.capture_time[0] ? " in " : "", sum.capture_time);
    if (sum.protocol[0])
        summary_line("  Tracy     protocol %s, as the program spoke it\n", sum.protocol);
    if (sum.file[0])
        summary_line("  opens in  Tracy %s and later (GUI, csvexport): file version %s; another "
                     "with --file-version or BOARDTRACE_FILE_VERSION\n",
                     sum.file, sum.file);
    summary_line("  trace     %s (%s, %" PRIu64 " bytes, %s)\n", r->output, size, r->trace_size,
                 r->symbolized[0] ? "pulled with its SHA-256 verified, frames named here"
                                  : "SHA-256 verified");
    summary_line("  record    %s\n", r->record_path);
    if (r->html_written)
        summary_line("  report    %s\n", r->html_path);
    if (s->program_exited) {
        char status[64];
        btd_status_describe(s->program_exit, status, sizeof status);
        summary_line("  program   %s%s%s\n", s->program_stopped ? "stopped as asked (" : "", status,
                     s->program_stopped ? ")" : "");
    }
    if (s->program_udp)
        summary_line("  network   %s\n", BTD_BROADCAST_NOTE);
    summary_line("  time      %.2f s (preflight %.2f, upload %.2f, run %.2f, pull %.2f)\n",
                 btd_now() - d->t_start, d->t_preflight - d->t_start, d->t_upload - d->t_preflight,
                 d->t_run - d->t_upload, d->t_pull - d->t_run);
}

/* The command that gets a trace left on the board, ready to paste; with
 * recover, the trace is first rebuilt from the capture's journal, which
 * holds only part of what was received when partial (the capture said its
 * writing failed). */
static void fetch_hint(const struct btd_options *o, const char *dir, const char *output,
                       bool recover, bool partial)
{
    struct btd_buf b = {0};
    btd_buf_puts(&b, recover ? "boardtrace fetch --recover --host " : "boardtrace fetch --host ");
    btd_quote_append(&b, o->host);
    const char *pairs[][2] = {{"-i", o->identity},
                              {"-F", o->ssh_config},
                              {"--known-hosts", o->known_hosts},
                              {"-o", output}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        if (pairs[i][1]) {
            btd_buf_printf(&b, " %s ", pairs[i][0]);
            btd_quote_append(&b, pairs[i][1]);
        }
    }
    btd_buf_puts(&b, " ");
    btd_quote_append(&b, dir);
    if (recover)
        btd_note("the board's folder %s was left in place with the capture's journal, which "
                 "holds %s; once there is room on the board, rebuild and get the trace with:\n"
                 "  %s",
                 dir,
                 partial ? "only what it received before writing the journal failed (the "
                           "capture said so)"
                         : "what it received",
                 btd_buf_str(&b));
    else
        btd_note("the board's folder %s was left in place; if the capture wrote its trace, get "
                 "it with:\n  %s",
                 dir, btd_buf_str(&b));
    btd_buf_free(&b);
}

/* run --detach: the program traces; say where the run is and how to get it. */
static void detached(const struct btd_deploy *d, const struct btd_session *s, const char *output)
{
    struct btd_buf conn = {0};
    btd_buf_puts(&conn, "--host ");
    btd_quote_append(&conn, d->o->host);
    const char *pairs[][2] = {
        {"-i", d->o->identity}, {"-F", d->o->ssh_config}, {"--known-hosts", d->o->known_hosts}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        if (pairs[i][1]) {
            btd_buf_printf(&conn, " %s ", pairs[i][0]);
            btd_quote_append(&conn, pairs[i][1]);
        }
    }
    struct btd_buf dir = {0}, out = {0};
    btd_quote_append(&dir, d->board.dir);
    btd_quote_append(&out, output);
    /* The folder's name is the board's: escaped with the rest. */
    btd_escape_printf("detached: %s runs on %s in %s (tracing port %d)\n"
                      "  its state:  boardtrace status %s\n"
                      "  its trace:  boardtrace fetch %s -o %s %s   (add --stop to end it first)\n",
                      d->program.name, d->conn.where, d->board.dir, s->port, btd_buf_str(&conn),
                      btd_buf_str(&conn), btd_buf_str(&out), btd_buf_str(&dir));
    btd_buf_free(&conn);
    btd_buf_free(&dir);
    btd_buf_free(&out);
}

/* Whether two paths name one file (through links, ./ or another name). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* The trace is written as OUTPUT.part and the record as OUTPUT.json: both
 * names must fit the folder's limit, checked before a whole run is spent. */
static bool output_names_fit(const char *output)
{
    char *copy = btd_xstrdup(output);
    const char *base = basename(copy);
    char *dcopy = btd_xstrdup(output);
    long max = pathconf(dirname(dcopy), _PC_NAME_MAX);
    if (max <= 0)
        max = 255;
    size_t longest = strlen(base) + strlen(".part");
    bool fits = longest <= (size_t)max && strlen(output) + strlen(".part") < 4096;
    if (!fits)
        btd_error("-o %s: the name is too long: the trace is written as NAME.part and the "
                  "record as NAME.json, which must fit %ld bytes",
                  output, max);
    free(copy);
    free(dcopy);
    return fits;
}

static char *default_output(const char *program)
{
    char *copy = btd_xstrdup(program);
    struct btd_buf b = {0};
    btd_buf_printf(&b, "%s.tracy", basename(copy));
    free(copy);
    return b.data;
}

int btd_cmd_run(const struct btd_options *o)
{
    struct btd_deploy d = {.o = o, .t_start = btd_now()};
    struct btd_session s = {.trace_size = -1};
    struct run_result r = {0};
    char *owned_output = NULL;

    /* A Python script: its program, the extension for the board's Python,
     * is chosen once the board's Python is known (btd_python_prepare). */
    d.python = o->python;
    int status = o->python_module ? BTD_EXIT_OK
                 : o->python      ? btd_python_check_script(o->program)
                                  : btd_binary_load(&d.program, o->program, "program");
    if (status != BTD_EXIT_OK)
        return status;
    if (!o->python)
        btd_program_tracing(&d.program);
    /* Without --capture the default one is chosen for the board's
     * architecture once it is known (btd_deploy_prepare). */
    d.want_capture = true;
    if (o->capture) {
        snprintf(d.capture_path, sizeof d.capture_path, "%s", o->capture);
        if ((status = btd_binary_load(&d.capture, d.capture_path, "capture")) != BTD_EXIT_OK)
            return status;
        d.has_capture = true;
    }
    r.output = o->output ? o->output : (owned_output = default_output(o->program));
    snprintf(r.record_path, sizeof r.record_path, "%s.json", r.output);
    snprintf(r.html_path, sizeof r.html_path, "%s.html", r.output);
    if (o->html && !o->force && access(r.html_path, F_OK) == 0) {
        btd_error("%s exists: --html would replace it with this run's report; -f replaces it",
                  r.html_path);
        free(owned_output);
        return BTD_EXIT_USAGE;
    }
    struct stat st;
    if (stat(r.output, &st) == 0 && S_ISDIR(st.st_mode)) {
        btd_error("-o %s: expected a file name for the trace, found a folder", r.output);
        free(owned_output);
        return BTD_EXIT_USAGE;
    }
    if (same_file(r.output, o->program) || same_file(r.output, o->capture)) {
        btd_error("-o %s is the %s itself: the trace would replace it; name another file", r.output,
                  same_file(r.output, o->program) ? "program" : "capture");
        free(owned_output);
        return BTD_EXIT_USAGE;
    }
    if (!output_names_fit(r.output)) {
        free(owned_output);
        return BTD_EXIT_USAGE;
    }
    {
        char *copy = btd_xstrdup(r.output);
        const char *dir = dirname(copy);
        if (access(dir, W_OK) != 0) {
            btd_error("cannot write the trace into %s: %s", dir, strerror(errno));
            free(copy);
            free(owned_output);
            return BTD_EXIT_OUTPUT;
        }
        free(copy);
    }
    /* Held until the end, whatever the way out: another run with this -o
     * is refused instead of overwriting this one's trace. */
    struct btd_claim claim;
    const char *inputs[] = {o->program, o->capture, NULL};
    if ((status = btd_claim_output(&claim, r.output, true, o->force, inputs)) != BTD_EXIT_OK) {
        free(owned_output);
        return status;
    }
    btd_install_signals();

    status = btd_deploy_start(&d);
    bool leave = false;   /* keep the board's folder for a later fetch */
    bool journal = false; /* ... with the capture's journal to recover from */
    if (status == BTD_EXIT_OK) {
        int port = btd_board_free_port(&d.board);
        s.reconnect = true;
        s.until_ready = o->detach;
        btd_interrupt_step("run", false);
        status = btd_session_start(&s, &d, d.capture.name, port);
        if (status == BTD_EXIT_OK)
            status = btd_session_wait(&s);
        d.t_run = btd_now();
        if (status == BTD_EXIT_OK && o->detach && s.ready && !s.finished) {
            detached(&d, &s, r.output);
            btd_claim_release(&claim);
            btd_session_free(&s);
            btd_conn_close(&d.conn);
            free(d.libs);
            free(d.extras);
            free(d.python_paths);
            free(owned_output);
            return BTD_EXIT_OK;
        }
        if (status == BTD_EXIT_INTERRUPTED || s.end_timeout)
            leave = true;
        if (status == BTD_EXIT_OK) {
            if (s.corrupt || !s.verified) {
                btd_error("the upload is corrupt on %s: %s (expected SHA-256 %s for %s, %s for "
                          "%s)",
                          d.conn.where, s.corrupt ? s.corrupt_what : "the board did not verify it",
                          d.program.sha, d.program.name, d.capture.sha, d.capture.name);
                status = BTD_EXIT_UPLOAD;
            } else if (s.capture_failed) {
                btd_error("the capture %s exited at once with status %d on %s (see its output "
                          "above)",
                          d.capture.name, s.capture_start_status, d.conn.where);
                status = BTD_EXIT_START;
            } else if (s.not_ready && !btd_interrupted) {
                btd_session_not_ready_error(&s, &d.program, o->ready_timeout);
                status = BTD_EXIT_START;
            } else if (s.not_ready) {
                /* Stopped before it traced: there is nothing to keep. */
                btd_note("stopped %s on %s before it opened its tracing port: nothing was "
                         "captured",
                         d.program.name, d.conn.where);
                status = BTD_EXIT_INTERRUPTED;
            } else if (s.folder_gone) {
                btd_error("the run's folder %s is gone from %s: the board rebooted (or the folder "
                          "was removed) while the program ran, and the run and its trace with "
                          "it; a --remote-dir on storage that survives a reboot keeps the folder",
                          d.board.dir, d.conn.where);
                d.board.dir[0] = '\0'; /* nothing left there to fetch */
                status = BTD_EXIT_CAPTURE;
            } else if (s.trace_size < 0 && s.program_exited && s.program_exit != 0 &&
                       !s.program_stopped && !btd_interrupted) {
                /* the program died before a capture took anything: its
                 * death is the failure, the missing trace its consequence */
                const char *sig = btd_status_signal(s.program_exit);
                if (sig)
                    btd_error("the program was killed by %s before the capture received "
                              "anything: no trace",
                              sig);
                else
                    btd_error("the program exited with status %d before the capture received "
                              "anything: no trace",
                              s.program_exit);
                status = BTD_EXIT_PROGRAM;
            } else if (s.trace_size < 0) {
                btd_error("the capture left no trace (capture exit status %d)", s.capture_exit);
                status = BTD_EXIT_CAPTURE;
                /* What it received may be in its journal: that stays. */
                journal = btd_recover_kept(&d.conn, d.board.dir, d.capture.name) == 1;
                leave = leave || journal;
            }
        }
        if (status == BTD_EXIT_OK) {
            char remote[1200];
            snprintf(remote, sizeof remote, "%s/trace.tracy", d.board.dir);
            /* The run is over on the board: Ctrl-C ends the pull at once. */
            btd_interrupt_step("pull", true);
            int pull = btd_pull(&d.conn, &d.xo, remote, r.output, false, s.trace_size,
                                s.trace_sha[0] ? s.trace_sha : NULL, &r.trace_size, r.trace_sha);
            d.t_pull = btd_now();
            if (pull == BTD_EXIT_OK) {
                r.pulled = true;
                /* The program ran without its symbols: name its frames
                 * here, from the file the user gave. Any tracing mode may
                 * have them: the board's kernel samples callstacks too. */
                bool named = d.program.upload_size < d.program.size &&
                             btd_symbolize_trace(r.output, d.program.path, r.symbolized,
                                                 sizeof r.symbolized) == 0;
                if (named && strstr(r.symbolized, ": 0 frames,")) {
                    named = false; /* a trace without frames: left as it was */
                    r.symbolized[0] = '\0';
                }
                if (named) {
                    btd_note("%s", r.symbolized);
                    memcpy(r.pulled_sha, r.trace_sha, sizeof r.pulled_sha);
                    unsigned long long size = 0;
                    if (btd_sha256_file(r.output, r.trace_sha, &size) == 0)
                        r.trace_size = size;
                }
                /* After naming the frames: the report shows their names. */
                if (o->html)
                    r.html_written = btd_report_html(r.output, r.html_path) == 0;
                /* -f let a report be replaced: one of an earlier trace must
                 * not stay beside this one. */
                if (o->html && !r.html_written && unlink(r.html_path) == 0)
                    btd_note("removed %s, the report of an earlier trace", r.html_path);
                /* A program that ends because we stopped it (Ctrl-C, -s) has
                 * not failed, whatever its signal status says. */
                bool failed = status == BTD_EXIT_OK && s.program_exited && s.program_exit != 0 &&
                              !btd_interrupted && !s.program_stopped;
                const char *killed = failed ? btd_status_signal(s.program_exit) : NULL;
                if (s.capture_exited && s.capture_exit != 0)
                    btd_warn("the capture exited with status %d; its trace was kept",
                             s.capture_exit);
                /* A program killed by a signal is the failure, whatever its
                 * end made the capture say. */
                if (killed) {
                    btd_error("the program was killed by %s; the trace holds what it emitted "
                              "before",
                              killed);
                    status = BTD_EXIT_PROGRAM;
                } else if (s.capture_exited && s.capture_exit != 0) {
                    status = BTD_EXIT_CAPTURE;
                } else if (failed) {
                    status = BTD_EXIT_PROGRAM;
                }
            } else {
                status = btd_interrupt_gave_up() ? BTD_EXIT_INTERRUPTED : pull;
                leave = true;
            }
        }
    }
    bool connected = d.conn.session && ssh_is_connected(d.conn.session) && !btd_interrupt_cut();
    /* A run the supervisor did not finish goes on on the board: its folder
     * stays for fetch. */
    if (s.started && !s.finished)
        leave = true;
    bool clean = !leave && !o->keep;
    if (s.started && connected) {
        if (btd_session_finish(&s, clean))
            d.board.dir[0] = '\0';
        else if (o->keep)
            btd_note("kept %s on %s", d.board.dir, d.conn.where);
    } else if (connected && !leave) {
        if (btd_deploy_cleanup(&d, o->keep))
            d.board.dir[0] = '\0';
    } else if (!s.started && d.board.dir[0] && !o->keep && !btd_interrupted) {
        btd_deploy_cleanup_lost(&d);
    }
    /* A folder lost mid-upload holds no trace: btd_deploy_cleanup_lost named it. */
    if (d.board.dir[0] && !r.pulled && (leave || !connected) && (s.started || connected))
        fetch_hint(o, d.board.dir, r.output, journal,
                   strstr(btd_buf_str(&s.capture_log), "writing the journal") != NULL);
    if (status == BTD_EXIT_INTERRUPTED && !d.board.dir[0] && !r.pulled)
        btd_note("interrupted during the %s: nothing was captured, and nothing was left on the "
                 "board",
                 btd_interrupt_step_name());
    if (d.board.uname_m[0] || status != BTD_EXIT_OK) {
        r.status = status;
        if (write_record(&d, &s, &r) != BTD_EXIT_OK && status == BTD_EXIT_OK)
            status = BTD_EXIT_OUTPUT;
    }
    if (r.pulled)
        print_summary(&d, &s, &r);
    btd_claim_release(&claim);
    btd_session_free(&s);
    btd_conn_close(&d.conn);
    free(d.libs);
    free(d.extras);
    free(d.python_paths);
    free(owned_output);
    return status;
}
