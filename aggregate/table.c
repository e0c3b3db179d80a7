/* agg_table: the hot path. Address stacks are interned (one copy per
 * distinct array) and counted under (event, pid, tid, kernel id, user id) in
 * open-addressing hash tables. Steady state (known keys) allocates nothing. */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NO_STACK 0u           /* id of the empty stack: never interned */
#define CHUNK_WORDS (64 * 1024) /* arena chunk: 512 KiB of addresses */
#define MIN_SLOTS 1024u

/* Chunked arena: stack arrays never move, so entries can point into it. */
struct chunk {
	struct chunk *next;
	size_t used, cap;
	uint64_t words[];
};

struct stack {
	const uint64_t *addr;
	uint64_t hash;
	uint32_t n;
};

/* One set of interned stacks (kernel and user are kept apart). Slots hold
 * id (index into stacks[]), 0 meaning empty; stacks[0] is unused. */
struct interner {
	struct stack *stacks;
	uint32_t nstacks, capstacks;
	uint32_t *slots;
	uint32_t nslots; /* power of two */
};

struct key {
	uint64_t hash;
	uint64_t first_time;
	uint64_t count;
	uint64_t weight;
	uint32_t event, pid, tid, kid, uid;
};

struct agg_table {
	struct agg_config cfg;
	struct chunk *chunks;
	struct interner kint, uint;
	struct key *keys;
	uint32_t nkeys, capkeys; /* keys[0] unused: slot value 0 means empty */
	uint32_t *kslots;
	uint32_t nkslots;
	struct agg_entry *entries; /* built lazily by agg_table_entries */
	size_t nentries;
	bool dirty;
	uint64_t records, dropped, dropped_weight;
};

/* A cheap mix per word (multiply-xor); final avalanche so the low bits used
 * as slot index depend on every input bit. */
static uint64_t mix_word(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static uint64_t finish_hash(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_words(const uint64_t *w, uint32_t n)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ n;

	for (uint32_t i = 0; i < n; i++)
		h = mix_word(h, w[i]);
	return finish_hash(h);
}

static uint64_t *arena_alloc(struct agg_table *t, uint32_t n)
{
	struct chunk *c = t->chunks;

	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_WORDS ? n : CHUNK_WORDS;

		c = malloc(sizeof(*c) + cap * sizeof(uint64_t));
		if (!c)
			return NULL;
		c->next = t->chunks;
		c->used = 0;
		c->cap = cap;
		t->chunks = c;
	}
	c->used += n;
	return c->words + c->used - n;
}

static int interner_init(struct interner *in)
{
	memset(in, 0, sizeof(*in));
	in->slots = calloc(MIN_SLOTS, sizeof(*in->slots));
	in->stacks = malloc(MIN_SLOTS * sizeof(*in->stacks));
	if (!in->slots || !in->stacks)
		return -ENOMEM;
	in->nslots = MIN_SLOTS;
	in->capstacks = MIN_SLOTS;
	in->nstacks = 1; /* id 0 is NO_STACK */
	return 0;
}

static void interner_free(struct interner *in)
{
	free(in->slots);
	free(in->stacks);
	memset(in, 0, sizeof(*in));
}

/* Returns the id of the stack, or 0 (empty slot at *slot) when absent. */
static uint32_t interner_find(const struct interner *in, const uint64_t *a,
			      uint32_t n, uint64_t h, uint32_t *slot)
{
	uint32_t mask = in->nslots - 1;

	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		uint32_t id = in->slots[i];
		const struct stack *s;

		if (id == 0) {
			*slot = i;
			return 0;
		}
		s = &in->stacks[id];
		if (s->hash == h && s->n == n &&
		    memcmp(s->addr, a, n * sizeof(*a)) == 0)
			return id;
	}
}

/* Doubles a slot array (slot value = item index, 0 empty, items from 1);
 * rehashing uses the stored hashes, so addresses are not read again. */
static int grow_slots(uint32_t **slots, uint32_t *nslots, const void *items,
		      size_t item_size, size_t hash_off, uint32_t nitems)
{
	uint32_t n = *nslots * 2, mask = n - 1;
	uint32_t *s;

	if (n <= *nslots)
		return -ENOMEM;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t id = 1; id < nitems; id++) {
		uint64_t h;
		uint32_t i;

		memcpy(&h, (const char *)items + id * item_size + hash_off,
		       sizeof(h));
		for (i = (uint32_t)h & mask; s[i]; i = (i + 1) & mask)
			;
		s[i] = id;
	}
	free(*slots);
	*slots = s;
	*nslots = n;
	return 0;
}

/* Makes room for one more stack before it is placed, so a failed growth
 * leaves a table that still has free slots. */
static int interner_reserve(struct interner *in)
{
	if (in->nstacks == in->capstacks) {
		uint32_t cap = in->capstacks * 2;
		struct stack *s;

		if (cap <= in->capstacks)
			return -ENOMEM;
		s = realloc(in->stacks, (size_t)cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		in->stacks = s;
		in->capstacks = cap;
	}
	if ((uint64_t)(in->nstacks + 1) * 2 > in->nslots)
		return grow_slots(&in->slots, &in->nslots, in->stacks,
				  sizeof(*in->stacks),
				  offsetof(struct stack, hash), in->nstacks);
	return 0;
}

/* Copies the array into the arena and gives it the next id. */
static int interner_insert(struct agg_table *t, struct interner *in,
			   const uint64_t *a, uint32_t n, uint64_t h,
			   uint32_t *id)
{
	uint32_t slot;
	uint64_t *copy;
	int err = interner_reserve(in);

	if (err)
		return err;
	copy = arena_alloc(t, n);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, a, n * sizeof(*a));
	interner_find(in, a, n, h, &slot); /* slots may have moved */
	*id = in->nstacks++;
	in->stacks[*id] = (struct stack){ .addr = copy, .hash = h, .n = n };
	in->slots[slot] = *id;
	return 0;
}

static uint64_t key_hash(const struct key *k)
{
	uint64_t h = mix_word(0x13198a2e03707344ull, (uint64_t)k->event << 32 | k->pid);

	h = mix_word(h, k->tid);
	return finish_hash(mix_word(h, (uint64_t)k->kid << 32 | k->uid));
}

static uint32_t key_find(const struct agg_table *t, const struct key *k,
			 uint32_t *slot)
{
	uint32_t mask = t->nkslots - 1;

	for (uint32_t i = (uint32_t)k->hash & mask;; i = (i + 1) & mask) {
		uint32_t idx = t->kslots[i];
		const struct key *e;

		if (idx == 0) {
			*slot = i;
			return 0;
		}
		e = &t->keys[idx];
		if (e->hash == k->hash && e->event == k->event &&
		    e->pid == k->pid && e->tid == k->tid && e->kid == k->kid &&
		    e->uid == k->uid)
			return idx;
	}
}

static int key_insert(struct agg_table *t, const struct key *k)
{
	uint32_t slot;

	if (t->nkeys == t->capkeys) {
		uint32_t cap = t->capkeys * 2;
		struct key *keys;

		if (cap <= t->capkeys)
			return -ENOMEM;
		keys = realloc(t->keys, (size_t)cap * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		t->keys = keys;
		t->capkeys = cap;
	}
	if ((uint64_t)(t->nkeys + 1) * 2 > t->nkslots) {
		int err = grow_slots(&t->kslots, &t->nkslots, t->keys,
				     sizeof(*t->keys),
				     offsetof(struct key, hash), t->nkeys);

		if (err)
			return err;
	}
	key_find(t, k, &slot);
	t->keys[t->nkeys] = *k;
	t->kslots[slot] = t->nkeys++;
	return 0;
}

static int table_init(struct agg_table *t)
{
	int err = interner_init(&t->kint);

	if (!err)
		err = interner_init(&t->uint);
	if (err)
		return err;
	t->kslots = calloc(MIN_SLOTS, sizeof(*t->kslots));
	t->keys = malloc(MIN_SLOTS * sizeof(*t->keys));
	if (!t->kslots || !t->keys)
		return -ENOMEM;
	t->nkslots = MIN_SLOTS;
	t->capkeys = MIN_SLOTS;
	t->nkeys = 1;
	t->dirty = true;
	return 0;
}

static void table_free(struct agg_table *t)
{
	struct chunk *c = t->chunks, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	t->chunks = NULL;
	interner_free(&t->kint);
	interner_free(&t->uint);
	free(t->kslots);
	free(t->keys);
	free(t->entries);
	t->kslots = NULL;
	t->keys = NULL;
	t->entries = NULL;
	t->nkeys = t->capkeys = t->nkslots = 0;
	t->nentries = 0;
	t->records = t->dropped = t->dropped_weight = 0;
}

int agg_table_create(const struct agg_config *cfg, struct agg_table **out)
{
	struct agg_table *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (cfg)
		t->cfg = *cfg;
	if (table_init(t)) {
		agg_table_destroy(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void agg_table_destroy(struct agg_table *t)
{
	if (!t)
		return;
	table_free(t);
	free(t);
}

static void count_into(struct key *e, const struct agg_record *r)
{
	if (r->time < e->first_time)
		e->first_time = r->time;
	e->count++;
	e->weight += r->weight;
}

/* Looks a stack up; a new one is only copied once the key is admitted, so
 * dropped records never grow memory. *id is 0 for an empty stack. */
struct lookup {
	const uint64_t *a;
	uint32_t n, id;
	uint64_t h;
};

static void stack_lookup(const struct interner *in, struct lookup *l)
{
	uint32_t slot;

	if (l->n > AGG_MAX_DEPTH)
		l->n = AGG_MAX_DEPTH;
	l->id = NO_STACK;
	if (l->n == 0 || !l->a) {
		l->n = 0;
		return;
	}
	l->h = hash_words(l->a, l->n);
	l->id = interner_find(in, l->a, l->n, l->h, &slot);
}

static int stack_admit(struct agg_table *t, struct interner *in,
		       struct lookup *l)
{
	if (l->n == 0 || l->id != NO_STACK)
		return 0;
	return interner_insert(t, in, l->a, l->n, l->h, &l->id);
}

static void set_key_ids(struct key *k, const struct lookup *kl,
			const struct lookup *ul)
{
	k->kid = kl->id;
	k->uid = ul->id;
	k->hash = key_hash(k);
}

int agg_add(struct agg_table *t, const struct agg_record *r)
{
	struct lookup kl = { .a = r->kstack, .n = r->nkstack };
	struct lookup ul = { .a = r->ustack, .n = r->nustack };
	struct key k = { .event = r->event, .first_time = r->time,
			 .count = 1, .weight = r->weight };
	uint32_t slot, idx;
	int err;

	if (!t->kslots || !t->keys)
		return -ENOMEM; /* a reset could not allocate */
	stack_lookup(&t->kint, &kl);
	stack_lookup(&t->uint, &ul);
	k.pid = (t->cfg.key_pid || t->cfg.key_tid || ul.n > 0) ? r->pid : 0;
	k.tid = t->cfg.key_tid ? r->tid : 0;
	t->dirty = true;
	/* an unknown stack means an unknown key: skip the key probe */
	if ((kl.n == 0 || kl.id) && (ul.n == 0 || ul.id)) {
		set_key_ids(&k, &kl, &ul);
		idx = key_find(t, &k, &slot);
		if (idx) {
			count_into(&t->keys[idx], r);
			t->records++;
			return 0;
		}
	}
	if (t->cfg.max_stacks && t->nkeys - 1 >= t->cfg.max_stacks) {
		t->dropped++;
		t->dropped_weight += r->weight;
		return -ENOSPC;
	}
	err = stack_admit(t, &t->kint, &kl);
	if (!err)
		err = stack_admit(t, &t->uint, &ul);
	if (!err) {
		set_key_ids(&k, &kl, &ul);
		err = key_insert(t, &k);
	}
	if (!err)
		t->records++;
	return err;
}

static void entry_from_key(const struct agg_table *t, const struct key *k,
			   struct agg_entry *e)
{
	const struct stack *ks = &t->kint.stacks[k->kid];
	const struct stack *us = &t->uint.stacks[k->uid];

	*e = (struct agg_entry){
		.event = k->event, .pid = k->pid, .tid = k->tid, .first_time = k->first_time,
		.count = k->count, .weight = k->weight,
		.kstack = k->kid ? ks->addr : NULL, .nkstack = k->kid ? ks->n : 0,
		.ustack = k->uid ? us->addr : NULL, .nustack = k->uid ? us->n : 0,
	};
}

size_t agg_table_entries(struct agg_table *t, const struct agg_entry **out)
{
	size_t n = t->nkeys ? t->nkeys - 1 : 0;

	if (t->dirty) {
		struct agg_entry *e = NULL;

		if (n == 0) {
			free(t->entries);
		} else {
			e = realloc(t->entries, n * sizeof(*e));
			if (!e) {
				*out = NULL;
				return 0;
			}
		}
		t->entries = e;
		for (size_t i = 0; i < n; i++)
			entry_from_key(t, &t->keys[i + 1], &e[i]);
		t->nentries = n;
		t->dirty = false;
	}
	*out = t->entries;
	return t->nentries;
}

void agg_table_reset(struct agg_table *t)
{
	table_free(t);
	/* on failure the table stays empty and agg_add reports -ENOMEM */
	table_init(t);
}

void agg_table_stats(const struct agg_table *t, struct agg_stats *out)
{
	*out = (struct agg_stats){
		.records = t->records,
		.dropped = t->dropped,
		.dropped_weight = t->dropped_weight,
		.keys = t->nkeys ? t->nkeys - 1 : 0,
		.stacks = (t->kint.nstacks ? t->kint.nstacks - 1 : 0) +
			  (t->uint.nstacks ? t->uint.nstacks - 1 : 0),
	};
}
