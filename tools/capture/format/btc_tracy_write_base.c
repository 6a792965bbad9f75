/* The .tracy writer's shared helpers (see btc_tracy_write_parts.h): string
 * references by wire key, source location records and the error of a spool
 * that cannot be read back. The writer's hub (btc_tracy_write.c) and its
 * section units (btc_tracy_write_*.c) call them; they call nothing of the
 * writer above them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "btc_tracy_write_parts.h"

/* String index for a wire key, "???" when the client never answered. */
int64_t btcw_key_string(struct writer *wr, uint64_t key)
{
    if (!key)
        return -1;
    uint64_t *v = btc_map_get(&wr->m->key_strings, key);
    return v ? (int64_t)*v : wr->unknown;
}

void btcw_put_srcloc(struct writer *wr, const struct btc_srcloc *s, int is_payload)
{
    struct fw *w = &wr->w;
    if (is_payload) {
        put_strref_idx(w, (int64_t)s->name - 1);
        put_strref_idx(w, (int64_t)s->function - 1);
        put_strref_idx(w, (int64_t)s->file - 1);
    } else if (s->resolved) {
        put_strref_idx(w, btcw_key_string(wr, s->name));
        int64_t f = btcw_key_string(wr, s->function);
        put_strref_idx(w, f < 0 ? wr->unknown : f);
        f = btcw_key_string(wr, s->file);
        put_strref_idx(w, f < 0 ? wr->unknown : f);
    } else {
        put_strref_idx(w, -1);
        put_strref_idx(w, wr->unknown);
        put_strref_idx(w, wr->unknown);
    }
    put_u32(w, s->line);
    put_u32(w, s->color);
}

int btcw_io_fail(struct writer *wr, const char *what)
{
    snprintf(wr->err, wr->errlen, "cannot read back the %s spool: %s", what, strerror(errno));
    return BTC_ERR_IO;
}
