/* SHA-256 for verifying what was moved: the board's busybox `sha256sum`
 * computes the same digest on the other side. libcrypto's implementation
 * (which libssh already links) uses the CPU's SHA instructions, so hashing
 * does not slow a 100 MB pull down. */
#ifndef BTD_SHA256_H
#define BTD_SHA256_H

#include <stddef.h>

struct btd_sha256 {
    void *ctx; /* EVP_MD_CTX */
};

void btd_sha256_init(struct btd_sha256 *s);
void btd_sha256_update(struct btd_sha256 *s, const void *data, size_t len);
/* Writes the digest as 64 lowercase hex digits and a NUL, and frees s. */
void btd_sha256_hex(struct btd_sha256 *s, char hex[65]);

/* Frees s without a digest (a transfer that failed). */
void btd_sha256_discard(struct btd_sha256 *s);

/* The digest and size of a whole file. Returns 0, or -1 when unreadable. */
int btd_sha256_file(const char *path, char hex[65], unsigned long long *size);

#endif
