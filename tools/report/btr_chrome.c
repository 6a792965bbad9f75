/* Chrome trace-event JSON export: every ended zone becomes a complete ("X")
 * event in microseconds, messages instant events, threads and the process
 * get name metadata; GPU zones go to a process of their own per GPU context
 * (on GPU time), frames to a track per frame set, plots and each memory
 * pool's usage become counter tracks. The file streams out event by event;
 * the memory usage, which needs every allocation and free in time order,
 * goes through a sort bounded by a quarter of the reader's memory limit. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btr_memsort.h"
#include "btr_report.h"

/* Synthetic ids of the extra tracks (no real process or thread has them). */
#define GPU_PID_BASE   0xF0000000u /* + GPU context index */
#define FRAME_TID_BASE 0xF0000000u /* + frame set index, in the program's process */

struct chrome {
    FILE *out;
    uint64_t zones, gpu_zones, frames, points;
    int first;
    struct btc_vec last_start; /* i64 per frame set: start of its pending frame, -1 none */
    struct btr_memsort mem;    /* allocations and frees */
    const struct btc_trace *trace;
    int64_t usage; /* of the pool being written */
    uint32_t pool;
    char err[300]; /* why a memory event could not be kept */
};

/* Names and texts come from the traced program as bytes: a byte that is not
 * part of well-formed UTF-8 becomes U+FFFD, so the file stays valid JSON;
 * every control character (C0, DEL, C1, bidirectional overrides) is
 * escaped, so the JSON printed on a terminal cannot act on it. */
void btr_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp;
        size_t left = 1;
        while (left < 4 && p[left])
            left++;
        size_t n = btr_utf8_decode(p, left, &cp);
        if (n == 0) {
            fputs("\\ufffd", out);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p++);
        } else if (!btr_text_printable(cp)) {
            /* JSON allows C1 controls raw, a terminal would act on them. */
            fprintf(out, "\\u%04x", (unsigned)cp);
            p += n;
        } else {
            fwrite(p, 1, n, out);
            p += n;
        }
    }
    fputc('"', out);
}

static void sep(struct chrome *c)
{
    fputs(c->first ? "\n" : ",\n", c->out);
    c->first = 0;
}

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    struct chrome *c = ctx;
    if (z->end < z->start)
        return 0; /* never ended: no duration to show */
    const struct btc_read_srcloc *loc = btc_trace_srcloc(t, z->srcloc);
    const char *name =
        loc ? btr_demangle(btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function)) : "?";
    sep(c);
    fputs("{\"ph\":\"X\",\"name\":", c->out);
    btr_json_string(c->out, name);
    fprintf(c->out, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":%.3f,\"dur\":%.3f", t->pid,
            z->thread_id, (double)z->start / 1000.0,
            (double)(int64_t)((uint64_t)z->end - (uint64_t)z->start) / 1000.0);
    if (loc) {
        fputs(",\"args\":{\"file\":", c->out);
        btr_json_string(c->out, btc_trace_string(t, loc->file));
        fprintf(c->out, ",\"line\":%u}", loc->line);
    }
    fputc('}', c->out);
    c->zones++;
    return 0;
}

/* Messages become process-wide instant events (the file keeps their thread
 * only in per-thread lists that come after them). */
static int on_message(void *ctx, const struct btc_trace *t, const struct btc_read_message *m)
{
    struct chrome *c = ctx;
    sep(c);
    fputs("{\"ph\":\"i\",\"s\":\"p\",\"name\":", c->out);
    btr_json_string(c->out, m->text);
    fprintf(c->out, ",\"pid\":%" PRIu64 ",\"tid\":0,\"ts\":%.3f,\"args\":{\"source\":\"%s\"}}",
            t->pid, (double)m->time / 1000.0, m->source ? "tracy" : "user");
    return 0;
}

static const char *srcloc_name(const struct btc_trace *t, int16_t srcloc)
{
    const struct btc_read_srcloc *loc = btc_trace_srcloc(t, srcloc);
    return loc ? btr_demangle(btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function))
               : "?";
}

static int on_gpu_zone(void *ctx, const struct btc_trace *t, const struct btc_read_gpu_zone *z)
{
    struct chrome *c = ctx;
    if (z->gpu_start < 0 || z->gpu_end < z->gpu_start)
        return 0; /* the GPU never reported its times */
    sep(c);
    fputs("{\"ph\":\"X\",\"name\":", c->out);
    btr_json_string(c->out, srcloc_name(t, z->srcloc));
    fprintf(c->out,
            ",\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"dur\":%.3f"
            ",\"args\":{\"cpu_start_us\":%.3f,\"cpu_end_us\":%.3f}}",
            GPU_PID_BASE + z->ctx, z->timeline, (double)z->gpu_start / 1000.0,
            ((double)z->gpu_end - (double)z->gpu_start) / 1000.0, (double)z->cpu_start / 1000.0,
            (double)z->cpu_end / 1000.0);
    c->gpu_zones++;
    return 0;
}

static void put_frame(struct chrome *c, const struct btc_trace *t, uint32_t set, int64_t start,
                      int64_t end)
{
    sep(c);
    fprintf(c->out,
            "{\"ph\":\"X\",\"name\":\"frame\",\"pid\":%" PRIu64
            ",\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f}",
            t->pid, FRAME_TID_BASE + set, (double)start / 1000.0,
            ((double)end - (double)start) / 1000.0);
    c->frames++;
}

/* A continuous set's frame lasts until the next one starts. */
static int on_frame(void *ctx, const struct btc_trace *t, const struct btc_read_frame *f)
{
    struct chrome *c = ctx;
    if (f->end >= 0) {
        if (f->end >= f->start)
            put_frame(c, t, f->set, f->start, f->end);
        return 0;
    }
    while (c->last_start.len <= f->set) {
        int64_t *none = btc_vec_push(&c->last_start);
        if (!none)
            return BTC_ERR_NOMEM;
        *none = -1;
    }
    int64_t *prev = btc_vec_at(&c->last_start, f->set);
    if (*prev >= 0 && f->start >= *prev)
        put_frame(c, t, f->set, *prev, f->start);
    *prev = f->start;
    return 0;
}

static int on_point(void *ctx, const struct btc_trace *t, const struct btc_read_point *p)
{
    struct chrome *c = ctx;
    const struct btc_read_plot *pl = btc_vec_at(&t->plots, p->plot);
    const char *name = pl->name >= 0   ? btc_trace_string(t, pl->name)
                       : pl->type == 2 ? "CPU usage"
                                       : "plot";
    if (!isfinite(p->value))
        return 0;
    sep(c);
    fputs("{\"ph\":\"C\",\"name\":", c->out);
    btr_json_string(c->out, name);
    fprintf(c->out, ",\"pid\":%" PRIu64 ",\"ts\":%.3f,\"args\":{\"value\":%.17g}}", t->pid,
            (double)p->time / 1000.0, p->value);
    c->points++;
    return 0;
}

static int on_mem(void *ctx, const struct btc_trace *t, const struct btc_read_mem *m)
{
    (void)t;
    struct chrome *c = ctx;
    struct btr_mem_change ch = {.time = m->time_alloc, .size = m->size, .pool = m->pool};
    if (btr_memsort_add(&c->mem, &ch, c->err, sizeof c->err) < 0)
        return BTC_ERR_IO;
    if (m->time_free < 0)
        return 0;
    ch.time = m->time_free;
    ch.is_free = 1;
    return btr_memsort_add(&c->mem, &ch, c->err, sizeof c->err) < 0 ? BTC_ERR_IO : 0;
}

/* One point of a pool's usage counter track; the usage wraps as the
 * program's own counts would, rather than overflow. */
static int put_mem(void *ctx, const struct btr_mem_change *m)
{
    struct chrome *c = ctx;
    const struct btc_trace *t = c->trace;
    if (m->pool != c->pool) {
        c->pool = m->pool;
        c->usage = 0;
    }
    c->usage = (int64_t)(m->is_free ? (uint64_t)c->usage - m->size : (uint64_t)c->usage + m->size);
    const struct btc_read_pool *pool = btc_vec_at(&t->pools, m->pool);
    char name[600];
    snprintf(name, sizeof name, "Memory: %s",
             pool->name >= 0 ? btc_trace_string(t, pool->name) : "default");
    sep(c);
    fputs("{\"ph\":\"C\",\"name\":", c->out);
    btr_json_string(c->out, name);
    fprintf(c->out, ",\"pid\":%" PRIu64 ",\"ts\":%.3f,\"args\":{\"bytes\":%lld}}", t->pid,
            (double)m->time / 1000.0, (long long)c->usage);
    return 0;
}

static void track_names(struct chrome *c, const struct btc_trace *t)
{
    FILE *out = c->out;
    for (size_t i = 0; i < t->gpu_names.len; i++) {
        int64_t name = *(const int64_t *)btc_vec_at(&t->gpu_names, i);
        char label[600];
        snprintf(label, sizeof label, "GPU: %s", name >= 0 ? btc_trace_string(t, name) : "");
        sep(c);
        fprintf(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":",
                GPU_PID_BASE + (unsigned)i);
        btr_json_string(out, label);
        fputs("}}", out);
    }
    for (size_t i = 0; i < t->framesets.len; i++) {
        const struct btc_read_frameset *fs = btc_vec_at(&t->framesets, i);
        if (!fs->frames)
            continue;
        char label[600];
        snprintf(label, sizeof label, "Frames: %s",
                 fs->name >= 0 ? btc_trace_string(t, fs->name) : "default");
        sep(c);
        fprintf(out,
                "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu64
                ",\"tid\":%u,\"args\":{\"name\":",
                t->pid, FRAME_TID_BASE + (unsigned)i);
        btr_json_string(out, label);
        fputs("}}", out);
    }
}

int btr_chrome_export(const char *path, FILE *out, uint64_t *zones_written, char *err,
                      size_t errlen)
{
    struct chrome c = {.out = out, .first = 1, .pool = UINT32_MAX};
    btc_vec_init(&c.last_start, sizeof(int64_t));
    const char *tmp = getenv("TMPDIR");
    btr_memsort_init(&c.mem, btc_tracy_read_memory_limit() / 4, tmp && *tmp ? tmp : "/tmp");
    struct btc_trace t;
    /* The reader fills in the header (pid) before the first zone arrives. */
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
    const struct btc_read_more more = {
        .gpu_zone = on_gpu_zone, .frame = on_frame, .point = on_point, .mem = on_mem};
    int rc = btc_tracy_read_more(path, &t, on_zone, on_message, &more, &c, err, errlen);
    if (rc < 0 && c.err[0])
        snprintf(err, errlen, "%s", c.err);
    c.trace = &t;
    if (rc >= 0 && btr_memsort_each(&c.mem, put_mem, &c, err, errlen) < 0)
        rc = BTC_ERR_IO;
    if (rc >= 0)
        track_names(&c, &t);
    btc_vec_free(&c.last_start);
    btr_memsort_free(&c.mem);
    if (rc >= 0) {
        sep(&c);
        fprintf(out,
                "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu64 ",\"args\":{\"name\":",
                t.pid);
        btr_json_string(out, t.program);
        fputs("}}", out);
        for (size_t i = 0; i < t.threads.len; i++) {
            const struct btc_read_thread *th = btc_vec_at(&t.threads, i);
            sep(&c);
            fprintf(out,
                    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
                    ",\"args\":{\"name\":",
                    t.pid, th->id);
            btr_json_string(out, th->name >= 0 ? btc_trace_string(&t, th->name) : "");
            fputs("}}", out);
        }
    }
    fputs("\n]}\n", out);
    if (zones_written)
        *zones_written = c.zones;
    btc_trace_free(&t);
    return rc;
}
