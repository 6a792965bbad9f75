/* The capture journal: the welcome message and every frame exactly as
 * received, appended with one write() per frame while capturing. If the
 * capture process itself dies (SIGKILL, power loss of the board's shell),
 * the journal is still on disk and replaying it rebuilds the trace; after a
 * normal capture it is deleted. Its size is the compressed wire size. */
#ifndef BTC_JOURNAL_H
#define BTC_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "btc_decode.h"
#include "btc_model.h"

#define BTC_JOURNAL_MAGIC      "BTJRNL01"
#define BTC_JOURNAL_MAGIC_SIZE 8u
/* A client of an older protocol: this magic, its protocol's name in 8
 * bytes (NUL-padded, "72", "66-tt"), then the same as above; its frames
 * are kept as received, in that protocol's form. */
#define BTC_JOURNAL_MAGIC_PROTO "BTJRNL02"
#define BTC_JOURNAL_PROTO_SIZE  8u

struct btc_journal {
    int fd;
    int failed; /* a write failed: journaling stopped, the capture goes on */
    int error;  /* the errno of that write */
};

/* Creates (truncates) the journal and writes the magic and the welcome bytes
 * (BT_WELCOME_SIZE, plus BT_ON_DEMAND_SIZE for an on-demand client). */
int btc_journal_open(struct btc_journal *j, const char *path, const struct bt_proto *proto,
                     const uint8_t *welcome, size_t welcome_len, char *err, size_t errlen);
/* Appends whole frames (u32 size + block each), len bytes, as they came off
 * the socket. */
void btc_journal_frames(struct btc_journal *j, const uint8_t *frames, size_t len);
void btc_journal_close(struct btc_journal *j);

/* Replays a journal through a decoder and model it initialises (spools in
 * spool_dir). A frame cut short by the death of the capture ends the replay
 * cleanly; *frames receives the number of frames applied. Returns BTC_OK,
 * or BTC_ERR_PROTOCOL with the model holding everything before the error. */
int btc_journal_replay(const char *path, const char *spool_dir, struct btc_decoder *d,
                       struct btc_model *m, uint64_t *frames, char *err, size_t errlen);

#endif
