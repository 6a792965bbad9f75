/* Callstacks of a capture and what their addresses name: the callstacks
 * themselves (interned address arrays), the frames the client resolves them
 * to (each a run of subframes, inlined ones first) and the symbols those
 * subframes point at. A resolved frame goes to a spool as soon as its last
 * subframe arrives; memory holds one map entry per frame address, so a
 * capture that asks for every instruction of the code it received (84,000
 * frames in the full recording) stays small. */
#ifndef BTC_CALLSTACKS_H
#define BTC_CALLSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "btc_spool.h"
#include "btc_util.h"

/* A frame address's state (btc_callstacks.frame_state): asked, resolved. */
enum { BTC_FRAME_ASKED = 1, BTC_FRAME_RESOLVED = 2 };

/* Frames at most a CallstackFrameSize announces (its count is a byte). */
#define BTC_FRAME_MAX_SUBFRAMES 255

/* One subframe of a resolved frame. */
struct btc_subframe {
    uint32_t name, file; /* string index */
    uint32_t line;
    uint64_t sym_addr;
};

/* A resolved frame as read back from the spool (btc_callstacks_frame). */
struct btc_frame_view {
    uint64_t addr;
    uint32_t image; /* string index */
    unsigned n;     /* subframes, 1..255 */
    const uint8_t *packed;
};

struct btc_symbol {
    uint64_t addr;
    uint32_t name, file, image, call_file; /* string index + 1, 0 none */
    uint32_t line, call_line, size;
    uint8_t is_inline;
    int resolved;
};

struct btc_callstacks {
    struct btc_strtab stacks; /* u64 address arrays; index + 1 is the callstack id */
    uint32_t last;            /* from the last CallstackPayload, 0 none */

    struct btc_tagmap frame_state; /* frame address -> BTC_FRAME_ASKED / _RESOLVED */
    uint64_t frames_asked;         /* asked, answer not begun */
    struct btc_texts frames;       /* resolved frames, one packed record each */
    uint64_t frames_resolved;
    uint64_t frames_unresolved; /* of those, answered with no subframes: "0x..." */
    uint64_t frames_retagged;   /* asked at addresses no frame id keeps (btc_frame_address) */

    /* The frame being answered: its subframes arrive one event each. */
    int staging;
    unsigned staging_left;
    size_t staging_len;
    uint8_t staging_rec[13 + 20 * BTC_FRAME_MAX_SUBFRAMES];

    struct btc_vec symbols; /* struct btc_symbol */
    struct btc_map symbol_index;
};

int btc_callstacks_init(struct btc_callstacks *c, const char *spool_dir, char *err, size_t errlen);
void btc_callstacks_free(struct btc_callstacks *c);

struct btc_model;
struct btc_event;
/* Applies CallstackPayload, CallstackFrameSize, CallstackFrame and
 * SymbolInformation events. */
int btc_callstacks_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);

/* Frames asked for: the frame table's size (resolved ones and the others). */
static inline uint64_t btc_callstacks_frame_count(const struct btc_callstacks *c)
{
    return c->frame_state.len;
}
/* Whether the frame at addr was resolved (otherwise it is written as unknown). */
int btc_callstacks_resolved(const struct btc_callstacks *c, uint64_t addr);
/* Reads a spooled frame record (from a btc_texts_reader over c->frames);
 * returns 0, or -1 when the record is malformed. */
int btc_callstacks_frame(const char *rec, uint32_t len, struct btc_frame_view *out);
/* Subframe k (0 = innermost) of a frame read back. */
void btc_callstacks_subframe(const struct btc_frame_view *f, unsigned k, struct btc_subframe *out);

#endif
