/* The keys a session has sent (addresses of texts and source locations),
 * kept by the drain as it encodes them and looked up by the query answers:
 * a query is answered by dereferencing only what the program itself handed
 * out. Inline: the drain adds a key for most records it sends. */
#ifndef BT_KEYS_H
#define BT_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A peer asking about any other address gets a placeholder instead of
 * crashing the program. */
struct key_set {
    uint64_t *slots; /* 0 = empty (no key is 0) */
    size_t cap;
    size_t count;
    uint64_t last; /* most events repeat the previous key: skip the lookup */
};

static inline uint64_t bt_key_hash(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return k ^ (k >> 29);
}

static inline int bt_key_set_has(const struct key_set *k, uint64_t key)
{
    if (k->cap == 0 || key == 0)
        return 0;
    for (size_t i = bt_key_hash(key) & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
        if (k->slots[i] == key)
            return 1;
        if (k->slots[i] == 0)
            return 0;
    }
}

static inline void bt_key_set_add(struct key_set *k, uint64_t key)
{
    if (key == k->last || key == 0 || bt_key_set_has(k, key)) {
        k->last = key;
        return;
    }
    if ((k->count + 1) * 2 > k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 1024;
        uint64_t *slots = calloc(cap, sizeof(uint64_t));
        if (!slots)
            return; /* the key then gets a placeholder answer */
        for (size_t i = 0; i < k->cap; i++) {
            if (!k->slots[i])
                continue;
            size_t j = bt_key_hash(k->slots[i]) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = k->slots[i];
        }
        free(k->slots);
        k->slots = slots;
        k->cap = cap;
    }
    size_t i = bt_key_hash(key) & (k->cap - 1);
    while (k->slots[i])
        i = (i + 1) & (k->cap - 1);
    k->slots[i] = key;
    k->count++;
    k->last = key;
}

static inline void bt_key_set_free(struct key_set *k)
{
    free(k->slots);
    memset(k, 0, sizeof(*k));
}

#endif
