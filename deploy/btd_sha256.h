/* SHA-256 for verifying what was moved: the board's busybox `sha256sum`
 * computes the same digest on the other side. */
#ifndef BTD_SHA256_H
#define BTD_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct btd_sha256 {
    uint32_t h[8];
    uint64_t total;
    unsigned char block[64];
    size_t used;
};

void btd_sha256_init(struct btd_sha256 *s);
void btd_sha256_update(struct btd_sha256 *s, const void *data, size_t len);
/* Writes the digest as 64 lowercase hex digits and a NUL. */
void btd_sha256_hex(struct btd_sha256 *s, char hex[65]);

#endif
