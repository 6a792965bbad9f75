/* Transfer progress (see btd_progress.h). Redraws at most ten times a second
 * so a fast transfer is not slowed down by the terminal. */
#include "btd_progress.h"

#include "btd_msg.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void btd_progress_start(struct btd_progress *p, const char *label, uint64_t total, uint64_t already)
{
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "%s", label);
    p->total = total;
    p->done = already;
    p->first = already;
    p->start = btd_now();
    p->tty = btd_verbosity >= 1 && isatty(STDERR_FILENO);
}

static void draw(struct btd_progress *p, double now)
{
    char done[32], total[32], rate[32];
    double secs = now - p->start;
    btd_format_size((double)p->done, done, sizeof done);
    btd_format_size((double)p->total, total, sizeof total);
    btd_format_size(secs > 0 ? (double)(p->done - p->first) / secs : 0, rate, sizeof rate);
    int pct = p->total ? (int)(100.0 * (double)p->done / (double)p->total) : 100;
    char bar[21];
    int fill = pct / 5;
    for (int i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = '\0';
    fprintf(stderr, "\r%-28.28s [%s] %3d%% %10s / %-10s %10s/s ", p->label, bar, pct, done, total,
            rate);
    fflush(stderr);
}

void btd_progress_update(struct btd_progress *p, uint64_t done)
{
    p->done = done;
    if (!p->tty)
        return;
    double now = btd_now();
    if (now - p->last_draw < 0.1)
        return;
    p->last_draw = now;
    draw(p, now);
}

void btd_progress_finish(struct btd_progress *p, bool ok)
{
    double secs = btd_now() - p->start;
    if (p->tty)
        fprintf(stderr, "\r%80s\r", "");
    if (!ok)
        return;
    char size[32], rate[32];
    btd_format_size((double)p->done, size, sizeof size);
    btd_format_size(secs > 0 ? (double)(p->done - p->first) / secs : 0, rate, sizeof rate);
    btd_note("%s: %s in %.2f s (%s/s)%s", p->label, size, secs, rate, p->first ? ", resumed" : "");
}
