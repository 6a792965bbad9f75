/* Tracefs and tracepoint formats (see tracepoint.h). */
#define _GNU_SOURCE
#include "tracepoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static int has_events(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/sched", dir);
    return access(path, R_OK | X_OK) == 0;
}

int bt_tracefs_events(char *out, size_t n)
{
    static const char *const dirs[] = {"/sys/kernel/tracing/events",
                                       "/sys/kernel/debug/tracing/events"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (has_events(dirs[i])) {
            snprintf(out, n, "%s", dirs[i]);
            return 0;
        }
    if (mount("nodev", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) !=
        0)
        return -errno;
    if (!has_events(dirs[0]))
        return -ENOENT;
    snprintf(out, n, "%s", dirs[0]);
    return 0;
}

static char *read_text(const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(max + 1);
    size_t len = 0;
    ssize_t got;
    while (buf && len < max && (got = read(fd, buf + len, max - len)) > 0)
        len += (size_t)got;
    close(fd);
    if (buf)
        buf[len] = 0;
    return buf;
}

/* One "field:TYPE NAME[N];\toffset:O;\tsize:S;" line: its name (without
 * the array bound), offset and size. */
static int parse_field(const char *line, char *name, size_t n, unsigned *offset, unsigned *size)
{
    const char *f = strstr(line, "field:");
    const char *semi = f ? strchr(f, ';') : NULL;
    if (!semi)
        return -1;
    const char *end = semi;
    while (end > f && end[-1] == ']')
        while (end > f && *--end != '[')
            ;
    const char *start = end;
    while (start > f && start[-1] != ' ' && start[-1] != '*')
        start--;
    if (end <= start || (size_t)(end - start) >= n)
        return -1;
    memcpy(name, start, (size_t)(end - start));
    name[end - start] = 0;
    const char *o = strstr(semi, "offset:"), *s = strstr(semi, "size:");
    if (!o || !s)
        return -1;
    *offset = (unsigned)strtoul(o + 7, NULL, 10);
    *size = (unsigned)strtoul(s + 5, NULL, 10);
    return 0;
}

int bt_tracepoint_parse(struct bt_tracepoint *tp, const char *format, const char *const *fields,
                        unsigned nfields)
{
    if (nfields > BT_TRACEPOINT_FIELDS)
        return -EINVAL;
    tp->nfields = nfields;
    memset(tp->offset, 0, sizeof tp->offset);
    memset(tp->size, 0, sizeof tp->size);
    for (const char *line = format; *line;) {
        char name[64];
        unsigned offset, size;
        int ok = parse_field(line, name, sizeof name, &offset, &size) == 0 &&
                 offset <= UINT16_MAX && size <= UINT16_MAX;
        for (unsigned i = 0; ok && i < nfields; i++)
            if (strcmp(name, fields[i]) == 0) {
                tp->offset[i] = (uint16_t)offset;
                tp->size[i] = (uint16_t)size;
            }
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : line + strlen(line);
    }
    return 0;
}

int bt_tracepoint_load(struct bt_tracepoint *tp, const char *events_dir, const char *event,
                       const char *const *fields, unsigned nfields)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/id", events_dir, event);
    char *id = read_text(path, 32);
    if (!id)
        return -errno;
    tp->id = atoi(id);
    free(id);
    snprintf(path, sizeof path, "%s/%s/format", events_dir, event);
    char *format = read_text(path, 16384);
    if (!format)
        return -errno;
    int rc = bt_tracepoint_parse(tp, format, fields, nfields);
    free(format);
    return tp->id > 0 ? rc : -ENOENT;
}

int64_t bt_tracepoint_int(const struct bt_tracepoint *tp, unsigned i, const uint8_t *raw,
                          size_t len)
{
    if (i >= tp->nfields || !tp->size[i] || (size_t)tp->offset[i] + tp->size[i] > len)
        return 0;
    const uint8_t *p = raw + tp->offset[i];
    switch (tp->size[i]) {
    case 1:
        return (int8_t)p[0];
    case 2: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case 8: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    default:
        return 0;
    }
}
