/* The trace a .tracy reader fills (btc_tracy.h): its set-up and freeing,
 * and the lookups of its strings and source locations. Below the reader's
 * units, which all use it. */
#define _GNU_SOURCE
#include <string.h>

#include "btc_tracy_read_parts.h"

void btcr_trace_init(struct btc_trace *t)
{
    memset(t, 0, sizeof *t);
    btc_strtab_init(&t->strings);
    btc_vec_init(&t->string_keys, sizeof(uint64_t));
    btc_map_init(&t->key_string);
    btc_vec_init(&t->statics, sizeof(struct btc_read_srcloc));
    btc_vec_init(&t->payloads, sizeof(struct btc_read_srcloc));
    btc_vec_init(&t->framesets, sizeof(struct btc_read_frameset));
    btc_vec_init(&t->threads, sizeof(struct btc_read_thread));
    btc_vec_init(&t->pools, sizeof(struct btc_read_pool));
    btc_vec_init(&t->plots, sizeof(struct btc_read_plot));
    btc_vec_init(&t->app_info, sizeof(uint32_t));
    btc_vec_init(&t->gpu_names, sizeof(int64_t));
    btc_vec_init(&t->gpu_stats, sizeof(struct btc_read_gpu_stat));
    btc_vec_init(&t->sampled, sizeof(struct btc_read_sampled));
    btc_map_init(&t->cs_counts);
    btc_map_init(&t->sample_top);
    btc_vec_init(&t->lock_stats, sizeof(struct btc_read_lock));
    btc_map_init(&t->leak_cs);
}

void btc_trace_free(struct btc_trace *t)
{
    btc_strtab_free(&t->strings);
    btc_vec_free(&t->string_keys);
    btc_map_free(&t->key_string);
    btc_vec_free(&t->statics);
    btc_vec_free(&t->payloads);
    btc_vec_free(&t->framesets);
    btc_vec_free(&t->threads);
    btc_vec_free(&t->pools);
    btc_vec_free(&t->plots);
    btc_vec_free(&t->app_info);
    btc_vec_free(&t->gpu_names);
    btc_vec_free(&t->gpu_stats);
    btc_vec_free(&t->sampled);
    btc_map_free(&t->cs_counts);
    btc_map_free(&t->sample_top);
    btc_vec_free(&t->lock_stats);
    btc_map_free(&t->leak_cs);
}

const char *btc_trace_string(const struct btc_trace *t, int64_t idx)
{
    if (idx < 0)
        return "";
    const char *s = btc_strtab_get(&t->strings, (uint32_t)idx, NULL);
    return s ? s : "";
}

const struct btc_read_srcloc *btc_trace_srcloc(const struct btc_trace *t, int16_t id)
{
    if (id > 0 && (size_t)id <= t->statics.len)
        return btc_vec_at(&t->statics, (size_t)id - 1);
    if (id < 0 && (size_t)(-(int)id) <= t->payloads.len)
        return btc_vec_at(&t->payloads, (size_t)(-(int)id) - 1);
    return NULL;
}
