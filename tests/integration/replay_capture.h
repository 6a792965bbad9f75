/* A whole capture of a recorded session, for the replay tests: the fake
 * client serves the recording from a thread over a real socket, the capture
 * core captures it, and the model is written in both file layouts. */
#ifndef BT_REPLAY_CAPTURE_H
#define BT_REPLAY_CAPTURE_H

#include "btc_capture.h"
#include "replay_client.h"

struct replay_capture {
    struct bt_replay *replay;
    struct btc_capture cap;
    int capture_rc, serve_rc, write_rc;
    char serve_err[512];
    char dir[64];                    /* private folder for spools and files */
    char path14[4200], path11[4200]; /* the files, 0.14.0 and 0.11.1 layouts */
};

/* Runs it, the client speaking protocol (NULL: 82; see bt_replay_opts);
 * name goes into the file names. Returns 0 when the recording was
 * loaded and a folder made (the outcome is in the fields, each failure also
 * said on stderr), -1 otherwise. */
int replay_capture_run(struct replay_capture *rc, const char *data_dir, const char *name,
                       const char *protocol);
/* The same with the client's options given whole (data_dir, protocol and
 * what else it should do). */
int replay_capture_run_with(struct replay_capture *rc, const struct bt_replay_opts *ro,
                            const char *name);
/* Frees it and removes its files (kept with BT_KEEP_TEST_FILES set). */
void replay_capture_free(struct replay_capture *rc);

#endif
