/* Zones aggregated by call path per thread (btr_calltree.h). The reader
 * gives a zone when it ends, after all of its children: each open depth
 * keeps the aggregated subtrees of the zones that ended under it, and a
 * zone adopts the level below it, then merges into its own level. */
#include <stdio.h>
#include <string.h>

#include "btr_calltree.h"
#include "btr_report.h"

struct btr_call_level {
    uint32_t pending;    /* a node without zone: the ended children so far */
    int64_t children_ns; /* their durations */
};

struct merge_job {
    uint32_t into, node; /* merge node into into's children */
};

void btr_calltree_init(struct btr_calltree *c)
{
    memset(c, 0, sizeof *c);
    btc_vec_init(&c->nodes, sizeof(struct btr_call_node));
    btc_vec_init(&c->threads, sizeof(struct btr_call_thread));
    btc_vec_init(&c->work, sizeof(struct merge_job));
    btc_map_init(&c->thread_index);
}

void btr_calltree_free(struct btr_calltree *c)
{
    for (size_t i = 0; i < c->threads.len; i++)
        btc_vec_free(&((struct btr_call_thread *)btc_vec_at(&c->threads, i))->levels);
    btc_vec_free(&c->nodes);
    btc_vec_free(&c->threads);
    btc_vec_free(&c->work);
    btc_map_free(&c->thread_index);
}

/* A zeroed node's index, 0 when memory ran out. */
static uint32_t new_node(struct btr_calltree *c, int16_t srcloc)
{
    uint32_t i = c->free_list;
    if (i) {
        c->free_list = btr_call_node(c, i)->next;
    } else {
        if (!c->nodes.len && !btc_vec_push(&c->nodes))
            return 0;
        if (c->nodes.len >= UINT32_MAX || !btc_vec_push(&c->nodes))
            return 0;
        i = (uint32_t)(c->nodes.len - 1);
    }
    struct btr_call_node *n = btr_call_node(c, i);
    memset(n, 0, sizeof *n);
    n->srcloc = srcloc;
    return i;
}

/* Merges the subtree at node into into's children: a child of the same
 * source location takes its numbers and, in turn, its children. */
static int merge(struct btr_calltree *c, uint32_t into, uint32_t node)
{
    c->work.len = 0;
    struct merge_job *j = btc_vec_push(&c->work);
    if (!j)
        return BTC_ERR_NOMEM;
    *j = (struct merge_job){into, node};
    while (c->work.len) {
        struct merge_job job = *(struct merge_job *)btc_vec_at(&c->work, --c->work.len);
        struct btr_call_node *n = btr_call_node(c, job.node);
        uint32_t same = btr_call_node(c, job.into)->child;
        while (same && btr_call_node(c, same)->srcloc != n->srcloc)
            same = btr_call_node(c, same)->next;
        if (!same) {
            n->next = btr_call_node(c, job.into)->child;
            btr_call_node(c, job.into)->child = job.node;
            continue;
        }
        struct btr_call_node *s = btr_call_node(c, same);
        s->count += n->count;
        s->total_ns += n->total_ns;
        s->self_ns += n->self_ns;
        for (uint32_t k = n->child, next; k; k = next) {
            next = btr_call_node(c, k)->next;
            if (!(j = btc_vec_push(&c->work)))
                return BTC_ERR_NOMEM;
            *j = (struct merge_job){same, k};
        }
        n = btr_call_node(c, job.node);
        n->next = c->free_list;
        c->free_list = job.node;
    }
    return 0;
}

static struct btr_call_thread *thread_of(struct btr_calltree *c, uint64_t id)
{
    uint64_t *at = btc_map_get(&c->thread_index, id);
    if (at)
        return btc_vec_at(&c->threads, (size_t)*at - 1);
    uint32_t root = new_node(c, 0);
    struct btr_call_thread *th = root ? btc_vec_push(&c->threads) : NULL;
    if (!th || btc_map_put(&c->thread_index, id, c->threads.len) < 0)
        return NULL;
    th->id = id;
    th->root = root;
    btc_vec_init(&th->levels, sizeof(struct btr_call_level));
    return th;
}

/* The level at depth (0: the thread's outermost zones, pending under its
 * root), created as needed. */
static struct btr_call_level *level(struct btr_calltree *c, struct btr_call_thread *th,
                                    uint32_t depth)
{
    while (th->levels.len <= depth) {
        uint32_t pending = th->levels.len ? new_node(c, 0) : th->root;
        struct btr_call_level *l = pending ? btc_vec_push(&th->levels) : NULL;
        if (!l)
            return NULL;
        l->pending = pending;
    }
    return btc_vec_at(&th->levels, depth);
}

int btr_calltree_on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)t;
    struct btr_calltree *c = ctx;
    struct btr_call_thread *th = thread_of(c, z->thread_id);
    uint32_t node = th ? new_node(c, z->srcloc) : 0;
    /* Both levels exist before pointers into them are taken. */
    if (!node || !level(c, th, z->depth + 1))
        return BTC_ERR_NOMEM;
    struct btr_call_level *below = btc_vec_at(&th->levels, z->depth + 1);
    struct btr_call_node *n = btr_call_node(c, node);
    int64_t d = (int64_t)((uint64_t)z->end - (uint64_t)z->start);
    int64_t children = below->children_ns;
    /* A zone that never ended has no time of its own; its children's time
     * still counts toward its parent's children. */
    int64_t span = children;
    if (z->end >= 0 && z->end > z->start && d > 0) {
        n->count = 1;
        n->total_ns = d;
        n->self_ns = d > children ? d - children : 0;
        span = d;
    }
    n->child = btr_call_node(c, below->pending)->child;
    btr_call_node(c, below->pending)->child = 0;
    below->children_ns = 0;
    struct btr_call_level *here = btc_vec_at(&th->levels, z->depth);
    here->children_ns += span;
    return merge(c, here->pending, node);
}

const char *btr_zone_name(const struct btc_trace *t, int16_t srcloc)
{
    const struct btc_read_srcloc *loc = btc_trace_srcloc(t, srcloc);
    return loc ? btr_demangle(btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function))
               : "?";
}

const char *btr_thread_name(const struct btc_trace *t, uint64_t id, char *buf, size_t size)
{
    for (size_t i = 0; i < t->threads.len; i++) {
        const struct btc_read_thread *th = btc_vec_at(&t->threads, i);
        if (th->id == id && th->name >= 0)
            return btc_trace_string(t, th->name);
    }
    snprintf(buf, size, "thread %llu", (unsigned long long)id);
    return buf;
}
