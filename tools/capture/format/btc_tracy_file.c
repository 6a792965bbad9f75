/* The .tracy file's block stream (see btc_tracy_file.h): the container
 * header, the payload cut into 64 KiB blocks handed to the compressor
 * (btc_compress.c) or to a detour spool, and the file replaced only once
 * complete. The bottom of the writer, under the payload's sections; the
 * reader's rewrite writes through it too. */
#define _GNU_SOURCE
#include "btc_tracy_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btc_spool.h"

void btc_fw_block(struct fw *w)
{
    size_t len = w->len;
    /* Emptied even on failure, so put() never spins on a full block; once
     * a write failed the rest is dropped and the caller reports it. */
    w->len = 0;
    if (w->failed || !len)
        return;
    if (w->detour) {
        if (btc_spool_write(w->detour, w->blk, len) < 0)
            w->failed = 1;
        return;
    }
    w->payload += len;
    if (btc_compress_next(w->c, len, w->f, &w->file_bytes) < 0)
        w->failed = 1;
    w->blk = btc_compress_block(w->c);
}

void btc_fw_put(struct fw *w, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        size_t k = BTC_FILE_BLOCK_SIZE - w->len;
        if (k > n)
            k = n;
        memcpy(w->blk + w->len, b, k);
        w->len += k;
        b += k;
        n -= k;
        if (w->len == BTC_FILE_BLOCK_SIZE)
            btc_fw_block(w);
    }
}

int btc_fw_begin(struct fw *w, const char *path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    int legacy = w->legacy, lz4 = w->lz4, alone = w->alone;
    memset(w, 0, sizeof *w);
    w->legacy = legacy;
    w->lz4 = lz4;
    w->alone = alone;
    /* A regular file (or none yet) is replaced only once the new one is
     * complete: written beside it under a temporary name, synced, renamed.
     * Anything else (a FIFO, /dev/stdout) is written in place. */
    struct stat st;
    bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    tmp[0] = '\0';
    if (in_place) {
        w->f = fopen(path, "wb");
    } else {
        static unsigned serial;
        int fd = -1;
        for (int tries = 0; fd < 0 && tries < 100; tries++) {
            snprintf(tmp, tmplen, "%s.%d-%u.tmp", path, (int)getpid(), ++serial);
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd < 0 && errno != EEXIST)
                break;
        }
        w->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
        if (fd >= 0 && !w->f)
            close(fd);
    }
    if (!w->f) {
        snprintf(err, errlen, "cannot open %s for writing: %s", in_place ? path : tmp,
                 strerror(errno));
        if (tmp[0])
            unlink(tmp);
        tmp[0] = '\0';
        return BTC_ERR_IO;
    }
    /* The legacy container is one stream (zstd flushed at every block, or
     * LZ4), its magic saying which. */
    w->c = btc_compress_open_independent(w->legacy ? 1 : btc_compress_default_streams(), w->lz4,
                                         w->alone);
    if (!w->c) {
        snprintf(err, errlen, "out of memory for the file writer");
        return btc_fw_end(w, path, tmp, BTC_ERR_NOMEM, NULL, err, errlen);
    }
    w->blk = btc_compress_block(w->c);
    uint8_t head[6] = {btc_file_magic[0],
                       btc_file_magic[1],
                       btc_file_magic[2],
                       btc_file_magic[3],
                       w->lz4 ? BTC_FILE_COMPRESS_LZ4 : BTC_FILE_COMPRESS_ZSTD,
                       (uint8_t)btc_compress_streams(w->c)};
    size_t head_len = sizeof head;
    if (w->legacy) {
        memcpy(head, w->lz4 ? btc_file_magic_legacy_lz4 : btc_file_magic_legacy_zstd,
               BTC_FILE_MAGIC_SIZE);
        head_len = BTC_FILE_MAGIC_SIZE;
    }
    if (fwrite(head, 1, head_len, w->f) != head_len)
        w->failed = 1;
    w->file_bytes = head_len;
    return BTC_OK;
}

int btc_fw_end(struct fw *w, const char *path, const char *tmp, int rc, uint64_t *bytes, char *err,
               size_t errlen)
{
    if (w->c) {
        btc_fw_block(w);
        if (btc_compress_flush(w->c, w->f, &w->file_bytes) < 0)
            w->failed = 1;
        /* The legacy reader (0.10) reads another block after every full
         * one: a payload of whole blocks ends with an empty one (a raw zstd
         * block of 0 bytes, which the frame still open takes; for LZ4, the
         * one token of a block with nothing in it). */
        static const uint8_t empty_zstd[7] = {3, 0, 0, 0, 0, 0, 0}, empty_lz4[5] = {1, 0, 0, 0, 0};
        const uint8_t *empty = w->lz4 ? empty_lz4 : empty_zstd;
        size_t empty_len = w->lz4 ? sizeof empty_lz4 : sizeof empty_zstd;
        if (w->legacy && !w->failed && w->payload && w->payload % BTC_FILE_BLOCK_SIZE == 0) {
            if (fwrite(empty, 1, empty_len, w->f) != empty_len)
                w->failed = 1;
            w->file_bytes += empty_len;
        }
    }
    bool in_place = !tmp[0];
    const char *name = in_place ? path : tmp;
    if (rc >= 0 && (w->failed || fflush(w->f) != 0 || (!in_place && fsync(fileno(w->f)) != 0))) {
        snprintf(err, errlen, "cannot write %s: %s", name, strerror(errno));
        rc = BTC_ERR_IO;
    }
    if (fclose(w->f) != 0 && rc >= 0) {
        snprintf(err, errlen, "cannot write %s: %s", name, strerror(errno));
        rc = BTC_ERR_IO;
    }
    if (!in_place) {
        if (rc >= 0 && rename(tmp, path) != 0) {
            snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
            rc = BTC_ERR_IO;
        }
        if (rc < 0)
            unlink(tmp);
    }
    if (bytes)
        *bytes = w->file_bytes;
    btc_compress_close(w->c);
    memset(w, 0, sizeof *w);
    return rc;
}
