/* Stripping by truncation (see btd_strip.h): 32- and 64-bit ELF files of
 * either byte order. */
#define _GNU_SOURCE
#include "btd_strip.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t get(const uint8_t *p, int n, int le)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[le ? i : n - 1 - i] << (8 * i);
    return v;
}

static void set(uint8_t *p, uint64_t v, int n, int le)
{
    for (int i = 0; i < n; i++)
        p[le ? i : n - 1 - i] = (uint8_t)(v >> (8 * i));
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int btd_strip_copy(const char *path, char *out, size_t outlen, uint64_t *size, char *err,
                   size_t errlen)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t len = (size_t)st.st_size;
    uint8_t *map = len >= 64 ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED || memcmp(map, "\177ELF", 4) != 0) {
        if (map != MAP_FAILED)
            munmap(map, len);
        return 0; /* btd_binary_load already refused what is not ELF */
    }
    int w = map[4] == 2 ? 8 : 4, le = map[5] == 1;
    uint64_t phoff = get(map + (w == 8 ? 0x20 : 0x1c), w, le);
    unsigned phentsize = (unsigned)get(map + (w == 8 ? 0x36 : 0x2a), 2, le);
    unsigned phnum = (unsigned)get(map + (w == 8 ? 0x38 : 0x2c), 2, le);
    uint64_t end = phoff + (uint64_t)phnum * phentsize;
    for (unsigned i = 0; i < phnum && phoff + (uint64_t)(i + 1) * phentsize <= len; i++) {
        const uint8_t *ph = map + phoff + (uint64_t)i * phentsize;
        uint64_t off = get(ph + (w == 8 ? 8 : 4), w, le);
        uint64_t filesz = get(ph + (w == 8 ? 0x20 : 0x10), w, le);
        if (off + filesz > end)
            end = off + filesz;
    }
    if (end >= len || end < (uint64_t)(w == 8 ? 64 : 52)) {
        munmap(map, len);
        return 0; /* nothing after the segments */
    }
    const char *dir = getenv("TMPDIR");
    snprintf(out, outlen, "%s/boardtrace-upload.XXXXXX", dir && dir[0] ? dir : "/tmp");
    int ofd = mkstemp(out);
    int rc = 1;
    if (ofd < 0) {
        snprintf(err, errlen, "cannot make a temporary file %s: %s", out, strerror(errno));
        out[0] = '\0';
        rc = -1;
    } else {
        uint8_t head[64];
        memcpy(head, map, sizeof head);
        /* No section headers: e_shoff, e_shnum, e_shstrndx. */
        set(head + (w == 8 ? 0x28 : 0x20), 0, w, le);
        set(head + (w == 8 ? 0x3c : 0x30), 0, 2, le);
        set(head + (w == 8 ? 0x3e : 0x32), 0, 2, le);
        size_t hl = w == 8 ? 64 : 52;
        if (write_all(ofd, head, hl) != 0 || write_all(ofd, map + hl, (size_t)end - hl) != 0 ||
            fchmod(ofd, 0700) != 0) {
            snprintf(err, errlen, "cannot write %s: %s", out, strerror(errno));
            rc = -1;
        }
        if (close(ofd) != 0 && rc == 1) {
            snprintf(err, errlen, "cannot write %s: %s", out, strerror(errno));
            rc = -1;
        }
        if (rc < 0) {
            unlink(out);
            out[0] = '\0';
        }
    }
    munmap(map, len);
    if (rc == 1 && size)
        *size = end;
    return rc;
}
