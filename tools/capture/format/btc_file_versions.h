/* The .tracy file versions boardtrace writes and reads: one per Tracy
 * release from 0.10.0 to 0.14.0, the protocol its client speaks, and what a
 * file of it can hold (the gates of btc_format.h). A GUI opens files of its
 * own version and older, so a capture writes, by default, the version of
 * the client's own release. */
#ifndef BTC_FILE_VERSIONS_H
#define BTC_FILE_VERSIONS_H

#include <stdint.h>

struct btc_file_release {
    const char *name; /* "0.11.2" */
    uint32_t version; /* BTC_FILE_VERSION(0, 11, 2) */
    uint32_t protocol;
    uint8_t max_gpu_context_type; /* the highest GpuContextType its GUI names */
};

/* The release whose files carry this version, or NULL. */
const struct btc_file_release *btc_file_release_of(uint32_t version);

/* A release by name: "0.12.1", or a series ("0.12", "0.13", "0.14",
 * "0.10", and "0.11" for 0.11.1) meaning the version every GUI of that
 * series opens. NULL when unknown. */
const struct btc_file_release *btc_file_release_named(const char *name);

/* The file version of the release a client of this protocol belongs to
 * (the one its own GUI opens); 0.14.0 for a protocol not listed. */
uint32_t btc_file_version_for_protocol(uint32_t protocol);

/* "0.14.0, 0.13.0, ..., 0.10.0" for help texts and errors. */
const char *btc_file_releases_text(void);

/* A GPU context type as a GUI of this file version knows it: a type newer
 * than the version maps to Custom (7) where it exists, else to Invalid (0).
 * Before 0.11.2, 6 stays: tenstorrent's fork, whose files are 0.10.0 ones,
 * calls it tt_device. */
uint8_t btc_file_gpu_context_type(uint32_t version, uint8_t type);

#endif
