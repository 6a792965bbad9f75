/* bt-replay-client: the recorded-session fake client as a program, for
 * tests that need a separate process (SIGKILL mid-capture, exit codes) and
 * for trying boardtrace-capture by hand. Prints "listening on PORT" first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_client.h"

int main(int argc, char **argv)
{
    struct bt_replay_opts o = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--port") && i + 1 < argc)
            o.port = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pause-after") && i + 1 < argc)
            o.pause_after = atol(argv[++i]);
        else if (!strcmp(argv[i], "--corrupt"))
            o.corrupt = 1;
        else if (!strcmp(argv[i], "--bad-frame"))
            o.bad_frame = 1;
        else if (!strcmp(argv[i], "--cut-frame"))
            o.cut_frame = 1;
        else if (!strcmp(argv[i], "--slow-terminate"))
            o.slow_terminate_ms = 1500;
        else if (!strcmp(argv[i], "--unsolicited-mib") && i + 1 < argc)
            o.unsolicited_mib = atol(argv[++i]);
        else if (!strcmp(argv[i], "--handshake-status") && i + 1 < argc)
            o.handshake_status = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--protocol") && i + 1 < argc)
            o.protocol = argv[++i];
        else if (!strcmp(argv[i], "--unconverted"))
            o.unconverted = 1;
        else if (!strcmp(argv[i], "--unresolved-frames"))
            o.unresolved_frames = 1;
        else if (!strcmp(argv[i], "--hostile-addresses"))
            o.hostile_addresses = 1;
        else if (argv[i][0] != '-' && !o.data_dir)
            o.data_dir = argv[i];
        else {
            fprintf(stderr,
                    "usage: %s DATA_DIR [--port N] [--pause-after EVENTS [--corrupt] [--bad-frame] "
                    "[--cut-frame]] "
                    "[--slow-terminate] [--unsolicited-mib N] [--handshake-status S] "
                    "[--protocol N] [--unconverted] [--unresolved-frames] "
                    "[--hostile-addresses]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!o.data_dir) {
        fprintf(stderr, "%s: DATA_DIR (the recorded session) is required\n", argv[0]);
        return 2;
    }
    struct bt_replay *r;
    unsigned port;
    char err[512];
    if (bt_replay_open(&r, &o, &port, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 1;
    }
    printf("listening on %u\n", port);
    fflush(stdout);
    int rc = bt_replay_serve(r, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", argv[0], err);
    const uint64_t *q = bt_replay_query_counts(r);
    printf("done: %llu events sent in %.6f s; queries: string %llu, thread %llu, srcloc %llu, plot "
           "%llu, "
           "frame %llu, callstack frame %llu, symbol %llu, terminate %llu\n",
           (unsigned long long)bt_replay_events_sent(r), bt_replay_served_seconds(r),
           (unsigned long long)q[1], (unsigned long long)q[2], (unsigned long long)q[3],
           (unsigned long long)q[4], (unsigned long long)q[5], (unsigned long long)q[10],
           (unsigned long long)q[11], (unsigned long long)q[0]);
    bt_replay_close(r);
    return rc < 0 ? 1 : 0;
}
