/* Code transfer (see btc_code.h). Upstream's server also reads a source file
 * from its own disk when one by that name is there and older than the
 * program; this capture always asks the client instead, so what goes into
 * a trace is what the board has, never a file of the capturing machine. */
#define _GNU_SOURCE
#include "btc_code.h"

#include "btc_disasm.h"

#include <stdio.h>
#include <string.h>

#include "btc_model.h"
#include "btc_model_parts.h"

int btc_code_init(struct btc_code *c, int enabled, const char *spool_dir, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->enabled = enabled;
    c->data.raw.fd = -1;
    btc_vec_init(&c->symbols, sizeof(struct btc_code_blob));
    btc_vec_init(&c->sources, sizeof(struct btc_code_blob));
    btc_map_init(&c->checked);
    btc_map_init(&c->file_keys);
    btc_map_init(&c->source_queries);
    return btc_texts_open(&c->data, spool_dir, err, errlen);
}

void btc_code_free(struct btc_code *c)
{
    btc_texts_close(&c->data);
    btc_vec_free(&c->symbols);
    btc_vec_free(&c->sources);
    btc_map_free(&c->checked);
    btc_map_free(&c->file_keys);
    btc_map_free(&c->source_queries);
}

int btc_code_symbol(struct btc_model *m, uint64_t addr, uint32_t size)
{
    struct btc_code *c = &m->code;
    if (!c->enabled || size == 0 || size > BTC_CODE_SYMBOL_MAX)
        return BTC_OK;
    /* Answers to these are counted, not matched: the "not available" one
     * names no symbol, and the client answers out of order (kernel symbols
     * at once, the others from its symbol worker). Each symbol is asked
     * once: the model learns a symbol once. */
    c->symbols_pending++;
    return btcm_query_raw(m, BT_QUERY_SYMBOL_CODE, addr, size);
}

/* A string to the client: its length with the NUL, then 12 bytes a query. */
static int transfer(struct btc_model *m, const char *s, size_t len)
{
    size_t size = len + 1;
    int rc = btcm_query_raw(m, BT_QUERY_DATA_TRANSFER, size, 0);
    m->code.transfers_pending++;
    for (size_t off = 0; rc >= 0 && off < size; off += 12) {
        uint8_t chunk[12] = {0};
        size_t n = size - off < 12 ? size - off : 12;
        size_t from_s = off < len ? (len - off < n ? len - off : n) : 0;
        memcpy(chunk, s + off, from_s); /* the rest, the NUL included, stays 0 */
        rc = btcm_query_raw(m, BT_QUERY_DATA_TRANSFER_PART, bt_wire_get_u64(chunk),
                            bt_wire_get_u32(chunk + 8));
        m->code.transfers_pending++;
    }
    return rc;
}

int btc_code_source(struct btc_model *m, int64_t file, int64_t image)
{
    struct btc_code *c = &m->code;
    if (!c->enabled || m->welcome.exec_time == 0 || file < 0 ||
        btc_map_get(&c->checked, (uint64_t)file))
        return BTC_OK;
    if (btc_map_put(&c->checked, (uint64_t)file, 1) < 0)
        return BTC_ERR_NOMEM;
    uint32_t flen, ilen = 0;
    const char *fname = btc_strtab_get(&m->strings, (uint32_t)file, &flen);
    const char *iname = image >= 0 ? btc_strtab_get(&m->strings, (uint32_t)image, &ilen) : NULL;
    if (!fname || !flen)
        return BTC_OK;
    int rc = BTC_OK;
    if (iname && ilen)
        rc = transfer(m, iname, ilen);
    if (rc >= 0)
        rc = transfer(m, fname, flen);
    uint32_t id = c->next_source_id++;
    if (rc >= 0 && btc_map_put(&c->source_queries, id, (uint64_t)file) < 0)
        rc = BTC_ERR_NOMEM;
    return rc < 0 ? rc : btcm_query(m, BT_QUERY_SOURCE_CODE, id);
}

int btc_code_source_key(struct btc_model *m, uint64_t key)
{
    struct btc_code *c = &m->code;
    if (!c->enabled || !key)
        return BTC_OK;
    uint64_t *s = btc_map_get(&m->key_strings, key);
    if (s)
        return btc_code_source(m, (int64_t)*s, -1);
    return btc_map_put(&c->file_keys, key, 1);
}

int btc_code_key_string(struct btc_model *m, uint64_t key, int64_t string)
{
    struct btc_code *c = &m->code;
    if (!c->file_keys.len || !btc_map_remove(&c->file_keys, key))
        return BTC_OK;
    return btc_code_source(m, string, -1);
}

static int keep(struct btc_code *c, struct btc_vec *list, uint64_t key, const struct btc_event *ev)
{
    uint64_t text;
    if (ev->data_len > UINT32_MAX ||
        btc_texts_append(&c->data, ev->data, (uint32_t)ev->data_len, &text) < 0)
        return BTC_ERR_IO;
    struct btc_code_blob *b = btc_vec_push(list);
    if (!b)
        return BTC_ERR_NOMEM;
    *b = (struct btc_code_blob){key, text, (uint32_t)ev->data_len};
    return BTC_OK;
}

struct code_walk {
    struct btc_model *m;
    int failed;
};

static int frame_of_insn(void *ctx, uint64_t address, uint64_t target)
{
    struct code_walk *w = ctx;
    if (btcm_query_frame(w->m, address) < 0 || (target && btcm_query_frame(w->m, target) < 0))
        w->failed = 1;
    return w->failed;
}

/* As upstream's server: a frame query per instruction of the code and per
 * direct jump or call target, so every instruction gets its source line. */
static int frames_of_code(struct btc_model *m, uint64_t address, const uint8_t *code, size_t len,
                          char *err, size_t errlen)
{
    struct code_walk w = {m, 0};
    btc_disasm_walk(m->welcome.cpu_arch, code, len, address, frame_of_insn, &w);
    return w.failed ? btcm_nomem(err, errlen) : BTC_OK;
}

int btc_code_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen)
{
    struct btc_code *c = &m->code;
    int rc = BTC_OK;
    switch (ev->type) {
    case BT_EV_ACK_SERVER_QUERY_NOOP:
        if (c->transfers_pending) {
            c->transfers_pending--;
            btcm_budget(m, 1);
        }
        return BTC_OK;
    case BT_EV_SYMBOL_CODE:
    case BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE:
        if (!c->symbols_pending)
            return BTC_OK; /* not asked: earns nothing, kept nowhere */
        c->symbols_pending--;
        btcm_budget(m, 1);
        if (ev->type == BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE) {
            c->symbols_unavailable++;
            return BTC_OK;
        }
        rc = keep(c, &c->symbols, ev->key, ev);
        if (rc == BTC_OK)
            rc = frames_of_code(m, ev->key, ev->data, ev->data_len, err, errlen);
        break;
    case BT_EV_SOURCE_CODE:
    case BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE: {
        uint64_t id = ev->type == BT_EV_SOURCE_CODE ? ev->key : bt_wire_get_u32(ev->p + 1);
        uint64_t *file = btc_map_get(&c->source_queries, id);
        if (!file || !btcm_answered(m, BT_QUERY_SOURCE_CODE, id))
            return BTC_OK;
        uint64_t f = *file;
        btc_map_remove(&c->source_queries, id);
        if (ev->type == BT_EV_SOURCE_CODE)
            rc = keep(c, &c->sources, f, ev);
        else
            c->sources_unavailable++;
        break;
    }
    default:
        return BTC_OK;
    }
    if (rc == BTC_ERR_NOMEM)
        return btcm_nomem(err, errlen);
    if (rc < 0) {
        btcm_spool_failed(err, errlen, "code");
        return BTC_ERR_IO;
    }
    return BTC_OK;
}
