/* Verified transfers (see btd_xfer.h). SFTP downloads keep several reads in
 * flight, as OpenSSH's sftp does, so throughput does not hinge on latency. */
#define _GNU_SOURCE
#include "btd_xfer.h"

#include "btd_escape.h"
#include "btd_interrupt.h"
#include "btd_msg.h"
#include "btd_progress.h"
#include "btd_quote.h"
#include "btd_sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    UPLOAD_CHUNK = 131072, /* OpenSSH takes SFTP packets up to 256 KiB */
    DOWNLOAD_CHUNK = 65536,
    DOWNLOAD_IN_FLIGHT = 32,
};

struct upload_state {
    FILE *f;
    struct btd_sha256 sha;
    struct btd_progress progress;
    uint64_t sent;
};

static long read_upload(void *ctx, char *buf, size_t len)
{
    struct upload_state *u = ctx;
    size_t n = fread(buf, 1, len, u->f);
    if (n == 0 && ferror(u->f))
        return -1;
    btd_sha256_update(&u->sha, buf, n);
    u->sent += n;
    btd_progress_update(&u->progress, u->sent);
    btd_watchdog_kick();
    return (long)n;
}

static int upload_sftp(struct btd_conn *c, struct upload_state *u, const char *remote, char *err,
                       size_t errlen)
{
    sftp_file f = sftp_open(c->sftp, remote, O_WRONLY | O_CREAT | O_TRUNC, 0700);
    if (!f) {
        snprintf(err, errlen, "cannot create %s on the board over SFTP: %s", remote,
                 ssh_get_error(c->session));
        return -1;
    }
    char buf[UPLOAD_CHUNK];
    long n;
    while ((n = read_upload(u, buf, sizeof buf)) > 0) {
        if (sftp_write(f, buf, (size_t)n) != n) {
            snprintf(err, errlen, "writing %s on the board failed at byte %" PRIu64 ": %s", remote,
                     u->sent - (uint64_t)n, ssh_get_error(c->session));
            sftp_close(f);
            return -1;
        }
    }
    if (n < 0) {
        snprintf(err, errlen, "reading the local file failed: %s", strerror(errno));
        sftp_close(f);
        return -1;
    }
    if (sftp_close(f) != SSH_NO_ERROR) {
        snprintf(err, errlen, "closing %s on the board failed: %s", remote,
                 ssh_get_error(c->session));
        return -1;
    }
    return 0;
}

static int upload_exec(struct btd_conn *c, const struct btd_xfer_options *o, struct upload_state *u,
                       const char *remote, char *err, size_t errlen)
{
    struct btd_buf cmd = {0}, errout = {0};
    btd_buf_puts(&cmd, "umask 077 && cat > ");
    btd_quote_append(&cmd, remote);
    struct btd_exec_io io = {read_upload, NULL, u, false};
    int rc =
        btd_ssh_exec_io(c, btd_buf_str(&cmd), &io, NULL, &errout, o->idle_timeout_s, err, errlen);
    if (rc > 0) {
        snprintf(err, errlen, "writing %s on the board failed (exit %d): %s", remote, rc,
                 errout.len ? btd_buf_str(&errout) : "no message");
        rc = -1;
    }
    btd_buf_free(&cmd);
    btd_buf_free(&errout);
    return rc == 0 ? 0 : -1;
}

int btd_upload(struct btd_conn *c, const struct btd_xfer_options *o, const char *local,
               const char *remote, const char *label, char sha[65], char *err, size_t errlen)
{
    struct upload_state u = {0};
    u.f = fopen(local, "rb");
    if (!u.f) {
        snprintf(err, errlen, "%s: cannot open: %s", local, strerror(errno));
        return -1;
    }
    struct stat st;
    fstat(fileno(u.f), &st);
    btd_sha256_init(&u.sha);
    int rc;
    bool sftp = !o->no_sftp && btd_conn_sftp(c);
    btd_progress_start(&u.progress, label, (uint64_t)st.st_size, 0);
    btd_watchdog_start(c, o->idle_timeout_s);
    if (sftp)
        rc = upload_sftp(c, &u, remote, err, errlen);
    else
        rc = upload_exec(c, o, &u, remote, err, errlen);
    if (btd_watchdog_stop()) {
        snprintf(err, errlen, "nothing moved for %d s; closed the connection to %s",
                 o->idle_timeout_s, c->where);
        rc = -1;
    }
    if (rc != 0 && btd_interrupt_gave_up())
        snprintf(err, errlen, "interrupted");
    fclose(u.f);
    btd_progress_finish(&u.progress, rc == 0);
    if (rc == 0)
        btd_sha256_hex(&u.sha, sha);
    else
        btd_sha256_discard(&u.sha);
    return rc;
}

int btd_remote_size(struct btd_conn *c, const char *remote, uint64_t *size, char *err,
                    size_t errlen)
{
    struct btd_buf cmd = {0}, out = {0}, errout = {0};
    btd_buf_puts(&cmd, "f=");
    btd_quote_append(&cmd, remote);
    btd_buf_puts(&cmd, "; [ -f \"$f\" ] || { echo missing; exit 0; }; "
                       "stat -c %s \"$f\" 2>/dev/null || wc -c < \"$f\"");
    int rc = btd_ssh_exec(c, btd_buf_str(&cmd), NULL, 0, &out, &errout, 60, err, errlen);
    const char *s = btd_buf_str(&out);
    unsigned long long n;
    if (rc == 0 && strncmp(s, "missing", 7) == 0) {
        rc = 1;
    } else if (rc == 0 && sscanf(s, "%llu", &n) == 1) {
        *size = n;
    } else if (rc >= 0) {
        snprintf(err, errlen, "cannot read the size of %s on the board (exit %d): %.200s%.200s",
                 remote, rc, s, btd_buf_str(&errout));
        rc = -1;
    }
    btd_buf_free(&cmd);
    btd_buf_free(&out);
    btd_buf_free(&errout);
    return rc;
}

/* The board hashes its copy while the transfer runs: on a slow board that
 * takes as long as the transfer itself, so doing both at once halves it.
 * A digest the board already gave (known) needs no channel at all. */
struct digest_job {
    ssh_channel ch;
    char known[65];
};

static int digest_begin(struct btd_conn *c, const char *remote, const char *known,
                        struct digest_job *job, char *err, size_t errlen)
{
    if (known) {
        snprintf(job->known, sizeof job->known, "%s", known);
        return 0;
    }
    struct btd_buf cmd = {0};
    btd_buf_puts(&cmd, "sha256sum < ");
    btd_quote_append(&cmd, remote);
    job->ch = ssh_channel_new(c->session);
    int rc = 0;
    if (!job->ch || ssh_channel_open_session(job->ch) != SSH_OK ||
        ssh_channel_request_exec(job->ch, btd_buf_str(&cmd)) != SSH_OK) {
        snprintf(err, errlen, "cannot start sha256sum on %s: %s", c->where,
                 ssh_get_error(c->session));
        rc = -1;
    }
    btd_buf_free(&cmd);
    return rc;
}

static int digest_end(struct btd_conn *c, struct digest_job *job, char sha[65], char *err,
                      size_t errlen)
{
    if (!job->ch) {
        memcpy(sha, job->known, 65);
        return 0;
    }
    struct btd_buf out = {0}, errout = {0};
    char buf[4096];
    int rc = 0;
    double last = btd_now();
    while (!ssh_channel_is_eof(job->ch) && !ssh_channel_is_closed(job->ch)) {
        int n = ssh_channel_read_timeout(job->ch, buf, sizeof buf, 0, 1000);
        int e = ssh_channel_read_nonblocking(job->ch, buf + (n > 0 ? n : 0),
                                             (uint32_t)(sizeof buf - (size_t)(n > 0 ? n : 0)), 1);
        if (n == SSH_ERROR || e == SSH_ERROR) {
            snprintf(err, errlen, "lost the connection to %s: %s", c->where,
                     ssh_get_error(c->session));
            rc = -1;
            break;
        }
        if (n > 0)
            btd_buf_append(&out, buf, (size_t)n);
        if (e > 0)
            btd_buf_append(&errout, buf + (n > 0 ? n : 0), (size_t)e);
        if (n > 0 || e > 0)
            last = btd_now();
        else if (btd_now() - last > 600) {
            snprintf(err, errlen, "sha256sum on %s gave no answer for 10 minutes", c->where);
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        int n;
        while ((n = ssh_channel_read_nonblocking(job->ch, buf, sizeof buf, 0)) > 0)
            btd_buf_append(&out, buf, (size_t)n);
        char hex[65] = "";
        if (sscanf(btd_buf_str(&out), "%64[0-9a-f]", hex) != 1 || strlen(hex) != 64) {
            snprintf(err, errlen, "sha256sum on %.100s gave no digest: '%.100s' %.200s", c->where,
                     btd_buf_str(&out), btd_buf_str(&errout));
            rc = -1;
        } else {
            memcpy(sha, hex, 65);
        }
    }
    ssh_channel_close(job->ch);
    ssh_channel_free(job->ch);
    job->ch = NULL;
    btd_buf_free(&out);
    btd_buf_free(&errout);
    return rc;
}

struct pull_state {
    int fd;
    struct btd_sha256 sha;
    struct btd_progress progress;
    uint64_t have;
    int write_errno;
};

static int write_pulled(void *ctx, const char *data, size_t len)
{
    struct pull_state *p = ctx;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(p->fd, data + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            p->write_errno = errno;
            return -1;
        }
        off += (size_t)n;
    }
    btd_sha256_update(&p->sha, data, len);
    p->have += len;
    btd_progress_update(&p->progress, p->have);
    btd_watchdog_kick();
    return 0;
}

static int pull_exec(struct btd_conn *c, const struct btd_xfer_options *o, struct pull_state *p,
                     const char *remote, char *err, size_t errlen)
{
    struct btd_buf cmd = {0}, errout = {0};
    if (p->have)
        btd_buf_printf(&cmd, "tail -c +%" PRIu64 " ", p->have + 1);
    else
        btd_buf_puts(&cmd, "cat ");
    btd_quote_append(&cmd, remote);
    struct btd_exec_io io = {NULL, write_pulled, p, false};
    int rc = -1;
    /* A read that did not start is asked for again on a new channel, twice
     * at most: seen on a dropbear board right after the connection came
     * back, where the first exec request got no answer (reading a file is
     * safe to repeat, as nothing came). */
    for (int tries = 0; tries < 3; tries++) {
        io.not_started = false;
        rc = btd_ssh_exec_io(c, btd_buf_str(&cmd), &io, NULL, &errout, o->idle_timeout_s, err,
                             errlen);
        if (!io.not_started || !ssh_is_connected(c->session))
            break;
        btd_debug("%s; asking again", err);
        usleep(200000);
    }
    if (rc > 0)
        snprintf(err, errlen, "reading %s on the board failed (exit %d): %s", remote, rc,
                 btd_buf_str(&errout));
    btd_buf_free(&cmd);
    btd_buf_free(&errout);
    return rc == 0 ? 0 : -1;
}

struct read_window {
    uint32_t ids[DOWNLOAD_IN_FLIGHT];
    uint32_t lens[DOWNLOAD_IN_FLIGHT];
    int head;
    int count;
    uint64_t next; /* offset of the next request */
};

/* Tops the window up with read requests until it is full or covers SIZE. */
static int fill_window(sftp_file f, struct read_window *w, uint64_t size)
{
    while (w->count < DOWNLOAD_IN_FLIGHT && w->next < size) {
        uint32_t len =
            (uint32_t)(size - w->next < DOWNLOAD_CHUNK ? size - w->next : DOWNLOAD_CHUNK);
        int id = sftp_async_read_begin(f, len);
        if (id < 0)
            return -1;
        int slot = (w->head + w->count) % DOWNLOAD_IN_FLIGHT;
        w->ids[slot] = (uint32_t)id;
        w->lens[slot] = len;
        w->next += len;
        w->count++;
    }
    return 0;
}

static int pull_sftp(struct btd_conn *c, struct pull_state *p, const char *remote, uint64_t size,
                     char *err, size_t errlen)
{
    sftp_file f = sftp_open(c->sftp, remote, O_RDONLY, 0);
    if (!f) {
        snprintf(err, errlen, "cannot open %s on the board over SFTP: %s", remote,
                 ssh_get_error(c->session));
        return -1;
    }
    static char buf[DOWNLOAD_CHUNK];
    int rc = 0;
    struct read_window w = {.next = p->have};
    sftp_seek64(f, p->have);
    bool restart = false;
    while (rc == 0 && (w.count > 0 || w.next < size)) {
        if (!restart && fill_window(f, &w, size) != 0) {
            snprintf(err, errlen, "SFTP read request failed: %s", ssh_get_error(c->session));
            rc = -1;
            break;
        }
        uint32_t len = w.lens[w.head];
        int n = sftp_async_read(f, buf, len, w.ids[w.head]);
        w.head = (w.head + 1) % DOWNLOAD_IN_FLIGHT;
        w.count--;
        if (n < 0) {
            snprintf(err, errlen, "SFTP read of %s failed at byte %" PRIu64 ": %s", remote, p->have,
                     ssh_get_error(c->session));
            rc = -1;
        } else if (!restart) {
            if (n > 0 && write_pulled(p, buf, (size_t)n) != 0) {
                snprintf(err, errlen, "writing the local file failed: %s",
                         strerror(p->write_errno));
                rc = -2;
            } else if (n == 0) {
                snprintf(err, errlen, "%s ended at byte %" PRIu64 " while reading it", remote,
                         p->have);
                rc = -1;
            } else if ((uint32_t)n < len) {
                /* The server capped a read: drop the requests after it. */
                restart = true;
            }
        }
        if (restart && w.count == 0) {
            restart = false;
            w.next = p->have;
            sftp_seek64(f, p->have);
        }
    }
    sftp_close(f);
    return rc;
}

int btd_pull(struct btd_conn *c, const struct btd_xfer_options *o, const char *remote,
             const char *local, bool resume, long long known_size, const char *known_sha,
             uint64_t *size_out, char sha_out[65])
{
    char part[4096];
    if ((size_t)snprintf(part, sizeof part, "%s.part", local) >= sizeof part) {
        btd_error("cannot write %s: the name is too long (at most %zu bytes with .part)", local,
                  sizeof part - 1);
        return BTD_EXIT_OUTPUT;
    }
    char err[600];
    uint64_t size = (uint64_t)known_size;
    char want[65];
    int rc = known_size >= 0 ? 0 : btd_remote_size(c, remote, &size, err, sizeof err);
    if (rc == 1) {
        btd_error("%s: no such file on %s", remote, c->where);
        return BTD_EXIT_PULL;
    }
    struct digest_job job = {0};
    if (rc != 0 || digest_begin(c, remote, known_sha, &job, err, sizeof err) != 0) {
        btd_error("%s", err);
        return BTD_EXIT_PULL;
    }
    struct pull_state p = {0};
    p.fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (p.fd < 0) {
        btd_error("cannot write %s: %s", part, strerror(errno));
        digest_end(c, &job, want, err, sizeof err);
        return BTD_EXIT_OUTPUT;
    }
    struct stat st;
    fstat(p.fd, &st);
    btd_sha256_init(&p.sha);
    if (resume && st.st_size > 0 && (uint64_t)st.st_size <= size) {
        /* Hash what is already here so the whole file is verified at the end. */
        char buf[65536];
        ssize_t n;
        while ((n = read(p.fd, buf, sizeof buf)) > 0) {
            btd_sha256_update(&p.sha, buf, (size_t)n);
            p.have += (uint64_t)n;
        }
        btd_note("resuming %s at byte %" PRIu64 " of %" PRIu64, part, p.have, size);
    } else if (ftruncate(p.fd, 0) != 0) {
        btd_error("cannot truncate %s: %s", part, strerror(errno));
        btd_sha256_discard(&p.sha);
        close(p.fd);
        digest_end(c, &job, want, err, sizeof err);
        return BTD_EXIT_OUTPUT;
    }
    lseek(p.fd, (off_t)p.have, SEEK_SET);
    char label[96], name[96];
    const char *base = strrchr(remote, '/');
    snprintf(label, sizeof label, "pull %s",
             btd_escape_field(base ? base + 1 : remote, name, sizeof name));
    bool sftp = p.have < size && !o->no_sftp && btd_conn_sftp(c);
    btd_progress_start(&p.progress, label, size, p.have);
    if (p.have < size) {
        btd_watchdog_start(c, o->idle_timeout_s);
        if (sftp)
            rc = pull_sftp(c, &p, remote, size, err, sizeof err);
        else
            rc = pull_exec(c, o, &p, remote, err, sizeof err);
        if (btd_watchdog_stop()) {
            snprintf(err, sizeof err, "nothing moved for %d s; closed the connection to %s",
                     o->idle_timeout_s, c->where);
            rc = -1;
        }
        if (rc == -1 && p.write_errno)
            rc = -2;
        if (rc != 0 && btd_interrupt_gave_up())
            snprintf(err, sizeof err, "interrupted");
    } else {
        rc = 0;
    }
    btd_progress_finish(&p.progress, rc == 0);
    if (rc != 0) {
        btd_error("pulling %s from %s stopped at byte %" PRIu64 " of %" PRIu64 ": %s; "
                  "the part received is kept in %s for a resumed fetch",
                  remote, c->where, p.have, size, err, part);
        btd_sha256_discard(&p.sha);
        close(p.fd);
        if (ssh_is_connected(c->session))
            digest_end(c, &job, want, err, sizeof err);
        return rc == -2 ? BTD_EXIT_OUTPUT : BTD_EXIT_PULL;
    }
    if (digest_end(c, &job, want, err, sizeof err) != 0) {
        btd_error("verifying %s: %s; the data is kept in %s", remote, err, part);
        btd_sha256_discard(&p.sha);
        close(p.fd);
        return BTD_EXIT_PULL;
    }
    char got[65];
    btd_sha256_hex(&p.sha, got);
    if (p.have != size || strcmp(got, want) != 0) {
        btd_error("pulled %s does not match the board's file: expected %" PRIu64
                  " bytes with SHA-256 %s, found %" PRIu64 " bytes with %s; removed %s (pull "
                  "again to start from the beginning)",
                  remote, size, want, p.have, got, part);
        close(p.fd);
        unlink(part);
        return BTD_EXIT_PULL;
    }
    /* Verified: the data is safe on disk before it takes the final name. */
    int synced = fsync(p.fd) == 0 ? 0 : errno;
    if (close(p.fd) != 0 && !synced)
        synced = errno;
    if (synced) {
        btd_error("cannot write %s: %s; the verified data is in %s", local, strerror(synced), part);
        return BTD_EXIT_OUTPUT;
    }
    if (rename(part, local) != 0) {
        btd_error("cannot move %s to %s: %s", part, local, strerror(errno));
        return BTD_EXIT_OUTPUT;
    }
    if (size_out)
        *size_out = size;
    if (sha_out)
        memcpy(sha_out, got, 65);
    return BTD_EXIT_OK;
}
