/* Containers of the capture core: growable arrays, a u64 hash map, and the
 * string table that deduplicates every name and text of a capture. */
#define _GNU_SOURCE
#include "btc_util.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *btc_strerror(int status)
{
    switch (status) {
    case BTC_OK:
        return "success";
    case BTC_ERR_NOMEM:
        return "out of memory";
    case BTC_ERR_IO:
        return "input/output error";
    case BTC_ERR_PROTOCOL:
        return "protocol error";
    case BTC_ERR_FORMAT:
        return "malformed trace file";
    case BTC_ERR_NET:
        return "network error";
    case BTC_ERR_TIMEOUT:
        return "timed out";
    case BTC_ERR_HANDSHAKE:
        return "handshake refused";
    case BTC_ERR_STOPPED:
        return "stopped";
    default:
        return "unknown error";
    }
}

void btc_vec_init(struct btc_vec *v, size_t item_size)
{
    v->data = NULL;
    v->len = v->cap = 0;
    v->item = item_size;
}

void btc_vec_free(struct btc_vec *v)
{
    free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

int btc_vec_reserve(struct btc_vec *v, size_t n)
{
    if (v->cap - v->len >= n)
        return BTC_OK;
    size_t cap = v->cap ? v->cap : 16;
    while (cap - v->len < n)
        cap *= 2;
    void *p = realloc(v->data, cap * v->item);
    if (!p)
        return BTC_ERR_NOMEM;
    v->data = p;
    v->cap = cap;
    return BTC_OK;
}

void *btc_vec_push(struct btc_vec *v)
{
    if (v->len == v->cap && btc_vec_reserve(v, 1) < 0)
        return NULL;
    void *it = (char *)v->data + v->len * v->item;
    memset(it, 0, v->item);
    v->len++;
    return it;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

uint64_t btc_hash_bytes(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return mix64(h);
}

void btc_map_init(struct btc_map *m)
{
    memset(m, 0, sizeof *m);
}

void btc_map_free(struct btc_map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static size_t map_slot(const struct btc_map *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)mix64(key) & mask;
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

uint64_t *btc_map_get(const struct btc_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = map_slot(m, key);
    return m->used[i] ? &m->vals[i] : NULL;
}

static int map_grow(struct btc_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct btc_map n = {calloc(cap, 8), calloc(cap, 8), calloc(cap, 1), 0, cap};
    if (!n.keys || !n.vals || !n.used) {
        btc_map_free(&n);
        return BTC_ERR_NOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->used[i]) {
            size_t j = map_slot(&n, m->keys[i]);
            n.used[j] = 1;
            n.keys[j] = m->keys[i];
            n.vals[j] = m->vals[i];
            n.len++;
        }
    }
    btc_map_free(m);
    *m = n;
    return BTC_OK;
}

int btc_map_put(struct btc_map *m, uint64_t key, uint64_t val)
{
    if ((m->len + 1) * 4 > m->cap * 3) {
        int rc = map_grow(m);
        if (rc < 0)
            return rc;
    }
    size_t i = map_slot(m, key);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->len++;
    }
    m->vals[i] = val;
    return BTC_OK;
}

int btc_map_remove(struct btc_map *m, uint64_t key)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1;
    size_t i = map_slot(m, key);
    if (!m->used[i])
        return 0;
    /* Backward-shift deletion keeps probe chains intact without tombstones. */
    m->used[i] = 0;
    m->len--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->used[j])
            break;
        size_t home = (size_t)mix64(m->keys[j]) & mask;
        int between = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (between)
            continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        m->used[i] = 1;
        m->used[j] = 0;
        i = j;
    }
    return 1;
}

void btc_map_clear(struct btc_map *m)
{
    if (m->cap)
        memset(m->used, 0, m->cap);
    m->len = 0;
}

void btc_tagmap_init(struct btc_tagmap *m)
{
    memset(m, 0, sizeof *m);
}

void btc_tagmap_free(struct btc_tagmap *m)
{
    free(m->keys);
    free(m->tags);
    memset(m, 0, sizeof *m);
}

static size_t tagmap_slot(const uint64_t *keys, const uint8_t *tags, size_t cap, uint64_t key)
{
    size_t mask = cap - 1, i = (size_t)mix64(key) & mask;
    while (tags[i] && keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

uint8_t btc_tagmap_get(const struct btc_tagmap *m, uint64_t key)
{
    return m->cap ? m->tags[tagmap_slot(m->keys, m->tags, m->cap, key)] : 0;
}

int btc_tagmap_put(struct btc_tagmap *m, uint64_t key, uint8_t tag)
{
    if ((m->len + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *keys = malloc(cap * sizeof *keys);
        uint8_t *tags = calloc(cap, 1);
        if (!keys || !tags) {
            free(keys);
            free(tags);
            return BTC_ERR_NOMEM;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->tags[i]) {
                size_t j = tagmap_slot(keys, tags, cap, m->keys[i]);
                keys[j] = m->keys[i];
                tags[j] = m->tags[i];
            }
        }
        free(m->keys);
        free(m->tags);
        m->keys = keys;
        m->tags = tags;
        m->cap = cap;
    }
    size_t i = tagmap_slot(m->keys, m->tags, m->cap, key);
    m->len += !m->tags[i];
    m->keys[i] = key;
    m->tags[i] = tag;
    return BTC_OK;
}

void btc_strtab_init(struct btc_strtab *t)
{
    btc_vec_init(&t->offs, sizeof(uint64_t));
    btc_vec_init(&t->lens, sizeof(uint32_t));
    t->bytes = NULL;
    t->bytes_len = t->bytes_cap = 0;
    t->slots = NULL;
    t->slots_cap = 0;
}

void btc_strtab_free(struct btc_strtab *t)
{
    btc_vec_free(&t->offs);
    btc_vec_free(&t->lens);
    free(t->bytes);
    free(t->slots);
    t->bytes = NULL;
    t->slots = NULL;
    t->slots_cap = 0;
}

uint64_t btc_strtab_memory(const struct btc_strtab *t)
{
    return t->bytes_cap + (uint64_t)t->offs.cap * t->offs.item +
           (uint64_t)t->lens.cap * t->lens.item + (uint64_t)t->slots_cap * 8;
}

const char *btc_strtab_get(const struct btc_strtab *t, uint32_t idx, uint32_t *len)
{
    if (idx >= t->lens.len)
        return NULL;
    if (len)
        *len = ((uint32_t *)t->lens.data)[idx];
    return t->bytes + ((uint64_t *)t->offs.data)[idx];
}

/* Doubles the index (kept at most 3/4 full); the slots carry their hash. */
static int strtab_grow(struct btc_strtab *t)
{
    size_t cap = t->slots_cap ? t->slots_cap * 2 : 64;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return BTC_ERR_NOMEM;
    for (size_t i = 0; i < t->slots_cap; i++) {
        uint64_t v = t->slots[i];
        if (!v)
            continue;
        size_t j = (size_t)(v >> 32) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = v;
    }
    free(t->slots);
    t->slots = slots;
    t->slots_cap = cap;
    return BTC_OK;
}

int64_t btc_strtab_intern(struct btc_strtab *t, const char *s, size_t len)
{
    if (len > UINT32_MAX || t->lens.len >= UINT32_MAX - 1)
        return BTC_ERR_NOMEM;
    if ((t->lens.len + 1) * 4 > t->slots_cap * 3 && strtab_grow(t) < 0)
        return BTC_ERR_NOMEM;
    uint32_t h = (uint32_t)btc_hash_bytes(s, len);
    size_t mask = t->slots_cap - 1, i = h & mask;
    for (; t->slots[i]; i = (i + 1) & mask) {
        if ((uint32_t)(t->slots[i] >> 32) != h)
            continue;
        uint32_t idx = (uint32_t)t->slots[i] - 1, l = 0;
        const char *o = btc_strtab_get(t, idx, &l);
        if (l == len && memcmp(o, s, len) == 0)
            return idx;
    }
    if (t->bytes_len + len + 1 > t->bytes_cap) {
        size_t cap = t->bytes_cap ? t->bytes_cap : 4096;
        while (cap < t->bytes_len + len + 1)
            cap *= 2;
        char *b = realloc(t->bytes, cap);
        if (!b)
            return BTC_ERR_NOMEM;
        t->bytes = b;
        t->bytes_cap = cap;
    }
    uint64_t *off = btc_vec_push(&t->offs);
    uint32_t *l = btc_vec_push(&t->lens);
    if (!off || !l)
        return BTC_ERR_NOMEM;
    *off = t->bytes_len;
    *l = (uint32_t)len;
    memcpy(t->bytes + t->bytes_len, s, len);
    t->bytes[t->bytes_len + len] = 0; /* so names can be printed as C strings */
    t->bytes_len += len + 1;
    int64_t idx = (int64_t)t->lens.len - 1;
    t->slots[i] = (uint64_t)h << 32 | (uint64_t)(idx + 1);
    return idx;
}

unsigned btc_usable_cpus(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                         : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (unsigned)n;
}

int btc_start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
