/* SHA-256 through libcrypto's EVP interface (see btd_sha256.h). */
#include "btd_sha256.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

void btd_sha256_init(struct btd_sha256 *s)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        fprintf(stderr, "boardtrace: error: libcrypto cannot start a SHA-256 digest\n");
        exit(1);
    }
    s->ctx = ctx;
}

void btd_sha256_update(struct btd_sha256 *s, const void *data, size_t len)
{
    EVP_DigestUpdate(s->ctx, data, len);
}

void btd_sha256_hex(struct btd_sha256 *s, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(s->ctx, md, &n);
    EVP_MD_CTX_free(s->ctx);
    s->ctx = NULL;
    for (unsigned int i = 0; i < n && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

void btd_sha256_discard(struct btd_sha256 *s)
{
    EVP_MD_CTX_free(s->ctx);
    s->ctx = NULL;
}
