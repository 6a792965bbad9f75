/* Listing a board's runs (see btd_runs.h): one script, one round trip, one
 * tab-separated line per folder. */
#define _GNU_SOURCE
#include "btd_runs.h"

#include "btd_quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Newest first (ls -dt); only folders this user owns. A supervisor whose
 * pid is gone without `finished` was stopped from outside. */
static const char list_script[] =
    "for d in $(ls -dt \"$base\"/boardtrace.*/ 2>/dev/null); do\n"
    "  d=${d%/}\n"
    "  [ -d \"$d\" ] && [ -O \"$d\" ] && [ ! -L \"$d\" ] || continue\n"
    "  list_one \"$d\"\n"
    "done\n";

static const char list_one[] =
    "list_one() {\n"
    "  p=$(cat \"$1/supervisor.pid\" 2>/dev/null)\n"
    "  if [ -e \"$1/finished\" ]; then st=finished\n"
    "  elif [ -n \"$p\" ] && [ -d /proc/$p ]; then st=running\n"
    "  else st=stopped; fi\n"
    "  if [ -f \"$1/trace.tracy\" ]; then sz=$(wc -c < \"$1/trace.tracy\"); else sz=-; fi\n"
    "  pr=$(cat \"$1/program.name\" 2>/dev/null)\n"
    "  ph=$(cat \"$1/program.host\" 2>/dev/null)\n"
    "  at=$(date -r \"$1/supervisor.pid\" '+%Y-%m-%d %H:%M:%S' 2>/dev/null)\n"
    "  printf 'run\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n' \"$1\" \"$st\" \"$sz\" \"$pr\" \"$at\" "
    "\"$ph\"\n"
    "}\n";

const char *btd_run_state_name(enum btd_run_state s)
{
    switch (s) {
    case BTD_RUN_RUNNING:
        return "running";
    case BTD_RUN_FINISHED:
        return "finished";
    case BTD_RUN_STOPPED:
        return "stopped";
    }
    return "?";
}

/* Field i of a tab-separated line into out. */
static void field(const char *line, int i, char *out, size_t outlen)
{
    const char *p = line;
    for (int k = 0; k < i && p; k++) {
        p = strchr(p, '\t');
        if (p)
            p++;
    }
    if (!p) {
        out[0] = '\0';
        return;
    }
    size_t n = strcspn(p, "\t\n");
    snprintf(out, outlen, "%.*s", (int)(n < outlen - 1 ? n : outlen - 1), p);
}

void btd_runs_parse(const char *text, struct btd_runs *out)
{
    memset(out, 0, sizeof *out);
    int cap = 0;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        if (strncmp(p, "run\t", 4) == 0) {
            if (out->count == cap) {
                cap = cap ? cap * 2 : 8;
                struct btd_run_info *grown = realloc(out->runs, sizeof *grown * (size_t)cap);
                if (!grown)
                    break;
                out->runs = grown;
            }
            struct btd_run_info *r = &out->runs[out->count];
            memset(r, 0, sizeof *r);
            char st[16], sz[32];
            field(p, 1, r->dir, sizeof r->dir);
            field(p, 2, st, sizeof st);
            field(p, 3, sz, sizeof sz);
            field(p, 4, r->program, sizeof r->program);
            field(p, 5, r->started, sizeof r->started);
            field(p, 6, r->program_host, sizeof r->program_host);
            r->state = strcmp(st, "running") == 0    ? BTD_RUN_RUNNING
                       : strcmp(st, "finished") == 0 ? BTD_RUN_FINISHED
                                                     : BTD_RUN_STOPPED;
            r->has_trace = sz[0] >= '0' && sz[0] <= '9';
            r->trace_size = r->has_trace ? strtoull(sz, NULL, 10) : 0;
            if (r->dir[0])
                out->count++;
        }
        p = nl ? nl + 1 : NULL;
    }
}

int btd_runs_list(struct btd_conn *c, const char *base, const char *only, struct btd_runs *out,
                  char *err, size_t errlen)
{
    struct btd_buf cmd = {0}, res = {0};
    btd_buf_puts(&cmd, list_one);
    if (only) {
        btd_buf_puts(&cmd, "d=");
        btd_quote_append(&cmd, only);
        btd_buf_puts(&cmd, "\n[ -d \"$d\" ] && list_one \"$d\"\n");
    } else {
        btd_buf_puts(&cmd, "base=");
        if (base)
            btd_quote_append(&cmd, base);
        else
            btd_buf_puts(&cmd, "${TMPDIR:-/tmp}");
        btd_buf_puts(&cmd, "\n");
        btd_buf_puts(&cmd, list_script);
    }
    btd_buf_puts(&cmd, "exit 0\n");
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &res, NULL, 60, err, errlen);
    if (rc == 0)
        btd_runs_parse(btd_buf_str(&res), out);
    else if (rc > 0)
        snprintf(err, errlen, "listing the runs failed (status %d)", rc);
    btd_buf_free(&cmd);
    btd_buf_free(&res);
    return rc == 0 ? 0 : -1;
}

void btd_runs_free(struct btd_runs *r)
{
    free(r->runs);
    r->runs = NULL;
    r->count = 0;
}
