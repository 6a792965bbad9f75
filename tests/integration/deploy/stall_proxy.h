/* A TCP proxy between boardtrace and the emulated board for the deploy
 * tests, which can make the link stand still in either direction (a byte
 * budget) or take connections and never answer (a board whose network went
 * away), so a test reaches a phase and holds it there on an event, not a
 * race. */
#ifndef STALL_PROXY_H
#define STALL_PROXY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct stall_proxy {
    int listen_fd;
    int port;
    /* The first connection: each direction stops forwarding (the connection
     * held open and silent) once its budget is spent; -1 is unlimited.
     * Later connections (boardtrace connecting again) pass freely. */
    atomic_llong up_budget;   /* boardtrace -> board */
    atomic_llong down_budget; /* board -> boardtrace */
    atomic_int blackhole;     /* later connections are taken and never answered */
    atomic_int done;
    pthread_t thread;
};

/* Starts p (budgets as set by the caller) in front of the board's SSH port
 * board_port; writes a known_hosts that knows the board under the proxy's
 * address (from board_known_hosts, into folder) to kh, and the --host
 * target for user_target's user to target. Returns 0 or -1. */
int stall_proxy_start(struct stall_proxy *p, int board_port, const char *board_known_hosts,
                      const char *user_target, const char *folder, char *kh, size_t khlen,
                      char *target, size_t targetlen);
void stall_proxy_stop(struct stall_proxy *p);

#endif
