/* The memory pools' usage for the Chrome export needs every allocation and
 * free in (pool, time) order, and a trace can hold hundreds of millions of
 * them: they are sorted in memory chunks of a bounded size, each chunk
 * written as a sorted run to an unlinked spool file, and the runs merged. */
#define _GNU_SOURCE
#include "btr_memsort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Records of one run each merge cursor reads at a time, at most. */
#define CURSOR_RECORDS 4096

/* By pool, then time; at the same time a free before an allocation, as
 * upstream's memory plot counts them; then by size, for a stable file. */
static int change_order(const void *a, const void *b)
{
    const struct btr_mem_change *x = a, *y = b;
    if (x->pool != y->pool)
        return x->pool < y->pool ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->is_free != y->is_free)
        return x->is_free ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

int btr_memsort_init(struct btr_memsort *s, uint64_t budget, const char *dir)
{
    memset(s, 0, sizeof *s);
    s->dir = dir;
    uint64_t n = budget / sizeof(struct btr_mem_change);
    s->cap = n < 1024 ? 1024 : (size_t)n;
    s->budget = s->cap * sizeof(struct btr_mem_change);
    btc_vec_init(&s->runs, sizeof(uint64_t));
    s->spool.fd = -1;
    return 0;
}

void btr_memsort_free(struct btr_memsort *s)
{
    free(s->chunk);
    btc_vec_free(&s->runs);
    if (s->spool.fd >= 0)
        btc_spool_close(&s->spool);
    memset(s, 0, sizeof *s);
    s->spool.fd = -1;
}

/* Sorts the chunk and appends it to the spool as one run. */
static int spill(struct btr_memsort *s, char *err, size_t errlen)
{
    if (s->spool.fd < 0 &&
        btc_spool_open(&s->spool, s->dir, sizeof(struct btr_mem_change), err, errlen) < 0)
        return -1;
    qsort(s->chunk, s->len, sizeof *s->chunk, change_order);
    for (size_t i = 0; i < s->len; i++) {
        if (btc_spool_append(&s->spool, &s->chunk[i], NULL) < 0) {
            snprintf(err, errlen, "cannot write the memory events' spool in %s: %s", s->dir,
                     strerror(errno));
            return -1;
        }
    }
    uint64_t *end = btc_vec_push(&s->runs);
    if (!end) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *end = s->spool.count;
    s->len = 0;
    return 0;
}

int btr_memsort_add(struct btr_memsort *s, const struct btr_mem_change *c, char *err, size_t errlen)
{
    if (!s->chunk) {
        s->chunk = malloc(s->cap * sizeof *s->chunk);
        if (!s->chunk) {
            snprintf(err, errlen, "out of memory for %zu memory events", s->cap);
            return -1;
        }
    }
    if (s->len == s->cap && spill(s, err, errlen) < 0)
        return -1;
    s->chunk[s->len++] = *c;
    return 0;
}

struct cursor {
    uint64_t next, end; /* records of the run not yet in buf */
    struct btr_mem_change *buf;
    size_t len, pos;
};

static int cursor_fill(struct btr_memsort *s, struct cursor *c, size_t want)
{
    uint64_t n = c->end - c->next;
    if (n > want)
        n = want;
    size_t bytes = (size_t)n * sizeof *c->buf;
    off_t off = (off_t)(c->next * sizeof *c->buf);
    for (size_t got = 0; got < bytes;) {
        ssize_t r = pread(s->spool.fd, (char *)c->buf + got, bytes - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    c->next += n;
    c->len = (size_t)n;
    c->pos = 0;
    return 0;
}

/* A binary heap of cursor indices by their current record. */
static int before(const struct cursor *cs, uint32_t a, uint32_t b)
{
    return change_order(&cs[a].buf[cs[a].pos], &cs[b].buf[cs[b].pos]) < 0;
}

static void sift_down(const struct cursor *cs, uint32_t *heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && before(cs, heap[l], heap[m]))
            m = l;
        if (l + 1 < n && before(cs, heap[l + 1], heap[m]))
            m = l + 1;
        if (m == i)
            return;
        uint32_t t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

static int merge(struct btr_memsort *s, btr_mem_change_fn fn, void *ctx, char *err, size_t errlen)
{
    size_t k = s->runs.len;
    /* The cursors share what the chunk used. */
    size_t per = s->budget / sizeof(struct btr_mem_change) / k;
    if (per > CURSOR_RECORDS)
        per = CURSOR_RECORDS;
    if (per < 16)
        per = 16;
    struct cursor *cs = calloc(k, sizeof *cs);
    uint32_t *heap = calloc(k, sizeof *heap);
    struct btr_mem_change *bufs = malloc(k * per * sizeof *bufs);
    int rc = 0;
    if (!cs || !heap || !bufs) {
        snprintf(err, errlen, "out of memory to merge %zu runs of memory events", k);
        rc = -1;
    }
    if (rc == 0 && btc_spool_flush(&s->spool) < 0) {
        snprintf(err, errlen, "cannot write the memory events' spool in %s: %s", s->dir,
                 strerror(errno));
        rc = -1;
    }
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        cs[i].next = i ? *(uint64_t *)btc_vec_at(&s->runs, i - 1) : 0;
        cs[i].end = *(uint64_t *)btc_vec_at(&s->runs, i);
        cs[i].buf = bufs + i * per;
        if (cs[i].next == cs[i].end)
            continue;
        if (cursor_fill(s, &cs[i], per) < 0) {
            snprintf(err, errlen, "cannot read the memory events' spool back");
            rc = -1;
        }
        heap[n++] = (uint32_t)i;
    }
    for (size_t i = n; rc == 0 && i-- > 0;)
        sift_down(cs, heap, n, i);
    while (rc == 0 && n > 0) {
        struct cursor *c = &cs[heap[0]];
        rc = fn(ctx, &c->buf[c->pos]);
        if (rc < 0)
            break;
        if (++c->pos == c->len) {
            if (c->next == c->end) {
                heap[0] = heap[--n];
            } else if (cursor_fill(s, c, per) < 0) {
                snprintf(err, errlen, "cannot read the memory events' spool back");
                rc = -1;
                break;
            }
        }
        sift_down(cs, heap, n, 0);
    }
    free(cs);
    free(heap);
    free(bufs);
    return rc;
}

int btr_memsort_each(struct btr_memsort *s, btr_mem_change_fn fn, void *ctx, char *err,
                     size_t errlen)
{
    if (s->runs.len == 0) {
        /* Everything fit in one chunk: no file. */
        if (s->len)
            qsort(s->chunk, s->len, sizeof *s->chunk, change_order);
        for (size_t i = 0; i < s->len; i++) {
            int rc = fn(ctx, &s->chunk[i]);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    if (s->len && spill(s, err, errlen) < 0)
        return -1;
    free(s->chunk);
    s->chunk = NULL;
    return merge(s, fn, ctx, err, errlen);
}
