/* Block compression for the .tracy writer (see btc_compress.h). A batch is
 * BATCH_PER_STREAM blocks per stream; the caller fills it, then compresses
 * stream 0's blocks while each helper thread compresses its own stream's,
 * then writes the batch in order. Memory is fixed: the batch's input and
 * output buffers and one zstd context per stream. */
#define _GNU_SOURCE
#include "btc_compress.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "boardtrace/wire.h"
#include "btc_format.h"

/* Four blocks per stream per batch: a batch's work (about 50 us a block)
 * outweighs waking the helpers for it. */
#define BATCH_PER_STREAM 4u

struct helper {
    struct btc_compress *c;
    unsigned stream;
    pthread_t thread;
};

struct btc_compress {
    unsigned streams;
    unsigned batch;  /* blocks per batch: streams * BATCH_PER_STREAM, or 1 */
    unsigned filled; /* blocks queued in this batch */
    uint8_t *raw;    /* batch input blocks, BTC_FILE_BLOCK_SIZE each */
    size_t *raw_len;
    uint8_t *out; /* batch output blocks, out_cap each: [u32 size][bytes] */
    size_t *out_len;
    size_t out_cap;
    ZSTD_CCtx *z[BTC_COMPRESS_MAX_STREAMS];
    struct helper helpers[BTC_COMPRESS_MAX_STREAMS - 1];
    unsigned nhelpers;
    pthread_mutex_t mu;
    pthread_cond_t go, idle;
    unsigned long generation; /* batches handed to the helpers */
    unsigned done;            /* helpers finished with the current batch */
    int quit, failed;
};

unsigned btc_compress_default_streams(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                         : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > (long)BTC_COMPRESS_MAX_STREAMS ? BTC_COMPRESS_MAX_STREAMS : (unsigned)n;
}

/* Compresses the batch's blocks of one stream, in order; 0 or -1. */
static int compress_stream(struct btc_compress *c, unsigned stream)
{
    for (unsigned j = stream; j < c->filled; j += c->streams) {
        ZSTD_inBuffer in = {c->raw + (size_t)j * BTC_FILE_BLOCK_SIZE, c->raw_len[j], 0};
        uint8_t *o = c->out + (size_t)j * c->out_cap;
        ZSTD_outBuffer out = {o + 4, c->out_cap - 4, 0};
        size_t r = ZSTD_compressStream2(c->z[stream], &out, &in, ZSTD_e_flush);
        if (ZSTD_isError(r) || r != 0 || in.pos != in.size)
            return -1;
        bt_wire_put_u32(o, (uint32_t)out.pos);
        c->out_len[j] = out.pos + 4;
    }
    return 0;
}

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    struct btc_compress *c = h->c;
    unsigned long seen = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (c->generation == seen && !c->quit)
            pthread_cond_wait(&c->go, &c->mu);
        if (c->quit)
            break;
        seen = c->generation;
        pthread_mutex_unlock(&c->mu);
        int rc = compress_stream(c, h->stream);
        pthread_mutex_lock(&c->mu);
        if (rc < 0)
            c->failed = 1;
        if (++c->done == c->nhelpers)
            pthread_cond_signal(&c->idle);
    }
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

struct btc_compress *btc_compress_open(unsigned streams)
{
    struct btc_compress *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (streams < 1)
        streams = 1;
    if (streams > BTC_COMPRESS_MAX_STREAMS)
        streams = BTC_COMPRESS_MAX_STREAMS;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->go, NULL);
    pthread_cond_init(&c->idle, NULL);
    /* Helpers first: the streams are the ones that got a thread. */
    for (unsigned s = 1; s < streams; s++) {
        struct helper *h = &c->helpers[c->nhelpers];
        h->c = c;
        h->stream = s;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&h->thread, NULL, helper_main, h);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0)
            break;
        c->nhelpers++;
    }
    c->streams = 1 + c->nhelpers;
    c->batch = c->streams > 1 ? c->streams * BATCH_PER_STREAM : 1;
    c->out_cap = ZSTD_compressBound(BTC_FILE_BLOCK_SIZE) + 4;
    c->raw = malloc((size_t)c->batch * BTC_FILE_BLOCK_SIZE);
    c->raw_len = calloc(c->batch, sizeof *c->raw_len);
    c->out = malloc((size_t)c->batch * c->out_cap);
    c->out_len = calloc(c->batch, sizeof *c->out_len);
    int ok = c->raw && c->raw_len && c->out && c->out_len;
    /* One stream: a 512 KiB window instead of level 3's 2 MiB, so the
     * context is 1.5 MiB smaller, and the blocks, flushed every 64 KiB,
     * compress as well (the full recording: 0.2% smaller). Several: each
     * sees only every S-th block, so 1 MiB, which keeps texts that recur
     * across blocks in reach (3 M zones with a text each, 2 streams: 13.0
     * MiB with 512 KiB windows, 11.0 with 1 MiB, 11.2 in one stream). */
    int window_log = BTC_FILE_ZSTD_WINDOW_LOG + (c->streams > 1);
    for (unsigned s = 0; s < c->streams && ok; s++)
        ok = (c->z[s] = new_context(window_log)) != NULL;
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
    return c->raw + (size_t)c->filled * BTC_FILE_BLOCK_SIZE;
}

int btc_compress_flush(struct btc_compress *c, FILE *f, uint64_t *bytes)
{
    if (!c->filled)
        return c->failed ? -1 : 0;
    if (!c->failed) {
        if (c->nhelpers) {
            pthread_mutex_lock(&c->mu);
            c->done = 0;
            c->generation++;
            pthread_cond_broadcast(&c->go);
            pthread_mutex_unlock(&c->mu);
        }
        int rc = compress_stream(c, 0);
        if (c->nhelpers) {
            pthread_mutex_lock(&c->mu);
            while (c->done < c->nhelpers)
                pthread_cond_wait(&c->idle, &c->mu);
            pthread_mutex_unlock(&c->mu);
        }
        if (rc < 0)
            c->failed = 1;
    }
    for (unsigned j = 0; j < c->filled && !c->failed; j++) {
        if (fwrite(c->out + (size_t)j * c->out_cap, 1, c->out_len[j], f) != c->out_len[j])
            c->failed = 1;
        else
            *bytes += c->out_len[j];
    }
    c->filled = 0;
    return c->failed ? -1 : 0;
}

int btc_compress_next(struct btc_compress *c, size_t len, FILE *f, uint64_t *bytes)
{
    c->raw_len[c->filled++] = len;
    if (c->filled < c->batch)
        return c->failed ? -1 : 0;
    return btc_compress_flush(c, f, bytes);
}

void btc_compress_close(struct btc_compress *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->quit = 1;
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->mu);
    for (unsigned i = 0; i < c->nhelpers; i++)
        pthread_join(c->helpers[i].thread, NULL);
    for (unsigned s = 0; s < BTC_COMPRESS_MAX_STREAMS; s++)
        ZSTD_freeCCtx(c->z[s]);
    pthread_cond_destroy(&c->idle);
    pthread_cond_destroy(&c->go);
    pthread_mutex_destroy(&c->mu);
    free(c->raw);
    free(c->raw_len);
    free(c->out);
    free(c->out_len);
    free(c);
}
