/* boardtrace-report's Perfetto export, read back by a protobuf reader of its
 * own (the fields of Perfetto's trace .proto files the export uses): every
 * packet is well formed, every slice begins and ends on a described track in
 * nesting order, every interned name is defined before it is used, and the
 * counts are the recording's (upstream's loader read 5,127 CPU zones, 300
 * frames, 421 plot points and 57 messages). The file is far smaller than the
 * JSON export and within 3 times the .tracy file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

extern char **environ;

static const char *data_dir, *report_bin;
static char tmpdir[] = "/tmp/bt-perfetto-XXXXXX";

static int run_report(const char *const *args)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)report_bin;
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ), 0);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* ---- a protobuf reader: one field at a time ---------------------------- */

struct pb {
    const uint8_t *p, *end;
};

struct field {
    unsigned num, wire;
    uint64_t v;    /* varint, fixed64 */
    struct pb sub; /* length-delimited */
};

static uint64_t varint(struct pb *b)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        assert_true(b->p < b->end);
        uint8_t c = *b->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (c < 0x80)
            return v;
    }
    fail_msg("varint longer than 10 bytes");
    return 0;
}

/* The next field of b, or 0 at its end. */
static int next(struct pb *b, struct field *f)
{
    if (b->p == b->end)
        return 0;
    uint64_t k = varint(b);
    f->num = (unsigned)(k >> 3);
    f->wire = (unsigned)(k & 7);
    switch (f->wire) {
    case 0:
        f->v = varint(b);
        break;
    case 1:
        assert_true(b->end - b->p >= 8);
        f->v = 0;
        for (int i = 0; i < 8; i++)
            f->v |= (uint64_t)b->p[i] << (8 * i);
        b->p += 8;
        break;
    case 2: {
        uint64_t n = varint(b);
        assert_true(n <= (uint64_t)(b->end - b->p));
        f->sub = (struct pb){b->p, b->p + n};
        b->p += n;
        break;
    }
    default:
        fail_msg("wire type %u is none the export writes", f->wire);
    }
    return 1;
}

/* ---- what the packets say --------------------------------------------- */

#define MAX_TRACKS 64
#define MAX_NAMES  65600

struct track {
    uint64_t uuid;
    int described, counter, depth;
    uint64_t begins, ends, instants, counts;
    uint64_t last_time;
};

struct seen {
    struct track tracks[MAX_TRACKS];
    int ntracks;
    unsigned char named[MAX_NAMES];
    uint64_t packets, compressed;
};

static struct track *track(struct seen *s, uint64_t uuid)
{
    for (int i = 0; i < s->ntracks; i++)
        if (s->tracks[i].uuid == uuid)
            return &s->tracks[i];
    assert_true(s->ntracks < MAX_TRACKS);
    s->tracks[s->ntracks] = (struct track){.uuid = uuid};
    return &s->tracks[s->ntracks++];
}

static void descriptor(struct seen *s, struct pb b)
{
    struct field f;
    uint64_t uuid = 0;
    int counter = 0, has_uuid = 0;
    while (next(&b, &f)) {
        if (f.num == 1) {
            uuid = f.v;
            has_uuid = 1;
        }
        counter |= f.num == 8;
    }
    assert_true(has_uuid);
    struct track *t = track(s, uuid);
    assert_false(t->described); /* once */
    t->described = 1;
    t->counter = counter;
}

static void interned(struct seen *s, struct pb b)
{
    struct field f, g;
    while (next(&b, &f)) {
        assert_int_equal(f.num, 2); /* event_names */
        uint64_t iid = 0;
        int has_name = 0;
        while (next(&f.sub, &g)) {
            if (g.num == 1)
                iid = g.v;
            has_name |= g.num == 2 && g.wire == 2;
        }
        assert_true(iid > 0 && iid < MAX_NAMES && has_name);
        assert_false(s->named[iid]);
        s->named[iid] = 1;
    }
}

static void event(struct seen *s, struct pb b, uint64_t time)
{
    struct field f;
    uint64_t type = 0, uuid = 0, iid = 0;
    int has_name = 0, has_value = 0;
    while (next(&b, &f)) {
        if (f.num == 9)
            type = f.v;
        else if (f.num == 11)
            uuid = f.v;
        else if (f.num == 10)
            iid = f.v;
        else if (f.num == 23)
            has_name = 1;
        else if (f.num == 44)
            has_value = f.wire == 1;
    }
    struct track *t = track(s, uuid);
    if (iid) {
        assert_true(iid < MAX_NAMES);
        assert_true(s->named[iid]); /* defined by an earlier packet */
    }
    switch (type) {
    case 1: /* slice begin: named; in time order on its track */
        assert_true(iid || has_name);
        assert_true(time >= t->last_time);
        t->depth++;
        t->begins++;
        break;
    case 2: /* slice end: of an open slice, not before its begin */
        assert_true(t->depth > 0);
        assert_true(time >= t->last_time);
        t->depth--;
        t->ends++;
        break;
    case 3:
        assert_true(has_name);
        t->instants++;
        break;
    case 4:
        assert_true(has_value);
        t->counts++;
        break;
    default:
        fail_msg("track event type %llu", (unsigned long long)type);
    }
    if (type == 1 || type == 2)
        t->last_time = time;
}

static void packet(struct seen *s, struct pb b)
{
    struct field f;
    uint64_t time = 0;
    int sequence = 0;
    struct pb te = {0}, td = {0}, id = {0};
    while (next(&b, &f)) {
        switch (f.num) {
        case 8:
            time = f.v;
            break;
        case 10:
            sequence = (int)f.v;
            break;
        case 11:
            te = f.sub;
            break;
        case 12:
            id = f.sub;
            break;
        case 60:
            td = f.sub;
            break;
        }
    }
    assert_int_equal(sequence, 1);
    s->packets++;
    if (id.p)
        interned(s, id);
    if (td.p)
        descriptor(s, td);
    if (te.p)
        event(s, te, time);
}

/* The file: Trace.packet fields, each holding compressed_packets, which
 * inflate to more Trace.packet fields. */
static void read_trace(struct seen *s, const uint8_t *p, size_t n)
{
    struct pb file = {p, p + n};
    struct field f, g;
    while (next(&file, &f)) {
        assert_int_equal(f.num, 1);
        assert_int_equal(f.wire, 2);
        assert_true(next(&f.sub, &g));
        assert_int_equal(g.num, 50);
        assert_int_equal(g.wire, 2);
        assert_int_equal(f.sub.p, f.sub.end); /* nothing else beside it */
        uLongf cap = 64u << 20;
        uint8_t *raw = malloc(cap);
        assert_non_null(raw);
        assert_int_equal(uncompress(raw, &cap, g.sub.p, (uLong)(g.sub.end - g.sub.p)), Z_OK);
        s->compressed++;
        struct pb inner = {raw, raw + cap};
        while (next(&inner, &g)) {
            assert_int_equal(g.num, 1);
            packet(s, g.sub);
        }
        free(raw);
    }
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void the_full_recording_reads_back_slice_by_slice(void **state)
{
    (void)state;
    char src[4096], out[4200], json[4200];
    snprintf(src, sizeof src, "%s/../tracy-0.14.0-full/session.tracy", data_dir);
    snprintf(out, sizeof out, "%s/full.perfetto-trace", tmpdir);
    snprintf(json, sizeof json, "%s/full.json", tmpdir);
    const char *args[] = {"chrome", "-o", out, src, NULL};
    assert_int_equal(run_report(args), 0);
    size_t n;
    uint8_t *p = slurp(out, &n);
    struct seen *s = calloc(1, sizeof *s);
    assert_non_null(s);
    read_trace(s, p, n);
    free(p);
    assert_true(s->compressed >= 1);
    uint64_t zones = 0, frames = 0, points = 0, messages = 0, threads = 0;
    for (int i = 0; i < s->ntracks; i++) {
        const struct track *t = &s->tracks[i];
        assert_true(t->described);
        assert_int_equal(t->depth, 0);
        assert_int_equal(t->begins, t->ends);
        if (t->uuid >= 0x300000000ull) {
            zones += t->begins;
            threads++;
        } else if (t->uuid >= 0x200000000ull) {
            assert_true(t->counter);
            points += t->counts;
        } else if (t->uuid >= 0x100000000ull) {
            frames += t->begins;
        }
        messages += t->instants;
    }
    assert_int_equal(zones, 5127);
    assert_int_equal(frames, 300);
    assert_int_equal(points, 421);
    assert_int_equal(messages, 57);
    assert_true(threads >= 3);
    free(s);

    /* Against the JSON export and the trace itself. */
    const char *as_json[] = {"chrome", "-o", json, src, NULL};
    assert_int_equal(run_report(as_json), 0);
    assert_true(file_size(out) * 10 < file_size(json));
    assert_true(file_size(out) <= 3 * file_size(src));
    /* --format overrides the name. */
    const char *forced[] = {"chrome", "--format", "perfetto", "-o", json, src, NULL};
    assert_int_equal(run_report(forced), 0);
    p = slurp(json, &n);
    assert_int_equal(p[0], 0x0a); /* Trace.packet, not '{' */
    free(p);
    const char *bad[] = {"chrome", "--format", "xml", src, NULL};
    assert_int_equal(run_report(bad), 1);
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s DATA_DIR REPORT\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    report_bin = argv[2];
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_full_recording_reads_back_slice_by_slice),
    };
    return cmocka_run_group_tests(tests, NULL, remove_tmpdir);
}
