/* Code transfer in the runtime (runtime/src/symbols/code.c): the symbol code and
 * source files a capture may ask for, and everything it may not have. The
 * answers go through the real encoder and are decoded by the test server's
 * decoder. This program is built with -g, so its own frames name its own
 * source file through the DWARF line table. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boardtrace/wire.h"
#include "bt_test_server.h"
#include "symbols/callstack.h"
#include "symbols/code.h"
#include "encode/encoder.h"

/* The answers of one exchange, decoded. */
struct answer {
    uint8_t type; /* the last counted reply */
    uint64_t key;
    uint8_t *bytes;
    size_t len;
    int replies;
    char frame_file[1024];
    uint64_t sym_addr;
    uint32_t sym_len;
    int strings;
};

static void on_event(void *ctx, const uint8_t *ev, size_t size, int64_t time)
{
    (void)time;
    struct answer *a = ctx;
    switch (ev[0]) {
    case BT_EV_SYMBOL_CODE:
    case BT_EV_SOURCE_CODE:
        a->type = ev[0];
        a->key = bt_wire_get_u64(ev + 1);
        a->len = bt_wire_get_u32(ev + 9);
        free(a->bytes);
        a->bytes = malloc(a->len + 1);
        memcpy(a->bytes, ev + 13, a->len);
        a->replies++;
        break;
    case BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE:
    case BT_EV_ACK_SERVER_QUERY_NOOP:
        a->type = ev[0];
        a->replies++;
        break;
    case BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE:
        a->type = ev[0];
        a->key = bt_wire_get_u32(ev + 1);
        a->replies++;
        break;
    case BT_EV_CALLSTACK_FRAME:
        a->sym_addr = bt_wire_get_u64(ev + 5);
        a->sym_len = bt_wire_get_u32(ev + 13);
        break;
    default:
        /* the frame answer's strings: image, function, file */
        if (ev[0] >= BT_EV_SINGLE_STRING_DATA && ev[0] <= BT_EV_SECOND_STRING_DATA8) {
            size_t head =
                ev[0] == BT_EV_SINGLE_STRING_DATA8 || ev[0] == BT_EV_SECOND_STRING_DATA8 ? 2 : 3;
            if (++a->strings == 3)
                snprintf(a->frame_file, sizeof(a->frame_file), "%.*s", (int)(size - head),
                         (const char *)ev + head);
        }
        break;
    }
}

static struct bt_encoder enc;
static struct bt_ts_sink out;
static struct bt_code code;
/* The frames form one LZ4 stream: one decoder for the whole exchange. */
static struct bt_ts_decoder dec;

static void start(int enabled, uint64_t exec_time, struct answer *a)
{
    memset(&out, 0, sizeof(out));
    assert_int_equal(bt_encoder_init(&enc, bt_ts_sink_write, &out), 0);
    assert_int_equal(bt_ts_decoder_init(&dec, on_event, a), 0);
    bt_code_init(&code, enabled, exec_time, bt_callstack_debug_names_file);
}

/* Flushes what was encoded since the last call and decodes it. */
static void collect(struct answer *a)
{
    (void)a; /* the decoder reports to the answer given to start() */
    bt_encoder_flush(&enc);
    for (size_t off = 0; off < out.len;) {
        uint32_t n = bt_wire_get_u32(out.data + off);
        if (bt_ts_decoder_frame(&dec, out.data + off + 4, n) != 0)
            fail_msg("%s", dec.error);
        off += 4 + n;
    }
    out.len = 0;
}

static void finish(struct answer *a)
{
    bt_ts_decoder_free(&dec);
    bt_encoder_free(&enc);
    bt_code_free(&code);
    free(out.data);
    free(a->bytes);
}

static __attribute__((noipa)) int capture_here(uint64_t *frames)
{
    int n = bt_callstack_capture(frames, 4, 0);
    __asm__ volatile("" ::: "memory"); /* a call, not a tail jump: keep this frame */
    return n;
}

/* Answers a CallstackFrame query for a frame inside capture_here; file
 * (1024 bytes) receives the frame's source file unless NULL. */
static void answer_own_frame(struct answer *a, char *file)
{
    uint64_t frames[4];
    assert_true(capture_here(frames) >= 1);
    bt_callstack_answer_frame(&enc, &code, frames[0]);
    collect(a);
    assert_int_equal(a->sym_addr, (uint64_t)(uintptr_t)capture_here);
    assert_true(a->sym_len > 0);
    assert_non_null(strstr(a->frame_file, "test_runtime_code.c"));
    if (file)
        snprintf(file, 1024, "%s", a->frame_file);
}

/* An executable time after every file here (the source is older). */
static uint64_t later(void)
{
    return (uint64_t)time(NULL) + 3600;
}

/* A session with code transfer on (the executable built at later()) whose
 * first answer named a frame of this program. */
static void start_with_own_frame(struct answer *a, char *file)
{
    start(1, later(), a);
    answer_own_frame(a, file);
}

/* Asks for the code of a symbol and expects it refused. */
static void expect_no_symbol_code(struct answer *a, uint64_t addr, uint32_t size)
{
    bt_code_symbol_code(&code, &enc, addr, size);
    collect(a);
    assert_int_equal(a->type, BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE);
}

/* Sends name as the capture does: DataTransfer, then 12 bytes a part. */
static void transfer(const char *name, struct answer *a)
{
    size_t n = strlen(name) + 1;
    bt_code_data_transfer(&code, &enc, n);
    for (size_t off = 0; off < n; off += 12) {
        uint8_t part[12] = {0};
        memcpy(part, name + off, n - off < 12 ? n - off : 12);
        bt_code_data_part(&code, &enc, bt_wire_get_u64(part), bt_wire_get_u32(part + 8));
    }
    a->replies = 0;
    collect(a);
    assert_int_equal(a->replies, 1 + (int)((n + 11) / 12));
    assert_int_equal(a->type, BT_EV_ACK_SERVER_QUERY_NOOP);
}

static void source(const char *name, uint32_t id, struct answer *a)
{
    transfer(name, a);
    bt_code_source_code(&code, &enc, id);
    a->replies = 0;
    collect(a);
    assert_int_equal(a->replies, 1);
}

static char *file_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*len + 1);
    assert_int_equal(fread(buf, 1, *len, f), *len);
    fclose(f);
    return buf;
}

static void an_announced_symbols_code_is_sent_as_it_is_in_memory(void **state)
{
    (void)state;
    struct answer a = {0};
    start_with_own_frame(&a, NULL);
    bt_code_symbol_code(&code, &enc, a.sym_addr, a.sym_len);
    collect(&a);
    assert_int_equal(a.type, BT_EV_SYMBOL_CODE);
    assert_int_equal(a.key, a.sym_addr);
    assert_int_equal(a.len, a.sym_len);
    assert_memory_equal(a.bytes, (const void *)(uintptr_t)a.sym_addr, a.len);
    finish(&a);
}

static void code_never_announced_or_larger_than_announced_is_not_available(void **state)
{
    (void)state;
    struct answer a = {0};
    start_with_own_frame(&a, NULL);
    /* a function of this program, but no frame answer named it */
    expect_no_symbol_code(&a, (uint64_t)(uintptr_t)start, 16);
    /* the announced symbol, one byte more than announced */
    expect_no_symbol_code(&a, a.sym_addr, a.sym_len + 1);
    /* announced, but nothing is mapped there: refused, not a crash */
    bt_code_offer_symbol(&code, 4096, 64);
    expect_no_symbol_code(&a, 4096, 64);
    /* beyond upstream's limit */
    bt_code_offer_symbol(&code, a.sym_addr, BT_CODE_SYMBOL_MAX + 1);
    expect_no_symbol_code(&a, a.sym_addr, BT_CODE_SYMBOL_MAX + 1);
    finish(&a);
}

static void a_source_file_a_frame_named_is_sent_whole(void **state)
{
    (void)state;
    struct answer a = {0};
    char file[1024];
    start_with_own_frame(&a, file);
    source(file, 7, &a);
    assert_int_equal(a.type, BT_EV_SOURCE_CODE);
    assert_int_equal(a.key, 7);
    size_t len;
    char *want = file_bytes(file, &len);
    assert_int_equal(a.len, len);
    assert_memory_equal(a.bytes, want, len);
    free(want);
    /* the same after an image name transfer ("image, then file") */
    transfer("/proc/self/exe", &a);
    source(file, 8, &a);
    assert_int_equal(a.type, BT_EV_SOURCE_CODE);
    assert_int_equal(a.key, 8);
    finish(&a);
}

static void a_file_the_debug_information_names_is_sent_unannounced(void **state)
{
    (void)state;
    struct answer a = {0};
    char file[1024];
    start_with_own_frame(&a, file);
    finish(&a);
    memset(&a, 0, sizeof(a));
    start(1, later(), &a); /* a new session: nothing announced */
    assert_true(bt_callstack_debug_names_file(file));
    source(file, 3, &a);
    assert_int_equal(a.type, BT_EV_SOURCE_CODE);
    finish(&a);
}

static void files_outside_the_rules_are_not_available(void **state)
{
    (void)state;
    struct answer a = {0};
    char file[1024];
    start_with_own_frame(&a, file);
    /* a readable file that no answer and no line table named */
    assert_false(bt_callstack_debug_names_file("/etc/passwd"));
    source("/etc/passwd", 1, &a);
    assert_int_equal(a.type, BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE);
    assert_int_equal(a.key, 1);
    /* a name longer than any path: refused whole */
    char *huge = malloc(BT_CODE_NAME_MAX + 2);
    memset(huge, 'a', BT_CODE_NAME_MAX + 1);
    huge[BT_CODE_NAME_MAX + 1] = 0;
    source(huge, 2, &a);
    free(huge);
    assert_int_equal(a.type, BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE);
    /* a SourceCode query with no name transferred */
    bt_code_source_code(&code, &enc, 9);
    collect(&a);
    assert_int_equal(a.type, BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE);
    assert_int_equal(a.key, 9);
    finish(&a);

    /* the file changed after the executable was built (upstream's rule) */
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    memset(&a, 0, sizeof(a));
    start(1, (uint64_t)st.st_mtime, &a);
    bt_code_offer_file(&code, file);
    source(file, 4, &a);
    assert_int_equal(a.type, BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE);
    finish(&a);

    /* code transfer off: nothing at all */
    memset(&a, 0, sizeof(a));
    start(0, later(), &a);
    answer_own_frame(&a, NULL);
    source(file, 5, &a);
    assert_int_equal(a.type, BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE);
    expect_no_symbol_code(&a, a.sym_addr, a.sym_len);
    finish(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_announced_symbols_code_is_sent_as_it_is_in_memory),
        cmocka_unit_test(code_never_announced_or_larger_than_announced_is_not_available),
        cmocka_unit_test(a_source_file_a_frame_named_is_sent_whole),
        cmocka_unit_test(a_file_the_debug_information_names_is_sent_unannounced),
        cmocka_unit_test(files_outside_the_rules_are_not_available),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
