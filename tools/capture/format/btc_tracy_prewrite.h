/* The .tracy writer's head start: while a capture runs, one thread's zone
 * timeline (the first thread to have zones, in a profiled Python program
 * or a typical C one nearly all the file) is expanded to the file's
 * encoding and compressed, 64 KiB block by 64 KiB block, in a thread of
 * its own, so that writing the file at the end copies those blocks
 * instead of compressing them then (for 10 M zones, some 260 MB: 0.3 s on
 * two CPUs after the program ended).
 *
 * A file's blocks are fixed 64 KiB pieces of its payload, so the blocks
 * made early fit only where the timeline starts on a block boundary: the
 * writer puts an unreferenced string of the right length into the string
 * table to get there (btc_tracy_write.c), and every block of such a file
 * is compressed on its own (a zstd frame, an LZ4 block with no dictionary),
 * which any reader takes. The timeline's records are final when a flush
 * hands them over (btc_tl_tap) except the extra and child count of zones
 * still open then: blocks that hold those wait, raw, until the zone's end
 * record arrives, its patch applied to them. Anything that goes wrong
 * (memory, a spool, too many zones waiting) only switches the head start
 * off: the timeline spool still holds everything and the writer then
 * encodes it at the end as before. */
#ifndef BTC_TRACY_PREWRITE_H
#define BTC_TRACY_PREWRITE_H

#include <stdint.h>
#include <stdio.h>

#include "btc_timeline.h"

struct btc_prewrite;

/* Starts watching tl (whose spools go to dir) for files compressed with
 * zstd or (lz4) LZ4. NULL when it cannot start (the writer then does all
 * the work at the end). */
struct btc_prewrite *btc_prewrite_start(struct btc_timeline *tl, const char *dir, int lz4);
/* Stops watching and frees; tl is left without a tap. */
void btc_prewrite_free(struct btc_prewrite *p, struct btc_timeline *tl);

/* What the writer splices, once the timeline is complete (every zone
 * closed): btc_prewrite_finish hands the last bytes over and waits for the
 * thread. Returns 1 with the thread whose timeline is ready, in *thread,
 * and the number of whole blocks, 0 when there is nothing usable (the
 * writer then encodes every timeline itself). */
int btc_prewrite_finish(struct btc_prewrite *p, struct btc_timeline *tl, int lz4, uint32_t *thread,
                        uint64_t *blocks);
/* The timeline's bytes after its whole blocks (fewer than 64 KiB). */
const uint8_t *btc_prewrite_rest(const struct btc_prewrite *p, size_t *len);
/* Block i (0 <= i < blocks) as the file stores it: [u32 size][bytes]. The
 * pointer holds until the next call. NULL on a read error. */
const uint8_t *btc_prewrite_block(struct btc_prewrite *p, uint64_t i, size_t *len);

#endif
