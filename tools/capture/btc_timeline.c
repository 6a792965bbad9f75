/* Zone timelines (see btc_timeline.h): fragments of per-thread bytes
 * buffered into one unlinked spool file, patched in place, read back in
 * order. */
#define _GNU_SOURCE
#include "btc_timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "btc_util.h"

/* Large enough that a zone's end usually finds its beginning still in the
 * buffer (about 7,000 zones of one thread), small beside the capture's
 * other memory. */
#define TL_BUF_BYTES (128u * 1024u)
/* The reader's buffer holds at least one whole fragment. */
#define TL_READ_BYTES (TL_BUF_BYTES + 64u * 1024u)

int btc_timeline_open(struct btc_timeline *tl, const char *dir, char *err, size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    tl->frag = SIZE_MAX;
    char path[4096];
    snprintf(path, sizeof path, "%s/.boardtrace-spool-XXXXXX", dir && *dir ? dir : ".");
    tl->fd = mkstemp(path);
    if (tl->fd < 0) {
        snprintf(err, errlen, "cannot create a spool file in %s: %s", dir && *dir ? dir : ".",
                 strerror(errno));
        return BTC_ERR_IO;
    }
    unlink(path);
    tl->cap = TL_BUF_BYTES;
    tl->buf = malloc(tl->cap);
    if (!tl->buf) {
        close(tl->fd);
        tl->fd = -1;
        snprintf(err, errlen, "out of memory for a spool buffer");
        return BTC_ERR_NOMEM;
    }
    return BTC_OK;
}

void btc_timeline_close(struct btc_timeline *tl)
{
    if (tl->fd >= 0)
        close(tl->fd);
    free(tl->buf);
    tl->fd = -1;
    tl->buf = NULL;
}

static int write_at(int fd, const uint8_t *p, size_t n, uint64_t off)
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

int btc_timeline_flush(struct btc_timeline *tl)
{
    tl->frag = SIZE_MAX;
    if (!tl->len)
        return BTC_OK;
    int rc = write_at(tl->fd, tl->buf, tl->len, tl->flushed);
    if (rc < 0)
        return rc;
    tl->flushed += tl->len;
    tl->len = 0;
    return BTC_OK;
}

uint8_t *btc_timeline_reserve_slow(struct btc_timeline *tl, uint32_t thread, size_t n, uint64_t *at)
{
    if (tl->len + BTC_TL_FRAGMENT_HEADER + n > tl->cap && btc_timeline_flush(tl) < 0)
        return NULL;
    if (tl->frag == SIZE_MAX || tl->thread != thread) {
        uint32_t head[2] = {thread, 0};
        memcpy(tl->buf + tl->len, head, sizeof head);
        tl->frag = tl->len;
        tl->thread = thread;
        tl->len += BTC_TL_FRAGMENT_HEADER;
    }
    return btc_timeline_reserve(tl, thread, n, at);
}

int btc_timeline_patch(struct btc_timeline *tl, uint64_t at, const void *p, size_t n)
{
    if (at >= tl->flushed) {
        memcpy(tl->buf + (at - tl->flushed), p, n);
        return BTC_OK;
    }
    /* Bytes never straddle a flush: a put that does not fit flushes first. */
    return write_at(tl->fd, p, n, at);
}

int btc_timeline_reader_open(struct btc_timeline_reader *r, struct btc_timeline *tl)
{
    memset(r, 0, sizeof *r);
    r->fd = tl->fd;
    int rc = btc_timeline_flush(tl);
    if (rc < 0)
        return rc;
    r->cap = TL_READ_BYTES;
    r->buf = malloc(r->cap);
    return r->buf ? BTC_OK : BTC_ERR_NOMEM;
}

/* Makes n bytes available at r->buf + r->pos: 1, 0 at the end, < 0 error. */
static int reader_fill(struct btc_timeline_reader *r, size_t n)
{
    if (r->len - r->pos >= n)
        return 1;
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
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

int btc_timeline_reader_next(struct btc_timeline_reader *r, uint32_t *thread, const uint8_t **bytes,
                             uint32_t *len)
{
    int rc = reader_fill(r, BTC_TL_FRAGMENT_HEADER);
    if (rc <= 0)
        return rc < 0 || r->len == r->pos ? rc : BTC_ERR_IO;
    uint32_t head[2];
    memcpy(head, r->buf + r->pos, sizeof head);
    if (head[1] > r->cap - BTC_TL_FRAGMENT_HEADER)
        return BTC_ERR_IO;
    rc = reader_fill(r, BTC_TL_FRAGMENT_HEADER + (size_t)head[1]);
    if (rc <= 0)
        return rc < 0 ? rc : BTC_ERR_IO; /* a fragment cut short: the spool is damaged */
    *thread = head[0];
    *bytes = r->buf + r->pos + BTC_TL_FRAGMENT_HEADER;
    *len = head[1];
    r->pos += BTC_TL_FRAGMENT_HEADER + (size_t)head[1];
    return 1;
}

void btc_timeline_reader_close(struct btc_timeline_reader *r)
{
    free(r->buf);
    r->buf = NULL;
}
