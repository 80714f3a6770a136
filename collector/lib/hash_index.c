/* Hash index and array growth for the analysis tables (hash_index.h). */
#include "hash_index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int pw_hix_add(struct pw_hix *ix, uint64_t h, uint32_t pos)
{
	if ((ix->used + 1) * 2 > ix->cap) {
		size_t ncap = ix->cap ? ix->cap * 2 : 64;
		struct pw_hix n = {calloc(ncap, sizeof *n.hash), calloc(ncap, sizeof *n.pos), ncap, 0};
		if (!n.hash || !n.pos) {
			free(n.hash);
			free(n.pos);
			return -1;
		}
		for (size_t i = 0; i < ix->cap; i++)
			if (ix->hash[i])
				pw_hix_add(&n, ix->hash[i], ix->pos[i]);
		free(ix->hash);
		free(ix->pos);
		*ix = n;
	}
	size_t i = h & (ix->cap - 1);
	while (ix->hash[i])
		i = (i + 1) & (ix->cap - 1);
	ix->hash[i] = h;
	ix->pos[i] = pos;
	ix->used++;
	return 0;
}

int64_t pw_keys_add(struct pw_keys *k, uint64_t key, int *added)
{
	*added = 0;
	int64_t pos = pw_keys_find(k, key);
	if (pos >= 0)
		return pos;
	if (k->n >= UINT32_MAX || pw_reserve(&k->keys, &k->cap, k->n + 1, sizeof *k->keys) ||
	    pw_hix_add(&k->ix, pw_keys_hash(key), (uint32_t)k->n))
		return -1;
	k->keys[k->n] = key;
	*added = 1;
	return (int64_t)k->n++;
}

void pw_keys_free(struct pw_keys *k)
{
	free(k->keys);
	pw_hix_free(&k->ix);
	*k = (struct pw_keys){0};
}

void pw_hix_free(struct pw_hix *ix)
{
	free(ix->hash);
	free(ix->pos);
	*ix = (struct pw_hix){0};
}

int pw_reserve(void *arrp, size_t *cap, size_t need, size_t elem)
{
	return pw_reserve_max(arrp, cap, need, elem, SIZE_MAX);
}

int pw_reserve_max(void *arrp, size_t *cap, size_t need, size_t elem, size_t max)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	if (ncap > max && need <= max)
		ncap = max;
	void *arr;
	memcpy(&arr, arrp, sizeof arr);
	void *n = realloc(arr, ncap * elem);
	if (!n)
		return -1;
	memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
	memcpy(arrp, &n, sizeof n);
	*cap = ncap;
	return 0;
}
