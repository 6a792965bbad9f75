/* The parts of `boardtrace-report stats` beyond CPU zones: GPU zone
 * statistics per context and source location (durations on the GPU), the
 * sampling summary (functions by timer samples, self and inclusive) and
 * what code transfer stored. */
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

static int by_gpu_total(const void *a, const void *b)
{
    const struct btc_read_gpu_stat *x = a, *y = b;
    if (x->ctx != y->ctx)
        return x->ctx < y->ctx ? -1 : 1;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return x->srcloc - y->srcloc;
}

void btr_print_gpu(const struct btc_trace *t, FILE *out)
{
    if (!t->gpu_names.len)
        return;
    struct btc_read_gpu_stat *v = malloc((t->gpu_stats.len + 1) * sizeof *v);
    if (!v)
        return;
    if (t->gpu_stats.len)
        memcpy(v, t->gpu_stats.data, t->gpu_stats.len * sizeof *v);
    qsort(v, t->gpu_stats.len, sizeof *v, by_gpu_total);
    for (size_t c = 0; c < t->gpu_names.len; c++) {
        int64_t name = *(const int64_t *)btc_vec_at(&t->gpu_names, c);
        uint64_t zones = 0;
        for (size_t i = 0; i < t->gpu_stats.len; i++)
            zones += v[i].ctx == c ? v[i].zones : 0;
        char safe[512];
        fprintf(out, "\nGPU context %zu \"%s\": %llu zones (times on the GPU)\n", c,
                btr_text_safe(name >= 0 ? btc_trace_string(t, name) : "", safe, sizeof safe),
                (unsigned long long)zones);
        fprintf(out, "%-32s  %-28s  %10s  %14s  %12s  %12s  %12s\n", "zone", "source location",
                "count", "total ns", "mean ns", "min ns", "max ns");
        for (size_t i = 0; i < t->gpu_stats.len; i++) {
            const struct btc_read_gpu_stat *g = &v[i];
            if (g->ctx != c || !g->count)
                continue;
            const struct btc_read_srcloc *loc = btc_trace_srcloc(t, g->srcloc);
            const char *zn =
                loc ? btr_demangle(btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function))
                    : "";
            char where[512], file[512], zone[512];
            snprintf(where, sizeof where, "%s:%u",
                     btr_text_safe(loc ? btc_trace_string(t, loc->file) : "", file, sizeof file),
                     loc ? loc->line : 0);
            fprintf(out, "%-32.32s  %-28.28s  %10llu  %14lld  %12lld  %12lld  %12lld\n",
                    btr_text_safe(zn, zone, sizeof zone), where, (unsigned long long)g->count,
                    (long long)g->total_ns, (long long)(g->total_ns / (int64_t)g->count),
                    (long long)g->min_ns, (long long)g->max_ns);
        }
    }
    free(v);
}

static int by_self(const void *a, const void *b)
{
    const struct btc_read_sampled *x = a, *y = b;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->inclusive != y->inclusive)
        return x->inclusive > y->inclusive ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

void btr_print_samples(const struct btc_trace *t, FILE *out, size_t top)
{
    if (!t->samples)
        return;
    fprintf(out, "\nCPU samples: %llu (%llu at timer ticks, %llu at context switches)\n",
            (unsigned long long)t->samples, (unsigned long long)t->timer_samples,
            (unsigned long long)t->ctx_samples);
    if (!t->sampled.len)
        return;
    struct btc_read_sampled *v = malloc(t->sampled.len * sizeof *v);
    if (!v)
        return;
    memcpy(v, t->sampled.data, t->sampled.len * sizeof *v);
    qsort(v, t->sampled.len, sizeof *v, by_self);
    fprintf(out, "%-48s  %10s  %7s  %10s  %7s  %s\n", "function (top by timer samples)", "self",
            "self %", "inclusive", "incl %", "image");
    double all = t->timer_samples ? (double)t->timer_samples : 1.0;
    for (size_t i = 0; i < t->sampled.len && i < top; i++) {
        const char *name =
            v[i].name >= 0 ? btr_demangle(btc_trace_string(t, v[i].name)) : "[unknown]";
        char safe[512];
        fprintf(out, "%-48.48s  %10llu  %6.2f%%  %10llu  %6.2f%%  ",
                btr_text_safe(name, safe, sizeof safe), (unsigned long long)v[i].self,
                100.0 * (double)v[i].self / all, (unsigned long long)v[i].inclusive,
                100.0 * (double)v[i].inclusive / all);
        btr_text_put(out, v[i].image >= 0 ? btc_trace_string(t, v[i].image) : "");
        fputc('\n', out);
    }
    free(v);
}

void btr_print_code(const struct btc_trace *t, FILE *out)
{
    if (!t->source_files && !t->symbol_code)
        return;
    fprintf(out,
            "\nCode transfer: %llu source files (%llu bytes), code of %llu symbols (%llu bytes)\n",
            (unsigned long long)t->source_files, (unsigned long long)t->source_file_bytes,
            (unsigned long long)t->symbol_code, (unsigned long long)t->symbol_code_bytes);
}
