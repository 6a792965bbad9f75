/* The receiving side of a capture, on a thread of its own: it reads the
 * socket, writes each receive's whole frames to the journal, decompresses
 * them into a ring and hands them on in order, so decoding (the capture's
 * own thread) never waits for the network or LZ4. The ring keeps what the
 * decoder has not finished with, and LZ4's 64 KiB of history behind it.
 *
 * The capture thread keeps the socket for its queries: the receiver only
 * reads from it. */
#ifndef BTC_RECEIVER_H
#define BTC_RECEIVER_H

#include <stddef.h>
#include <stdint.h>

#include "btc_journal.h"

struct btc_receiver;

enum btc_receiver_end {
    BTC_RX_RUNNING,
    BTC_RX_CLOSED,     /* the client closed the connection (message: where, if inside a
                          frame, to follow "closed the connection") */
    BTC_RX_NET_ERROR,  /* reading failed (message) */
    BTC_RX_BAD_STREAM, /* a frame size out of range or a block LZ4 refuses (message) */
    BTC_RX_STOPPED,    /* btc_receiver_stop_reading: everything read before was handed on */
};

/* Starts receiving from fd (journal may have fd -1: none). NULL when out of
 * memory or no thread can start (message in err). */
struct btc_receiver *btc_receiver_start(int fd, struct btc_journal *journal, char *err,
                                        size_t errlen);
/* A descriptor that polls readable when frames or the end have arrived
 * since the last btc_receiver_next returned 0. */
int btc_receiver_fd(const struct btc_receiver *r);
/* The next frame in order: 1 with its events, their size and its bytes on
 * the wire (size field included); 0 when none is ready. It stays valid
 * until btc_receiver_done. */
int btc_receiver_next(struct btc_receiver *r, const uint8_t **events, size_t *size,
                      size_t *wire_bytes);
/* The frame from btc_receiver_next is decoded: its room may be reused. */
void btc_receiver_done(struct btc_receiver *r);
/* Why receiving ended, once every frame before the end has been taken
 * (BTC_RX_RUNNING until then); *msg gets the message, if any. */
enum btc_receiver_end btc_receiver_end(struct btc_receiver *r, const char **msg);
/* Reads no more from the socket, but hands on every frame it has read (and
 * journalled) so far; then the end is BTC_RX_STOPPED. A capture asked to
 * stop loses nothing that came. */
void btc_receiver_stop_reading(struct btc_receiver *r);
/* Stops reading (also mid-stream), joins the thread and frees it all. */
void btc_receiver_stop(struct btc_receiver *r);

#endif
