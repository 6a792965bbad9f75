/* Stream decoder of the Tracy wire protocol (client -> server): the welcome
 * message, the dictionary-chained LZ4 frames, and the event stream cut into
 * events with their times resolved and staged strings attached. It works in
 * 0.14.0's form (protocol 82); a client of an older protocol has each frame
 * converted to that form first (btc_decoder_set_protocol). It takes buffers
 * and hands each event to a callback; it knows nothing of sockets. */
#ifndef BTC_DECODE_H
#define BTC_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"
#include "btc_util.h"

struct btc_welcome {
    double timer_mul;
    int64_t init_begin;
    int64_t init_end;
    uint64_t resolution;
    uint64_t epoch;
    uint64_t exec_time;
    uint64_t pid;
    int64_t sampling_period;
    uint8_t flags;
    uint8_t cpu_arch;
    char cpu_vendor[BT_WELCOME_CPU_VENDOR_SIZE];
    uint32_t cpu_id;
    char program[BT_WELCOME_PROGRAM_NAME_SIZE + 1];
    char host_info[BT_WELCOME_HOST_INFO_SIZE + 1];
    uint64_t on_demand_frames; /* OnDemandPayloadMessage, when flags has OnDemand */
    int64_t on_demand_time;
    uint64_t delay; /* the client's queue delay in ticks (welcomes up to 0.12 carry it) */
};

/* Parses the 1170-byte welcome message. */
int btc_welcome_parse(const uint8_t *buf, size_t n, struct btc_welcome *w);

/* One decoded event. Pointers stay valid only during the callback. */
struct btc_event {
    uint8_t type;
    const uint8_t *p; /* the event's bytes, starting with the type byte */
    size_t size;      /* total size of the event in the stream */
    uint64_t offset;  /* offset of the type byte in the decompressed stream */
    int has_time;
    int64_t time;  /* ns since the welcome's initBegin (resolved reference chain) */
    int64_t ticks; /* the same before conversion: the client's clock */
    const char *str1;
    size_t str1_len; /* staged single string consumed by this event */
    const char *str2;
    size_t str2_len; /* staged second string consumed by this event */
    uint64_t key;    /* keyed strings (119..131) */
    const uint8_t *data;
    size_t data_len;
};

/* Returns 0 to go on, a negative status to stop (writing a message to err). */
typedef int (*btc_event_fn)(void *ctx, const struct btc_event *ev, char *err, size_t errlen);

/* An optional fast path for plain zone begins and ends, the bulk of most
 * streams: the decoder gathers a run of consecutive zone events (at most
 * BTC_ZONE_RUN_MAX, up to the first other event) and hands over their times
 * (ns) and, for begins, source location keys, before anything else is done
 * with them. It returns how many it took whole, in order; the first one
 * not taken (anything unusual: a new thread or source location, a zone
 * with text, a check that fails) goes to the event callback untouched, so
 * that path keeps every check and error report. */
#define BTC_ZONE_RUN_MAX 64u
struct btc_zone_op {
    int64_t time;
    uint64_t key; /* a begin's source location key */
    int begin;
};
struct btc_zone_fast {
    size_t (*run)(void *ctx, const struct btc_zone_op *ops, size_t n);
    void *ctx;
};

struct btc_decoder {
    void *lz4; /* LZ4_streamDecode_t */
    uint8_t *ring;
    size_t ring_off;
    uint64_t stream_off; /* decompressed bytes consumed so far */
    uint64_t frames;
    uint64_t events;
    uint64_t compressed_bytes;
    double timer_mul;
    int64_t init_begin;
    int64_t ref_thr, ref_ser, ref_ctx, ref_gpu;
    char *single, *second; /* staged strings, copied: they may arrive a frame early */
    size_t single_len, second_len;
    int has_single, has_second;
    /* Per type: time kind, time offset, compact form, consumes staged
     * strings; filled at init so the hot loop does one lookup. */
    uint8_t layout[BT_EV_COUNT][4];
    struct btc_zone_fast zones;   /* run NULL: none */
    const struct bt_proto *proto; /* the client's protocol; NULL: 82 */
    uint8_t *canon;               /* an older protocol's frame in 0.14.0's form */
};

int btc_decoder_init(struct btc_decoder *d, const struct btc_welcome *w);
void btc_decoder_free(struct btc_decoder *d);

/* The client speaks protocol p (82 when never called): each frame is
 * converted to 0.14.0's form before it is decoded, and an event that is
 * not one of p's is a protocol error naming p. */
int btc_decoder_set_protocol(struct btc_decoder *d, const struct bt_proto *p);

/* Decompresses one LZ4 block (continuing the dictionary) and decodes it. */
int btc_decoder_frame(struct btc_decoder *d, const uint8_t *block, size_t n, btc_event_fn fn,
                      void *ctx, char *err, size_t errlen);

/* Decodes one frame someone else decompressed (size bytes of events; it
 * came as wire_bytes on the socket, its size field included) and counts it
 * as btc_decoder_frame does. */
int btc_decoder_inflated_frame(struct btc_decoder *d, const uint8_t *events, size_t size,
                               size_t wire_bytes, btc_event_fn fn, void *ctx, char *err,
                               size_t errlen);

/* What a frame that cannot be decompressed is reported as; the same words
 * whichever thread decompresses it. */
void btc_lz4_failure(uint64_t frame, uint64_t stream_off, size_t n, char *err, size_t errlen);

/* Decodes already decompressed event bytes; events must not straddle calls. */
int btc_decoder_events(struct btc_decoder *d, const uint8_t *buf, size_t n, btc_event_fn fn,
                       void *ctx, char *err, size_t errlen);

/* Client ticks to ns since initBegin, as upstream converts them; wraps and
 * saturates instead of overflowing on hostile input. */
static inline int64_t btc_ticks_to_ns(double timer_mul, int64_t init_begin, int64_t ticks)
{
    double ns = (double)(int64_t)((uint64_t)ticks - (uint64_t)init_begin) * timer_mul;
    if (!(ns > -4e18))
        return ns != ns ? 0 : -(int64_t)4e18;
    if (ns > 4e18)
        return (int64_t)4e18;
    return (int64_t)ns;
}
static inline int64_t btc_decoder_ns(const struct btc_decoder *d, int64_t ticks)
{
    return btc_ticks_to_ns(d->timer_mul, d->init_begin, ticks);
}

#endif
