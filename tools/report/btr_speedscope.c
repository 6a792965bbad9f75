/* speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json):
 * the zones' source locations as shared frames, and one evented profile per
 * thread, its zones as open and close events on the trace's timeline in
 * ns. The reader gives zones at their end, so a thread's zones are kept
 * (bounded by the reader's memory limit) and put in start order. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <boardtrace/config.h>

#include "btr_calltree.h"
#include "btr_report.h"

struct span {
    int64_t start, end;
    uint32_t depth;
    int16_t srcloc;
};

struct thread_spans {
    uint64_t id;
    struct btc_vec spans; /* struct span */
};

struct collect {
    struct btc_vec threads;      /* struct thread_spans, in the order first seen */
    struct btc_map thread_index; /* id -> index + 1 */
    uint64_t bytes, limit;
    int over; /* stopped at the memory limit */
};

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)t;
    struct collect *c = ctx;
    /* As stats counts them: zones that ended, longer than 0 ns. */
    if (z->end < 0 || z->end <= z->start)
        return 0;
    uint64_t *at = btc_map_get(&c->thread_index, z->thread_id);
    struct thread_spans *th;
    if (at) {
        th = btc_vec_at(&c->threads, (size_t)*at - 1);
    } else {
        if (!(th = btc_vec_push(&c->threads)) ||
            btc_map_put(&c->thread_index, z->thread_id, c->threads.len) < 0)
            return BTC_ERR_NOMEM;
        th->id = z->thread_id;
        btc_vec_init(&th->spans, sizeof(struct span));
    }
    c->bytes += sizeof(struct span);
    if (c->bytes > c->limit) {
        c->over = 1;
        return BTC_ERR_STOPPED;
    }
    struct span *s = btc_vec_push(&th->spans);
    if (!s)
        return BTC_ERR_NOMEM;
    *s = (struct span){z->start, z->end, z->depth, z->srcloc};
    return 0;
}

/* Start order; a parent before the children that start with it. */
static int by_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

struct open_zone {
    int64_t end;
    uint32_t frame;
};

static void event(FILE *out, int *first, char type, uint32_t frame, int64_t at)
{
    fprintf(out, "%s{\"type\":\"%c\",\"frame\":%" PRIu32 ",\"at\":%" PRId64 "}", *first ? "" : ",",
            type, frame, at);
    *first = 0;
}

/* One evented profile: zones open and close in time order, each closed by
 * the time its parent closes (a child that a clock put past its parent's
 * end is cut there). */
static int write_profile(FILE *out, const struct btc_trace *t, struct thread_spans *th,
                         const int32_t *frame_of, int64_t end_value)
{
    qsort(th->spans.data, th->spans.len, sizeof(struct span), by_start);
    struct btc_vec open;
    btc_vec_init(&open, sizeof(struct open_zone));
    char buf[64];
    fputs("{\"type\":\"evented\",\"name\":", out);
    btr_json_string(out, btr_thread_name(t, th->id, buf, sizeof buf));
    fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%" PRId64 ",\"events\":[",
            end_value);
    int first = 1, rc = 0;
    for (size_t i = 0; i < th->spans.len; i++) {
        const struct span *s = btc_vec_at(&th->spans, i);
        struct open_zone *top = open.len ? btc_vec_at(&open, open.len - 1) : NULL;
        while (top && top->end <= s->start) {
            event(out, &first, 'C', top->frame, top->end);
            open.len--;
            top = open.len ? btc_vec_at(&open, open.len - 1) : NULL;
        }
        int64_t end = top && top->end < s->end ? top->end : s->end;
        struct open_zone *o = btc_vec_push(&open);
        if (!o) {
            rc = BTC_ERR_NOMEM;
            break;
        }
        *o = (struct open_zone){end, (uint32_t)frame_of[s->srcloc + 32768]};
        event(out, &first, 'O', o->frame, s->start);
    }
    while (open.len) {
        struct open_zone *top = btc_vec_at(&open, --open.len);
        event(out, &first, 'C', top->frame, top->end);
    }
    fputs("]}", out);
    btc_vec_free(&open);
    return rc;
}

static void write_frame(FILE *out, const struct btc_trace *t, int16_t srcloc)
{
    fputs("{\"name\":", out);
    btr_json_string(out, btr_zone_name(t, srcloc));
    const struct btc_read_srcloc *loc = btc_trace_srcloc(t, srcloc);
    if (loc && loc->file >= 0) {
        fputs(",\"file\":", out);
        btr_json_string(out, btc_trace_string(t, loc->file));
        fprintf(out, ",\"line\":%u", loc->line);
    }
    fputc('}', out);
}

int btr_speedscope_export(const char *path, FILE *out, uint64_t *zones, char *err, size_t errlen)
{
    struct collect c = {.limit = btc_tracy_read_memory_limit()};
    btc_vec_init(&c.threads, sizeof(struct thread_spans));
    btc_map_init(&c.thread_index);
    struct btc_trace t;
    *zones = 0;
    int32_t *frame_of = malloc(65536 * sizeof *frame_of);
    int rc = frame_of ? btc_tracy_read(path, &t, on_zone, &c, err, errlen) : BTC_ERR_NOMEM;
    if (c.over)
        snprintf(err, errlen,
                 "the zones' timeline needs more than the memory limit of %" PRIu64 " bytes "
                 "(%zu bytes a zone)",
                 c.limit, sizeof(struct span));
    if (rc >= 0) {
        /* Frames in the order their source locations first appear. */
        memset(frame_of, 0xff, 65536 * sizeof *frame_of);
        int64_t end_value = t.last_time, nframes = 0;
        fprintf(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
                     "\"exporter\":\"boardtrace-report " BT_VERSION_STRING "\",\"name\":");
        btr_json_string(out, t.capture_name[0] ? t.capture_name : t.program);
        fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
        for (size_t i = 0; i < c.threads.len; i++) {
            struct thread_spans *th = btc_vec_at(&c.threads, i);
            for (size_t k = 0; k < th->spans.len; k++) {
                const struct span *s = btc_vec_at(&th->spans, k);
                if (s->end > end_value)
                    end_value = s->end;
                if (frame_of[s->srcloc + 32768] >= 0)
                    continue;
                if (nframes)
                    fputc(',', out);
                frame_of[s->srcloc + 32768] = (int32_t)nframes++;
                write_frame(out, &t, s->srcloc);
            }
            *zones += th->spans.len;
        }
        fputs("]},\"profiles\":[", out);
        for (size_t i = 0; rc >= 0 && i < c.threads.len; i++) {
            if (i)
                fputc(',', out);
            rc = write_profile(out, &t, btc_vec_at(&c.threads, i), frame_of, end_value);
        }
        fputs("]}\n", out);
    }
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "out of memory for the zones' timeline");
    for (size_t i = 0; i < c.threads.len; i++)
        btc_vec_free(&((struct thread_spans *)btc_vec_at(&c.threads, i))->spans);
    btc_vec_free(&c.threads);
    btc_map_free(&c.thread_index);
    free(frame_of);
    if (frame_of)
        btc_trace_free(&t);
    return rc;
}
