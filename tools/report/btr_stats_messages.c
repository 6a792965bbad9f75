/* Messages for stats: counts by severity, the program's own (source user)
 * apart from Tracy's, and the first error and fatal messages with their
 * times, so the first thing that went wrong is on the screen. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <boardtrace/wire.h>

#include "btr_report.h"

static const char *const severity_name[6] = {"trace", "debug", "info", "warning", "error", "fatal"};

int btr_messages_on_message(struct btr_sections *sec, const struct btc_read_message *m)
{
    uint8_t sev = m->severity < 6 ? m->severity : BT_MSG_SEVERITY_INFO;
    if (m->source == BT_MSG_SOURCE_TRACY)
        sec->tracy_severity[sev]++;
    else
        sec->user_severity[sev]++;
    if (sev < BT_MSG_SEVERITY_ERROR)
        return BTC_OK;
    uint64_t k = sec->errors_seen++;
    if (k >= BTR_FIRST_ERRORS)
        return BTC_OK;
    sec->error_text[k] = strdup(m->text);
    if (!sec->error_text[k])
        return BTC_ERR_NOMEM;
    sec->error_time[k] = m->time;
    sec->error_severity[k] = sev;
    return BTC_OK;
}

static void print_counts(FILE *out, const char *who, const uint64_t *n)
{
    uint64_t all = 0;
    for (int i = 0; i < 6; i++)
        all += n[i];
    if (!all)
        return;
    fprintf(out, "%-8s %8" PRIu64, who, all);
    for (int i = 0; i < 6; i++)
        fprintf(out, "  %s %" PRIu64, severity_name[i], n[i]);
    fputc('\n', out);
}

void btr_messages_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out)
{
    if (!t->messages)
        return;
    fprintf(out, "\nMessages: %" PRIu64 "\n", t->messages);
    print_counts(out, "program", sec->user_severity);
    print_counts(out, "Tracy", sec->tracy_severity);
    if (!sec->errors_seen)
        return;
    fprintf(out, "first errors (%" PRIu64 " error and fatal messages):\n", sec->errors_seen);
    for (uint64_t i = 0; i < sec->errors_seen && i < BTR_FIRST_ERRORS; i++) {
        fprintf(out, "  %14.6f s  %-7s  ", (double)sec->error_time[i] / 1e9,
                severity_name[sec->error_severity[i]]);
        btr_text_put(out, sec->error_text[i]);
        fputc('\n', out);
    }
}
