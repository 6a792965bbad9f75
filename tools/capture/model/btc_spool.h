/* Spool files: the compact temporary files a capture streams its bulk
 * records to (zones, messages, plot points, frames, memory and lock events),
 * so memory stays bounded however long the capture runs. Fixed-size records
 * are appended through a buffer and may be patched later (a zone's end). */
#ifndef BTC_SPOOL_H
#define BTC_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct btc_spool_bg;

struct btc_spool {
    int fd;
    size_t rec;              /* record size */
    uint8_t *buf;            /* unflushed tail */
    size_t buf_len;          /* bytes in buf */
    size_t buf_cap;          /* capacity, a multiple of rec */
    uint64_t flushed;        /* bytes written to the file */
    uint64_t count;          /* records appended */
    struct btc_spool_bg *bg; /* NULL: flushes write in the caller */
};

/* Creates an unlinked temporary file in dir (it disappears with the process). */
int btc_spool_open(struct btc_spool *s, const char *dir, size_t rec_size, char *err, size_t errlen);
/* The same with a write buffer of about buf_bytes (many spools open at once). */
int btc_spool_open_sized(struct btc_spool *s, const char *dir, size_t rec_size, size_t buf_bytes,
                         char *err, size_t errlen);
void btc_spool_close(struct btc_spool *s);
/* Lets a thread of the spool's own write what a flush hands it while the
 * caller goes on filling a second buffer (one more buffer of memory). A
 * write error surfaces at the next flush, patch or read. When the thread
 * cannot start, the spool stays as it was: flushes write in the caller. */
void btc_spool_background(struct btc_spool *s);
/* Appends one record; *index receives its number. */
int btc_spool_append(struct btc_spool *s, const void *rec, uint64_t *index);
/* Overwrites len bytes at offset off inside record index. */
int btc_spool_patch(struct btc_spool *s, uint64_t index, size_t off, const void *data, size_t len);
int btc_spool_flush(struct btc_spool *s);
/* Appends n bytes to a byte-stream spool (record size 1). */
int btc_spool_write(struct btc_spool *s, const void *p, size_t n);
/* Bytes the spool occupies on disk plus in its buffer. */
static inline uint64_t btc_spool_bytes(const struct btc_spool *s)
{
    return s->flushed + s->buf_len;
}

/* Sequential reader over a spool's records (flushes the spool first). */
struct btc_spool_reader {
    struct btc_spool *s;
    uint8_t *buf;
    size_t len, pos;
    uint64_t file_off;
};
int btc_spool_reader_open(struct btc_spool_reader *r, struct btc_spool *s);
/* Returns 1 and points *rec at the next record, 0 at the end, < 0 on error. */
int btc_spool_reader_next(struct btc_spool_reader *r, const uint8_t **rec);
void btc_spool_reader_close(struct btc_spool_reader *r);

/* Variable-length texts (zone texts, messages: often one of a kind per
 * event), appended as u32 length + bytes; read back in order at the end. */
struct btc_texts {
    struct btc_spool raw; /* rec = 1: a byte stream */
    uint64_t count;
};

int btc_texts_open(struct btc_texts *t, const char *dir, char *err, size_t errlen);
void btc_texts_close(struct btc_texts *t);
/* Appends a text; *index receives its number (0, 1, ...). */
int btc_texts_append(struct btc_texts *t, const void *s, uint32_t len, uint64_t *index);

/* Sequential reader of a byte-stream spool that keeps the next n bytes at
 * hand in one piece (flushes the spool first). */
struct btc_byte_reader {
    int fd;
    uint8_t *buf;
    size_t cap, len, pos; /* buf + pos: the next unread byte */
    uint64_t file_off;
};
int btc_byte_reader_open(struct btc_byte_reader *r, struct btc_spool *s, size_t cap);
/* Makes n bytes available at r->buf + r->pos (growing the buffer if need
 * be): 1, 0 when the spool ends first, < 0 on error. */
int btc_byte_reader_fill(struct btc_byte_reader *r, size_t n);
void btc_byte_reader_close(struct btc_byte_reader *r);

struct btc_texts_reader {
    struct btc_byte_reader in;
};
int btc_texts_reader_open(struct btc_texts_reader *r, struct btc_texts *t);
/* Returns 1 with the next text in *s / *len, 0 at the end, < 0 on error. */
int btc_texts_reader_next(struct btc_texts_reader *r, const char **s, uint32_t *len);
void btc_texts_reader_close(struct btc_texts_reader *r);

#endif
