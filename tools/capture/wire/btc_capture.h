/* One capture session over TCP: connect (with retries until a timeout),
 * handshake, then read frames and send queries on one non-blocking socket
 * until the client's data is complete, the connection drops, or the caller
 * asks to stop. Progress goes to a callback; nothing here prints. */
#ifndef BTC_CAPTURE_H
#define BTC_CAPTURE_H

#include <signal.h>
#include <stdint.h>

#include "btc_decode.h"
#include "btc_journal.h"
#include "btc_model.h"

struct btc_capture_stats {
    double elapsed_s;
    uint64_t wire_bytes;   /* compressed bytes received */
    uint64_t stream_bytes; /* decompressed event bytes */
    uint64_t events;
    uint64_t zones;
    uint64_t rss_bytes;
    uint64_t spool_bytes;
    uint64_t queries_sent;
};

struct btc_capture_opts {
    const char *host;
    unsigned port;
    double connect_timeout_s; /* <= 0: retry until stopped */
    double stop_after_s;      /* <= 0: no limit */
    uint64_t memory_limit;    /* resident bytes; 0: no limit */
    const char *spool_dir;
    const char *journal;         /* path of the capture journal, NULL for none */
    volatile sig_atomic_t *stop; /* set asynchronously (signal handler) */
    void (*progress)(void *ctx, const struct btc_capture_stats *s);
    void *progress_ctx;
    /* The one protocol to offer (--protocol); NULL: offer 82, 76, ... 64 in
     * turn, connecting again after each the client refuses. */
    const struct bt_proto *protocol;
    /* The file to be written at the end: its compression (lz4) and
     * version (0: the client's own, btc_file_version_for_protocol), for
     * the writer's head start (btc_tracy_prewrite.h); no head start
     * without prewrite. */
    int prewrite, prewrite_lz4;
    uint32_t prewrite_version;
};

/* Why the capture ended (when btc_capture_run got as far as the data). */
enum btc_capture_end {
    BTC_END_COMPLETE = 0, /* Terminate received and every query answered */
    BTC_END_DISCONNECTED, /* the client closed the connection (or died) */
    BTC_END_STOPPED,      /* SIGINT/SIGTERM */
    BTC_END_TIME_LIMIT,   /* -s */
    BTC_END_MEMORY_LIMIT, /* -m */
    BTC_END_STREAM_ERROR, /* malformed or unexpected input, see err */
};

struct btc_capture {
    int fd;
    int handshake; /* enum bt_wire_handshake received */
    int have_model;
    enum btc_capture_end end;
    struct btc_welcome welcome;
    const struct bt_proto *proto; /* the protocol the client accepted */
    struct btc_decoder dec;
    struct btc_model model;
    struct btc_capture_stats stats;
    struct btc_journal journal;
    /* Stopped (signal, -s, -m): frames received then but left undecoded
     * when decoding them ran past its bound; they are in the journal. */
    uint64_t undecoded_frames;
    int drain_cut;
    char err[512];
};

/* Runs a capture. Returns BTC_OK when data was received (c->end says how it
 * ended; the model is ready to be written), or BTC_ERR_TIMEOUT,
 * BTC_ERR_HANDSHAKE (c->handshake), BTC_ERR_NET, BTC_ERR_STOPPED (a stop
 * request or -s before any data), BTC_ERR_PROTOCOL (a malformed welcome),
 * BTC_ERR_NOMEM, BTC_ERR_IO with a message in c->err; on these nothing was
 * received and c->have_model is 0. */
int btc_capture_run(struct btc_capture *c, const struct btc_capture_opts *o);
void btc_capture_free(struct btc_capture *c);

/* Resident set size of this process in bytes (0 if unknown). */
uint64_t btc_rss_bytes(void);
/* Physical memory of the machine in bytes (0 if unknown). */
uint64_t btc_physical_memory(void);

#endif
