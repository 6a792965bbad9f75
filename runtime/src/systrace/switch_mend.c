/* The mending of the kernel's context switch stream (see switch_mend.h). */
#include "switch_mend.h"

#include <stdlib.h>
#include <string.h>

#include "boardtrace/wire.h"

#define FIRST_CAP 4096
#define MAX_CAP   65536 /* beyond it, threads not running are forgotten */

int bt_switch_mend_init(struct bt_switch_mend *m)
{
    memset(m, 0, sizeof *m);
    m->threads = calloc(FIRST_CAP, sizeof *m->threads);
    if (!m->threads)
        return -1;
    m->cap = FIRST_CAP;
    return 0;
}

void bt_switch_mend_free(struct bt_switch_mend *m)
{
    free(m->threads);
    memset(m, 0, sizeof *m);
}

static struct bt_mend_thread *slot(struct bt_mend_thread *t, size_t cap, uint32_t tid)
{
    size_t i = (tid * 2654435761u) & (cap - 1);
    while (t[i].tid && t[i].tid != tid)
        i = (i + 1) & (cap - 1);
    return &t[i];
}

static void rehash(struct bt_switch_mend *m)
{
    size_t cap = m->cap < MAX_CAP ? m->cap * 2 : m->cap;
    struct bt_mend_thread *t = calloc(cap, sizeof *t);
    if (!t)
        return;
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++) {
        const struct bt_mend_thread *e = &m->threads[i];
        if (!e->tid || (cap == m->cap && e->cpu == BT_MEND_NO_CPU))
            continue;
        *slot(t, cap, e->tid) = *e;
        n++;
    }
    free(m->threads);
    m->threads = t;
    m->cap = cap;
    m->nthreads = n;
}

/* The thread's entry, made when absent; NULL for the idle task, or when the
 * table is full and could not grow. */
static struct bt_mend_thread *thread(struct bt_switch_mend *m, uint32_t tid, int make)
{
    if (!tid || !m->threads)
        return NULL;
    struct bt_mend_thread *e = slot(m->threads, m->cap, tid);
    if (e->tid || !make)
        return e->tid ? e : NULL;
    if ((m->nthreads + 1) * 4 > m->cap * 3) {
        rehash(m);
        if ((m->nthreads + 1) * 4 > m->cap * 3)
            return NULL;
        e = slot(m->threads, m->cap, tid);
    }
    e->tid = tid;
    e->cpu = BT_MEND_NO_CPU;
    e->out = e->woken = INT64_MIN;
    m->nthreads++;
    return e;
}

void bt_switch_mend_wakeup(struct bt_switch_mend *m, uint32_t tid, int64_t time)
{
    struct bt_mend_thread *e = thread(m, tid, 1);
    if (e && time > e->woken)
        e->woken = time;
}

static int64_t later(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Records a switch on its CPU and threads, sent or put in. */
static void apply(struct bt_switch_mend *m, const struct bt_switch *s)
{
    /* one entry at a time: making the second may move the table */
    struct bt_mend_thread *old = thread(m, s->old_thread, 1);
    if (old) {
        old->cpu = BT_MEND_NO_CPU;
        old->out = s->time;
    }
    struct bt_mend_thread *new = thread(m, s->new_thread, 1);
    if (new)
        new->cpu = s->cpu;
    m->running[s->cpu] = s->new_thread;
    m->last[s->cpu] = s->time;
    m->known[s->cpu] = 1;
}

/* Puts in a switch on `cpu` from what runs there to `to`, at the earliest
 * time after everything known of both, but not after `limit`. */
static void put_in(struct bt_switch_mend *m, uint8_t cpu, uint32_t to, int64_t limit,
                   struct bt_switch *out, unsigned *n)
{
    int64_t time = m->known[cpu] ? m->last[cpu] : INT64_MIN;
    const struct bt_mend_thread *e = thread(m, to, 0);
    if (e)
        time = later(time, later(e->out, e->woken));
    if (time == INT64_MIN || time > limit)
        time = limit;
    out[*n] = (struct bt_switch){
        .time = time,
        .old_thread = m->known[cpu] ? m->running[cpu] : 0,
        .new_thread = to,
        .cpu = cpu,
        /* why it stopped is not known; it had not ended */
        .state = BT_THREAD_STATE_RUNNING,
    };
    apply(m, &out[*n]);
    (*n)++;
    m->mended++;
}

unsigned bt_switch_mend(struct bt_switch_mend *m, const struct bt_switch *s,
                        struct bt_switch out[BT_MEND_MAX])
{
    unsigned n = 0;
    if (!m->threads)
        return 0;
    uint8_t cpu = s->cpu;
    /* The old thread must be running on this CPU: stopped where else it
     * is said to run, and started here (on a CPU not seen before, only if
     * the thread was seen switching: a viewer ignores the end of a run it
     * never saw start). */
    const struct bt_mend_thread *old = thread(m, s->old_thread, 0);
    if (old && old->cpu != BT_MEND_NO_CPU && old->cpu != cpu)
        put_in(m, (uint8_t)old->cpu, 0, s->time, out, &n);
    old = thread(m, s->old_thread, 0);
    int switched = old && (old->cpu != BT_MEND_NO_CPU || old->out != INT64_MIN);
    if (m->known[cpu] ? m->running[cpu] != s->old_thread : switched)
        put_in(m, cpu, s->old_thread, s->time, out, &n);
    /* The new thread must not be running anywhere else. */
    const struct bt_mend_thread *new = thread(m, s->new_thread, 0);
    if (new &&new->cpu != BT_MEND_NO_CPU &&new->cpu != cpu)
        put_in(m, (uint8_t) new->cpu, 0, s->time, out, &n);
    apply(m, s);
    return n;
}
