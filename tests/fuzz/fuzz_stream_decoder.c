/* libFuzzer target for the stream decoder and event model: arbitrary bytes
 * as LZ4 frames (first byte odd) or as decompressed events (even), then the
 * .tracy writer on whatever was accepted and the reader on its output, which
 * must load: the capture never writes a file it cannot read back. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btc_decode.h"
#include "btc_model.h"
#include "btc_tracy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/bt-fuzz-decoder-XXXXXX";

static void remove_dir(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/out.tracy", dir);
    unlink(path);
    rmdir(dir);
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
    }
    have_dir = 1;
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
    char err[512];
    if (btc_decoder_init(&d, &w) < 0)
        abort();
    if (btc_model_init(&m, &w, dir, err, sizeof err) < 0)
        abort();
    int frames = data[0] & 1;
    data++;
    size--;
    int rc = 0;
    if (frames) {
        while (size >= 4 && rc >= 0) {
            uint32_t n = bt_wire_get_u32(data);
            if (n > size - 4)
                n = (uint32_t)(size - 4);
            rc = btc_decoder_frame(&d, data + 4, n, btc_model_event, &m, err, sizeof err);
            data += 4 + n;
            size -= 4 + n;
        }
    } else if (size) {
        rc = btc_decoder_events(&d, data, size > BT_WIRE_FRAME_SIZE ? BT_WIRE_FRAME_SIZE : size,
                                btc_model_event, &m, err, sizeof err);
    }
    char path[128];
    snprintf(path, sizeof path, "%s/out.tracy", dir);
    if (btc_model_finish(&m) < 0 ||
        btc_tracy_write(&m, path, BTC_FILE_VERSION_0_14_0, NULL, err, sizeof err) < 0)
        abort();
    struct btc_trace t;
    if (btc_tracy_read(path, &t, NULL, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "written file does not read back: %s\n", err);
        abort();
    }
    if (t.zones != m.zone_count) {
        fprintf(stderr, "zones: %llu in the file, %llu captured\n", (unsigned long long)t.zones,
                (unsigned long long)m.zone_count);
        abort();
    }
    btc_trace_free(&t);
    unlink(path);
    btc_model_free(&m);
    btc_decoder_free(&d);
    return 0;
}
