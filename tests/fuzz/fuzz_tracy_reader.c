/* libFuzzer target for the .tracy reader: any bytes must end in success or
 * a clean error, never a crash, hang or unbounded allocation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "btc_tracy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_zone(void *ctx, const struct btc_trace *t, const struct btc_read_zone *z)
{
    (void)t;
    *(uint64_t *)ctx += (uint64_t)z->depth;
    return 0;
}

static int on_message(void *ctx, const struct btc_trace *t, const struct btc_read_message *m)
{
    (void)t;
    *(uint64_t *)ctx += strlen(m->text);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct btc_trace t;
    char err[512];
    uint64_t depth_sum = 0;
    btc_tracy_read_mem(data, size, &t, on_zone, on_message, &depth_sum, err, sizeof err);
    btc_trace_free(&t);
    return 0;
}
