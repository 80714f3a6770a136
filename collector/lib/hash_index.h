/* What the analysis modules share for their tables: a hash index (hash -> position in an array, open
 * addressing, entries compared by a callback) and array growth. */
#ifndef PW_HASH_INDEX_H
#define PW_HASH_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct pw_hix {
	uint64_t *hash; /* 0: empty */
	uint32_t *pos;
	size_t cap, used;
};

/* Whether the entry at pos is the one looked for. */
typedef int (*pw_hix_eq_fn)(const void *ctx, uint32_t pos);

/* The collector's hash functions, one of each kind. pw_hash_bytes: FNV-1a over len bytes, continuing from h
 * (start from PW_HASH_SEED), for names and byte strings; pw_hash_mix: the splitmix64 finaliser, for ids,
 * counters and pointers; pw_hash_combine: h with v mixed in, for keys of several fields. */
#define PW_HASH_SEED 0xcbf29ce484222325ull

static inline uint64_t pw_hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t pw_hash_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline uint64_t pw_hash_combine(uint64_t h, uint64_t v)
{
	return pw_hash_mix(h ^ pw_hash_mix(v + 0x9e3779b97f4a7c15ull));
}

/* A hash as the index stores it: never 0, which marks an empty slot. */
static inline uint64_t pw_hix_hash(uint64_t h)
{
	return h ? h : 1;
}

/* Returns the position of the entry with hash h (from pw_hix_hash) that eq accepts, or -1. Inline, so that a
 * constant eq is inlined too: some lookups are per record. */
static inline int64_t pw_hix_find(const struct pw_hix *ix, uint64_t h, pw_hix_eq_fn eq, const void *ctx)
{
	if (!ix->cap)
		return -1;
	for (size_t i = h & (ix->cap - 1); ix->hash[i]; i = (i + 1) & (ix->cap - 1))
		if (ix->hash[i] == h && eq(ctx, ix->pos[i]))
			return ix->pos[i];
	return -1;
}
/* Adds position pos under hash h. Returns 0, or -1 when out of memory (the index is unchanged). */
int pw_hix_add(struct pw_hix *ix, uint64_t h, uint32_t pos);
void pw_hix_free(struct pw_hix *ix);

/* 64-bit keys by position (in the order they were added), indexed: a set, or with arrays of the caller's
 * beside it (same positions), a map. */
struct pw_keys {
	uint64_t *keys;
	size_t n, cap;
	struct pw_hix ix;
};

struct pw_keys_probe {
	const uint64_t *keys;
	uint64_t key;
};

static inline int pw_keys_eq(const void *ctx, uint32_t pos)
{
	const struct pw_keys_probe *p = ctx;
	return p->keys[pos] == p->key;
}

static inline uint64_t pw_keys_hash(uint64_t key)
{
	return pw_hix_hash(pw_hash_mix(key));
}

/* The position of key, or -1. */
static inline int64_t pw_keys_find(const struct pw_keys *k, uint64_t key)
{
	struct pw_keys_probe p = {k->keys, key};
	return pw_hix_find(&k->ix, pw_keys_hash(key), pw_keys_eq, &p);
}

/* The position of key, added at the end when new (*added then 1, else 0). Returns -1 when out of memory. */
int64_t pw_keys_add(struct pw_keys *k, uint64_t key, int *added);
void pw_keys_free(struct pw_keys *k);

/* Makes room for need elements of size elem in the array whose pointer is at arrp (any object pointer type:
 * read and written with memcpy, so no type is punned). New elements are zeroed. Returns 0 or -1. */
int pw_reserve(void *arrp, size_t *cap, size_t need, size_t elem);
/* pw_reserve for an array that never holds more than max elements: it grows to max at most. */
int pw_reserve_max(void *arrp, size_t *cap, size_t need, size_t elem, size_t max);

#endif
