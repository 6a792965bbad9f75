/* Small containers the capture core is built from: a growable array, a
 * u64 -> u64 hash map and an interning string table. Every function that can
 * run out of memory returns a negative status instead of aborting. */
#ifndef BTC_UTIL_H
#define BTC_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Little-endian stores of the low n bytes of v; one machine store on
 * little-endian hosts, which matters where a zone costs several. */
static inline void btc_le_store(uint8_t *p, uint64_t v, unsigned n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, n);
#else
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
}

/* Status codes of the capture core (negative; 0 is success). */
enum btc_status {
    BTC_OK = 0,
    BTC_ERR_NOMEM = -1,
    BTC_ERR_IO = -2,
    BTC_ERR_PROTOCOL = -3, /* malformed or unexpected stream content */
    BTC_ERR_FORMAT = -4,   /* malformed .tracy file */
    BTC_ERR_NET = -5,
    BTC_ERR_TIMEOUT = -6,
    BTC_ERR_HANDSHAKE = -7,
    BTC_ERR_STOPPED = -8, /* stopped on request before the capture completed */
};

const char *btc_strerror(int status);

/* A growable array of fixed-size items. */
struct btc_vec {
    void *data;
    size_t len, cap, item;
};

void btc_vec_init(struct btc_vec *v, size_t item_size);
void btc_vec_free(struct btc_vec *v);
/* Appends one zeroed item and returns it, or NULL when out of memory. */
void *btc_vec_push(struct btc_vec *v);
/* Makes room for n more items without adding any; < 0 when out of memory. */
int btc_vec_reserve(struct btc_vec *v, size_t n);
static inline void *btc_vec_at(const struct btc_vec *v, size_t i)
{
    return (char *)v->data + i * v->item;
}

/* Open-addressing hash map from u64 keys to u64 values. */
struct btc_map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t len, cap;
};

void btc_map_init(struct btc_map *m);
void btc_map_free(struct btc_map *m);
/* Returns a pointer to the value of key, or NULL when absent. */
uint64_t *btc_map_get(const struct btc_map *m, uint64_t key);
int btc_map_put(struct btc_map *m, uint64_t key, uint64_t val);
int btc_map_remove(struct btc_map *m, uint64_t key);
void btc_map_clear(struct btc_map *m);

/* Open-addressing hash set of u64 keys, each with a small tag (1..255; 0
 * marks an empty slot): 9 bytes a slot where a map takes 17. */
struct btc_tagmap {
    uint64_t *keys;
    uint8_t *tags;
    size_t len, cap;
};
void btc_tagmap_init(struct btc_tagmap *m);
void btc_tagmap_free(struct btc_tagmap *m);
/* The tag of key, 0 when absent. */
uint8_t btc_tagmap_get(const struct btc_tagmap *m, uint64_t key);
/* Adds key or sets its tag (tag != 0); < 0 when out of memory. */
int btc_tagmap_put(struct btc_tagmap *m, uint64_t key, uint8_t tag);

/* Interned byte strings: equal contents get the same index (0-based). */
struct btc_strtab {
    struct btc_vec offs; /* u64 offset of each string in bytes */
    struct btc_vec lens; /* u32 length of each string */
    char *bytes;
    size_t bytes_len, bytes_cap;
    /* Open-addressing index: each used slot is the string's 32-bit hash
     * above its index + 1 (0 is an empty slot); 8 bytes a slot. */
    uint64_t *slots;
    size_t slots_cap;
};

void btc_strtab_init(struct btc_strtab *t);
void btc_strtab_free(struct btc_strtab *t);
/* Returns the index of the string (>= 0) or a negative status. */
int64_t btc_strtab_intern(struct btc_strtab *t, const char *s, size_t len);
static inline size_t btc_strtab_count(const struct btc_strtab *t)
{
    return t->lens.len;
}
/* Bytes the table holds (strings, offsets, lengths and index). */
uint64_t btc_strtab_memory(const struct btc_strtab *t);
const char *btc_strtab_get(const struct btc_strtab *t, uint32_t idx, uint32_t *len);

uint64_t btc_hash_bytes(const void *p, size_t n);

/* CPUs this process may run on (its affinity mask), at least 1. */
unsigned btc_usable_cpus(void);

/* Starts a helper thread that takes no signals: SIGINT and SIGTERM stay
 * with the capture's own thread, which stops the capture cleanly. 0, or
 * pthread_create's error. */
int btc_start_thread(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
