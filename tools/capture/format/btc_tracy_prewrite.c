/* The .tracy writer's head start (see btc_tracy_prewrite.h): the chosen
 * thread's timeline records expanded to the file's encoding as flushes
 * hand them over, cut into 64 KiB blocks, each compressed on its own and
 * spooled as the file stores it, in a thread fed through a queue. */
#define _GNU_SOURCE
#include "btc_tracy_prewrite.h"

#include <errno.h>
#include <lz4.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "boardtrace/wire.h"
#include "btc_format.h"
#include "btc_util.h"

#define BLOCK BTC_FILE_BLOCK_SIZE
/* Chunks handed over and not yet expanded (each up to the timeline's
 * 512 KiB buffer): past that the decoding waits for this thread. */
#define QUEUE_CHUNKS 4u
/* Blocks waiting for the end of a zone they hold the begin of (deep
 * recursion open at a flush): past that, 16 MiB, the head start stops. */
#define MAX_WAITING 256u
/* The read-back window for the writer, a few blocks at a time. */
#define READ_BYTES (1024u * 1024u)

enum msg_kind { MSG_CHUNK, MSG_PATCH, MSG_FINISH };

struct msg {
    struct msg *next;
    enum msg_kind kind;
    uint64_t off; /* chunk: its spool offset; patch: the patched bytes' */
    size_t len;
    uint8_t data[]; /* a chunk's bytes, or a patch's */
};

/* A zone of the thread still open at the last flush seen, or begun since:
 * the spool offset of its extra and child count, and their offset in the
 * expanded timeline. Pushed in order, so both increase up the stack. */
struct open_zone {
    uint64_t at, pos;
};

/* A whole block not yet compressed, raw: number and bytes. */
struct raw_block {
    uint64_t n;
    uint8_t *b;
};

struct btc_prewrite {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct msg *head, *tail;
    unsigned chunks; /* chunks queued */
    int off;         /* the thread gave up: messages are dropped */
    int finished;    /* the thread has ended */
    struct msg *fin; /* the message that ends it, made at the start */
    struct btc_tl_tap tap;

    /* Owned by the thread until it ends, then by the writer. */
    int lz4;
    int have_thread;
    uint32_t tid; /* the model's index of the thread whose timeline this is */
    uint8_t *cur; /* the block being filled */
    size_t cur_len;
    uint64_t blocks; /* whole blocks, the number of the next */
    struct open_zone *stack;
    size_t depth, stack_cap;
    struct raw_block *pending; /* whole blocks of the chunk being expanded */
    size_t npending, pending_cap;
    struct raw_block *waiting; /* blocks holding an open zone's fields, by number */
    size_t nwaiting, waiting_cap;
    uint8_t **spare; /* free block buffers */
    size_t nspare, spare_cap;
    ZSTD_CCtx *z;
    uint8_t *out; /* [u32 size][compressed] */
    size_t out_cap;
    struct btc_spool spool; /* the compressed blocks, in the order compressed */
    uint64_t *index;        /* per block: its offset in the spool */
    size_t index_cap;
    uint8_t *rbuf; /* the writer's read-back window: READ_BYTES at roff */
    uint64_t roff;
    size_t rlen;
};

/* ---- The thread's side ---------------------------------------------- */

static void give_up(struct btc_prewrite *p)
{
    pthread_mutex_lock(&p->mu);
    p->off = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static uint8_t *new_block(struct btc_prewrite *p)
{
    return p->nspare ? p->spare[--p->nspare] : malloc(BLOCK);
}

static void free_block(struct btc_prewrite *p, uint8_t *b)
{
    if (p->nspare < p->spare_cap)
        p->spare[p->nspare++] = b;
    else
        free(b);
}

/* Grows *v (of *cap items of size) to hold one more than n. */
static int grow(void *v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*(void **)v, c * size);
    if (!q)
        return -1;
    *(void **)v = q;
    *cap = c;
    return 0;
}

/* Compresses block n and spools it; its buffer goes back to the spares. */
static int store(struct btc_prewrite *p, uint64_t n, uint8_t *b)
{
    size_t len;
    if (p->lz4) {
        int k = LZ4_compress_default((const char *)b, (char *)p->out + 4, (int)BLOCK,
                                     (int)(p->out_cap - 4));
        len = k > 0 ? (size_t)k : 0;
    } else {
        size_t k = ZSTD_compress2(p->z, p->out + 4, p->out_cap - 4, b, BLOCK);
        len = ZSTD_isError(k) ? 0 : k;
    }
    free_block(p, b);
    if (!len)
        return -1;
    bt_wire_put_u32(p->out, (uint32_t)len);
    if (n >= p->index_cap) {
        size_t c = p->index_cap ? p->index_cap : 256;
        while (c <= n)
            c *= 2;
        uint64_t *q = realloc(p->index, c * sizeof *q);
        if (!q)
            return -1;
        p->index = q;
        p->index_cap = c;
    }
    p->index[n] = btc_spool_bytes(&p->spool);
    return btc_spool_write(&p->spool, p->out, len + 4) < 0 ? -1 : 0;
}

/* Whether an open zone's fields lie in block n. */
static int holds(const struct btc_prewrite *p, uint64_t n)
{
    uint64_t lo = n * BLOCK, hi = lo + BLOCK;
    size_t a = 0, b = p->depth; /* the first zone whose fields end after lo */
    while (a < b) {
        size_t m = (a + b) / 2;
        if (p->stack[m].pos + 8 <= lo)
            a = m + 1;
        else
            b = m;
    }
    return a < p->depth && p->stack[a].pos < hi;
}

static struct raw_block *find_waiting(struct btc_prewrite *p, uint64_t n)
{
    size_t a = 0, b = p->nwaiting;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (p->waiting[m].n < n)
            a = m + 1;
        else
            b = m;
    }
    return a < p->nwaiting && p->waiting[a].n == n ? &p->waiting[a] : NULL;
}

/* After a chunk: its whole blocks are stored, or wait for a zone's end. */
static int settle(struct btc_prewrite *p)
{
    for (size_t i = 0; i < p->npending; i++) {
        struct raw_block *r = &p->pending[i];
        if (!holds(p, r->n)) {
            uint8_t *b = r->b;
            r->b = NULL; /* store takes it, on failure too */
            if (store(p, r->n, b) < 0)
                return -1;
            continue;
        }
        if (p->nwaiting >= MAX_WAITING ||
            grow(&p->waiting, &p->waiting_cap, p->nwaiting, sizeof *p->waiting) < 0)
            return -1;
        p->waiting[p->nwaiting++] = *r;
        r->b = NULL;
    }
    p->npending = 0;
    return 0;
}

/* A zone ended: the waiting blocks that held its fields and no other
 * open zone's are stored. */
static int release(struct btc_prewrite *p, const struct open_zone *z)
{
    for (uint64_t n = z->pos / BLOCK; n <= (z->pos + 7) / BLOCK; n++) {
        struct raw_block *r = find_waiting(p, n);
        if (!r || holds(p, n))
            continue;
        uint8_t *b = r->b;
        size_t i = (size_t)(r - p->waiting);
        memmove(r, r + 1, (p->nwaiting - i - 1) * sizeof *r);
        p->nwaiting--;
        if (store(p, n, b) < 0)
            return -1;
    }
    return 0;
}

/* Appends expanded bytes to the timeline (none: only passes on the
 * block when it is full). */
static int emit(struct btc_prewrite *p, const uint8_t *b, size_t n)
{
    while (n || p->cur_len == BLOCK) {
        size_t k = BLOCK - p->cur_len;
        if (k > n)
            k = n;
        if (k) {
            memcpy(p->cur + p->cur_len, b, k);
            p->cur_len += k;
            b += k;
            n -= k;
        }
        if (p->cur_len < BLOCK)
            continue;
        if (grow(&p->pending, &p->pending_cap, p->npending, sizeof *p->pending) < 0)
            return -1;
        p->pending[p->npending++] = (struct raw_block){p->blocks++, p->cur};
        p->cur_len = 0;
        if (!(p->cur = new_block(p)))
            return -1;
    }
    return 0;
}

/* A delta of n bytes (1 to 8), little-endian. */
static inline uint64_t load(const uint8_t *b, unsigned n)
{
    uint64_t v = 0;
    for (unsigned k = 0; k < n; k++)
        v |= (uint64_t)b[k] << (8 * k);
    return v;
}

/* One fragment of the thread's records (see btc_timeline.h), at spool
 * offset base: expanded, and its begins and ends kept track of. */
static int records(struct btc_prewrite *p, const uint8_t *in, size_t n, uint64_t base)
{
    size_t i = 0;
    while (i < n) {
        uint8_t tag = in[i], aside[BTC_TL_EXPANDED_MAX];
        unsigned kind = BTC_TL_KIND(tag), d = BTC_TL_LEN(tag), d2 = BTC_TL_END_LEN(tag);
        size_t need = kind == BTC_TL_END     ? 1u + d
                      : kind == BTC_TL_BEGIN ? 3u + d + 8
                      : kind == BTC_TL_LEAF  ? 3u + d + d2
                                             : 3u + d + 4 + d2;
        if (need > n - i || (kind < BTC_TL_LEAF && (tag & 0x38u)))
            return -1;
        const uint8_t *r = in + i;
        uint64_t total = p->blocks * BLOCK + p->cur_len;
        /* Straight into the block, unless the record may straddle its end. */
        int direct = p->cur_len + BTC_TL_EXPANDED_MAX <= BLOCK;
        uint8_t *e = direct ? p->cur + p->cur_len : aside;
        size_t m;
        if (kind == BTC_TL_END) {
            if (!p->depth)
                return -1;
            btc_le_store(e, load(r + 1, d), 8);
            m = 8;
        } else {
            memcpy(e, r + 1, 2);
            btc_le_store(e + 2, load(r + 3, d), 8);
            if (kind == BTC_TL_BEGIN) {
                btc_le_store(e + 10, load(r + 3 + d, 8), 8);
                m = 18;
            } else {
                uint64_t extra = kind == BTC_TL_LEAF_EXTRA ? load(r + 3 + d, 4) : 0;
                btc_le_store(e + 10, extra, 4);
                btc_le_store(e + 14, 0, 4);
                size_t at = 3 + d + (kind == BTC_TL_LEAF_EXTRA ? 4 : 0);
                btc_le_store(e + 18, load(r + at, d2), 8);
                m = 26;
            }
        }
        if (direct)
            p->cur_len += m;
        if ((direct && p->cur_len == BLOCK && emit(p, NULL, 0) < 0) ||
            (!direct && emit(p, e, m) < 0))
            return -1;
        if (kind == BTC_TL_BEGIN) {
            if (grow(&p->stack, &p->stack_cap, p->depth, sizeof *p->stack) < 0)
                return -1;
            p->stack[p->depth++] = (struct open_zone){base + i + 3 + d, total + 10};
        } else if (kind == BTC_TL_END) {
            struct open_zone z = p->stack[--p->depth];
            if (z.pos / BLOCK < p->blocks && release(p, &z) < 0)
                return -1;
        }
        i += need;
    }
    return 0;
}

static int on_chunk(struct btc_prewrite *p, const uint8_t *b, size_t n, uint64_t off)
{
    size_t i = 0;
    while (i < n) {
        if (n - i < BTC_TL_FRAGMENT_HEADER)
            return -1;
        uint32_t head[2];
        memcpy(head, b + i, sizeof head);
        if (head[1] > n - i - BTC_TL_FRAGMENT_HEADER)
            return -1;
        if (!p->have_thread) {
            p->tid = head[0];
            p->have_thread = 1;
        }
        if (head[0] == p->tid && records(p, b + i + BTC_TL_FRAGMENT_HEADER, head[1],
                                         off + i + BTC_TL_FRAGMENT_HEADER) < 0)
            return -1;
        i += BTC_TL_FRAGMENT_HEADER + head[1];
    }
    return settle(p);
}

/* A patch to bytes handed over: when they are a zone's fields of this
 * thread, the same bytes go into the expanded timeline. */
static int on_patch(struct btc_prewrite *p, uint64_t at, const uint8_t *v, size_t n)
{
    size_t a = 0, b = p->depth;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (p->stack[m].at < at)
            a = m + 1;
        else
            b = m;
    }
    if (a == p->depth || p->stack[a].at != at)
        return 0; /* another thread's */
    if (n != 8)
        return -1;
    uint64_t pos = p->stack[a].pos;
    for (size_t k = 0; k < n; k++, pos++) {
        uint64_t blk = pos / BLOCK;
        uint8_t *dst;
        if (blk == p->blocks) {
            dst = p->cur;
        } else {
            struct raw_block *r = find_waiting(p, blk);
            if (!r)
                return -1;
            dst = r->b;
        }
        dst[pos % BLOCK] = v[k];
    }
    return 0;
}

/* The end: every byte is final, so what waits is stored. */
static int on_finish(struct btc_prewrite *p)
{
    for (size_t i = 0; i < p->nwaiting; i++) {
        uint8_t *b = p->waiting[i].b;
        p->waiting[i].b = NULL;
        if (store(p, p->waiting[i].n, b) < 0)
            return -1;
    }
    p->nwaiting = 0;
    return btc_spool_flush(&p->spool);
}

static void *prewrite_main(void *arg)
{
    struct btc_prewrite *p = arg;
    int ok = 1;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->head)
            pthread_cond_wait(&p->cv, &p->mu);
        struct msg *m = p->head;
        p->head = m->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        enum msg_kind kind = m->kind;
        if (ok) {
            int rc = kind == MSG_CHUNK   ? on_chunk(p, m->data, m->len, m->off)
                     : kind == MSG_PATCH ? on_patch(p, m->off, m->data, m->len)
                                         : on_finish(p);
            if (rc < 0) {
                ok = 0;
                give_up(p);
            }
        }
        free(m);
        pthread_mutex_lock(&p->mu);
        if (kind == MSG_CHUNK)
            p->chunks--;
        if (kind == MSG_FINISH)
            p->finished = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (kind == MSG_FINISH)
            return NULL;
    }
}

/* ---- The timeline's side -------------------------------------------- */

/* Queues m (taking it), after waiting for room for a chunk. */
static void post(struct btc_prewrite *p, struct msg *m)
{
    pthread_mutex_lock(&p->mu);
    while (m->kind == MSG_CHUNK && p->chunks >= QUEUE_CHUNKS && !p->off)
        pthread_cond_wait(&p->cv, &p->mu);
    if (p->off && m->kind != MSG_FINISH) {
        pthread_mutex_unlock(&p->mu);
        free(m);
        return;
    }
    m->next = NULL;
    if (p->tail)
        p->tail->next = m;
    else
        p->head = m;
    p->tail = m;
    p->chunks += m->kind == MSG_CHUNK;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static int is_off(struct btc_prewrite *p)
{
    pthread_mutex_lock(&p->mu);
    int off = p->off;
    pthread_mutex_unlock(&p->mu);
    return off;
}

/* Queues a copy of n bytes as a message of that kind. */
static void tap(struct btc_prewrite *p, enum msg_kind kind, uint64_t off, const void *b, size_t n)
{
    if (is_off(p))
        return;
    struct msg *m = malloc(sizeof *m + n);
    if (!m) {
        give_up(p);
        return;
    }
    m->kind = kind;
    m->off = off;
    m->len = n;
    memcpy(m->data, b, n);
    post(p, m);
}

static void tap_chunk(void *ctx, const uint8_t *b, size_t n, uint64_t off)
{
    tap(ctx, MSG_CHUNK, off, b, n);
}

static void tap_patch(void *ctx, uint64_t at, const void *v, size_t n)
{
    tap(ctx, MSG_PATCH, at, v, n);
}

struct btc_prewrite *btc_prewrite_start(struct btc_timeline *tl, const char *dir, int lz4)
{
    struct btc_prewrite *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->spool.fd = -1;
    p->lz4 = lz4;
    p->out_cap = 4 + (lz4 ? (size_t)LZ4_compressBound(BLOCK) : ZSTD_compressBound(BLOCK));
    p->spare_cap = 16;
    char err[256];
    int ok = (p->fin = calloc(1, sizeof *p->fin)) && (p->out = malloc(p->out_cap)) &&
             (p->cur = malloc(BLOCK)) && (p->spare = calloc(p->spare_cap, sizeof *p->spare)) &&
             (lz4 || (p->z = ZSTD_createCCtx())) &&
             btc_spool_open(&p->spool, dir, 1, err, sizeof err) == BTC_OK;
    if (ok && p->z) {
        ZSTD_CCtx_setParameter(p->z, ZSTD_c_compressionLevel, BTC_FILE_ZSTD_LEVEL);
        ZSTD_CCtx_setParameter(p->z, ZSTD_c_contentSizeFlag, 0);
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (!ok || btc_start_thread(&p->thread, prewrite_main, p) != 0) {
        p->finished = 1; /* no thread to stop */
        btc_prewrite_free(p, NULL);
        return NULL;
    }
    p->tap = (struct btc_tl_tap){tap_chunk, tap_patch, p};
    tl->tap = &p->tap;
    return p;
}

/* Ends the thread (once): everything queued is taken first. */
static void stop(struct btc_prewrite *p)
{
    pthread_mutex_lock(&p->mu);
    int ended = p->finished;
    pthread_mutex_unlock(&p->mu);
    if (ended)
        return;
    struct msg *m = p->fin;
    p->fin = NULL;
    m->kind = MSG_FINISH;
    post(p, m);
    pthread_mutex_lock(&p->mu);
    while (!p->finished)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
}

int btc_prewrite_finish(struct btc_prewrite *p, struct btc_timeline *tl, int lz4, uint32_t *thread,
                        uint64_t *blocks)
{
    if (!p)
        return 0;
    if (tl->tap == &p->tap) {
        btc_timeline_flush(tl);
        tl->tap = NULL;
    }
    stop(p);
    if (p->off || !p->have_thread || p->lz4 != lz4 || !p->blocks)
        return 0;
    *thread = p->tid;
    *blocks = p->blocks;
    return 1;
}

const uint8_t *btc_prewrite_rest(const struct btc_prewrite *p, size_t *len)
{
    *len = p->cur_len;
    return p->cur;
}

const uint8_t *btc_prewrite_block(struct btc_prewrite *p, uint64_t i, size_t *len)
{
    if (i >= p->blocks)
        return NULL;
    uint64_t off = p->index[i];
    for (int pass = 0; pass < 2; pass++) {
        if (off >= p->roff && off - p->roff + 4 <= p->rlen) {
            const uint8_t *r = p->rbuf + (off - p->roff);
            size_t n = 4 + bt_wire_get_u32(r);
            if (off - p->roff + n <= p->rlen) {
                *len = n;
                return r;
            }
        }
        if (pass || (!p->rbuf && !(p->rbuf = malloc(READ_BYTES))))
            return NULL;
        ssize_t got;
        do
            got = pread(p->spool.fd, p->rbuf, READ_BYTES, (off_t)off);
        while (got < 0 && errno == EINTR);
        if (got < 0)
            return NULL;
        p->roff = off;
        p->rlen = (size_t)got;
    }
    return NULL;
}

void btc_prewrite_free(struct btc_prewrite *p, struct btc_timeline *tl)
{
    if (!p)
        return;
    if (tl && tl->tap == &p->tap)
        tl->tap = NULL;
    stop(p);
    while (p->head) {
        struct msg *m = p->head;
        p->head = m->next;
        free(m);
    }
    for (size_t i = 0; i < p->npending; i++)
        free(p->pending[i].b);
    for (size_t i = 0; i < p->nwaiting; i++)
        free(p->waiting[i].b);
    for (size_t i = 0; i < p->nspare; i++)
        free(p->spare[i]);
    free(p->pending);
    free(p->waiting);
    free(p->spare);
    free(p->stack);
    free(p->index);
    free(p->rbuf);
    free(p->cur);
    free(p->out);
    free(p->fin);
    ZSTD_freeCCtx(p->z);
    if (p->spool.fd >= 0 || p->spool.buf)
        btc_spool_close(&p->spool);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
