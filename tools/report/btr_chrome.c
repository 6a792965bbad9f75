/* Chrome trace-event JSON export: every ended zone becomes a complete ("X")
 * event in microseconds, messages instant events, threads and the process
 * get name metadata; the file streams out zone by zone, so traces of any
 * size convert. */
#include <inttypes.h>
#include <string.h>

#include "btr_report.h"

struct chrome {
    FILE *out;
    uint64_t zones;
    int first;
};

/* Length of the well-formed UTF-8 sequence at p (1-4), 0 if it is not one. */
static int utf8_length(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xC2 && c <= 0xDF   ? 2
            : c >= 0xE0 && c <= 0xEF ? 3
            : c >= 0xF0 && c <= 0xF4 ? 4
                                     : 0;
    if (!n)
        return 0;
    /* The second byte's range excludes overlong forms, surrogates and
     * code points past U+10FFFF. */
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Names and texts come from the traced program as bytes: a byte that is not
 * part of well-formed UTF-8 becomes U+FFFD, so the file stays valid JSON. */
void btr_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_length(p);
        if (n == 0) {
            fputs("\\ufffd", out);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p++);
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p++);
        } else {
            fwrite(p, 1, (size_t)n, out);
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
    const char *name = loc ? btc_trace_string(t, loc->name >= 0 ? loc->name : loc->function) : "?";
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

int btr_chrome_export(const char *path, FILE *out, uint64_t *zones_written, char *err,
                      size_t errlen)
{
    struct chrome c = {.out = out, .first = 1};
    struct btc_trace t;
    /* The reader fills in the header (pid) before the first zone arrives. */
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
    int rc = btc_tracy_read_messages(path, &t, on_zone, on_message, &c, err, errlen);
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
