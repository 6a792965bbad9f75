/* The steps run and live share: connecting, the board probe and the
 * architecture and space checks, uploading with verification, and removing
 * the board's folder after. The int ones return an exit status from
 * btd_msg.h. */
#ifndef BTD_DEPLOY_H
#define BTD_DEPLOY_H

#include "btd_deploy_state.h"

#include <stdbool.h>

/* Connects with the connection options of o. */
int btd_deploy_connect(struct btd_deploy *d);

/* Probe with a private folder, architecture and space checks, upload of the
 * program (and capture); the supervisor verifies their SHA-256 on the board. */
int btd_deploy_prepare(struct btd_deploy *d);

/* Connects, then prepares; a failure while interrupted reports
 * BTD_EXIT_INTERRUPTED, since the signal is the cause the user needs to see. */
int btd_deploy_start(struct btd_deploy *d);

/* Removes the board folder unless --keep (says so either way). Returns
 * whether it was removed. */
bool btd_deploy_cleanup(struct btd_deploy *d, bool keep);

/* The connection was lost before the supervisor started (mid-upload): the
 * folder holds only partial uploads, so connect once more and remove it.
 * True when it is gone (board.dir is then ""), false after saying why not. */
bool btd_deploy_cleanup_lost(struct btd_deploy *d);

#endif
