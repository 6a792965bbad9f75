/* Moving files between host and board, verified: SFTP where the board offers
 * it, otherwise streaming over an exec channel (`cat`, `tail -c`); SHA-256 on
 * both sides; downloads land in FILE.part and are renamed when verified. */
#ifndef BTD_XFER_H
#define BTD_XFER_H

#include "btd_ssh.h"

#include <stdbool.h>
#include <stdint.h>

struct btd_xfer_options {
    bool no_sftp;       /* stream over exec channels even when SFTP is there */
    int idle_timeout_s; /* give up when nothing moves for this long */
};

/* Uploads LOCAL to REMOTE (created 0700). sha receives the SHA-256 of what
 * was sent. Returns 0, or -1 with the reason in err. */
int btd_upload(struct btd_conn *c, const struct btd_xfer_options *o, const char *local,
               const char *remote, const char *label, char sha[65], char *err, size_t errlen);

/* REMOTE's size on the board (busybox `stat`, else `wc -c`). Returns 0, 1
 * when the file does not exist, or -1 with err. */
int btd_remote_size(struct btd_conn *c, const char *remote, uint64_t *size, char *err,
                    size_t errlen);

/* Pulls REMOTE into LOCAL: data goes to LOCAL.part, continuing from its
 * length when resume is set; known_size is REMOTE's size when the caller
 * knows it (saves a round trip), else BTD_SIZE_UNKNOWN; size and SHA-256 are checked against the
 * board's (known_sha when the caller has it from the board, else its sha256sum runs during the
 * transfer), then LOCAL.part is renamed to LOCAL. Returns BTD_EXIT_OK, BTD_EXIT_PULL (board or
 * transfer) or BTD_EXIT_OUTPUT (local file), after printing why. */
enum { BTD_SIZE_UNKNOWN = -1 };
int btd_pull(struct btd_conn *c, const struct btd_xfer_options *o, const char *remote,
             const char *local, bool resume, long long known_size, const char *known_sha,
             uint64_t *size_out, char sha_out[65]);

#endif
