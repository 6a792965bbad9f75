/* The recorded upstream session, replayed over a real socket by a fake
 * client that answers the capture's queries from the recording: the capture
 * completes, asks exactly what upstream's capture asked, and the .tracy files
 * it writes (0.14.0 and 0.11.1 layouts) hold the README's counts. Given a
 * protocol, the client speaks it (64 ... 76, 66-tt), and the same holds. */
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
#include "btc_file_versions.h"
#include "btc_format.h"
#include "btc_tracy.h"
#include "replay_capture.h"
#include "replay_client.h"
#include "session_expect.h"

static struct replay_capture run;
static const char *protocol; /* the client's, NULL: 82 */

/* Thread body: serves the replay client given as arg. */
static void *serve(void *arg)
{
    char err[512];
    if (bt_replay_serve(arg, err, sizeof err) < 0)
        fprintf(stderr, "replay: %s\n", err);
    return NULL;
}

static void capture_completes_after_terminate(void **state)
{
    (void)state;
    assert_int_equal(run.capture_rc, BTC_OK);
    assert_int_equal(run.cap.end, BTC_END_COMPLETE);
    assert_int_equal(run.serve_rc, 0);
    assert_string_equal(run.cap.proto->name, protocol ? protocol : "82");
}

static void capture_asks_what_upstream_asked(void **state)
{
    (void)state;
    const uint64_t *q = bt_replay_query_counts(run.replay);
    /* tenstorrent's recording names two GPU contexts as well */
    int tt = protocol && strchr(protocol, '-') && session_expect_old_client;
    assert_int_equal(q[BT_QUERY_STRING], tt ? 12 : 10);
    assert_int_equal(q[BT_QUERY_THREAD_STRING], session_expect_old_client ? 3 : 4);
    assert_int_equal(q[BT_QUERY_SOURCE_LOCATION], tt ? 6 : 4);
    assert_int_equal(q[BT_QUERY_FRAME_NAME], 2);
    assert_int_equal(q[BT_QUERY_PLOT_NAME], 1);
    assert_int_equal(q[BT_QUERY_CALLSTACK_FRAME], 8);
    assert_true(q[BT_QUERY_SYMBOL] == 11 || (session_expect_old_client && q[BT_QUERY_SYMBOL] == 9));
    assert_int_equal(q[BT_QUERY_TERMINATE], 1);
    uint64_t other = 0;
    for (int i = BT_QUERY_PARAMETER; i < BT_QUERY_COUNT; i++)
        other += i == BT_QUERY_CALLSTACK_FRAME || i == BT_QUERY_SYMBOL ? 0 : q[i];
    assert_int_equal(other, 0);
}

static void every_received_event_is_decoded(void **state)
{
    (void)state;
    assert_true(run.cap.dec.events > 8300 * 2);
    assert_int_equal(run.cap.model.zone_count, 8300);
    assert_int_equal(btc_model_outstanding(&run.cap.model), 0);
}

static const char *data_dir;

/* The memory limit (-m) ends a capture like a signal does: the client is told
 * (Terminate), and what was received is decoded and kept for the file. A
 * limit of one byte trips at the first check, right after the handshake. */
static void memory_limit_stops_the_capture_cleanly(void **state)
{
    (void)state;
    struct bt_replay *r;
    char err[512];
    unsigned port;
    struct bt_replay_opts ro = {.data_dir = data_dir, .protocol = protocol};
    assert_int_equal(bt_replay_open(&r, &ro, &port, err, sizeof err), 0);
    pthread_t th;
    pthread_create(&th, NULL, serve, r);
    static struct btc_capture limited;
    struct btc_capture_opts co = {.host = "127.0.0.1",
                                  .port = port,
                                  .connect_timeout_s = 20,
                                  .spool_dir = run.dir,
                                  .memory_limit = 1};
    /* What came before the limit is decoded too: the tenstorrent fork,
     * which greets as upstream 66 does, is told apart only by name. */
    if (protocol && strchr(protocol, '-'))
        co.protocol = bt_proto_by_name(protocol);
    int rc = btc_capture_run(&limited, &co);
    pthread_join(th, NULL);
    assert_int_equal(rc, BTC_OK);
    assert_int_equal(limited.end, BTC_END_MEMORY_LIMIT);
    assert_true(limited.stats.rss_bytes > 1);
    assert_int_equal(bt_replay_query_counts(r)[BT_QUERY_TERMINATE], 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/limited.tracy", run.dir);
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
        fprintf(stderr, "usage: %s DATA_DIR [PROTOCOL [recorded]]\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    /* With a protocol: the same session from a client of that protocol
     * (converted event by event from the recording), found by the capture
     * offering its protocols in turn; the counts are the same. */
    protocol = argc > 2 ? argv[2] : NULL;
    session_expect_no_message_sources = protocol != NULL;
    /* "recorded": the session was recorded from that protocol's own
     * upstream client (tests/data/tracy-RELEASE-session), not converted. */
    session_expect_old_client = argc > 3 && strcmp(argv[3], "recorded") == 0;
    if (replay_capture_run(&run, argv[1], "replay", protocol) < 0)
        return 1;
    const struct CMUnitTest capture_tests[] = {
        cmocka_unit_test(capture_completes_after_terminate),
        cmocka_unit_test(capture_asks_what_upstream_asked),
        cmocka_unit_test(every_received_event_is_decoded),
        cmocka_unit_test(memory_limit_stops_the_capture_cleanly),
    };
    int failed = cmocka_run_group_tests_name("replay_capture", capture_tests, NULL, NULL);
    failed += session_expect_run("replay_file_0_14_0", run.path14);
    failed += session_expect_run("replay_file_0_11_1", run.path11);
    /* Every other release's layout holds the same counts, read back. */
    static const char *const releases[] = {"0.13.1", "0.13.0", "0.12.2", "0.12.1",
                                           "0.12.0", "0.11.2", "0.11.0", "0.10.0"};
    for (size_t i = 0; i < sizeof releases / sizeof releases[0] && run.write_rc >= 0; i++) {
        const struct btc_file_release *rel = btc_file_release_named(releases[i]);
        char path[4300], group[64], err[512];
        snprintf(path, sizeof path, "%s/replay-%s.tracy", run.dir, releases[i]);
        snprintf(group, sizeof group, "replay_file_%s", releases[i]);
        if (!rel ||
            btc_tracy_write(&run.cap.model, path, rel->version, NULL, err, sizeof err) < 0) {
            fprintf(stderr, "write %s: %s\n", releases[i], rel ? err : "no such release");
            failed++;
            continue;
        }
        /* The container: the legacy one before 0.11.0, as those GUIs read. */
        uint8_t magic[4] = {0};
        FILE *f = fopen(path, "rb");
        if (!f || fread(magic, 1, 4, f) != 4 ||
            memcmp(magic, rel->version < BTC_GATE_CONTAINER ? "tZst" : "tr\xfdP", 4) != 0) {
            fprintf(stderr, "%s: wrong container magic %02x%02x%02x%02x\n", path, magic[0],
                    magic[1], magic[2], magic[3]);
            failed++;
        }
        if (f)
            fclose(f);
        failed += session_expect_run(group, path);
        if (!getenv("BT_KEEP_TEST_FILES"))
            unlink(path);
    }
    int wrc = run.write_rc;
    replay_capture_free(&run);
    return failed || wrc < 0;
}
