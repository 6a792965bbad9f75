/* See replay_capture.h. */
#define _GNU_SOURCE
#include "replay_capture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btc_format.h"
#include "btc_tracy.h"

static void *serve(void *arg)
{
    struct replay_capture *rc = arg;
    rc->serve_rc = bt_replay_serve(rc->replay, rc->serve_err, sizeof rc->serve_err);
    return NULL;
}

int replay_capture_run(struct replay_capture *rc, const char *data_dir, const char *name,
                       const char *protocol)
{
    struct bt_replay_opts ro = {.data_dir = data_dir, .protocol = protocol};
    return replay_capture_run_with(rc, &ro, name);
}

int replay_capture_run_with(struct replay_capture *rc, const struct bt_replay_opts *ro,
                            const char *name)
{
    const char *protocol = ro->protocol;
    memset(rc, 0, sizeof *rc);
    rc->capture_rc = rc->serve_rc = rc->write_rc = -1;
    snprintf(rc->dir, sizeof rc->dir, "/tmp/bt-%s-XXXXXX", name);
    if (!mkdtemp(rc->dir)) {
        perror("mkdtemp");
        return -1;
    }
    char err[512];
    unsigned port;
    if (bt_replay_open(&rc->replay, ro, &port, err, sizeof err) < 0) {
        fprintf(stderr, "replay: %s\n", err);
        return -1;
    }
    pthread_t th;
    pthread_create(&th, NULL, serve, rc);
    struct btc_capture_opts co = {
        .host = "127.0.0.1", .port = port, .connect_timeout_s = 20, .spool_dir = rc->dir};
    /* The tenstorrent fork greets as upstream 66 does: only naming it
     * (--protocol) tells them apart. */
    if (protocol && strchr(protocol, '-'))
        co.protocol = bt_proto_by_name(protocol);
    rc->capture_rc = btc_capture_run(&rc->cap, &co);
    pthread_join(th, NULL);
    if (rc->serve_rc < 0)
        fprintf(stderr, "replay: %s\n", rc->serve_err);
    if (rc->capture_rc < 0 || rc->cap.end != BTC_END_COMPLETE)
        fprintf(stderr, "capture: %s\n", rc->cap.err);
    snprintf(rc->path14, sizeof rc->path14, "%s/%s-0.14.0.tracy", rc->dir, name);
    snprintf(rc->path11, sizeof rc->path11, "%s/%s-0.11.1.tracy", rc->dir, name);
    int wrc = rc->cap.have_model ? btc_model_finish(&rc->cap.model) : -1;
    if (wrc >= 0)
        wrc = btc_tracy_write(&rc->cap.model, rc->path14, BTC_FILE_VERSION_0_14_0, NULL, err,
                              sizeof err);
    if (wrc >= 0)
        wrc = btc_tracy_write(&rc->cap.model, rc->path11, BTC_FILE_VERSION_0_11_1, NULL, err,
                              sizeof err);
    if (wrc < 0)
        fprintf(stderr, "write: %s\n", err);
    rc->write_rc = wrc;
    return 0;
}

void replay_capture_free(struct replay_capture *rc)
{
    btc_capture_free(&rc->cap);
    bt_replay_close(rc->replay);
    if (getenv("BT_KEEP_TEST_FILES")) {
        fprintf(stderr, "files kept in %s\n", rc->dir);
        return;
    }
    unlink(rc->path14);
    unlink(rc->path11);
    rmdir(rc->dir);
}
