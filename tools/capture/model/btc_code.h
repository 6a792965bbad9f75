/* Code transfer: when the client offers it (welcome flag CodeTransfer and a
 * known executable time), the capture asks for the machine code of each
 * symbol the callstacks and samples name (up to 128 KiB each) and for every
 * source file that source locations, callstack frames and symbols refer to,
 * so the GUI's source and assembly views work offline. The file names go
 * over as DataTransfer queries, as upstream's server sends them. The code
 * and the sources go to a spool; only their index is held. */
#ifndef BTC_CODE_H
#define BTC_CODE_H

#include <stdint.h>

#include "btc_spool.h"
#include "btc_util.h"

#define BTC_CODE_SYMBOL_MAX (128u * 1024u) /* upstream asks for no larger symbol */

struct btc_code_blob {
    uint64_t key;  /* symbol code: its address; source: the file's string index */
    uint64_t text; /* text number in the data spool */
    uint32_t len;
};

struct btc_code {
    int enabled;
    struct btc_texts data;         /* symbol code and source files, as received */
    struct btc_vec symbols;        /* struct btc_code_blob */
    struct btc_vec sources;        /* struct btc_code_blob */
    struct btc_map checked;        /* file string index -> 1: asked for (or known) */
    struct btc_map file_keys;      /* static srcloc file key -> 1: asked once its string comes */
    struct btc_map source_queries; /* source query id -> file string index */
    uint32_t next_source_id;
    uint64_t symbols_pending;   /* symbol-code queries not answered yet */
    uint64_t transfers_pending; /* DataTransfer queries not acknowledged yet */
    uint64_t symbols_unavailable, sources_unavailable;
};

int btc_code_init(struct btc_code *c, int enabled, const char *spool_dir, char *err, size_t errlen);
void btc_code_free(struct btc_code *c);

struct btc_model;
struct btc_event;
/* A symbol the capture learned of, with its size: its code is asked for. */
int btc_code_symbol(struct btc_model *m, uint64_t addr, uint32_t size);
/* A source file name (string index) seen in a frame or symbol of image
 * (string index, -1 none): asked for once. */
int btc_code_source(struct btc_model *m, int64_t file, int64_t image);
/* A static source location's file, as a wire string key: asked for once
 * its text is known (btc_code_key_string tells when it arrives). */
int btc_code_source_key(struct btc_model *m, uint64_t key);
int btc_code_key_string(struct btc_model *m, uint64_t key, int64_t string);
/* Applies SymbolCode, SourceCode and the three acknowledgements. */
int btc_code_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);

#endif
