/* Driving the supervisor script from the host: its stdout goes to ours, its
 * stderr is split into the program's lines and tagged report lines; Ctrl-C
 * asks the board to stop; silence from the board ends the wait. */
#ifndef BTD_SESSION_H
#define BTD_SESSION_H

#include "btd_deploy.h"
#include "btd_supervisor.h"

#include <poll.h>

enum { BTD_SESSION_TAIL_LINES = 5 };

struct btd_session {
    struct btd_deploy *d;
    ssh_channel ch;
    char token[40];
    int port;
    struct btd_buf errline;
    struct btd_buf capture_log;
    bool verified, corrupt;
    bool started;           /* the supervisor was started: the run may go on without us */
    bool finished;          /* the supervisor is done: everything it will say was said */
    bool awaiting;          /* the starting shell waits for the verdict on the folder */
    bool cleaned;           /* it removed the folder */
    char corrupt_what[200]; /* "NAME DIGEST-FOUND" */
    bool capture_started, capture_failed, ready, not_ready, stop_sent;
    bool program_exited, capture_exited, capture_timeout, program_timeout;
    bool program_stopped; /* it exited after we asked it to stop (Ctrl-C, -s) */
    bool program_udp;     /* it held a UDP socket: a client that broadcasts */
    int program_exit, capture_exit, capture_start_status;
    long long trace_size; /* -1: no trace reported */
    char trace_sha[65];   /* its SHA-256 from the board, "" when not reported */
    /* The program's last lines on stderr, oldest first from tail_next. */
    char tail[BTD_SESSION_TAIL_LINES][240];
    int tail_count, tail_next;
    double last_data;
    double ended_at;               /* when the program's exit was reported, 0 before */
    bool end_timeout;              /* the run did not finish in time after the program ended */
    uint64_t out_bytes, err_bytes; /* of out.log and err.log, as received */
    bool reconnect;                /* run: pick the run up again after a lost connection */
    bool folder_gone;              /* a follower found the run's folder gone (the board rebooted) */
    bool until_ready;              /* run --detach: return once the program traces */
    int reconnects;
    /* live: called each turn with the poll results of its extra fds. */
    int (*extra_fds)(void *ctx, struct pollfd *fds, int max);
    int (*extra_work)(void *ctx, struct pollfd *fds, int n);
    void *extra_ctx;
};

/* Said once when the program holds a UDP socket, as upstream's clients do
 * for their discovery broadcast unless built without it. */
#define BTD_BROADCAST_NOTE                                                                    \
    "the program holds a UDP socket: a client built with upstream Tracy announces itself by " \
    "broadcast on the board's network (255.255.255.255, port 8086) unless built with "        \
    "TRACY_NO_BROADCAST defined (upstream reads it at build time only; the environment "      \
    "variable run sets does nothing for it)"

/* Starts the supervisor on the board (exec channel) with s's settings. */
int btd_session_start(struct btd_session *s, struct btd_deploy *d, const char *capture_name,
                      int port);
/* Runs until the supervisor has finished (or, with until_ready, until the
 * program traces or failed to). With reconnect set, a lost connection is
 * opened again (a few tries over about a minute) and the run followed from
 * its logs where it was. Returns BTD_EXIT_OK (see the flags for what
 * happened), BTD_EXIT_START when the board stopped answering or could not
 * be reached again, BTD_EXIT_CAPTURE when the run did not finish in time
 * after the program ended, or BTD_EXIT_INTERRUPTED after a second Ctrl-C. */
int btd_session_wait(struct btd_session *s);

/* Ends the session's channel and, when clean, removes the board's folder.
 * Returns true when the folder was removed. */
bool btd_session_finish(struct btd_session *s, bool clean);

/* Says why the program never opened its tracing port: it exited (naming its
 * status or signal), or it was still running when the --ready-timeout of
 * timeout s ran out (asking whether it is built with tracing). */
void btd_session_not_ready_error(const struct btd_session *s, const struct btd_binary *program,
                                 int timeout);
void btd_session_free(struct btd_session *s);

/* What the capture said at the end, from either upstream tracy-capture's
 * "Frames: N / Time span: T / Zones: N / Elapsed time: T" lines or
 * boardtrace-capture's "FILE: complete, N events, N zones, N frames, span T
 * s, captured in T s, ..." line. Fields it did
 * not say stay "". */
struct btd_capture_summary {
    char events[32];
    char zones[32];
    char frames[32];
    char duration[64];     /* the trace's span */
    char capture_time[64]; /* the capture's own wall time */
    char end[64];          /* boardtrace-capture: complete, client disconnected, ... */
    char protocol[96];     /* the program's Tracy: "72 (0.11.2 (commit 5479a42, ...))" */
    char file[16];         /* the .tracy version written: "0.11.2" ("" not said) */
};

void btd_capture_summarize(const char *log, struct btd_capture_summary *sum);

/* The value of the last "KEY: value" line of the capture's output, or NULL. */
const char *btd_capture_stat(const char *log, const char *key, char *out, size_t outlen);

#endif
