/* Capture journal: written as frames arrive during a capture, replayed to
 * rebuild a trace when the capture process did not live to write it. */
#define _GNU_SOURCE
#include "btc_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

int btc_journal_open(struct btc_journal *j, const char *path, const struct bt_proto *proto,
                     const uint8_t *welcome, size_t welcome_len, char *err, size_t errlen)
{
    j->failed = 0;
    j->error = 0;
    /* Exclusive: a journal already there is another session's. */
    j->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (j->fd < 0) {
        snprintf(err, errlen, "cannot create the journal %s: %s", path, strerror(errno));
        return BTC_ERR_IO;
    }
    int older = proto && proto != bt_proto_get(BT_WIRE_PROTOCOL_VERSION);
    char name[BTC_JOURNAL_PROTO_SIZE] = {0};
    if (older)
        snprintf(name, sizeof name, "%s", proto->name);
    if (write_all(j->fd, older ? BTC_JOURNAL_MAGIC_PROTO : BTC_JOURNAL_MAGIC,
                  BTC_JOURNAL_MAGIC_SIZE) < 0 ||
        (older && write_all(j->fd, name, sizeof name) < 0) ||
        write_all(j->fd, welcome, welcome_len) < 0) {
        snprintf(err, errlen, "cannot write the journal %s: %s", path, strerror(errno));
        close(j->fd);
        j->fd = -1;
        return BTC_ERR_IO;
    }
    return BTC_OK;
}

void btc_journal_frames(struct btc_journal *j, const uint8_t *frames, size_t len)
{
    if (j->fd < 0 || j->failed || !len)
        return;
    /* One write for the frames of one receive, before any is decoded: what
     * reached the kernel survives our death. */
    if (write_all(j->fd, frames, len) < 0) {
        j->failed = 1;
        j->error = errno ? errno : EIO;
    }
}

void btc_journal_close(struct btc_journal *j)
{
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
}

static int read_exact(FILE *f, void *p, size_t n)
{
    return fread(p, 1, n, f) == n;
}

int btc_journal_replay(const char *path, const char *spool_dir, struct btc_decoder *d,
                       struct btc_model *m, uint64_t *frames, char *err, size_t errlen)
{
    *frames = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open the journal %s: %s", path, strerror(errno));
        return BTC_ERR_IO;
    }
    uint8_t magic[BTC_JOURNAL_MAGIC_SIZE];
    uint8_t wbuf[BT_WELCOME_SIZE + BT_ON_DEMAND_SIZE];
    struct btc_welcome w;
    const struct bt_proto *proto = NULL;
    char name[BTC_JOURNAL_PROTO_SIZE + 1] = {0};
    int ok = read_exact(f, magic, sizeof magic);
    if (ok && memcmp(magic, BTC_JOURNAL_MAGIC_PROTO, BTC_JOURNAL_MAGIC_SIZE) == 0) {
        ok = read_exact(f, name, BTC_JOURNAL_PROTO_SIZE) && (proto = bt_proto_by_name(name));
        if (!ok && name[0]) {
            snprintf(err, errlen, "%s: the journal's client spoke protocol \"%s\", not one of %s",
                     path, name, bt_proto_supported());
            fclose(f);
            return BTC_ERR_FORMAT;
        }
    } else if (ok) {
        ok = memcmp(magic, BTC_JOURNAL_MAGIC, BTC_JOURNAL_MAGIC_SIZE) == 0;
    }
    if (!ok || !read_exact(f, wbuf, BT_WELCOME_SIZE) ||
        btc_welcome_parse(wbuf, BT_WELCOME_SIZE, &w) < 0) {
        snprintf(err, errlen,
                 "%s is not a boardtrace capture journal (expected \"%s\" and a "
                 "welcome message at its start)",
                 path, BTC_JOURNAL_MAGIC);
        fclose(f);
        return BTC_ERR_FORMAT;
    }
    if (w.flags & BT_WELCOME_FLAG_ON_DEMAND) {
        uint8_t *od = wbuf + BT_WELCOME_SIZE;
        if (!read_exact(f, od, BT_ON_DEMAND_SIZE)) {
            snprintf(err, errlen, "%s: journal ends inside the on-demand payload", path);
            fclose(f);
            return BTC_ERR_FORMAT;
        }
        w.on_demand_frames = bt_wire_get_u64(od);
        w.on_demand_time = (int64_t)bt_wire_get_u64(od + 8);
    }
    int rc = btc_decoder_init(d, &w);
    if (rc == BTC_OK)
        rc = btc_decoder_set_protocol(d, proto);
    if (rc < 0) {
        snprintf(err, errlen, "out of memory for the stream decoder");
        fclose(f);
        return rc;
    }
    d->zones = btc_model_zone_fast(m);
    rc = btc_model_init(m, &w, spool_dir, err, errlen);
    uint8_t *block = malloc(BT_WIRE_LZ4_BOUND);
    if (rc >= 0 && !block) {
        snprintf(err, errlen, "out of memory for the journal reader");
        rc = BTC_ERR_NOMEM;
    }
    while (rc >= 0) {
        uint8_t sz[4];
        if (!read_exact(f, sz, 4))
            break;
        uint32_t n = bt_wire_get_u32(sz);
        if (n == 0 || n > BT_WIRE_LZ4_BOUND) {
            snprintf(err, errlen, "%s: frame %llu has size %u, expected 1..%u", path,
                     (unsigned long long)*frames, n, (unsigned)BT_WIRE_LZ4_BOUND);
            rc = BTC_ERR_PROTOCOL;
            break;
        }
        if (!read_exact(f, block, n))
            break; /* cut short when the capture died mid-write */
        rc = btc_decoder_frame(d, block, n, btc_model_event, m, err, errlen);
        if (rc >= 0)
            (*frames)++;
    }
    if (rc >= 0 && ferror(f)) {
        /* A read error is not the cut end of a journal: say so; what was
         * replayed before it stays in the model for the caller to write. */
        snprintf(err, errlen, "cannot read the journal %s after frame %llu: %s", path,
                 (unsigned long long)*frames, strerror(errno));
        rc = BTC_ERR_IO;
    }
    free(block);
    fclose(f);
    return rc;
}
