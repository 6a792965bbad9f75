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

int btd_sha256_file(const char *path, char hex[65], unsigned long long *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    struct btd_sha256 s;
    btd_sha256_init(&s);
    static unsigned char buf[1 << 16];
    size_t n;
    unsigned long long total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        btd_sha256_update(&s, buf, n);
        total += n;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        btd_sha256_discard(&s);
        return -1;
    }
    btd_sha256_hex(&s, hex);
    if (size)
        *size = total;
    return 0;
}
