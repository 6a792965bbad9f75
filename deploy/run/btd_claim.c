/* Claiming a trace's local names (see btd_claim.h). */
#define _GNU_SOURCE
#include "btd_claim.h"

#include "btd_msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static bool same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The input PATH is, through any name, or NULL. */
static const char *input_named(const char *path, const char *const *inputs)
{
    struct stat sp, si;
    if (stat(path, &sp) != 0)
        return NULL;
    for (; inputs && *inputs; inputs++)
        if (stat(*inputs, &si) == 0 && same_inode(&sp, &si))
            return *inputs;
    return NULL;
}

/* Whether PATH is the record an earlier run wrote without its trace (the
 * run failed): that one a new run replaces, since OUT is not there. */
static bool failed_run_record(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    char head[128];
    ssize_t n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n <= 0)
        return false;
    head[n] = '\0';
    return strncmp(head, "{\n  \"record\": \"boardtrace run\",", 31) == 0;
}

/* Opens and locks OUT.part: creates it when missing. Retries when the file
 * it locked is no longer the one under the name (another command renamed
 * or removed it meanwhile). 0, 1 when another command holds it, -1 error. */
static int lock_part(struct btd_claim *c)
{
    for (int tries = 0; tries < 100; tries++) {
        int fd = open(c->part, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        bool created = false;
        if (fd < 0 && errno == ENOENT) {
            fd = open(c->part, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
            created = fd >= 0;
            if (fd < 0 && errno == EEXIST)
                continue;
        }
        if (fd < 0)
            return -1;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            return e == EWOULDBLOCK ? 1 : -1;
        }
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(c->part, &named) == 0 && same_inode(&held, &named)) {
            c->fd = fd;
            c->created = created;
            return 0;
        }
        close(fd);
    }
    errno = EAGAIN;
    return -1;
}

int btd_claim_output(struct btd_claim *c, const char *output, bool fresh, bool replace,
                     const char *const *inputs)
{
    c->fd = -1;
    c->created = false;
    char record[4200];
    if ((size_t)snprintf(c->part, sizeof c->part, "%s.part", output) >= sizeof c->part) {
        btd_error("-o %s: the name is too long", output);
        return BTD_EXIT_USAGE;
    }
    snprintf(record, sizeof record, "%s.json", output);
    const char *names[3] = {output, c->part, record};
    const char *what[3] = {"the trace", "the trace's part file", "the record"};
    for (int i = 0; i < 3; i++) {
        const char *in = input_named(names[i], inputs);
        if (in) {
            btd_error("-o %s: %s %s is the input %s itself: it would be replaced; name another "
                      "file",
                      output, what[i], names[i], in);
            return BTD_EXIT_USAGE;
        }
    }
    int rc = lock_part(c);
    if (rc == 1) {
        btd_error("-o %s: another boardtrace command is writing this trace now (it holds %s); "
                  "wait for it to end, or name another file",
                  output, c->part);
        return BTD_EXIT_USAGE;
    }
    if (rc != 0) {
        btd_error("cannot claim %s: %s", c->part, strerror(errno));
        return BTD_EXIT_OUTPUT;
    }
    if (replace)
        return BTD_EXIT_OK;
    /* Checked with the claim held: a command that held it before has
     * finished renaming its part to OUT by now. */
    struct stat st;
    const char *exists = NULL;
    if (lstat(output, &st) == 0)
        exists = output;
    else if (fresh && lstat(record, &st) == 0 && !failed_run_record(record))
        exists = record;
    else if (fresh && !c->created && fstat(c->fd, &st) == 0 && st.st_size > 0)
        exists = c->part;
    if (exists) {
        btd_error("-o %s: %s exists; add -f to replace it, or name another file", output, exists);
        btd_claim_release(c);
        return BTD_EXIT_USAGE;
    }
    return BTD_EXIT_OK;
}

void btd_claim_release(struct btd_claim *c)
{
    if (c->fd < 0)
        return;
    struct stat held, named;
    if (c->created && fstat(c->fd, &held) == 0 && held.st_size == 0 && stat(c->part, &named) == 0 &&
        same_inode(&held, &named))
        unlink(c->part);
    close(c->fd);
    c->fd = -1;
}
