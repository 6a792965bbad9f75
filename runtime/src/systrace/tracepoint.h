/* The kernel's tracepoints as the system tracer reads them: where tracefs is
 * (mounting it when it is absent and we may), a tracepoint's id for
 * perf_event_open, and where its fields lie in a raw record, read from the
 * tracepoint's own format file rather than assumed. Linux only. */
#ifndef BT_TRACEPOINT_H
#define BT_TRACEPOINT_H

#include <stddef.h>
#include <stdint.h>

#define BT_TRACEPOINT_FIELDS 8

struct bt_tracepoint {
    int id;
    unsigned nfields;
    uint16_t offset[BT_TRACEPOINT_FIELDS];
    uint16_t size[BT_TRACEPOINT_FIELDS]; /* 0: the field is not in this kernel's format */
};

/* The tracefs events folder (e.g. /sys/kernel/tracing/events) in out; 0, or
 * -errno when there is none and mounting one failed. */
int bt_tracefs_events(char *out, size_t n);

/* Reads events/GROUP/NAME/{id,format} under events_dir and the offsets of
 * `fields` (at most BT_TRACEPOINT_FIELDS); 0, or -errno. */
int bt_tracepoint_load(struct bt_tracepoint *tp, const char *events_dir, const char *event,
                       const char *const *fields, unsigned nfields);

/* The format text's fields (for tests): as bt_tracepoint_load from text. */
int bt_tracepoint_parse(struct bt_tracepoint *tp, const char *format, const char *const *fields,
                        unsigned nfields);

/* Field i of a raw record of len bytes, sign-extended from its size (1, 2,
 * 4 or 8 bytes); 0 when it is absent or beyond the record. */
int64_t bt_tracepoint_int(const struct bt_tracepoint *tp, unsigned i, const uint8_t *raw,
                          size_t len);

#endif
