/* Spool files: buffered appends of fixed-size records to an unlinked
 * temporary file, patches in place, and buffered sequential read-back. */
#define _GNU_SOURCE
#include "btc_spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btc_util.h"

#define SPOOL_BUF_BYTES (256u * 1024u)

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

void btc_spool_close(struct btc_spool *s)
{
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
        return BTC_OK;
    int rc = write_all(s->fd, s->buf, s->buf_len, s->flushed);
    if (rc < 0)
        return rc;
    s->flushed += s->buf_len;
    s->buf_len = 0;
    return BTC_OK;
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
    return write_all(s->fd, data, len, at);
}

int btc_spool_reader_open(struct btc_spool_reader *r, struct btc_spool *s)
{
    memset(r, 0, sizeof *r);
    int rc = btc_spool_flush(s);
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
