/* The runs boardtrace left on a board: each private folder boardtrace.TAGXXXXXX
 * under the base folder, in the state its supervisor left it (see
 * btd_supervisor.c): running, finished, or stopped (its supervisor ended
 * without finishing, e.g. the board rebooted or it was killed). Shared by
 * `status` and `fetch`. */
#ifndef BTD_RUNS_H
#define BTD_RUNS_H

#include "btd_ssh.h"

#include <stdbool.h>
#include <stdint.h>

enum btd_run_state {
    BTD_RUN_RUNNING,
    BTD_RUN_FINISHED,
    BTD_RUN_STOPPED,
};

struct btd_run_info {
    char dir[1024];
    enum btd_run_state state;
    bool has_trace;
    uint64_t trace_size;
    char program[128];
    char program_host[1024]; /* the unstripped program on the host, "" none */
    char started[32];        /* "YYYY-MM-DD HH:MM:SS" on the board's clock, "" unknown */
};

struct btd_runs {
    struct btd_run_info *runs; /* newest first */
    int count;
};

/* Lists the runs under base (NULL: the board's ${TMPDIR:-/tmp}), or the one
 * run folder DIR when only is set. Returns 0, or -1 with err. */
int btd_runs_list(struct btd_conn *c, const char *base, const char *only, struct btd_runs *out,
                  char *err, size_t errlen);

/* Parses the listing's output (exposed for tests). */
void btd_runs_parse(const char *text, struct btd_runs *out);

void btd_runs_free(struct btd_runs *r);

const char *btd_run_state_name(enum btd_run_state s);

#endif
