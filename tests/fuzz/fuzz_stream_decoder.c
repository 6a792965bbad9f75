/* libFuzzer target for the stream decoder and event model: arbitrary bytes
 * as LZ4 frames (first byte odd) or as decompressed events (even), in the
 * protocol bits 1-3 of the first byte pick (0: 82, then 76 ... 64 and
 * 66-tt, converted as a client of it is), then the .tracy writer on whatever
 * was accepted, in the file version bits 4-7 pick, and the reader on its
 * output, which must load: the capture never writes a file it cannot read
 * back. Each input is decoded twice, with the zone fast path and without:
 * the status, the message and the file must be the same. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btc_decode.h"
#include "btc_file_versions.h"
#include "btc_model.h"
#include "btc_tracy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/bt-fuzz-decoder-XXXXXX";

static void remove_dir(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/out.tracy", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/plain.tracy", dir);
    unlink(path);
    rmdir(dir);
}

/* Decodes the input into a model (the zone fast path on or off), writes
 * it to path and reads it back; returns the decoder's status, its message
 * in err. */
static const char *const protocols[8] = {"82", "76", "74", "72", "69", "66", "64", "66-tt"};
static const char *const releases[16] = {"0.14.0", "0.13.1", "0.13.0", "0.12.2", "0.12.1", "0.12.0",
                                         "0.11.2", "0.11.1", "0.11.0", "0.10.0", "0.14.0", "0.14.0",
                                         "0.14.0", "0.14.0", "0.14.0", "0.14.0"};

static int decode_and_write(const uint8_t *data, size_t size, int frames, int fast,
                            const char *protocol, const char *release, const char *path, char *err,
                            size_t errlen)
{
    /* code transfer on and an x86-64 client: symbol code the input sends
     * (after a frame asked for it) goes through the instruction decoder */
    struct btc_welcome w = {.timer_mul = 1.0,
                            .init_begin = 0,
                            .init_end = 10,
                            .exec_time = 1,
                            .flags = BT_WELCOME_FLAG_CODE_TRANSFER,
                            .cpu_arch = BT_CPU_ARCH_X64};
    snprintf(w.program, sizeof w.program, "fuzz");
    struct btc_decoder d;
    struct btc_model m;
    char werr[512];
    if (btc_decoder_init(&d, &w) < 0 ||
        btc_decoder_set_protocol(&d, bt_proto_by_name(protocol)) < 0)
        abort();
    if (fast)
        d.zones = btc_model_zone_fast(&m);
    if (btc_model_init(&m, &w, dir, werr, sizeof werr) < 0)
        abort();
    err[0] = 0;
    int rc = 0;
    if (frames) {
        while (size >= 4 && rc >= 0) {
            uint32_t n = bt_wire_get_u32(data);
            if (n > size - 4)
                n = (uint32_t)(size - 4);
            rc = btc_decoder_frame(&d, data + 4, n, btc_model_event, &m, err, errlen);
            data += 4 + n;
            size -= 4 + n;
        }
    } else if (size) {
        size_t n = size > BT_WIRE_FRAME_SIZE ? BT_WIRE_FRAME_SIZE : size;
        rc = btc_decoder_inflated_frame(&d, data, n, n, btc_model_event, &m, err, errlen);
    }
    if (btc_model_finish(&m) < 0 ||
        btc_tracy_write(&m, path, btc_file_release_named(release)->version, NULL, werr,
                        sizeof werr) < 0)
        abort();
    struct btc_trace t;
    if (btc_tracy_read(path, &t, NULL, NULL, werr, sizeof werr) < 0) {
        fprintf(stderr, "written file does not read back: %s\n", werr);
        abort();
    }
    if (t.zones != m.zone_count) {
        fprintf(stderr, "zones: %llu in the file, %llu captured\n", (unsigned long long)t.zones,
                (unsigned long long)m.zone_count);
        abort();
    }
    btc_trace_free(&t);
    btc_model_free(&m);
    btc_decoder_free(&d);
    return rc;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*len + 1);
    if (!b || fread(b, 1, *len, f) != *len)
        abort();
    fclose(f);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* Made once per process (a flag: the random name may end in 'X'). */
    static int have_dir;
    if (!have_dir) {
        if (!mkdtemp(dir))
            abort();
        atexit(remove_dir);
        have_dir = 1;
    }
    int frames = data[0] & 1;
    const char *protocol = protocols[(data[0] >> 1) & 7];
    const char *release = releases[data[0] >> 4];
    data++;
    size--;
    /* The zone fast path must change nothing: the same status, message
     * and file as the event callback alone. */
    char path[128], plain[128], err[512], plain_err[512];
    snprintf(path, sizeof path, "%s/out.tracy", dir);
    snprintf(plain, sizeof plain, "%s/plain.tracy", dir);
    int rc = decode_and_write(data, size, frames, 1, protocol, release, path, err, sizeof err);
    int plain_rc = decode_and_write(data, size, frames, 0, protocol, release, plain, plain_err,
                                    sizeof plain_err);
    size_t n, plain_n;
    uint8_t *a = slurp(path, &n), *b = slurp(plain, &plain_n);
    if (rc != plain_rc || strcmp(err, plain_err) != 0 || n != plain_n || memcmp(a, b, n) != 0) {
        fprintf(stderr, "zone fast path: status %d (%s), without it %d (%s); files %s\n", rc, err,
                plain_rc, plain_err, n == plain_n && !memcmp(a, b, n) ? "equal" : "differ");
        abort();
    }
    free(a);
    free(b);
    unlink(path);
    unlink(plain);
    return 0;
}
