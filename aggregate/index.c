/* The one hash index of ftstack: open addressing with linear probing over
 * (hash, item) slots, doubled when half full. Its users (the stack and key
 * tables, merge by name, the name cache, output's string tables, the
 * process histories' pids and files, kernel symbols by name) keep their
 * items in arrays of their own and compare candidates themselves; the
 * stored hash spares them reading items whose hash differs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate.h"

#define AGG_INDEX_MIN 64u

/* Moves every item into a table of N slots (a power of two). */
static int rebuild(struct agg_index *x, uint32_t n)
{
	struct agg_index_slot *s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; x->slots && i <= x->mask; i++) {
		if (!x->slots[i].item)
			continue;
		uint32_t j = x->slots[i].hash & (n - 1);
		while (s[j].item)
			j = (j + 1) & (n - 1);
		s[j] = x->slots[i];
	}
	free(x->slots);
	x->slots = s;
	x->mask = n - 1;
	return 0;
}

int agg_index_reserve(struct agg_index *x)
{
	if (!x->slots)
		return rebuild(x, AGG_INDEX_MIN);
	if ((uint64_t)(x->used + 1) * 2 <= (uint64_t)x->mask + 1)
		return 0;
	uint64_t n = ((uint64_t)x->mask + 1) * 2;
	return n > 0x80000000ull ? -ENOMEM : rebuild(x, (uint32_t)n);
}

int agg_index_reset(struct agg_index *x, uint32_t n)
{
	uint64_t size = AGG_INDEX_MIN;
	while (((uint64_t)n + 1) * 2 > size)
		size *= 2;
	if (size > 0x80000000ull)
		return -ENOMEM;
	struct agg_index_slot *s = calloc(size, sizeof(*s));
	if (!s) {
		/* fewer items than before (its users drop some, then refill):
		 * the slots there are hold them */
		if (!x->slots || (uint64_t)x->mask + 1 < size)
			return -ENOMEM;
		memset(x->slots, 0, ((size_t)x->mask + 1) * sizeof(*x->slots));
		x->used = 0;
		return 0;
	}
	free(x->slots);
	*x = (struct agg_index){ .slots = s, .mask = (uint32_t)size - 1 };
	return 0;
}

void agg_index_add(struct agg_index *x, uint64_t h, uint32_t item)
{
	struct agg_probe p;
	for (uint32_t it = agg_index_first(x, h, &p); it; it = agg_index_next(x, &p))
		;
	agg_index_put(x, &p, item);
}

void agg_index_put(struct agg_index *x, const struct agg_probe *p, uint32_t item)
{
	x->slots[p->pos] = (struct agg_index_slot){ .hash = p->hash, .item = item };
	x->used++;
}

void agg_index_clear(struct agg_index *x)
{
	free(x->slots);
	*x = (struct agg_index){ 0 };
}

uint64_t agg_hash_words(uint64_t seed, const uint64_t *w, uint32_t n)
{
	uint64_t h = seed ^ n;
	for (uint32_t i = 0; i < n; i++)
		h = agg_hash_mix(h, w[i]);
	return agg_hash_finish(h);
}

uint64_t agg_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a: short names, not the hot path */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return agg_hash_finish(h);
}
