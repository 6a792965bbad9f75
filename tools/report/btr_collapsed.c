/* The collapsed-stack text of flame-graph tools (flamegraph.pl, inferno,
 * speedscope): one line per call path of zones, "thread;outer;...;inner N",
 * N the path's self time in ns, aggregated over the whole trace. */
#include <string.h>

#include "btr_calltree.h"
#include "btr_report.h"

/* A frame of the path: printable text (btr_text_put), with the ';' that
 * separates frames written as \x3b. */
static void put_frame(FILE *out, const char *s)
{
    for (const char *semi; (semi = strchr(s, ';')); s = semi + 1) {
        btr_text_write(out, s, (size_t)(semi - s));
        fputs("\\x3b", out);
    }
    btr_text_put(out, s);
}

struct walk {
    uint32_t node, depth;
};

/* Depth first under the thread's root; path holds the nodes from the
 * outermost zone to the current one. */
static int write_thread(const struct btr_calltree *c, const struct btr_call_thread *th,
                        const struct btc_trace *t, FILE *out, uint64_t *lines)
{
    struct btc_vec stack, path;
    btc_vec_init(&stack, sizeof(struct walk));
    btc_vec_init(&path, sizeof(uint32_t));
    char buf[64];
    const char *thread = btr_thread_name(t, th->id, buf, sizeof buf);
    int rc = 0;
    for (uint32_t k = btr_call_node(c, th->root)->child; k && !rc; k = btr_call_node(c, k)->next) {
        struct walk *w = btc_vec_push(&stack);
        if (!w)
            rc = BTC_ERR_NOMEM;
        else
            *w = (struct walk){k, 0};
    }
    while (!rc && stack.len) {
        struct walk w = *(struct walk *)btc_vec_at(&stack, --stack.len);
        path.len = w.depth;
        uint32_t *p = btc_vec_push(&path);
        if (!p) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        *p = w.node;
        const struct btr_call_node *n = btr_call_node(c, w.node);
        if (n->self_ns > 0) {
            put_frame(out, thread);
            for (size_t i = 0; i < path.len; i++) {
                fputc(';', out);
                uint32_t at = *(uint32_t *)btc_vec_at(&path, i);
                put_frame(out, btr_zone_name(t, btr_call_node(c, at)->srcloc));
            }
            fprintf(out, " %lld\n", (long long)n->self_ns);
            (*lines)++;
        }
        for (uint32_t k = n->child; k; k = btr_call_node(c, k)->next) {
            struct walk *child = btc_vec_push(&stack);
            if (!child) {
                rc = BTC_ERR_NOMEM;
                break;
            }
            *child = (struct walk){k, w.depth + 1};
        }
    }
    btc_vec_free(&stack);
    btc_vec_free(&path);
    return rc;
}

int btr_collapsed_export(const char *path, FILE *out, uint64_t *lines, char *err, size_t errlen)
{
    struct btr_calltree c;
    btr_calltree_init(&c);
    struct btc_trace t;
    *lines = 0;
    int rc = btc_tracy_read(path, &t, btr_calltree_on_zone, &c, err, errlen);
    for (size_t i = 0; rc >= 0 && i < c.threads.len; i++)
        rc = write_thread(&c, btc_vec_at(&c.threads, i), &t, out, lines);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "out of memory for the call paths");
    btr_calltree_free(&c);
    btc_trace_free(&t);
    return rc;
}
