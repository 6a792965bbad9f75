/* Code transfer (see code.h). Runs on the worker thread only. */
#define _GNU_SOURCE
#include "code.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boardtrace/wire.h"
#include "core/hooks.h"

#define COPY_CHUNK 4096u

static uint64_t mix(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return k ^ (k >> 29);
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return mix(h);
}

void bt_code_init(struct bt_code *c, int enabled, uint64_t exec_time,
                  int (*names_file)(const char *path))
{
    memset(c, 0, sizeof(*c));
    c->enabled = enabled;
    c->exec_time = exec_time;
    c->names_file = names_file;
    c->pipe[0] = c->pipe[1] = -1;
}

static void data_clear(struct bt_code *c)
{
    free(c->data);
    c->data = NULL;
    c->data_size = c->data_len = 0;
}

void bt_code_free(struct bt_code *c)
{
    free(c->symbols);
    for (size_t i = 0; i < c->file_cap; i++)
        free(c->files[i]);
    free(c->files);
    data_clear(c);
    if (c->pipe[0] >= 0) {
        close(c->pipe[0]);
        close(c->pipe[1]);
    }
    memset(c, 0, sizeof(*c));
    c->pipe[0] = c->pipe[1] = -1;
}

/* ---- what was announced ---- */

static struct bt_code_symbol *symbol_slot(struct bt_code_symbol *t, size_t cap, uint64_t address)
{
    for (size_t i = mix(address) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (t[i].address == address || t[i].address == 0)
            return &t[i];
}

void bt_code_offer_symbol(struct bt_code *c, uint64_t address, uint32_t size)
{
    if (!c->enabled || address == 0 || size == 0)
        return;
    if ((c->symbol_count + 1) * 2 > c->symbol_cap) {
        size_t cap = c->symbol_cap ? 2 * c->symbol_cap : 256;
        struct bt_code_symbol *t = calloc(cap, sizeof(*t));
        if (!t)
            return; /* the symbol's code is then "not available" */
        for (size_t i = 0; i < c->symbol_cap; i++)
            if (c->symbols[i].address)
                *symbol_slot(t, cap, c->symbols[i].address) = c->symbols[i];
        free(c->symbols);
        c->symbols = t;
        c->symbol_cap = cap;
    }
    struct bt_code_symbol *s = symbol_slot(c->symbols, c->symbol_cap, address);
    if (s->address == 0)
        c->symbol_count++;
    s->address = address;
    if (size > s->size)
        s->size = size;
}

static char **file_slot(char **t, size_t cap, const char *name)
{
    for (size_t i = name_hash(name) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!t[i] || strcmp(t[i], name) == 0)
            return &t[i];
}

void bt_code_offer_file(struct bt_code *c, const char *name)
{
    if (!c->enabled || !name || !name[0])
        return;
    if (c->file_cap && *file_slot(c->files, c->file_cap, name))
        return;
    if ((c->file_count + 1) * 2 > c->file_cap) {
        size_t cap = c->file_cap ? 2 * c->file_cap : 64;
        char **t = calloc(cap, sizeof(*t));
        if (!t)
            return;
        for (size_t i = 0; i < c->file_cap; i++)
            if (c->files[i])
                *file_slot(t, cap, c->files[i]) = c->files[i];
        free(c->files);
        c->files = t;
        c->file_cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return;
    *file_slot(c->files, c->file_cap, name) = copy;
    c->file_count++;
}

static int file_offered(const struct bt_code *c, const char *name)
{
    return c->file_cap && *file_slot(c->files, c->file_cap, name) != NULL;
}

/* ---- the queries ---- */

void bt_code_data_transfer(struct bt_code *c, struct bt_encoder *e, uint64_t size)
{
    /* a transfer while one is held: that one was the image name */
    data_clear(c);
    if (size > 0 && size <= BT_CODE_NAME_MAX && (c->data = calloc(1, (size_t)size + 12)))
        c->data_size = (size_t)size;
    bt_enc_simple(e, BT_EV_ACK_SERVER_QUERY_NOOP);
}

void bt_code_data_part(struct bt_code *c, struct bt_encoder *e, uint64_t bytes, uint32_t extra)
{
    if (c->data && c->data_len <= c->data_size) { /* the buffer has 12 bytes to spare */
        uint8_t part[12];
        bt_wire_put_u64(part, bytes);
        bt_wire_put_u32(part + 8, extra);
        memcpy(c->data + c->data_len, part, sizeof(part));
        c->data_len += sizeof(part);
    }
    bt_enc_simple(e, BT_EV_ACK_SERVER_QUERY_NOOP);
}

/* Copies n bytes at address through a pipe: the kernel (or qemu's user
 * mode) checks the address, so a symbol whose module went away gives EFAULT
 * instead of a crash. Returns 0 or -1. */
static int safe_copy(struct bt_code *c, uint64_t address, uint8_t *out, size_t n)
{
    if (c->pipe[0] < 0 && pipe2(c->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        c->pipe[0] = c->pipe[1] = -1;
        return -1;
    }
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done < COPY_CHUNK ? n - done : COPY_CHUNK;
        ssize_t w = write(c->pipe[1], (const void *)(uintptr_t)(address + done), chunk);
        if (w <= 0)
            return -1;
        ssize_t r = read(c->pipe[0], out + done, (size_t)w);
        if (r != w)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

void bt_code_symbol_code(struct bt_code *c, struct bt_encoder *e, uint64_t address, uint32_t size)
{
    const struct bt_code_symbol *s =
        c->symbol_cap ? symbol_slot(c->symbols, c->symbol_cap, address) : NULL;
    uint8_t *buf = NULL;
    if (c->enabled && s && s->address == address && size > 0 && size <= s->size &&
        size <= BT_CODE_SYMBOL_MAX && (buf = malloc(size)) && safe_copy(c, address, buf, size) == 0)
        bt_enc_keyed(e, BT_EV_SYMBOL_CODE, address, buf, size);
    else
        bt_enc_simple(e, BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE);
    free(buf);
}

/* The file's bytes when the rules of code.h allow it, else NULL. */
static char *read_source(const struct bt_code *c, const char *name, size_t *len)
{
    if (!c->enabled || c->exec_time == 0 ||
        (!file_offered(c, name) && !(c->names_file && c->names_file(name))))
        return NULL;
    int fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_mtime < c->exec_time &&
        st.st_size < (off_t)(BT_WIRE_FRAME_SIZE - 16) && (buf = malloc((size_t)st.st_size + 1))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (got != (size_t)st.st_size) {
            free(buf);
            buf = NULL;
        }
        *len = got;
    }
    close(fd);
    return buf;
}

void bt_code_source_code(struct bt_code *c, struct bt_encoder *e, uint32_t id)
{
    char *text = NULL;
    size_t len = 0;
    if (c->data) {
        c->data[c->data_size - 1] = 0; /* the size counts the NUL */
        text = read_source(c, c->data, &len);
        if (!text && c->enabled) /* as upstream: the program's callback, after the file */
            text = bt_hooks_source(c->data, &len);
    }
    if (text)
        bt_enc_keyed(e, BT_EV_SOURCE_CODE, id, text, len);
    else
        bt_enc_ack_source_code_not_available(e, id);
    free(text);
    data_clear(c);
}
