/* Signposts (boardtrace.signpost in Python): each is a message and a frame
 * of the "signposts" frame set at the same moment. Listed one row each, with
 * the time since the previous one and the zones that took the most time in
 * between. Two reads: the first finds the signposts (frame set names are
 * known only once a read is done), the second sums the zones of each
 * interval, which arrive per thread and not in time order. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "btr_report.h"

#define TOP_ZONES 3

struct post {
    int64_t time;
    char *text; /* the message */
};

struct first_pass {
    struct btc_vec messages; /* struct post, in time order */
    struct btc_vec frames;   /* struct btc_read_frame of every set */
};

static int on_message(void *ctx, const struct btc_trace *t, const struct btc_read_message *m)
{
    (void)t;
    struct first_pass *f = ctx;
    struct post *p = btc_vec_push(&f->messages);
    if (!p || !(p->text = strdup(m->text)))
        return BTC_ERR_NOMEM;
    p->time = m->time;
    return 0;
}

static int on_frame(void *ctx, const struct btc_trace *t, const struct btc_read_frame *fr)
{
    (void)t;
    struct first_pass *f = ctx;
    struct btc_read_frame *c = btc_vec_push(&f->frames);
    if (!c)
        return BTC_ERR_NOMEM;
    *c = *fr;
    return 0;
}

struct second_pass {
    const struct post *posts;
    size_t n;
    struct btc_map total; /* (interval << 16 | srcloc id) -> ns */
};

/* The interval a time falls in: after signpost i and before i + 1. */
static size_t interval_of(const struct second_pass *s, int64_t time)
{
    size_t lo = 0, hi = s->n; /* first post later than time */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->posts[mid].time <= time)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)t;
    struct second_pass *s = ctx;
    if (z->end < z->start || z->srcloc == 0)
        return 0;
    size_t i = interval_of(s, z->start);
    if (i == 0 || i > s->n)
        return 0; /* before the first signpost */
    uint64_t key = (uint64_t)(i - 1) << 16 | (uint16_t)z->srcloc;
    uint64_t *v = btc_map_get(&s->total, key);
    uint64_t d = (uint64_t)(z->end - z->start);
    if (v)
        *v += d;
    else if (btc_map_put(&s->total, key, d) < 0)
        return BTC_ERR_NOMEM;
    return 0;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void field(FILE *out, const char *raw)
{
    char buf[1024];
    const char *s = btr_text_safe(raw, buf, sizeof buf); /* no terminal escapes */
    if (!strpbrk(s, ",\"")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

int btr_signposts_print(const char *path, FILE *out, char *err, size_t errlen)
{
    struct first_pass f;
    btc_vec_init(&f.messages, sizeof(struct post));
    btc_vec_init(&f.frames, sizeof(struct btc_read_frame));
    struct btc_trace t;
    const struct btc_read_more more = {.frame = on_frame};
    int rc = btc_tracy_read_more(path, &t, NULL, on_message, &more, &f, err, errlen);
    /* The signposts: a frame of the "signposts" set, with the latest message
     * at or before its time (the signpost's own, emitted just before). */
    struct btc_vec posts;
    btc_vec_init(&posts, sizeof(struct post));
    int64_t set = -1;
    for (size_t i = 0; rc >= 0 && i < t.framesets.len; i++) {
        const struct btc_read_frameset *fs = btc_vec_at(&t.framesets, i);
        if (fs->name >= 0 && strcmp(btc_trace_string(&t, fs->name), "signposts") == 0)
            set = (int64_t)i;
    }
    size_t m = 0;
    for (size_t i = 0; rc >= 0 && set >= 0 && i < f.frames.len; i++) {
        const struct btc_read_frame *fr = btc_vec_at(&f.frames, i);
        if ((int64_t)fr->set != set)
            continue;
        while (m + 1 < f.messages.len &&
               ((struct post *)btc_vec_at(&f.messages, m + 1))->time <= fr->start)
            m++;
        const struct post *msg = f.messages.len ? btc_vec_at(&f.messages, m) : NULL;
        struct post *p = btc_vec_push(&posts);
        if (!p) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        p->time = fr->start;
        p->text = msg && msg->time <= fr->start ? msg->text : "";
    }
    btc_trace_free(&t);

    struct second_pass s = {.posts = posts.data, .n = posts.len};
    btc_map_init(&s.total);
    struct btc_trace t2;
    if (rc >= 0 && posts.len)
        rc = btc_tracy_read(path, &t2, on_zone, &s, err, errlen);
    if (rc >= 0) {
        fprintf(out, "time_ns,header,message,since_previous_ns,top_zones\n");
        for (size_t i = 0; i < posts.len; i++) {
            const struct post *p = btc_vec_at(&posts, i);
            /* "HEADER: MESSAGE", or the header alone. */
            char *text = strdup(p->text), *message = "";
            if (!text) {
                rc = BTC_ERR_NOMEM;
                break;
            }
            char *colon = strstr(text, ": ");
            if (colon) {
                *colon = '\0';
                message = colon + 2;
            }
            fprintf(out, "%" PRId64 ",", p->time);
            field(out, text);
            fputc(',', out);
            field(out, message);
            if (i)
                fprintf(out, ",%" PRId64 ",",
                        p->time - ((const struct post *)btc_vec_at(&posts, i - 1))->time);
            else
                fputs(",,", out);
            free(text);
            /* The zones that took most time until the next signpost: "name
             * ns; name ns; ..." (the last signpost's interval runs to the end). */
            int16_t best[TOP_ZONES] = {0};
            uint64_t best_ns[TOP_ZONES] = {0};
            for (size_t k = 0; k < s.total.cap; k++) {
                if (!s.total.used[k] || (s.total.keys[k] >> 16) != i)
                    continue;
                int16_t id = (int16_t)(uint16_t)s.total.keys[k];
                uint64_t val = s.total.vals[k];
                for (int r = 0; r < TOP_ZONES; r++) {
                    if (val > best_ns[r]) {
                        memmove(best + r + 1, best + r, (TOP_ZONES - 1 - r) * sizeof *best);
                        memmove(best_ns + r + 1, best_ns + r,
                                (TOP_ZONES - 1 - r) * sizeof *best_ns);
                        best[r] = id;
                        best_ns[r] = val;
                        break;
                    }
                }
            }
            char top[1024] = "";
            size_t used = 0;
            for (int r = 0; r < TOP_ZONES && best_ns[r]; r++) {
                const struct btc_read_srcloc *loc = btc_trace_srcloc(&t2, best[r]);
                const char *name =
                    loc ? btc_trace_string(&t2, loc->name >= 0 ? loc->name : loc->function) : "?";
                int k = snprintf(top + used, sizeof top - used, "%s%s %" PRIu64, r ? "; " : "",
                                 name, best_ns[r]);
                if (k < 0 || (size_t)k >= sizeof top - used)
                    break;
                used += (size_t)k;
            }
            field(out, top);
            fputc('\n', out);
        }
    }
    if (rc >= 0 && posts.len)
        btc_trace_free(&t2);
    btc_map_free(&s.total);
    for (size_t i = 0; i < f.messages.len; i++)
        free(((struct post *)btc_vec_at(&f.messages, i))->text);
    btc_vec_free(&f.messages);
    btc_vec_free(&f.frames);
    btc_vec_free(&posts);
    return rc;
}
