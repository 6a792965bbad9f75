/* The system-tracing part of stats: the CPU topology, context switches and
 * CPU samples per thread of the program, and the other threads the CPUs
 * ran (those a trace names through context switches). */
#include <inttypes.h>

#include "btr_report.h"

void btr_print_system(const struct btc_trace *t, FILE *out)
{
    if (!t->cpu_threads && !t->ctx_switches && !t->samples)
        return;
    fprintf(out,
            "\nSystem: %" PRIu64 " logical CPUs in the topology, %" PRIu64
            " context switches on the CPUs, %" PRIu64 " threads of other programs named\n",
            t->cpu_threads, t->cpu_ctx_switches, t->external_names);
    size_t shown = 0;
    for (size_t i = 0; i < t->threads.len; i++) {
        const struct btc_read_thread *th = btc_vec_at(&t->threads, i);
        if (!th->ctx_switches && !th->samples)
            continue;
        if (shown++ == 0)
            fprintf(out, "%-32s  %10s  %12s  %12s  %12s\n", "thread", "id", "ctx switches",
                    "CPU samples", "at switches");
        const char *name = th->name >= 0 ? btc_trace_string(t, th->name) : NULL;
        char safe[512];
        fprintf(out, "%-32s  %10" PRIu64 "  %12" PRIu64 "  %12" PRIu64 "  %12" PRIu64 "\n",
                name ? btr_text_safe(name, safe, sizeof safe) : "?", th->id, th->ctx_switches,
                th->samples, th->ctx_samples);
    }
    if (!shown)
        fprintf(out, "no thread has context switches or CPU samples in this trace\n");
}

void btr_print_crash(const struct btc_trace *t, FILE *out)
{
    if (!t->crash_thread)
        return;
    const char *text = t->crash_text >= 0 ? btc_trace_string(t, t->crash_text) : NULL;
    fprintf(out, "\nCrash: thread %" PRIu64 " at %.6f s: ", t->crash_thread,
            (double)t->crash_time / 1e9);
    btr_text_put(out, text ? text : "(no text)"); /* the program's own words */
    fprintf(out, "%s\n", t->crash_callstack ? "" : " (no callstack)");
}
