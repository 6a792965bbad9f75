/* What a capture of the recorded upstream session must contain (the counts
 * in tests/data/tracy-0.14.0-session/README.md), computed from a .tracy file
 * through the capture core's reader, for the replay and reader tests. */
#ifndef BT_SESSION_EXPECT_H
#define BT_SESSION_EXPECT_H

#include <stdint.h>

#include "btc_tracy.h"

#define SESSION_MAX_NAMES 32

struct session_counts {
    struct btc_trace trace;
    unsigned nzone_names;
    char zone_name[SESSION_MAX_NAMES][64];
    uint64_t zone_count[SESSION_MAX_NAMES];
    uint64_t zones_positive; /* zones with end > start, as tracy-csvexport counts */
    uint64_t zones_unended;
};

/* Reads path; returns the reader's status (0 on success, message in err). */
int session_counts_read(struct session_counts *c, const char *path, char *err, size_t errlen);
void session_counts_free(struct session_counts *c);

uint64_t session_zones_named(const struct session_counts *c, const char *name);
/* Zones of the thread with this name, or UINT64_MAX if no such thread. */
uint64_t session_thread_zones(const struct session_counts *c, const char *name);
const struct btc_read_frameset *session_frameset(const struct session_counts *c, const char *name);
const struct btc_read_pool *session_pool(const struct session_counts *c, const char *name);
const struct btc_read_plot *session_plot(const struct session_counts *c, const char *name);

/* Runs the README's expectations as a cmocka test group over the file at
 * path; returns the number of failed tests. */
int session_expect_run(const char *group_name, const char *path);
/* Set when the client spoke a protocol before 82, whose messages carry no
 * source: the client's own messages then count as the user's. */
extern int session_expect_no_message_sources;
/* Set for a session recorded from an older upstream client: it sends none
 * of its own messages and never names its symbol worker. */
extern int session_expect_old_client;

#endif
