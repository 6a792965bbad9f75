/* Spool files: buffered appends of fixed-size records to an unlinked
 * temporary file, patches in place, and buffered sequential read-back. */
#define _GNU_SOURCE
#include "btc_spool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btc_util.h"

#define SPOOL_BUF_BYTES (64u * 1024u)

int btc_spool_open(struct btc_spool *s, const char *dir, size_t rec_size, char *err, size_t errlen)
{
    return btc_spool_open_sized(s, dir, rec_size, SPOOL_BUF_BYTES, err, errlen);
}

int btc_spool_open_sized(struct btc_spool *s, const char *dir, size_t rec_size, size_t buf_bytes,
                         char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/.boardtrace-spool-XXXXXX", dir && *dir ? dir : ".");
    s->fd = mkstemp(path);
    if (s->fd < 0) {
        snprintf(err, errlen, "cannot create a spool file in %s: %s", dir && *dir ? dir : ".",
                 strerror(errno));
        return BTC_ERR_IO;
    }
    unlink(path);
    s->rec = rec_size;
    s->buf_cap = (buf_bytes > rec_size ? buf_bytes : rec_size) / rec_size * rec_size;
    s->buf = malloc(s->buf_cap);
    if (!s->buf) {
        close(s->fd);
        s->fd = -1;
        snprintf(err, errlen, "out of memory for a spool buffer");
        return BTC_ERR_NOMEM;
    }
    return BTC_OK;
}

static int write_all(int fd, const uint8_t *p, size_t n, uint64_t off);

/* The background writer: one buffer in flight at a time. */
struct btc_spool_bg {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fd;
    uint8_t *spare;     /* the buffer the appender gets at the next flush */
    const uint8_t *job; /* in flight when not NULL: job_len bytes at job_off */
    size_t job_len;
    uint64_t job_off;
    int quit, failed;
    int failed_errno; /* why the failed write failed, for the caller's errno */
};

static void *bg_main(void *arg)
{
    struct btc_spool_bg *bg = arg;
    pthread_mutex_lock(&bg->mu);
    for (;;) {
        while (!bg->job && !bg->quit)
            pthread_cond_wait(&bg->cv, &bg->mu);
        if (!bg->job)
            break;
        pthread_mutex_unlock(&bg->mu);
        int rc = write_all(bg->fd, bg->job, bg->job_len, bg->job_off);
        int e = errno;
        pthread_mutex_lock(&bg->mu);
        if (rc < 0 && !bg->failed) {
            bg->failed = 1;
            bg->failed_errno = e;
        }
        bg->job = NULL;
        pthread_cond_broadcast(&bg->cv);
    }
    pthread_mutex_unlock(&bg->mu);
    return NULL;
}

/* Waits until nothing is in flight: BTC_OK, or BTC_ERR_IO with errno set
 * as the failed write left it, once a write failed. */
static int bg_wait(struct btc_spool_bg *bg)
{
    pthread_mutex_lock(&bg->mu);
    while (bg->job)
        pthread_cond_wait(&bg->cv, &bg->mu);
    int failed = bg->failed, e = bg->failed_errno;
    pthread_mutex_unlock(&bg->mu);
    if (failed)
        errno = e;
    return failed ? BTC_ERR_IO : BTC_OK;
}

void btc_spool_background(struct btc_spool *s)
{
    struct btc_spool_bg *bg = calloc(1, sizeof *bg);
    if (!bg || !(bg->spare = malloc(s->buf_cap))) {
        free(bg);
        return;
    }
    bg->fd = s->fd;
    pthread_mutex_init(&bg->mu, NULL);
    pthread_cond_init(&bg->cv, NULL);
    if (btc_start_thread(&bg->thread, bg_main, bg) != 0) {
        pthread_cond_destroy(&bg->cv);
        pthread_mutex_destroy(&bg->mu);
        free(bg->spare);
        free(bg);
        return;
    }
    s->bg = bg;
}

void btc_spool_close(struct btc_spool *s)
{
    struct btc_spool_bg *bg = s->bg;
    if (bg) {
        pthread_mutex_lock(&bg->mu);
        bg->quit = 1;
        pthread_cond_broadcast(&bg->cv);
        pthread_mutex_unlock(&bg->mu);
        pthread_join(bg->thread, NULL);
        pthread_cond_destroy(&bg->cv);
        pthread_mutex_destroy(&bg->mu);
        free(bg->spare);
        free(bg);
        s->bg = NULL;
    }
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    s->fd = -1;
    s->buf = NULL;
}

static int write_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = EIO;
        if (w <= 0)
            return BTC_ERR_IO;
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return BTC_OK;
}

int btc_spool_flush(struct btc_spool *s)
{
    if (!s->buf_len)
        return s->bg ? bg_wait(s->bg) : BTC_OK;
    struct btc_spool_bg *bg = s->bg;
    int rc = bg ? bg_wait(bg) : write_all(s->fd, s->buf, s->buf_len, s->flushed);
    if (rc < 0)
        return rc;
    if (bg) {
        uint8_t *full = s->buf;
        pthread_mutex_lock(&bg->mu);
        bg->job = full;
        bg->job_len = s->buf_len;
        bg->job_off = s->flushed;
        pthread_cond_broadcast(&bg->cv);
        pthread_mutex_unlock(&bg->mu);
        s->buf = bg->spare;
        bg->spare = full; /* the thread clears bg->job when done */
    }
    s->flushed += s->buf_len;
    s->buf_len = 0;
    return BTC_OK;
}

/* Flushes and, with a background writer, waits until it has written all:
 * the file then holds every byte. */
static int settle(struct btc_spool *s)
{
    int rc = btc_spool_flush(s);
    return rc < 0 || !s->bg ? rc : bg_wait(s->bg);
}

int btc_spool_append(struct btc_spool *s, const void *rec, uint64_t *index)
{
    if (s->buf_len + s->rec > s->buf_cap) {
        int rc = btc_spool_flush(s);
        if (rc < 0)
            return rc;
    }
    memcpy(s->buf + s->buf_len, rec, s->rec);
    s->buf_len += s->rec;
    if (index)
        *index = s->count;
    s->count++;
    return BTC_OK;
}

int btc_spool_patch(struct btc_spool *s, uint64_t index, size_t off, const void *data, size_t len)
{
    uint64_t at = index * s->rec + off;
    if (at >= s->flushed) {
        memcpy(s->buf + (at - s->flushed), data, len);
        return BTC_OK;
    }
    /* The bytes may be in the buffer in flight: patch the file after it. */
    int rc = s->bg ? bg_wait(s->bg) : BTC_OK;
    return rc < 0 ? rc : write_all(s->fd, data, len, at);
}

int btc_spool_reader_open(struct btc_spool_reader *r, struct btc_spool *s)
{
    memset(r, 0, sizeof *r);
    int rc = settle(s);
    if (rc < 0)
        return rc;
    r->s = s;
    r->buf = malloc(SPOOL_BUF_BYTES);
    return r->buf ? BTC_OK : BTC_ERR_NOMEM;
}

int btc_spool_reader_next(struct btc_spool_reader *r, const uint8_t **rec)
{
    size_t sz = r->s->rec;
    if (r->pos + sz > r->len) {
        size_t want = SPOOL_BUF_BYTES / sz * sz;
        ssize_t n;
        do
            n = pread(r->s->fd, r->buf, want, (off_t)r->file_off);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return BTC_ERR_IO;
        r->len = (size_t)n / sz * sz;
        r->file_off += r->len;
        r->pos = 0;
        if (r->len == 0)
            return 0;
    }
    *rec = r->buf + r->pos;
    r->pos += sz;
    return 1;
}

void btc_spool_reader_close(struct btc_spool_reader *r)
{
    free(r->buf);
    r->buf = NULL;
}

int btc_texts_open(struct btc_texts *t, const char *dir, char *err, size_t errlen)
{
    t->count = 0;
    return btc_spool_open_sized(&t->raw, dir, 1, SPOOL_BUF_BYTES, err, errlen);
}

void btc_texts_close(struct btc_texts *t)
{
    btc_spool_close(&t->raw);
}

int btc_spool_write(struct btc_spool *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n) {
        if (s->buf_len == s->buf_cap) {
            int rc = btc_spool_flush(s);
            if (rc < 0)
                return rc;
        }
        size_t k = s->buf_cap - s->buf_len;
        if (k > n)
            k = n;
        memcpy(s->buf + s->buf_len, p, k);
        s->buf_len += k;
        s->count += k;
        p += k;
        n -= k;
    }
    return BTC_OK;
}

int btc_texts_append(struct btc_texts *t, const void *s, uint32_t len, uint64_t *index)
{
    uint8_t hdr[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
                      (uint8_t)(len >> 24)};
    int rc = btc_spool_write(&t->raw, hdr, 4);
    if (rc >= 0)
        rc = btc_spool_write(&t->raw, s, len);
    if (rc < 0)
        return rc;
    *index = t->count++;
    return BTC_OK;
}

int btc_byte_reader_open(struct btc_byte_reader *r, struct btc_spool *s, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->fd = s->fd;
    int rc = settle(s);
    if (rc < 0)
        return rc;
    r->cap = cap;
    r->buf = malloc(r->cap);
    return r->buf ? BTC_OK : BTC_ERR_NOMEM;
}

int btc_byte_reader_fill(struct btc_byte_reader *r, size_t n)
{
    if (r->len - r->pos >= n)
        return 1;
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
    if (n > r->cap) {
        uint8_t *b = realloc(r->buf, n);
        if (!b)
            return BTC_ERR_NOMEM;
        r->buf = b;
        r->cap = n;
    }
    while (r->len < n) {
        ssize_t k;
        do
            k = pread(r->fd, r->buf + r->len, r->cap - r->len, (off_t)r->file_off);
        while (k < 0 && errno == EINTR);
        if (k < 0)
            return BTC_ERR_IO;
        if (k == 0)
            return 0;
        r->len += (size_t)k;
        r->file_off += (uint64_t)k;
    }
    return 1;
}

void btc_byte_reader_close(struct btc_byte_reader *r)
{
    free(r->buf);
    r->buf = NULL;
}

int btc_texts_reader_open(struct btc_texts_reader *r, struct btc_texts *t)
{
    return btc_byte_reader_open(&r->in, &t->raw, SPOOL_BUF_BYTES);
}

int btc_texts_reader_next(struct btc_texts_reader *r, const char **s, uint32_t *len)
{
    struct btc_byte_reader *in = &r->in;
    int rc = btc_byte_reader_fill(in, 4);
    if (rc <= 0)
        return rc;
    const uint8_t *h = in->buf + in->pos;
    uint32_t n = h[0] | ((uint32_t)h[1] << 8) | ((uint32_t)h[2] << 16) | ((uint32_t)h[3] << 24);
    rc = btc_byte_reader_fill(in, 4 + (size_t)n);
    if (rc <= 0)
        return rc < 0 ? rc : BTC_ERR_IO; /* a text cut short: the spool is damaged */
    *s = (const char *)in->buf + in->pos + 4;
    *len = n;
    in->pos += 4 + (size_t)n;
    return 1;
}

void btc_texts_reader_close(struct btc_texts_reader *r)
{
    btc_byte_reader_close(&r->in);
}
