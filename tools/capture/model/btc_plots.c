/* Plots: their points (integer, float, double), configuration, and the
 * plots the client's system reports feed (energy use, CPU usage). */
#define _GNU_SOURCE
#include "btc_model.h"
#include "btc_model_parts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds a point to a plot: its running min, max, sum and order, and the
 * point spooled. */
static int add_point(struct btc_model *m, size_t plot, int64_t time, double v)
{
    struct btc_plot *p = btc_vec_at(&m->plots, plot);
    if (v < p->min)
        p->min = v;
    if (v > p->max)
        p->max = v;
    p->sum += v;
    if (p->count && time < p->last_time)
        p->unsorted = 1;
    p->last_time = time;
    p->count++;
    struct btc_plot_rec r = {.plot = (uint32_t)plot, .time = time, .value = v};
    return btc_spool_append(&m->plot_points, &r, NULL) < 0 ? BTC_ERR_IO : BTC_OK;
}

/* SysPowerReport: energy (uJ) used since the last report of that name; the
 * plot shows Watts, from the second report on, as upstream's server does. */
int btc_plot_sys_power(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint64_t delta = bt_wire_get_u64(ev->p + 9), name = bt_wire_get_u64(ev->p + 17);
    uint64_t *pi = btc_map_get(&m->power_index, name);
    if (!pi) {
        struct btc_plot *p = btc_vec_push(&m->plots);
        if (!p || btc_map_put(&m->power_index, name, m->plots.len - 1) < 0 ||
            btcm_want_string(m, name) < 0)
            return btcm_nomem(err, errlen);
        p->key = name;
        p->type = BTC_PLOT_TYPE_POWER;
        p->format = BT_PLOT_FORMAT_WATT;
        p->fill = 1;
        p->min = INFINITY;
        p->max = -INFINITY;
        p->last_report = ev->time;
        return BTC_OK;
    }
    size_t plot = (size_t)*pi;
    struct btc_plot *p = btc_vec_at(&m->plots, plot);
    double dt = (double)ev->time - (double)p->last_report;
    p->last_report = ev->time;
    btcm_see_time(m, ev->time);
    double v = (double)delta * 1000.0 / dt;
    if (!isfinite(v))
        return BTC_OK;
    return add_point(m, plot, ev->time, v);
}

static int64_t get_plot(struct btc_model *m, uint64_t key)
{
    uint64_t *v = btc_map_get(&m->plot_index, key);
    if (v)
        return (int64_t)*v;
    struct btc_plot *p = btc_vec_push(&m->plots);
    if (!p)
        return BTC_ERR_NOMEM;
    p->key = key;
    p->fill = 1;
    p->min = INFINITY;
    p->max = -INFINITY;
    int64_t i = (int64_t)m->plots.len - 1;
    if (btc_map_put(&m->plot_index, key, (uint64_t)i) < 0)
        return BTC_ERR_NOMEM;
    if (!btc_map_get(&m->key_strings, key) && btcm_query(m, BT_QUERY_PLOT_NAME, key) < 0)
        return BTC_ERR_NOMEM;
    return i;
}

int btc_plot_data(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint64_t key = bt_wire_get_u64(ev->p + 1);
    double v;
    /* The value is 8 bytes wide except for PlotDataFloat (4; 21-byte event). */
    if (ev->type == BT_EV_PLOT_DATA_INT) {
        v = (double)(int64_t)bt_wire_get_u64(ev->p + 17);
    } else if (ev->type == BT_EV_PLOT_DATA_FLOAT) {
        uint32_t b32 = bt_wire_get_u32(ev->p + 17);
        float f;
        memcpy(&f, &b32, sizeof f);
        v = f;
    } else {
        uint64_t bits = bt_wire_get_u64(ev->p + 17);
        memcpy(&v, &bits, sizeof v);
    }
    if (!isfinite(v))
        return BTC_OK; /* upstream drops non-finite points too */
    int64_t pi = get_plot(m, key);
    if (pi < 0)
        return btcm_nomem(err, errlen);
    btcm_see_time(m, ev->time);
    return add_point(m, (size_t)pi, ev->time, v);
}

/* SysTimeReport: upstream's implicit "CPU usage" plot (percent). */
int btc_plot_sys_time(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    uint32_t bits = bt_wire_get_u32(ev->p + 9);
    float f;
    memcpy(&f, &bits, sizeof f);
    double v = f;
    if (!isfinite(v))
        return BTC_OK;
    if (m->systime_plot < 0) {
        struct btc_plot *p = btc_vec_push(&m->plots);
        if (!p)
            return btcm_nomem(err, errlen);
        p->type = BTC_PLOT_TYPE_SYSTIME;
        p->format = BT_PLOT_FORMAT_PERCENTAGE;
        p->fill = 1;
        p->min = INFINITY;
        p->max = -INFINITY;
        m->systime_plot = (int64_t)m->plots.len - 1;
    }
    btcm_see_time(m, ev->time);
    return add_point(m, (size_t)m->systime_plot, ev->time, v);
}

int btc_plot_config(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    const uint8_t *p = ev->p;
    int64_t pi = get_plot(m, bt_wire_get_u64(p + 1));
    if (pi < 0)
        return btcm_nomem(err, errlen);
    struct btc_plot *pl = btc_vec_at(&m->plots, (size_t)pi);
    pl->format = p[9];
    pl->step = p[10];
    pl->fill = p[11];
    pl->color = bt_wire_get_u32(p + 12) & 0xFFFFFF;
    return BTC_OK;
}
