/* Every allocation and free of a trace's memory pools in (pool, time)
 * order, in bounded memory: sorted chunks spilled to an unlinked temporary
 * file and merged (btr_memsort.c). */
#ifndef BTR_MEMSORT_H
#define BTR_MEMSORT_H

#include <stddef.h>
#include <stdint.h>

#include "btc_spool.h"
#include "btc_util.h"

struct btr_mem_change {
    int64_t time;
    uint64_t size;
    uint32_t pool;
    uint32_t is_free; /* 1: the size leaves the pool */
};

struct btr_memsort {
    const char *dir; /* where the spool goes */
    struct btr_mem_change *chunk;
    size_t len, cap;
    uint64_t budget;        /* bytes of the chunk, and of the merge's buffers */
    struct btc_spool spool; /* the sorted runs, one after another */
    struct btc_vec runs;    /* u64: record count at the end of each run */
};

/* What the sort may hold in memory (at least 24 KiB is used), and the
 * folder of its temporary file, made only when the events exceed it. */
int btr_memsort_init(struct btr_memsort *s, uint64_t budget, const char *dir);
void btr_memsort_free(struct btr_memsort *s);
int btr_memsort_add(struct btr_memsort *s, const struct btr_mem_change *c, char *err,
                    size_t errlen);

/* Calls fn with every change in order; stops at fn's first negative. */
typedef int (*btr_mem_change_fn)(void *ctx, const struct btr_mem_change *c);
int btr_memsort_each(struct btr_memsort *s, btr_mem_change_fn fn, void *ctx, char *err,
                     size_t errlen);

#endif
