/* Code transfer: the worker's answers to the capture's SymbolCode,
 * SourceCode and DataTransfer queries, as upstream's client gives them, with
 * one rule of ours on top: the runtime only hands out what it has itself
 * named to this capture. Symbol code is sent for symbol addresses this
 * session's frame answers announced (never more than their announced size,
 * nor 128 KiB), copied through the kernel so an unmapped address is refused,
 * not faulted on. A source file is sent when its name is one this session
 * sent (a source location's file, a frame's or symbol's file from the debug
 * information) or one the debug information of a loaded module names, and,
 * as upstream: it is a regular file older than the executable and smaller
 * than a frame. Everything else gets upstream's "not available" answer. */
#ifndef BT_CODE_H
#define BT_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "encode/encoder.h"

#define BT_CODE_SYMBOL_MAX (128u * 1024u)
#define BT_CODE_NAME_MAX   4096u /* longer DataTransfer names are refused */

struct bt_code_symbol {
    uint64_t address; /* 0: empty slot */
    uint32_t size;
};

struct bt_code {
    int enabled;
    uint64_t exec_time; /* the executable's mtime, as in the welcome */
    struct bt_code_symbol *symbols;
    size_t symbol_cap, symbol_count;
    char **files; /* NULL: empty slot */
    size_t file_cap, file_count;
    /* The name of the DataTransfer in progress; NULL when none arrived or
     * it was refused (too long), which makes the SourceCode query refused.
     * A transfer before it (the image name, when two come in a row) is
     * dropped: the runtime reads only the file's own name. */
    char *data;
    size_t data_size, data_len;
    int pipe[2]; /* for copying symbol code without faulting */
    /* Whether the debug information of a loaded module names a file (then
     * it may be sent); NULL: none does. */
    int (*names_file)(const char *path);
};

/* enabled: the welcome carries the CodeTransfer flag; names_file: whether
 * the debug information of a loaded module names a file (the symbols'
 * bt_callstack_debug_names_file), or NULL. */
void bt_code_init(struct bt_code *c, int enabled, uint64_t exec_time,
                  int (*names_file)(const char *path));
void bt_code_free(struct bt_code *c);

/* What this session announced to the capture. */
void bt_code_offer_symbol(struct bt_code *c, uint64_t address, uint32_t size);
void bt_code_offer_file(struct bt_code *c, const char *name);

/* The queries (each answered with exactly one counted reply). */
void bt_code_data_transfer(struct bt_code *c, struct bt_encoder *e, uint64_t size);
void bt_code_data_part(struct bt_code *c, struct bt_encoder *e, uint64_t bytes, uint32_t extra);
void bt_code_symbol_code(struct bt_code *c, struct bt_encoder *e, uint64_t address, uint32_t size);
void bt_code_source_code(struct bt_code *c, struct bt_encoder *e, uint32_t id);

#endif
