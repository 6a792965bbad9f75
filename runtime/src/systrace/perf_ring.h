/* The kernel's perf events as the system tracer uses them: opening one
 * (perf_event_open) and reading the records of its mmap'ed ring buffer,
 * copied out whole even where they wrap. Linux only. */
#ifndef BT_PERF_RING_H
#define BT_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

struct perf_event_attr;

struct bt_perf_ring {
    int fd;
    int cpu;      /* the CPU the event counts on, -1 for any */
    uint8_t kind; /* the system tracer's kind of event (systrace.c) */
    void *base;   /* metadata page, then the data pages */
    uint8_t *data;
    size_t size; /* of the data area, a power of two */
    uint64_t tail;
};

/* Opens an event for pid on cpu and maps data_pages (a power of two) of
 * ring; 0, or -errno (the kernel's answer to the open, or the mmap's). */
int bt_perf_ring_open(struct bt_perf_ring *r, struct perf_event_attr *attr, int pid, int cpu,
                      size_t data_pages, uint8_t kind);
void bt_perf_ring_close(struct bt_perf_ring *r);
/* Starts the event counting (events are opened disabled). */
int bt_perf_ring_enable(struct bt_perf_ring *r);
int bt_perf_ring_disable(struct bt_perf_ring *r);

/* The next record, copied into buf (cap bytes; a longer one is skipped):
 * its length, or 0 when the ring holds no more. Records are consumed by
 * bt_perf_ring_release, which gives their room back to the kernel. */
size_t bt_perf_ring_next(struct bt_perf_ring *r, void *buf, size_t cap);
void bt_perf_ring_release(struct bt_perf_ring *r);

#endif
