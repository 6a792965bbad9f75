/* The recorded upstream session, replayed over a real socket by a fake
 * client that answers the capture's queries from the recording: the capture
 * completes, asks exactly what upstream's capture asked, and the .tracy files
 * it writes (0.14.0 and 0.11.1 layouts) hold the README's counts. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "btc_capture.h"
#include "btc_format.h"
#include "btc_tracy.h"
#include "replay_client.h"
#include "session_expect.h"

static struct bt_replay *replay;
static int serve_rc = -1;
static char serve_err[512];
static struct btc_capture cap;
static int capture_rc;
static char dir[] = "/tmp/bt-replay-XXXXXX";
static char path14[4200], path11[4200];

/* Thread body: serves the replay client given as arg. */
static void *serve(void *arg)
{
    serve_rc = bt_replay_serve(arg, serve_err, sizeof serve_err);
    return NULL;
}

static void capture_completes_after_terminate(void **state)
{
    (void)state;
    assert_int_equal(capture_rc, BTC_OK);
    assert_int_equal(cap.end, BTC_END_COMPLETE);
    assert_int_equal(serve_rc, 0);
}

static void capture_asks_what_upstream_asked(void **state)
{
    (void)state;
    const uint64_t *q = bt_replay_query_counts(replay);
    assert_int_equal(q[BT_QUERY_STRING], 10);
    assert_int_equal(q[BT_QUERY_THREAD_STRING], 4);
    assert_int_equal(q[BT_QUERY_SOURCE_LOCATION], 4);
    assert_int_equal(q[BT_QUERY_FRAME_NAME], 2);
    assert_int_equal(q[BT_QUERY_PLOT_NAME], 1);
    assert_int_equal(q[BT_QUERY_CALLSTACK_FRAME], 8);
    assert_int_equal(q[BT_QUERY_SYMBOL], 11);
    assert_int_equal(q[BT_QUERY_TERMINATE], 1);
    uint64_t other = 0;
    for (int i = BT_QUERY_PARAMETER; i < BT_QUERY_COUNT; i++)
        other += i == BT_QUERY_CALLSTACK_FRAME || i == BT_QUERY_SYMBOL ? 0 : q[i];
    assert_int_equal(other, 0);
}

static void every_received_event_is_decoded(void **state)
{
    (void)state;
    assert_true(cap.dec.events > 8300 * 2);
    assert_int_equal(cap.model.zone_count, 8300);
    assert_int_equal(btc_model_outstanding(&cap.model), 0);
}

static const char *data_dir;

/* The memory limit (-m) ends a capture like a signal does: the client is told
 * (Terminate), and what was received is kept for the file. A limit of one
 * byte trips at the first check, right after the handshake. */
static void memory_limit_stops_the_capture_cleanly(void **state)
{
    (void)state;
    struct bt_replay *r;
    char err[512];
    unsigned port;
    struct bt_replay_opts ro = {.data_dir = data_dir};
    assert_int_equal(bt_replay_open(&r, &ro, &port, err, sizeof err), 0);
    pthread_t th;
    pthread_create(&th, NULL, serve, r);
    static struct btc_capture limited;
    struct btc_capture_opts co = {.host = "127.0.0.1",
                                  .port = port,
                                  .connect_timeout_s = 20,
                                  .spool_dir = dir,
                                  .memory_limit = 1};
    int rc = btc_capture_run(&limited, &co);
    pthread_join(th, NULL);
    assert_int_equal(rc, BTC_OK);
    assert_int_equal(limited.end, BTC_END_MEMORY_LIMIT);
    assert_true(limited.stats.rss_bytes > 1);
    assert_int_equal(bt_replay_query_counts(r)[BT_QUERY_TERMINATE], 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/limited.tracy", dir);
    assert_int_equal(btc_model_finish(&limited.model), 0);
    assert_int_equal(
        btc_tracy_write(&limited.model, path, BTC_FILE_VERSION_0_14_0, NULL, err, sizeof err), 0);
    unlink(path);
    btc_capture_free(&limited);
    bt_replay_close(r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char err[512];
    unsigned port;
    struct bt_replay_opts ro = {.data_dir = argv[1]};
    if (bt_replay_open(&replay, &ro, &port, err, sizeof err) < 0) {
        fprintf(stderr, "replay: %s\n", err);
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, serve, replay);
    struct btc_capture_opts co = {
        .host = "127.0.0.1", .port = port, .connect_timeout_s = 20, .spool_dir = dir};
    capture_rc = btc_capture_run(&cap, &co);
    pthread_join(th, NULL);
    if (serve_rc < 0)
        fprintf(stderr, "replay: %s\n", serve_err);
    if (capture_rc < 0 || cap.end != BTC_END_COMPLETE)
        fprintf(stderr, "capture: %s\n", cap.err);

    snprintf(path14, sizeof path14, "%s/replay-0.14.0.tracy", dir);
    snprintf(path11, sizeof path11, "%s/replay-0.11.1.tracy", dir);
    int wrc = cap.have_model ? btc_model_finish(&cap.model) : -1;
    if (wrc >= 0)
        wrc = btc_tracy_write(&cap.model, path14, BTC_FILE_VERSION_0_14_0, NULL, err, sizeof err);
    if (wrc >= 0)
        wrc = btc_tracy_write(&cap.model, path11, BTC_FILE_VERSION_0_11_1, NULL, err, sizeof err);
    if (wrc < 0)
        fprintf(stderr, "write: %s\n", err);

    const struct CMUnitTest capture_tests[] = {
        cmocka_unit_test(capture_completes_after_terminate),
        cmocka_unit_test(capture_asks_what_upstream_asked),
        cmocka_unit_test(every_received_event_is_decoded),
        cmocka_unit_test(memory_limit_stops_the_capture_cleanly),
    };
    int failed = cmocka_run_group_tests_name("replay_capture", capture_tests, NULL, NULL);
    failed += session_expect_run("replay_file_0_14_0", path14);
    failed += session_expect_run("replay_file_0_11_1", path11);
    btc_capture_free(&cap);
    bt_replay_close(replay);
    if (getenv("BT_KEEP_TEST_FILES"))
        fprintf(stderr, "files kept in %s\n", dir);
    else {
        unlink(path14);
        unlink(path11);
        rmdir(dir);
    }
    return failed || wrc < 0;
}
