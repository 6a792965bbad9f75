/* Transferred code in the .tracy file: each symbol's machine code (section
 * 36) and the source file cache (39), streamed from the code spool. */
#define _GNU_SOURCE
#include <string.h>

#include "btc_tracy_write_parts.h"

/* Writes the blobs of list in order: symbol code as (addr, u32 len, bytes),
 * sources as (u32 name length, name, u32 len, bytes). */
static int write_blobs(struct writer *wr, const struct btc_vec *list, int sources)
{
    struct btc_code *c = &wr->m->code;
    struct fw *w = &wr->w;
    put_u64(w, list->len);
    if (!list->len)
        return BTC_OK;
    struct btc_texts_reader r;
    if (btc_texts_reader_open(&r, &c->data) < 0)
        return btcw_io_fail(wr, "code");
    uint64_t text = 0;
    int rc = 1;
    for (size_t i = 0; i < list->len && rc > 0; i++) {
        const struct btc_code_blob *b = btc_vec_at(list, i);
        const char *s;
        uint32_t len;
        while ((rc = btc_texts_reader_next(&r, &s, &len)) > 0 && text++ < b->text) {
        }
        if (rc <= 0 || len != b->len)
            break;
        if (sources) {
            uint32_t nlen;
            const char *name = btc_strtab_get(&wr->m->strings, (uint32_t)b->key, &nlen);
            put_u32(w, nlen);
            put(w, name, nlen);
        } else {
            put_u64(w, b->key);
        }
        put_u32(w, len);
        put(w, s, len);
    }
    btc_texts_reader_close(&r);
    return rc <= 0 ? btcw_io_fail(wr, "code") : BTC_OK;
}

int btcw_symbol_code(struct writer *wr)
{
    return write_blobs(wr, &wr->m->code.symbols, 0);
}

int btcw_source_files(struct writer *wr)
{
    return write_blobs(wr, &wr->m->code.sources, 1);
}
