/* Stacks stored once: a stack's 64-bit hash (the minute rows carry it),
 * its row of TABLE_stacks (the hash and the frames), and the set of hashes
 * a run has already written there. The hash is ftstack's own (FNV-1a over
 * the frame counts and the NUL-terminated frames): the server never
 * computes it, so any ClickHouse release reads it as a plain UInt64. A
 * deferred frame ("[FILE+0xVADDR@BUILDID]") counts by its identity alone,
 * not by the file's name, which is the reader's: the same code under
 * another path or "(deleted)" is the same stack (doc/FLEET.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate.h"
#include "fleet/fleet.h"
#include "mem/mem.h"
#include "symbolize/symbolize.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (const unsigned char *c = p; n--; c++)
		h = (h ^ *c) * 1099511628211ull;
	return h;
}

uint64_t fleet_stack_hash(const struct agg_named_stack *s)
{
	unsigned char counts[8];
	for (int i = 0; i < 4; i++) {
		counts[i] = (unsigned char)(s->nkframes >> (8 * i));
		counts[4 + i] = (unsigned char)(s->nuframes >> (8 * i));
	}
	uint64_t h = fnv(1469598103934665603ull, counts, sizeof(counts));
	for (uint32_t i = 0; i < s->nkframes + s->nuframes; i++) {
		const char *id = i >= s->nkframes ? sym_deferred_identity(s->frames[i]) : NULL;
		const char *text = id ? id : s->frames[i];
		h = fnv(h, text, strlen(text) + 1); /* the NUL ends each frame */
	}
	return h ? h : 1;
}

/* FRAMES[0..n) leaf first, written root first. */
static void put_frames(struct fleet_buf *b, const char *const *frames, uint32_t n)
{
	fleet_put_varint(b, n);
	for (uint32_t i = n; i-- > 0;)
		fleet_put_str(b, frames[i]);
}

void fleet_stacks_encode(struct fleet_buf *b, uint64_t hash, const struct agg_named_stack *s)
{
	fleet_put_le(b, hash, 8);
	put_frames(b, s->frames, s->nkframes);
	put_frames(b, s->frames + s->nkframes, s->nuframes);
}

/* ---- the set of hashes sent: the hashes in an array, found through
 * aggregate's index ---- */

struct fleet_seen {
	uint64_t *hash;             /* item i + 1 of idx */
	uint32_t n, cap;
	struct agg_index idx;
};

int fleet_seen_alloc(struct fleet_seen **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void fleet_seen_free(struct fleet_seen *s)
{
	if (s) {
		agg_index_clear(&s->idx);
		free(s->hash);
	}
	free(s);
}

/* Whether H is in S; P then ends where an insert of H goes. */
static bool find(const struct fleet_seen *s, uint64_t h, struct agg_probe *p)
{
	/* FNV-1a's low bits, the index's place, are its weakest: mixed first */
	for (uint32_t it = agg_index_first(&s->idx, agg_hash_finish(h), p); it;
	     it = agg_index_next(&s->idx, p))
		if (s->hash[it - 1] == h)
			return true;
	return false;
}

bool fleet_seen_has(const struct fleet_seen *s, uint64_t h)
{
	struct agg_probe p;
	return find(s, h, &p);
}

int fleet_seen_add(struct fleet_seen *s, uint64_t h)
{
	struct agg_probe p;
	if (agg_index_reserve(&s->idx) < 0)
		return -ENOMEM;
	if (find(s, h, &p))
		return 0;
	if (s->n >= UINT32_MAX - 1 || MEM_GROW(s->hash, s->cap, (size_t)s->n + 1, 1024) < 0)
		return -ENOMEM;
	s->hash[s->n] = h;
	agg_index_put(&s->idx, &p, ++s->n);
	return 0;
}
