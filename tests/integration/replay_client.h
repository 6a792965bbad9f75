/* A fake Tracy client for tests: it replays the data events of a recorded
 * upstream session (tests/data/tracy-0.14.0-session) over a real TCP socket
 * and answers whatever queries the capture sends from the answers found in
 * the recording, in the order the capture asks for them. */
#ifndef BT_REPLAY_CLIENT_H
#define BT_REPLAY_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct bt_replay;

struct bt_replay_opts {
    const char *data_dir; /* folder holding client-to-server.bin, server-to-client.bin */
    unsigned port;        /* 0: any free port */
    long pause_after;     /* > 0: stop sending data after this many events (keep answering) */
    int corrupt;          /* with pause_after: then send one byte that is no event type */
    int bad_frame;        /* with pause_after: then send a frame header announcing 0 bytes */
    int cut_frame;        /* with pause_after: then send the first bytes of a frame only */
    long unsolicited_mib; /* > 0: first send this many MiB of strings never asked for */
    int handshake_status; /* 0: Welcome; else send this status byte and close */
    /* A Terminate that comes before the data ended (a time limit, a stop) is
     * obeyed only after this many ms of sending more, as a slow client still
     * busy sending would; a reset meanwhile fails the serve. */
    int slow_terminate_ms;
    /* The client's protocol ("72", "66-tt"; NULL: 82): it refuses a capture
     * offering another one (status 2, close, wait for the next connection,
     * as upstream's client does) and sends every event in that protocol's
     * form, converted from the recording's 0.14.0 form. */
    const char *protocol;
    int unconverted; /* with protocol: greet as it, but send 0.14.0's events */
    /* Answer every callstack frame with zero subframes, as upstream's
     * clients do for a frame they cannot resolve (a stripped program). */
    int unresolved_frames;
    /* Send callstack frame addresses and allocation pointers with top bits
     * that are not a sign extension, as arm64 pointer authentication, tags
     * and a RISC-V unwinder's garbage give them (bt_replay_hostile); the
     * first allocation and every fourth get a size of 2^48 - 1 (a negative
     * one). Frames asked
     * for at such an address are answered from the recording's frame. */
    int hostile_addresses;
};

/* The address the client sends for a in hostile_addresses mode: a with its
 * top bits xored with one of four patterns (none; a pointer-authentication
 * code in bits 48 to 63; bit 63; bit 62), chosen by bits 4 and 5, which it
 * leaves alone: applied twice it gives a back. */
uint64_t bt_replay_hostile(uint64_t a);

/* Loads the recording and starts listening; *port receives the port. */
int bt_replay_open(struct bt_replay **out, const struct bt_replay_opts *o, unsigned *port,
                   char *err, size_t errlen);
/* Serves one capture connection to its end. Returns 0 when the capture sent
 * Terminate after everything was answered, < 0 otherwise (message in err). */
int bt_replay_serve(struct bt_replay *r, char *err, size_t errlen);
/* Queries received by type (index = query type, 0..15). */
const uint64_t *bt_replay_query_counts(const struct bt_replay *r);
/* Seconds from the capture's connection to its Terminate query: how long
 * it took to ingest the session (0 until it terminated). */
double bt_replay_served_seconds(const struct bt_replay *r);
/* Data events sent so far. */
uint64_t bt_replay_events_sent(const struct bt_replay *r);
/* Source files the capture asked for that the recording holds no answer
 * for (answered "not available"). */
uint64_t bt_replay_sources_unrecorded(const struct bt_replay *r);
void bt_replay_close(struct bt_replay *r);

#endif
