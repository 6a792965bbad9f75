/* Zones aggregated by call path per thread: one node per distinct path of
 * source locations from a thread's outermost zone, with the count, total
 * and self time of the zones on that path. Built while the zones stream
 * (the reader gives each zone at its end, children before their parent). */
#ifndef BTR_CALLTREE_H
#define BTR_CALLTREE_H

#include <stdint.h>

#include "btc_tracy.h"

/* Nodes live in one array; 0 is "none". */
struct btr_call_node {
    int16_t srcloc;
    uint32_t child, next; /* first child, next sibling */
    uint64_t count;       /* zones on this path that ended, longer than 0 ns */
    int64_t total_ns;     /* their durations */
    int64_t self_ns;      /* the same less their direct children's */
};

struct btr_call_thread {
    uint64_t id;
    uint32_t root;         /* a node without zone: its children are the outermost zones */
    struct btc_vec levels; /* struct btr_call_level per open depth */
};

struct btr_calltree {
    struct btc_vec nodes;        /* struct btr_call_node; entry 0 unused */
    struct btc_vec threads;      /* struct btr_call_thread, in the order first seen */
    struct btc_map thread_index; /* thread id -> index + 1 */
    uint32_t free_list;          /* nodes merged away, linked through next */
    struct btc_vec work;         /* merge work: pairs of node indices */
};

void btr_calltree_init(struct btr_calltree *c);
void btr_calltree_free(struct btr_calltree *c);
/* Adds one zone as btc_tracy_read gives it; a zone callback of its own
 * (ctx is the struct btr_calltree). */
int btr_calltree_on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z);

static inline struct btr_call_node *btr_call_node(const struct btr_calltree *c, uint32_t i)
{
    return btc_vec_at(&c->nodes, i);
}

/* The name a zone's node shows: the source location's name, else its
 * function, demangled; "?" for an unknown source location. */
const char *btr_zone_name(const struct btc_trace *t, int16_t srcloc);
/* A thread's name as the trace gives it, else "thread ID" in buf. */
const char *btr_thread_name(const struct btc_trace *t, uint64_t id, char *buf, size_t size);

#endif
