/*
 * peer-client.c -- deterministic reference client for the upstream Tracy C API (TracyC.h).
 *
 * v0.10 variant: that release's ___tracy_alloc_srcloc[_name] take no color argument (lines 68 and 74); else as for v0.14.0.
 * Run:   TRACY_NO_EXIT=1 ./peer-client [ITER]     (ITER defaults to 1000)
 * The program prints the exact number of every event kind it emitted (to stdout) so
 * that a capture can be checked against it.
 *
 * Emitted per worker thread (2 worker threads, "peer-worker-1", "peer-worker-2"), for i in [0, ITER):
 *   zone "outer"            static srcloc (TracyCZoneN), TracyCZoneValue(i)
 *     zone "inner"          static srcloc, named + colored (TracyCZoneNC 0x00FF00), TracyCZoneText("iter <i>")
 *     zone "dyn_named"      transient srcloc  ___tracy_alloc_srcloc_name(...,"dyn_named",...) + ___tracy_emit_zone_begin_alloc
 *     zone "dyn_func"       transient srcloc  ___tracy_alloc_srcloc(...,function "dyn_func",...) (no name -> function name)
 *   TracyCAlloc(p,64)/TracyCFree(p)                           default memory pool
 *   TracyCAllocN(q,128,"peer-pool")/TracyCFreeN(q,"peer-pool") named memory pool
 *   every 10th i (i % 10 == 0):
 *     zone "with_callstack" static srcloc with callstack (TracyCZoneNS depth 8)
 *     TracyCAllocS(r,256,8)/TracyCFreeS(r,8)                  default pool, with callstacks
 * Main thread ("peer-main"), for f in [0, FRAMES=100):
 *   zone "main_frame"       static srcloc (TracyCZoneN), TracyCZoneText("frame <f>")
 *   TracyCPlot("peer-plot", f * 0.5)
 *   TracyCFrameMark; TracyCFrameMarkNamed("peer-named-frame");
 *   TracyCFrameMarkStart/End("peer-discontinuous")
 *   every 10th f: TracyCMessage("plain message <f>") and TracyCMessageC("colored message <f>", 0xFF0000)
 * Plus once: TracyCAppInfo("peer-client v0.14.0") (tag of the linked TracyClient), TracyCMessageL("peer-client start"),
 *            TracyCMessageLC("peer-client end", 0x00FF00).
 * Workers run concurrently with the main frames; main joins the workers before returning.
 * (Interleaving across threads is not deterministic; all per-kind counts are.)
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracy/TracyC.h"

#ifndef PEER_TAG
#define PEER_TAG "v0.14.0" /* which upstream TracyClient.cpp this is linked with  */
#endif

#define NUM_WORKERS 2
#define FRAMES 100
#define CS_DEPTH 8

static int g_iter = 1000;

/* A little work inside every zone: upstream tracy-csvexport (and the server's zone statistics) skip zones whose
 * measured duration is 0 ns, which happens occasionally for empty zones; spinning keeps every zone > 0 ns so the
 * csvexport counts equal the emitted counts. */
static void spin(void)
{
    for (volatile int k = 0; k < 64; k++) {
    }
}

static void dyn_zones(int i)
{
#ifdef TRACY_ENABLE /* the raw ___tracy_* transient-srcloc API only exists with TRACY_ENABLE */
    static const char file[] = __FILE__;
    static const char func[] = "dyn_func";
    static const char fn_named[] = "dyn_zones";
    static const char name[] = "dyn_named";
    (void)i;
    {
        uint64_t srcloc = ___tracy_alloc_srcloc_name(__LINE__, file, sizeof(file) - 1, fn_named,
                                                     sizeof(fn_named) - 1, name, sizeof(name) - 1);
        TracyCZoneCtx z = ___tracy_emit_zone_begin_alloc(srcloc, 1);
        spin();
        TracyCZoneEnd(z);
    }
    {
        uint64_t srcloc = ___tracy_alloc_srcloc(__LINE__, file, sizeof(file) - 1, func, sizeof(func) - 1);
        TracyCZoneCtx z = ___tracy_emit_zone_begin_alloc(srcloc, 1);
        spin();
        TracyCZoneEnd(z);
    }
#endif
}

static void *worker(void *arg)
{
    int idx = (int)(intptr_t)arg;
    char tname[32];
    snprintf(tname, sizeof(tname), "peer-worker-%d", idx + 1);
    TracyCSetThreadName(tname);

    for (int i = 0; i < g_iter; i++) {
        TracyCZoneN(outer, "outer", 1);
        TracyCZoneValue(outer, (uint64_t)i);
        {
            char txt[32];
            int n = snprintf(txt, sizeof(txt), "iter %d", i);
            (void)n;
            TracyCZoneNC(inner, "inner", 0x00FF00, 1);
            TracyCZoneText(inner, txt, (size_t)n);
            spin();
            TracyCZoneEnd(inner);
        }
        dyn_zones(i);
        TracyCZoneEnd(outer);

        void *p = malloc(64);
        TracyCAlloc(p, 64);
        TracyCFree(p);
        free(p);

        void *q = malloc(128);
        TracyCAllocN(q, 128, "peer-pool");
        TracyCFreeN(q, "peer-pool");
        free(q);

        if (i % 10 == 0) {
            TracyCZoneNS(cs, "with_callstack", CS_DEPTH, 1);
            void *r = malloc(256);
            TracyCAllocS(r, 256, CS_DEPTH);
            TracyCFreeS(r, CS_DEPTH);
            free(r);
            spin();
            TracyCZoneEnd(cs);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) g_iter = atoi(argv[1]);
    if (g_iter < 0) g_iter = 0;

    TracyCSetThreadName("peer-main");
    {
#ifdef TRACY_ENABLE
        static const char appinfo[] = "peer-client " PEER_TAG;
        TracyCAppInfo(appinfo, sizeof(appinfo) - 1);
#endif
    }
    TracyCMessageL("peer-client start");

    pthread_t th[NUM_WORKERS];
    for (int w = 0; w < NUM_WORKERS; w++) pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w);

    for (int f = 0; f < FRAMES; f++) {
        TracyCFrameMarkStart("peer-discontinuous");
        {
            TracyCZoneN(mf, "main_frame", 1);
            {
                char txt[32];
                int n = snprintf(txt, sizeof(txt), "frame %d", f); /* (TracyCZoneTextF does not exist in v0.11.1) */
                TracyCZoneText(mf, txt, (size_t)n);
                (void)n;
            }
            TracyCPlot("peer-plot", f * 0.5);
            if (f % 10 == 0) {
                char msg[64];
                int n = snprintf(msg, sizeof(msg), "plain message %d", f);
                TracyCMessage(msg, (size_t)n);
                n = snprintf(msg, sizeof(msg), "colored message %d", f);
                TracyCMessageC(msg, (size_t)n, 0xFF0000);
                (void)n;
            }
            spin();
            TracyCZoneEnd(mf);
        }
        TracyCFrameMarkEnd("peer-discontinuous");
        TracyCFrameMarkNamed("peer-named-frame");
        TracyCFrameMark;
    }

    for (int w = 0; w < NUM_WORKERS; w++) pthread_join(th[w], NULL);
    TracyCMessageLC("peer-client end", 0x00FF00);

    const int cs = NUM_WORKERS * ((g_iter + 9) / 10);
    printf("peer-client emitted (ITER=%d, workers=%d, frames=%d):\n", g_iter, NUM_WORKERS, FRAMES);
    printf("  zones: outer=%d inner=%d dyn_named=%d dyn_func=%d with_callstack=%d main_frame=%d total=%d\n",
           NUM_WORKERS * g_iter, NUM_WORKERS * g_iter, NUM_WORKERS * g_iter, NUM_WORKERS * g_iter, cs, FRAMES,
           4 * NUM_WORKERS * g_iter + cs + FRAMES);
    printf("  memory: default-pool allocs=%d frees=%d (of which with callstack: %d allocs, %d frees); "
           "peer-pool allocs=%d frees=%d\n",
           NUM_WORKERS * g_iter + cs, NUM_WORKERS * g_iter + cs, cs, cs, NUM_WORKERS * g_iter, NUM_WORKERS * g_iter);
    printf("  messages: user=%d (plain=%d incl. 1 literal, colored=%d incl. 1 literal); appinfo=1\n",
           2 + 2 * (FRAMES / 10), 1 + FRAMES / 10, 1 + FRAMES / 10);
    printf("  plot peer-plot points=%d; frame marks: default=%d named peer-named-frame=%d "
           "discontinuous peer-discontinuous=%d\n", FRAMES, FRAMES, FRAMES, FRAMES);
    printf("  threads: peer-main, peer-worker-1, peer-worker-2\n");
    fflush(stdout);
    return 0;
}
