/* Host side of the supervisor (see btd_session.h). One poll loop serves the
 * SSH socket and, for live, the local forwarding sockets. */
#define _GNU_SOURCE
#include "btd_session.h"
#include "btd_interrupt.h"
#include "btd_python.h"
#include "btd_status.h"

#include "btd_msg.h"
#include "btd_quote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The supervisor reports every 5 s; this much silence means it is gone. */
enum { SILENCE_LIMIT_S = 30 };
/* Once the program has ended, the supervisor gives the capture 2 minutes to
 * save and 10 s more to its signals (btd_supervisor.c): a run not finished
 * this long after is given up, whatever holds the board. */
enum { END_LIMIT_S = 120 + 10 + 30 };
/* Connecting again after a lost connection takes at most this long in all,
 * the connection attempts included. */
enum { RECONNECT_LIMIT_S = 60 };

static void make_token(char *out, size_t outlen)
{
    unsigned char r[8] = {0};
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, r, sizeof r) != (ssize_t)sizeof r)
            memset(r, 0x5a, sizeof r);
        close(fd);
    }
    snprintf(out, outlen, "@bt-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
             r[5], r[6], r[7]);
}

int btd_session_start(struct btd_session *s, struct btd_deploy *d, const char *capture_name,
                      int port)
{
    s->d = d;
    s->port = port;
    s->trace_size = -1;
    make_token(s->token, sizeof s->token);
    const struct btd_options *o = d->o;
    const char *extra_names[BTD_MAX_EXTRAS], *extra_shas[BTD_MAX_EXTRAS];
    for (int i = 0; i < d->extra_count; i++) {
        extra_names[i] = d->extras[i].name;
        extra_shas[i] = d->extras[i].sha;
    }
    /* A program sent without its symbols: where fetch finds them later,
     * should this host not see the run to its end. */
    char host_path[4096];
    bool stripped =
        d->program.upload_size < d->program.size && realpath(d->program.path, host_path) != NULL;
    struct btd_supervisor sup = {
        .dir = d->board.dir,
        .token = s->token,
        .program = d->program.name,
        .program_sha = d->program.sha,
        .program_host = stripped ? host_path : NULL,
        .loader = d->libs ? d->libs->libs[d->libs->loader].name : NULL,
        .loader_glibc = d->libs && d->libs->glibc,
        .capture_sha = capture_name ? d->capture.sha : NULL,
        .args = o->args,
        .arg_count = o->arg_count,
        .env = o->env,
        .env_count = o->env_count,
        .capture = capture_name,
        .port = port,
        .seconds = o->seconds,
        .memory = o->capture_memory,
        .file_version = o->file_version,
        .ready_timeout = o->ready_timeout,
        .extra_names = extra_names,
        .extra_shas = extra_shas,
        .extra_count = d->extra_count,
        .cwd = o->cwd,
        .python = d->python ? d->board.python : NULL,
        .python_script = d->python && !o->python_module
                             ? d->extras[d->extra_count - 1 - BTD_PYTHON_FILES].name
                             : NULL,
        .python_partial = o->python_partial,
        .python_lines = o->python_lines,
        .python_module = d->python ? o->python_module : NULL,
    };
    struct btd_buf cmd = {0};
    btd_supervisor_script(&cmd, &sup);
    s->ch = ssh_channel_new(d->conn.session);
    int rc = BTD_EXIT_OK;
    if (!s->ch || ssh_channel_open_session(s->ch) != SSH_OK ||
        ssh_channel_request_exec(s->ch, btd_buf_str(&cmd)) != SSH_OK) {
        btd_error("cannot start the program on %s: %s", d->conn.where,
                  ssh_get_error(d->conn.session));
        rc = BTD_EXIT_START;
    }
    s->started = rc == BTD_EXIT_OK;
    btd_debug("supervisor script:\n%s", btd_buf_str(&cmd));
    btd_buf_free(&cmd);
    s->last_data = btd_now();
    return rc;
}

const char *btd_capture_stat(const char *log, const char *key, char *out, size_t outlen)
{
    const char *found = NULL;
    size_t klen = strlen(key);
    for (const char *p = log; p && *p;) {
        const char *nl = strchr(p, '\n');
        const char *line = p;
        const char *end = nl ? nl : p + strlen(p);
        /* A progress line redrawn with \r: only its last state counts. */
        for (const char *q = line; q < end; q++)
            if (*q == '\r')
                line = q + 1;
        while (line < end && *line == ' ')
            line++;
        if ((size_t)(end - line) > klen + 1 && strncmp(line, key, klen) == 0 && line[klen] == ':') {
            const char *v = line + klen + 1;
            while (v < end && *v == ' ')
                v++;
            size_t n = (size_t)(end - v) < outlen - 1 ? (size_t)(end - v) : outlen - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            found = out;
        }
        p = nl ? nl + 1 : NULL;
    }
    return found;
}

/* The number just before WORD in LINE ("22689 events"), or "". */
static void number_before(const char *line, const char *word, char *out, size_t outlen)
{
    out[0] = '\0';
    const char *w = strstr(line, word);
    if (!w || w == line || w[-1] != ' ')
        return;
    const char *end = w - 1, *start = end;
    while (start > line && (start[-1] == '.' || (start[-1] >= '0' && start[-1] <= '9')))
        start--;
    if (start < end)
        snprintf(out, outlen, "%.*s", (int)(end - start), start);
}

void btd_capture_summarize(const char *log, struct btd_capture_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    btd_capture_stat(log, "Zones", sum->zones, sizeof sum->zones);
    btd_capture_stat(log, "Frames", sum->frames, sizeof sum->frames);
    btd_capture_stat(log, "Time span", sum->duration, sizeof sum->duration);
    btd_capture_stat(log, "Events", sum->events, sizeof sum->events);
    btd_capture_stat(log, "Elapsed time", sum->capture_time, sizeof sum->capture_time);
    for (const char *p = log; p && *p;) {
        const char *nl = strchr(p, '\n');
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
        p = nl ? nl + 1 : NULL;
        const char *ev = strstr(line, " events, ");
        const char *colon = strstr(line, ": ");
        if (!ev || !colon || colon > ev)
            continue;
        number_before(line, "events, ", sum->events, sizeof sum->events);
        number_before(line, "zones, ", sum->zones, sizeof sum->zones);
        number_before(line, "frames, ", sum->frames, sizeof sum->frames);
        const char *span = strstr(line, " span "), *took = strstr(line, " captured in ");
        double secs;
        if (span && sscanf(span + 6, "%lf s,", &secs) == 1)
            snprintf(sum->duration, sizeof sum->duration, "%.2f s", secs);
        if (took && sscanf(took + 13, "%lf s,", &secs) == 1)
            snprintf(sum->capture_time, sizeof sum->capture_time, "%.2f s", secs);
        const char *proto = strstr(line, ", client Tracy protocol ");
        const char *file = strstr(line, "), file ");
        if (proto)
            snprintf(
                sum->protocol, sizeof sum->protocol, "%.*s",
                (int)(file && file > proto ? file + 1 - (proto + 24) : (long)strlen(proto + 24)),
                proto + 24);
        if (file)
            snprintf(sum->file, sizeof sum->file, "%s", file + 8);
        const char *comma = strchr(colon, ',');
        if (comma)
            snprintf(sum->end, sizeof sum->end, "%.*s", (int)(comma - colon - 2), colon + 2);
    }
}

static void report(struct btd_session *s, const char *ev)
{
    const char *arg = strchr(ev, ' ');
    size_t elen = arg ? (size_t)(arg - ev) : strlen(ev);
    arg = arg ? arg + 1 : "";
#define IS(name) (elen == sizeof(name) - 1 && strncmp(ev, name, elen) == 0)
    if (IS("verified")) {
        s->verified = true;
        btd_note("uploads verified on the board (SHA-256)");
    } else if (IS("corrupt")) {
        s->corrupt = true;
        snprintf(s->corrupt_what, sizeof s->corrupt_what, "%s", arg);
    } else if (IS("finished")) {
        s->finished = true;
    } else if (IS("await")) {
        s->awaiting = true;
    } else if (IS("cleaned")) {
        s->cleaned = true;
    } else if (IS("capture")) {
        const char *shown = arg;
        for (const char *q = arg; *q; q++)
            if (*q == '\r' && q[1])
                shown = q + 1;
        if (btd_verbosity >= 1)
            fprintf(stderr, "[capture] %s\n", shown);
        btd_buf_puts(&s->capture_log, arg);
        btd_buf_puts(&s->capture_log, "\n");
    } else if (IS("capture-started")) {
        s->capture_started = true;
        btd_debug("capture started (pid %s)", arg);
    } else if (IS("capture-failed")) {
        s->capture_failed = true;
        s->capture_start_status = atoi(arg);
    } else if (IS("program-udp")) {
        if (!s->program_udp)
            btd_note("%s", BTD_BROADCAST_NOTE);
        s->program_udp = true;
    } else if (IS("program-started")) {
        btd_debug("program started (pid %s)", arg);
    } else if (IS("ready")) {
        s->ready = true;
        btd_note("program is tracing on the board's port %d", s->port);
    } else if (IS("not-ready")) {
        s->not_ready = true;
    } else if (IS("program-exit")) {
        s->program_exited = true;
        s->ended_at = btd_now();
        s->program_exit = atoi(arg);
        s->program_stopped = strstr(arg, " stopped") != NULL;
        btd_debug("program exited with status %d", s->program_exit);
    } else if (IS("capture-exit")) {
        if (strcmp(arg, "none") != 0) {
            s->capture_exited = true;
            s->capture_exit = atoi(arg);
        }
    } else if (IS("capture-timeout")) {
        s->capture_timeout = true;
        btd_warn("the capture did not finish within 2 minutes after the program; stopping it");
    } else if (IS("program-timeout")) {
        s->program_timeout = true;
        btd_warn("the program did not exit after tracing ended; stopping it");
    } else if (IS("trace")) {
        char sha[65] = "";
        s->trace_size = atoll(arg);
        if (sscanf(arg, "%*s %64[0-9a-f]", sha) == 1 && strlen(sha) == 64)
            memcpy(s->trace_sha, sha, sizeof sha);
    } else if (IS("stopping")) {
        if (strcmp(arg, "seconds") == 0)
            btd_note("the capture's time is up (-s): stopping the program on the board");
        else if (strcmp(arg, "capture") == 0)
            btd_note("the program has ended; asking the capture on the board to finish its trace "
                     "now (Ctrl-C again to abandon it)");
        else
            btd_note("stopping the program on the board (Ctrl-C again to abandon it)");
    }
#undef IS
}

static void remember_line(struct btd_session *s, const char *line, size_t len)
{
    if (len && line[len - 1] == '\r')
        len--;
    char *slot = s->tail[s->tail_next];
    size_t max = sizeof s->tail[0] - 1;
    snprintf(slot, sizeof s->tail[0], "%.*s", (int)(len < max ? len : max), line);
    s->tail_next = (s->tail_next + 1) % BTD_SESSION_TAIL_LINES;
    if (s->tail_count < BTD_SESSION_TAIL_LINES)
        s->tail_count++;
}

static void stderr_data(struct btd_session *s, const char *data, size_t len)
{
    size_t tlen = strlen(s->token);
    for (size_t i = 0; i < len; i++) {
        btd_buf_append(&s->errline, data + i, 1);
        if (data[i] != '\n')
            continue;
        const char *line = btd_buf_str(&s->errline);
        if (s->errline.len > tlen && strncmp(line, s->token, tlen) == 0 && line[tlen] == ' ') {
            s->errline.data[s->errline.len - 1] = '\0';
            report(s, line + tlen + 1);
        } else {
            fwrite(line, 1, s->errline.len, stderr);
            remember_line(s, line, s->errline.len - 1);
        }
        btd_buf_clear(&s->errline);
    }
}

static void request_stop(struct btd_session *s)
{
    struct btd_buf cmd = {0};
    btd_buf_puts(&cmd, "touch ");
    btd_quote_append(&cmd, s->d->board.dir);
    btd_buf_puts(&cmd, "/stop");
    char err[400];
    if (btd_ssh_exec(&s->d->conn, btd_buf_str(&cmd), NULL, 0, NULL, NULL, 20, err, sizeof err) != 0)
        btd_warn("could not ask the board to stop: %s", err);
    btd_buf_free(&cmd);
    s->stop_sent = true;
}

/* Opens the connection again and follows the run's logs from where the
 * lost channel stopped. Returns 0, or -1 after the last try. */
static int pick_up(struct btd_session *s)
{
    static const int waits[] = {1, 2, 4, 8, 15, 30};
    struct btd_deploy *d = s->d;
    if (s->ch) {
        ssh_channel_free(s->ch);
        s->ch = NULL;
    }
    size_t tries = (size_t)d->o->reconnect_tries;
    if (tries > sizeof waits / sizeof *waits)
        tries = sizeof waits / sizeof *waits;
    double deadline = btd_now() + RECONNECT_LIMIT_S;
    for (size_t i = 0; i < tries && btd_interrupted < 2 && btd_now() < deadline; i++) {
        btd_note("lost the connection to %s; the run goes on there; connecting again in %d s "
                 "(try %zu of %zu)",
                 d->conn.where, waits[i], i + 1, tries);
        for (double end = btd_now() + waits[i]; btd_now() < end && btd_interrupted < 2;)
            usleep(100000);
        btd_conn_close(&d->conn);
        int left = (int)(deadline - btd_now());
        if (left < 1)
            break;
        d->connect_timeout_s = left < 20 ? left : 20;
        int connected = btd_deploy_connect(d);
        d->connect_timeout_s = 0;
        if (connected != BTD_EXIT_OK)
            continue;
        struct btd_buf cmd = {0};
        btd_follower_script(&cmd, d->board.dir, s->out_bytes, s->err_bytes);
        s->ch = ssh_channel_new(d->conn.session);
        int ok = s->ch && ssh_channel_open_session(s->ch) == SSH_OK &&
                 ssh_channel_request_exec(s->ch, btd_buf_str(&cmd)) == SSH_OK;
        btd_buf_free(&cmd);
        if (ok) {
            s->reconnects++;
            s->last_data = btd_now();
            btd_note("connected to %s again; following the run from where it was", d->conn.where);
            return 0;
        }
        if (s->ch) {
            ssh_channel_free(s->ch);
            s->ch = NULL;
        }
    }
    return -1;
}

/* What the channel said since the last turn; -1 when the connection is
 * lost, else whether anything came. */
static int read_channel(struct btd_session *s, char *buf, size_t len)
{
    bool got = false;
    for (int stream = 0; stream < 2; stream++) {
        int n = ssh_channel_read_nonblocking(s->ch, buf, (uint32_t)len, stream);
        if (n == SSH_ERROR)
            return -1;
        if (n > 0) {
            got = true;
            if (stream == 0) {
                s->out_bytes += (uint64_t)n;
                fwrite(buf, 1, (size_t)n, stdout);
                fflush(stdout);
            } else {
                s->err_bytes += (uint64_t)n;
                stderr_data(s, buf, (size_t)n);
            }
        }
    }
    return got;
}

int btd_session_wait(struct btd_session *s)
{
    char buf[16384];
    struct pollfd fds[64];
    for (;;) {
        if (btd_interrupted >= 2) {
            btd_error("interrupted");
            return BTD_EXIT_INTERRUPTED;
        }
        if (btd_interrupted == 1 && !s->stop_sent)
            request_stop(s);
        int got = read_channel(s, buf, sizeof buf);
        bool lost = got < 0 || ((ssh_channel_is_eof(s->ch) || ssh_channel_is_closed(s->ch)) &&
                                !ssh_is_connected(s->d->conn.session));
        if (lost && !s->finished) {
            if (!s->reconnect) {
                btd_error("lost the connection to %s while the program ran: %s", s->d->conn.where,
                          ssh_get_error(s->d->conn.session));
                return BTD_EXIT_START;
            }
            if (pick_up(s) != 0) {
                if (s->d->o->reconnect_tries)
                    btd_error("could not reach %s again within %d s; the run goes on there",
                              s->d->conn.where, RECONNECT_LIMIT_S);
                else
                    btd_error("lost the connection to %s; the run goes on there", s->d->conn.where);
                return BTD_EXIT_START;
            }
            continue;
        }
        int nfds = 1;
        fds[0] = (struct pollfd){.fd = ssh_get_fd(s->d->conn.session), .events = POLLIN};
        if (s->extra_fds)
            nfds += s->extra_fds(s->extra_ctx, fds + 1, 63);
        if (s->finished || (s->until_ready && (s->ready || s->not_ready)))
            break;
        if (got > 0) {
            s->last_data = btd_now();
        } else if (ssh_channel_is_eof(s->ch) || ssh_channel_is_closed(s->ch)) {
            if (s->reconnects > 0 && !s->finished && ssh_channel_get_exit_status(s->ch) == 125)
                s->folder_gone = true;
            break;
        } else if (s->ended_at > 0 && btd_now() - s->ended_at > END_LIMIT_S) {
            btd_error("the run on %s did not finish within %d s after the program ended (the "
                      "capture has 2 minutes to save its trace, then is stopped); giving up on it",
                      s->d->conn.where, END_LIMIT_S);
            s->end_timeout = true;
            return BTD_EXIT_CAPTURE;
        } else if (btd_now() - s->last_data > SILENCE_LIMIT_S) {
            /* A board whose network went away leaves the connection open
             * and silent: a run that may reconnect treats it as lost. */
            if (s->reconnect && !s->finished) {
                btd_warn("%s stopped answering: nothing for %d s while the program ran",
                         s->d->conn.where, SILENCE_LIMIT_S);
                if (pick_up(s) == 0)
                    continue;
                btd_error("could not reach %s again within %d s; the run goes on there",
                          s->d->conn.where, RECONNECT_LIMIT_S);
                return BTD_EXIT_START;
            }
            btd_error("%s stopped answering: nothing for %d s while the program ran",
                      s->d->conn.where, SILENCE_LIMIT_S);
            return BTD_EXIT_START;
        }
        if (!got) {
            if (poll(fds, (nfds_t)nfds, 100) < 0 && errno != EINTR) {
                btd_error("poll failed: %s", strerror(errno));
                return BTD_EXIT_START;
            }
        } else {
            for (int i = 0; i < nfds; i++)
                fds[i].revents = 0;
        }
        if (s->extra_work && s->extra_work(s->extra_ctx, fds + 1, nfds - 1) != 0)
            return BTD_EXIT_START;
    }
    /* A follower's two tails stop on their own a moment after the run
     * finished; what the program printed last may still be on its way. */
    for (double end = btd_now() + 10; s->finished && s->reconnects > 0 && btd_now() < end &&
                                      !ssh_channel_is_eof(s->ch) &&
                                      !ssh_channel_is_closed(s->ch);) {
        if (read_channel(s, buf, sizeof buf) < 0)
            break;
        ssh_channel_poll_timeout(s->ch, 100, 0);
    }
    /* Output that came in the same packets as the last report. */
    int n;
    while ((n = ssh_channel_read_nonblocking(s->ch, buf, sizeof buf, 0)) > 0) {
        s->out_bytes += (uint64_t)n;
        fwrite(buf, 1, (size_t)n, stdout);
    }
    fflush(stdout);
    if (s->errline.len && !s->finished)
        fwrite(s->errline.data, 1, s->errline.len, stderr);
    return BTD_EXIT_OK;
}

bool btd_session_finish(struct btd_session *s, bool clean)
{
    char buf[4096];
    /* The channel that started the run (not a follower's) ends with the
     * starting shell asking for the verdict: the folder goes without a
     * round trip of its own. */
    double end = btd_now() + 10;
    while (s->ch && s->reconnects == 0 && !s->awaiting && btd_now() < end &&
           !ssh_channel_is_eof(s->ch) && !ssh_channel_is_closed(s->ch)) {
        int n = ssh_channel_read_timeout(s->ch, buf, sizeof buf, 1, 100);
        if (n == SSH_ERROR)
            break;
        if (n > 0)
            stderr_data(s, buf, (size_t)n);
        while ((n = ssh_channel_read_nonblocking(s->ch, buf, sizeof buf, 0)) > 0)
            fwrite(buf, 1, (size_t)n, stdout);
    }
    fflush(stdout);
    if (s->ch && s->awaiting) {
        const char *verdict = clean ? "clean\n" : "keep\n";
        if (ssh_channel_write(s->ch, verdict, (uint32_t)strlen(verdict)) >= 0) {
            ssh_channel_send_eof(s->ch);
            end = btd_now() + 60;
            while (btd_now() < end && !ssh_channel_is_eof(s->ch) && !ssh_channel_is_closed(s->ch)) {
                int n = ssh_channel_read_timeout(s->ch, buf, sizeof buf, 1, 200);
                if (n == SSH_ERROR)
                    break;
                if (n > 0)
                    stderr_data(s, buf, (size_t)n);
            }
        }
    }
    if (s->ch) {
        ssh_channel_close(s->ch);
        ssh_channel_free(s->ch);
        s->ch = NULL;
    }
    if (s->cleaned || !clean || !s->d->board.dir[0])
        return s->cleaned;
    /* A follower's channel: remove it with a command of its own. */
    char err[600];
    if (btd_board_remove_dir(&s->d->conn, s->d->board.dir, err, sizeof err) != 0) {
        btd_warn("cleanup: %s", err);
        return false;
    }
    btd_debug("removed %s", s->d->board.dir);
    return true;
}

void btd_session_not_ready_error(const struct btd_session *s, const struct btd_binary *program,
                                 int timeout)
{
    char what[160];
    if (!s->program_exited || s->program_stopped)
        snprintf(what, sizeof what, "ran but did not open its tracing port %d within %d s", s->port,
                 timeout);
    else if (btd_status_signal(s->program_exit))
        snprintf(what, sizeof what, "was killed by %s before it opened its tracing port %d",
                 btd_status_signal(s->program_exit), s->port);
    else
        snprintf(what, sizeof what, "exited with status %d before it opened its tracing port %d",
                 s->program_exit, s->port);
    if (!program->traced)
        btd_error("the program %s %s: tracing is off in that binary (it holds no boardtrace note "
                  "and no Tracy client); build it with ENABLE_TRACY=ON (or Tracy's "
                  "TRACY_ENABLE=ON) and link boardtrace::runtime",
                  program->name, what);
    else if (!s->program_exited || s->program_stopped)
        btd_error("the program %s %s; raise --ready-timeout for slow starts", program->name, what);
    else if (!s->tail_count)
        btd_error("the program %s %s; it wrote nothing on stderr", program->name, what);
    else {
        struct btd_buf tail = {0};
        int first =
            (s->tail_next - s->tail_count + BTD_SESSION_TAIL_LINES) % BTD_SESSION_TAIL_LINES;
        for (int i = 0; i < s->tail_count; i++)
            btd_buf_printf(&tail, "\n  | %s", s->tail[(first + i) % BTD_SESSION_TAIL_LINES]);
        btd_error("the program %s %s; its last lines on stderr:%s", program->name, what,
                  btd_buf_str(&tail));
        btd_buf_free(&tail);
    }
}

void btd_session_free(struct btd_session *s)
{
    if (s->ch) {
        ssh_channel_close(s->ch);
        ssh_channel_free(s->ch);
    }
    s->ch = NULL;
    btd_buf_free(&s->errline);
    btd_buf_free(&s->capture_log);
}
