/* The stats sections after the zone table, gathered in the same read as the
 * zones: this file hands each callback of the reader to its section's file
 * and prints the sections in order. */
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

void btr_sections_init(struct btr_sections *sec)
{
    memset(sec, 0, sizeof *sec);
    btc_vec_init(&sec->pools, sizeof(struct btr_pool_stat));
    btc_vec_init(&sec->leak_sites, sizeof(struct btr_leak_site));
    btc_map_init(&sec->leak_index);
    btc_vec_init(&sec->pending, sizeof(struct btr_pending_free));
    btc_vec_init(&sec->plot_sums, sizeof(double));
    btc_vec_init(&sec->frame_sets, sizeof(struct btr_frame_stat));
    sec->pool = UINT32_MAX;
}

void btr_sections_free(struct btr_sections *sec)
{
    btc_vec_free(&sec->pools);
    btc_vec_free(&sec->leak_sites);
    btc_map_free(&sec->leak_index);
    btc_vec_free(&sec->pending);
    btc_vec_free(&sec->plot_sums);
    btr_frames_free(sec);
    for (int i = 0; i < BTR_FIRST_ERRORS; i++)
        free(sec->error_text[i]);
}

int btr_sections_message(void *ctx, const struct btc_trace *t, const struct btc_read_message *m)
{
    (void)t;
    return btr_messages_on_message(ctx, m);
}

static int on_mem(void *ctx, const struct btc_trace *t, const struct btc_read_mem *m)
{
    return btr_memory_on_event(ctx, t, m);
}

static int on_point(void *ctx, const struct btc_trace *t, const struct btc_read_point *p)
{
    (void)t;
    return btr_plots_on_point(ctx, p);
}

static int on_frame(void *ctx, const struct btc_trace *t, const struct btc_read_frame *f)
{
    (void)t;
    return btr_frames_on_frame(ctx, f);
}

void btr_sections_callbacks(struct btc_read_more *more)
{
    more->mem = on_mem;
    more->point = on_point;
    more->frame = on_frame;
}

void btr_sections_finish(struct btr_sections *sec, const struct btc_trace *t)
{
    btr_memory_finish(sec);
    btr_frames_finish(sec, t);
}

void btr_print_sections(const struct btr_sections *sec, const struct btc_trace *t, FILE *out)
{
    btr_frames_print(sec, t, out);
    btr_memory_print(sec, t, out);
    btr_locks_print(t, out);
    btr_messages_print(sec, t, out);
    btr_plots_print(sec, t, out);
}
