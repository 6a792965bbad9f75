/* Block compression for the .tracy writer: the payload is cut into 64 KiB
 * blocks and block i belongs to stream i mod S (the container's stream
 * count), each stream one compression context (zstd, flushed once per
 * block, or LZ4) as upstream's FileWrite has. With S > 1 the streams are compressed at once,
 * by S - 1 threads and the caller, and the blocks are written in file
 * order. S = 1 compresses each block as it fills, with no thread. */
#ifndef BTC_COMPRESS_H
#define BTC_COMPRESS_H

#include <stdint.h>
#include <stdio.h>

struct btc_compress;

/* Streams for a writer on this machine: one per CPU it may run on, at most
 * BTC_COMPRESS_MAX_STREAMS (upstream's tracy-capture writes 4). */
#define BTC_COMPRESS_MAX_STREAMS 4u
unsigned btc_compress_default_streams(void);

/* `streams` streams, 1 to BTC_COMPRESS_MAX_STREAMS (when threads cannot be
 * started, fewer threads share them), of zstd or (lz4) LZ4. Returns NULL
 * when out of memory. */
struct btc_compress *btc_compress_open(unsigned streams, int lz4);
/* The same with, when alone, every block compressed on its own (a whole
 * zstd frame, an LZ4 block that refers to no other): readers take such
 * blocks as they take any, and blocks compressed elsewhere can then be put
 * among them (btc_compress_put_compressed). */
struct btc_compress *btc_compress_open_independent(unsigned streams, int lz4, int alone);
unsigned btc_compress_streams(const struct btc_compress *c);
/* The block to fill next (BTC_FILE_BLOCK_SIZE bytes). */
uint8_t *btc_compress_block(struct btc_compress *c);
/* The block from btc_compress_block holds len bytes: queue it, and append
 * the blocks compressed by then to f in order ([u32 size][bytes] each),
 * counting what was written in *bytes. Returns 0, or -1 when compressing
 * or writing failed (everything after is dropped). */
int btc_compress_next(struct btc_compress *c, size_t len, FILE *f, uint64_t *bytes);
/* Compresses and writes the blocks still queued. */
int btc_compress_flush(struct btc_compress *c, FILE *f, uint64_t *bytes);
/* With every block on its own: writes the blocks still queued, then one
 * compressed elsewhere, [u32 size][bytes] as the file stores it, in the
 * next block's place (the caller's next block then starts afresh:
 * btc_compress_block). 0, or -1 when writing failed or the blocks are
 * not on their own. */
int btc_compress_put_compressed(struct btc_compress *c, const void *block, size_t len, FILE *f,
                                uint64_t *bytes);
void btc_compress_close(struct btc_compress *c);

#endif
