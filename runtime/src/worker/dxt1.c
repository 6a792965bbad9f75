/* DXT1 compression of frame images (dxt1.h), done by the worker: a simple
 * bounding-box coder per 4x4 block. */
#include "dxt1.h"

#include <string.h>

static uint16_t rgb565(const int c[3])
{
    return (uint16_t)(((c[0] >> 3) << 11) | ((c[1] >> 2) << 5) | (c[2] >> 3));
}

static void rgb_of_565(uint16_t v, int c[3])
{
    int r = (v >> 11) & 31, g = (v >> 5) & 63, b = v & 31;
    c[0] = (r << 3) | (r >> 2);
    c[1] = (g << 2) | (g >> 4);
    c[2] = (b << 3) | (b >> 2);
}

/* One 4x4 block: the corners of the block's colour box as end points, each
 * pixel indexed to the nearest of the four colours they span. */
static void block_compress(const uint8_t *rgba, size_t stride, uint8_t out[8])
{
    int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++)
            for (int k = 0; k < 3; k++) {
                int v = rgba[y * stride + x * 4 + (size_t)k];
                if (v < lo[k])
                    lo[k] = v;
                if (v > hi[k])
                    hi[k] = v;
            }
    uint16_t c0 = rgb565(hi), c1 = rgb565(lo);
    uint32_t indices = 0;
    if (c0 < c1) {
        uint16_t t = c0;
        c0 = c1;
        c1 = t;
    }
    if (c0 != c1) {
        int p[4][3];
        rgb_of_565(c0, p[0]);
        rgb_of_565(c1, p[1]);
        for (int k = 0; k < 3; k++) {
            p[2][k] = (2 * p[0][k] + p[1][k]) / 3;
            p[3][k] = (p[0][k] + 2 * p[1][k]) / 3;
        }
        for (int i = 0; i < 16; i++) {
            const uint8_t *px = rgba + (size_t)(i / 4) * stride + (size_t)(i % 4) * 4;
            int best = 0, best_d = 1 << 30;
            for (int j = 0; j < 4; j++) {
                int d = 0;
                for (int k = 0; k < 3; k++)
                    d += (px[k] - p[j][k]) * (px[k] - p[j][k]);
                if (d < best_d) {
                    best_d = d;
                    best = j;
                }
            }
            indices |= (uint32_t)best << (2 * i);
        }
    }
    out[0] = (uint8_t)c0;
    out[1] = (uint8_t)(c0 >> 8);
    out[2] = (uint8_t)c1;
    out[3] = (uint8_t)(c1 >> 8);
    for (int i = 0; i < 4; i++)
        out[4 + i] = (uint8_t)(indices >> (8 * i));
}

void bt_dxt1_compress(const uint8_t *rgba, uint16_t w, uint16_t h, uint8_t *out)
{
    size_t stride = (size_t)w * 4;
    for (size_t y = 0; y < h; y += 4)
        for (size_t x = 0; x < w; x += 4) {
            block_compress(rgba + y * stride + x * 4, stride, out);
            out += 8;
        }
}
