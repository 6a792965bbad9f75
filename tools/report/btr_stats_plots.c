/* Plots for stats: per plot its points and their min, max and mean (the
 * reader keeps min and max; the sum comes from the points as they stream). */
#include <inttypes.h>

#include "btr_report.h"

int btr_plots_on_point(struct btr_sections *sec, const struct btc_read_point *p)
{
    while (sec->plot_sums.len <= p->plot) {
        double *d = btc_vec_push(&sec->plot_sums);
        if (!d)
            return BTC_ERR_NOMEM;
        *d = 0;
    }
    *(double *)btc_vec_at(&sec->plot_sums, p->plot) += p->value;
    return BTC_OK;
}

static const char *plot_type(uint8_t type)
{
    switch (type) {
    case 0:
        return "user";
    case 1:
        return "memory";
    case 2:
        return "system";
    case 3:
        return "power";
    default:
        return "other";
    }
}

const char *btr_plot_name(const struct btc_trace *t, const struct btc_read_plot *p)
{
    /* As upstream's GUI names them: the CPU usage plot by its type. */
    return p->type == 2   ? "CPU usage"
           : p->name >= 0 ? btr_demangle(btc_trace_string(t, p->name))
           : p->type == 1 ? "default pool"
                          : "(unnamed)";
}

void btr_plots_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out)
{
    if (!t->plots.len)
        return;
    fprintf(out, "\nPlots\n%-32s  %-7s  %10s  %14s  %14s  %14s\n", "plot", "type", "points", "min",
            "max", "mean");
    for (size_t i = 0; i < t->plots.len; i++) {
        const struct btc_read_plot *p = btc_vec_at(&t->plots, i);
        double sum = i < sec->plot_sums.len ? *(const double *)btc_vec_at(&sec->plot_sums, i) : 0;
        const char *name = btr_plot_name(t, p);
        char safe[512];
        fprintf(out, "%-32.32s  %-7s  %10" PRIu64, btr_text_safe(name, safe, sizeof safe),
                plot_type(p->type), p->points);
        if (p->points)
            fprintf(out, "  %14.6g  %14.6g  %14.6g\n", p->min, p->max, sum / (double)p->points);
        else
            fputc('\n', out);
    }
}
