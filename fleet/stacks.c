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
#include "fleet/fleet.h"
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

/* ---- the set of hashes sent: open addressing, 0 marks a free slot
 * (fleet_stack_hash never returns 0) ---- */

struct fleet_seen {
	uint64_t *slot;
	size_t cap, n;              /* cap a power of two, kept at most half full */
};

int fleet_seen_alloc(struct fleet_seen **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void fleet_seen_free(struct fleet_seen *s)
{
	if (s)
		free(s->slot);
	free(s);
}

static size_t find(const struct fleet_seen *s, uint64_t h)
{
	size_t i = (size_t)(h ^ h >> 29) & (s->cap - 1);
	while (s->slot[i] && s->slot[i] != h)
		i = (i + 1) & (s->cap - 1);
	return i;
}

bool fleet_seen_has(const struct fleet_seen *s, uint64_t h)
{
	return s->cap && s->slot[find(s, h)] == h;
}

int fleet_seen_add(struct fleet_seen *s, uint64_t h)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct fleet_seen bigger = { .slot = calloc(cap, sizeof(uint64_t)), .cap = cap };
		if (!bigger.slot)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				bigger.slot[find(&bigger, s->slot[i])] = s->slot[i];
		free(s->slot);
		s->slot = bigger.slot;
		s->cap = cap;
	}
	size_t i = find(s, h);
	if (!s->slot[i]) {
		s->slot[i] = h;
		s->n++;
	}
	return 0;
}
