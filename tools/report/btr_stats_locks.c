/* Lock contention for stats: per lock, its threads and events, how many
 * waits ended in an obtain and how long they took (total, mean, longest),
 * locks with the most waiting first. The reader measures the waits
 * (btc_tracy_read_locks.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

static int by_wait(const void *a, const void *b)
{
    const struct btc_read_lock *x = a, *y = b;
    if (x->wait_ns != y->wait_ns)
        return x->wait_ns > y->wait_ns ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The lock's name: its LockName, else what its source location says (the
 * variable, for TracyLockable), else its id. */
static const char *lock_name(const struct btc_trace *t, const struct btc_read_lock *l, char *buf,
                             size_t n)
{
    if (l->name >= 0)
        return btr_demangle(btc_trace_string(t, l->name));
    const struct btc_read_srcloc *loc = btc_trace_srcloc(t, l->srcloc);
    const char *s = loc ? btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function) : "";
    if (*s)
        return btr_demangle(s);
    snprintf(buf, n, "lock %u", l->id);
    return buf;
}

void btr_locks_print(const struct btc_trace *t, FILE *out)
{
    if (!t->lock_stats.len)
        return;
    struct btc_read_lock *v = malloc(t->lock_stats.len * sizeof *v);
    if (!v)
        return;
    memcpy(v, t->lock_stats.data, t->lock_stats.len * sizeof *v);
    qsort(v, t->lock_stats.len, sizeof *v, by_wait);
    fprintf(out, "\nLocks (wait: from a thread's wait to its obtain)\n");
    fprintf(out, "%-32s  %-8s  %7s  %10s  %10s  %14s  %12s  %12s\n", "lock", "type", "threads",
            "events", "waits", "wait ns", "mean ns", "max ns");
    char buf[32], safe[512];
    for (size_t i = 0; i < t->lock_stats.len; i++) {
        const struct btc_read_lock *l = &v[i];
        fprintf(out,
                "%-32.32s  %-8s  %7" PRIu64 "  %10" PRIu64 "  %10" PRIu64 "  %14" PRId64
                "  %12" PRId64 "  %12" PRId64 "\n",
                btr_text_safe(lock_name(t, l, buf, sizeof buf), safe, sizeof safe),
                l->type ? "shared" : "lockable", l->threads, l->events, l->waits, l->wait_ns,
                l->waits ? l->wait_ns / (int64_t)l->waits : 0, l->wait_max_ns);
    }
    free(v);
}
