/* perf_event_open and the reading of its ring buffer (see perf_ring.h). The
 * kernel writes at data_head; we read from our tail and publish it in
 * data_tail once done, so the kernel never overwrites unread records. */
#define _GNU_SOURCE
#include "perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int bt_perf_ring_open(struct bt_perf_ring *r, struct perf_event_attr *attr, int pid, int cpu,
                      size_t data_pages, uint8_t kind)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *base = mmap(NULL, (1 + data_pages) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        close(fd);
        return -e;
    }
    r->fd = fd;
    r->cpu = cpu;
    r->kind = kind;
    r->base = base;
    r->data = (uint8_t *)base + page;
    r->size = data_pages * page;
    r->tail = 0;
    return 0;
}

void bt_perf_ring_close(struct bt_perf_ring *r)
{
    if (r->base)
        munmap(r->base, r->size + (size_t)sysconf(_SC_PAGESIZE));
    if (r->fd >= 0)
        close(r->fd);
    r->base = NULL;
    r->fd = -1;
}

int bt_perf_ring_enable(struct bt_perf_ring *r)
{
    return ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : -errno;
}

int bt_perf_ring_disable(struct bt_perf_ring *r)
{
    return ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0) == 0 ? 0 : -errno;
}

static void copy_out(const struct bt_perf_ring *r, uint64_t at, void *buf, size_t n)
{
    size_t off = (size_t)(at & (r->size - 1));
    size_t first = r->size - off < n ? r->size - off : n;
    memcpy(buf, r->data + off, first);
    memcpy((uint8_t *)buf + first, r->data, n - first);
}

size_t bt_perf_ring_next(struct bt_perf_ring *r, void *buf, size_t cap)
{
    struct perf_event_mmap_page *meta = r->base;
    for (;;) {
        uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
        if (head - r->tail < sizeof(struct perf_event_header))
            return 0;
        struct perf_event_header h;
        copy_out(r, r->tail, &h, sizeof h);
        if (h.size < sizeof h || head - r->tail < h.size)
            return 0;
        uint64_t at = r->tail;
        r->tail += h.size;
        if (h.size <= cap) {
            copy_out(r, at, buf, h.size);
            return h.size;
        }
    }
}

void bt_perf_ring_release(struct bt_perf_ring *r)
{
    struct perf_event_mmap_page *meta = r->base;
    __atomic_store_n(&meta->data_tail, r->tail, __ATOMIC_RELEASE);
}
