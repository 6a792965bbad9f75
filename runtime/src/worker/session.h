/* One capture session as the worker's files share it: the connection, the
 * encoder, the keys sent, code transfer, the queries read; worker.c runs
 * it, drain.c sends the buffers' events through it, query.c answers the
 * capture's queries. */
#ifndef BT_SESSION_H
#define BT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"
#include "core/runtime.h"
#include "encode/encoder.h"
#include "keys.h"
#include "symbols/code.h"

struct session {
    int fd;
    struct key_set strings; /* addresses of NUL-terminated texts */
    struct key_set srclocs; /* addresses of struct bt_srcloc */
    struct bt_encoder enc;
    struct bt_code code;
    int64_t serial_last;
    int64_t serial_step; /* ticks that make at least 1 ns on the server */
    uint8_t queries[BT_QUERY_SIZE * 512];
    size_t queries_len;
    const struct bt_proto *proto;   /* the server's */
    uint8_t announced[BT_EV_COUNT]; /* kinds whose dropping was said */
    int stop;                       /* Terminate query, or the socket failed */
    int disconnect;                 /* Disconnect query: finish as if the program exited */
    int lost;                       /* reading failed: errno, or -1 when the capture closed */
    struct bt_thread **snapshot;
    size_t snapshot_cap;
};

/* One pass over every buffer (drain.c): the serial queue, system tracing's
 * queue, each thread's ring, encoded (or with discard, dropped); returns the
 * bytes taken from the buffers. */
size_t bt_drain(struct session *s, int discard);
/* While no capture is connected and events may be dropped: frees the
 * rings of exited threads beyond the most recent ones. */
void bt_drain_prune_retired(void);
/* At the session's end: the zones still open end now. */
void bt_drain_close_open_zones(struct session *s);

/* Reads what queries have arrived (query.c), waiting up to timeout_ns (or
 * until a producer waiting for room rings the bell; not at all if one waits
 * already and the last pass made progress), and answers them in arrival
 * order. */
void bt_session_queries(struct session *s, int64_t timeout_ns, int progress);

#endif
