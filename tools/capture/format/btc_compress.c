/* Block compression for the .tracy writer (see btc_compress.h), zstd or
 * LZ4 (each stream a dictionary-carrying LZ4 stream, as upstream's LZ4
 * files are: a block may refer to its stream's previous block). The
 * blocks go round a ring of SLOTS_PER_STREAM slots per stream: the caller
 * fills slot after slot, and the S - 1 helper threads compress what is
 * queued, each time the oldest block whose stream no one is working on
 * (a stream's blocks go through its one context in order, but any thread
 * may take the next). When the ring is full the caller compresses too,
 * instead of sleeping, and it writes the compressed blocks in file order as
 * they come. So S threads share the work without a barrier, and reading
 * the spools and filling blocks overlap the compression. Memory is fixed:
 * the ring's input and output buffers and one zstd context per stream. */
#define _GNU_SOURCE
#include "btc_compress.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <zstd.h>

#include "boardtrace/wire.h"
#include "btc_format.h"
#include "btc_util.h"

/* Eight slots per stream: room for the caller to run ahead while the
 * helpers work through a few blocks (a block takes about 50 us). One
 * stream has no helper, so one slot: each block is compressed as it
 * fills. */
#define SLOTS_PER_STREAM 8u

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_DONE };

struct slot {
    uint8_t *raw; /* BTC_FILE_BLOCK_SIZE bytes of input */
    size_t raw_len;
    uint8_t *out; /* out_cap bytes: [u32 size][bytes] */
    size_t out_len;
    enum slot_state state;
};

struct btc_compress {
    unsigned streams;
    unsigned nslots; /* streams * SLOTS_PER_STREAM; 1 for one stream */
    size_t out_cap;
    struct slot *slots;
    uint64_t head; /* blocks queued; the caller fills slot head % nslots */
    uint64_t tail; /* blocks written */
    int lz4;       /* LZ4 instead of zstd */
    int alone;     /* every block compressed on its own (btc_compress_open_independent) */
    ZSTD_CCtx *z[BTC_COMPRESS_MAX_STREAMS];
    LZ4_stream_t *lz[BTC_COMPRESS_MAX_STREAMS];
    /* Per LZ4 stream: its previous block, which the next may refer to (the
     * slot that held it may be refilled meanwhile). */
    char *dict[BTC_COMPRESS_MAX_STREAMS];
    uint64_t next[BTC_COMPRESS_MAX_STREAMS]; /* per stream: its oldest block not compressed */
    int busy[BTC_COMPRESS_MAX_STREAMS];      /* per stream: a thread is compressing it */
    pthread_t helpers[BTC_COMPRESS_MAX_STREAMS - 1];
    unsigned nhelpers;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a block was queued or a stream came free */
    pthread_cond_t done; /* a block was compressed */
    int quit, failed;
};

unsigned btc_compress_default_streams(void)
{
    unsigned n = btc_usable_cpus();
    return n > BTC_COMPRESS_MAX_STREAMS ? BTC_COMPRESS_MAX_STREAMS : n;
}

/* Compresses one block of a stream; 0 or -1. */
static int compress_slot(struct btc_compress *c, struct slot *sl, unsigned stream)
{
    if (c->alone) {
        size_t n;
        if (c->lz4) {
            int k = LZ4_compress_default((const char *)sl->raw, (char *)sl->out + 4,
                                         (int)sl->raw_len, (int)c->out_cap - 4);
            n = k > 0 ? (size_t)k : 0;
        } else {
            n = ZSTD_compress2(c->z[stream], sl->out + 4, c->out_cap - 4, sl->raw, sl->raw_len);
            n = ZSTD_isError(n) ? 0 : n;
        }
        if (!n)
            return -1;
        bt_wire_put_u32(sl->out, (uint32_t)n);
        sl->out_len = n + 4;
        return 0;
    }
    if (c->lz4) {
        int n =
            LZ4_compress_fast_continue(c->lz[stream], (const char *)sl->raw, (char *)sl->out + 4,
                                       (int)sl->raw_len, (int)c->out_cap - 4, 1);
        if (n <= 0 || LZ4_saveDict(c->lz[stream], c->dict[stream], BTC_FILE_BLOCK_SIZE) < 0)
            return -1;
        bt_wire_put_u32(sl->out, (uint32_t)n);
        sl->out_len = (size_t)n + 4;
        return 0;
    }
    ZSTD_inBuffer in = {sl->raw, sl->raw_len, 0};
    ZSTD_outBuffer out = {sl->out + 4, c->out_cap - 4, 0};
    size_t r = ZSTD_compressStream2(c->z[stream], &out, &in, ZSTD_e_flush);
    if (ZSTD_isError(r) || r != 0 || in.pos != in.size)
        return -1;
    bt_wire_put_u32(sl->out, (uint32_t)out.pos);
    sl->out_len = out.pos + 4;
    return 0;
}

/* With c->mu held: compresses the oldest queued block whose stream is
 * free (the lock is dropped meanwhile) and returns 1, or 0 when there is
 * none. After a failure blocks are only marked done: nothing more is
 * written. */
static int work_one(struct btc_compress *c)
{
    unsigned s = c->streams;
    for (unsigned k = 0; k < c->streams; k++)
        if (!c->busy[k] && c->next[k] < c->head && (s == c->streams || c->next[k] < c->next[s]))
            s = k;
    if (s == c->streams)
        return 0;
    struct slot *sl = &c->slots[c->next[s] % c->nslots];
    int skip = c->failed;
    c->busy[s] = 1;
    pthread_mutex_unlock(&c->mu);
    int rc = skip ? 0 : compress_slot(c, sl, s);
    pthread_mutex_lock(&c->mu);
    if (rc < 0)
        c->failed = 1;
    sl->state = SLOT_DONE;
    c->busy[s] = 0;
    c->next[s] += c->streams;
    pthread_cond_broadcast(&c->work);
    pthread_cond_signal(&c->done);
    return 1;
}

static void *helper_main(void *arg)
{
    struct btc_compress *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->quit)
        if (!work_one(c))
            pthread_cond_wait(&c->work, &c->mu);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static ZSTD_CCtx *new_context(int window_log)
{
    ZSTD_CCtx *z = ZSTD_createCCtx();
    if (!z)
        return NULL;
    ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, BTC_FILE_ZSTD_LEVEL);
    ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0);
    ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog, window_log);
    return z;
}

struct btc_compress *btc_compress_open(unsigned streams, int lz4)
{
    return btc_compress_open_independent(streams, lz4, 0);
}

struct btc_compress *btc_compress_open_independent(unsigned streams, int lz4, int alone)
{
    struct btc_compress *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (streams < 1)
        streams = 1;
    if (streams > BTC_COMPRESS_MAX_STREAMS)
        streams = BTC_COMPRESS_MAX_STREAMS;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->done, NULL);
    c->streams = streams;
    c->lz4 = lz4;
    c->alone = alone;
    c->nslots = streams > 1 ? streams * SLOTS_PER_STREAM : 1;
    size_t bound = lz4 ? (size_t)LZ4_compressBound(BTC_FILE_BLOCK_SIZE)
                       : ZSTD_compressBound(BTC_FILE_BLOCK_SIZE);
    c->out_cap = bound + 4;
    int ok = (c->slots = calloc(c->nslots, sizeof *c->slots)) != NULL;
    for (unsigned i = 0; ok && i < c->nslots; i++)
        ok = (c->slots[i].raw = malloc(BTC_FILE_BLOCK_SIZE)) != NULL &&
             (c->slots[i].out = malloc(c->out_cap)) != NULL;
    /* One stream: a 512 KiB window instead of level 3's 2 MiB, so the
     * context is 1.5 MiB smaller, and the blocks, flushed every 64 KiB,
     * compress as well (the full recording: 0.2% smaller). Several: each
     * sees only every S-th block, so 1 MiB, which keeps texts that recur
     * across blocks in reach (3 M zones with a text each, 2 streams: 13.0
     * MiB with 512 KiB windows, 11.0 with 1 MiB, 11.2 in one stream). */
    int window_log = BTC_FILE_ZSTD_WINDOW_LOG + (streams > 1);
    /* A block on its own needs no more window than its 64 KiB. */
    if (alone)
        window_log = 17;
    for (unsigned s = 0; s < streams && ok; s++) {
        if (lz4)
            ok = (c->lz[s] = LZ4_createStream()) != NULL &&
                 (c->dict[s] = malloc(BTC_FILE_BLOCK_SIZE)) != NULL;
        else
            ok = (c->z[s] = new_context(window_log)) != NULL;
        c->next[s] = s;
    }
    /* The ring and the contexts exist before a helper looks at them; when
     * fewer threads start, fewer threads share the same streams. */
    for (unsigned i = 0; ok && i + 1 < streams; i++) {
        if (btc_start_thread(&c->helpers[c->nhelpers], helper_main, c) != 0)
            break;
        c->nhelpers++;
    }
    if (!ok) {
        btc_compress_close(c);
        return NULL;
    }
    return c;
}

unsigned btc_compress_streams(const struct btc_compress *c)
{
    return c->streams;
}

uint8_t *btc_compress_block(struct btc_compress *c)
{
    return c->slots[c->head % c->nslots].raw;
}

/* Writes the compressed blocks at the tail in file order. While the ring
 * is full or, with all, until every queued block is written, it compresses
 * or waits for what is missing. 0, or -1 once anything failed. */
static int drain(struct btc_compress *c, FILE *f, uint64_t *bytes, int all)
{
    pthread_mutex_lock(&c->mu);
    while (c->tail < c->head) {
        struct slot *sl = &c->slots[c->tail % c->nslots];
        if (sl->state != SLOT_DONE) {
            if (!all && c->head - c->tail < c->nslots)
                break;
            if (!work_one(c))
                pthread_cond_wait(&c->done, &c->mu);
            continue;
        }
        int dropped = c->failed;
        pthread_mutex_unlock(&c->mu);
        int bad = !dropped && fwrite(sl->out, 1, sl->out_len, f) != sl->out_len;
        if (!dropped && !bad)
            *bytes += sl->out_len;
        pthread_mutex_lock(&c->mu);
        c->failed |= bad;
        sl->state = SLOT_FREE;
        c->tail++;
    }
    int failed = c->failed;
    pthread_mutex_unlock(&c->mu);
    return failed ? -1 : 0;
}

int btc_compress_next(struct btc_compress *c, size_t len, FILE *f, uint64_t *bytes)
{
    struct slot *sl = &c->slots[c->head % c->nslots];
    sl->raw_len = len;
    pthread_mutex_lock(&c->mu);
    sl->state = SLOT_QUEUED;
    c->head++;
    if (c->nhelpers)
        pthread_cond_signal(&c->work);
    pthread_mutex_unlock(&c->mu);
    return drain(c, f, bytes, 0);
}

int btc_compress_flush(struct btc_compress *c, FILE *f, uint64_t *bytes)
{
    return drain(c, f, bytes, 1);
}

int btc_compress_put_compressed(struct btc_compress *c, const void *block, size_t len, FILE *f,
                                uint64_t *bytes)
{
    if (!c->alone || drain(c, f, bytes, 1) < 0)
        return -1;
    if (fwrite(block, 1, len, f) != len) {
        pthread_mutex_lock(&c->mu);
        c->failed = 1;
        pthread_mutex_unlock(&c->mu);
        return -1;
    }
    *bytes += len;
    /* The block takes its place in its stream's turn, as if queued. */
    pthread_mutex_lock(&c->mu);
    c->next[c->head % c->streams] += c->streams;
    c->head++;
    c->tail++;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

void btc_compress_close(struct btc_compress *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->quit = 1;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->mu);
    for (unsigned i = 0; i < c->nhelpers; i++)
        pthread_join(c->helpers[i], NULL);
    for (unsigned s = 0; s < BTC_COMPRESS_MAX_STREAMS; s++) {
        ZSTD_freeCCtx(c->z[s]);
        if (c->lz[s])
            LZ4_freeStream(c->lz[s]);
        free(c->dict[s]);
    }
    pthread_cond_destroy(&c->work);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->mu);
    for (unsigned i = 0; c->slots && i < c->nslots; i++) {
        free(c->slots[i].raw);
        free(c->slots[i].out);
    }
    free(c->slots);
    free(c);
}
