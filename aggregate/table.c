/* agg_table: the hot path. Address stacks are interned (one copy per
 * distinct array) and counted under (event, pid, tid, kernel id, user id),
 * both through the module's hash index (index.c). Steady state (known keys)
 * allocates nothing. */
#include "mem/mem.h"
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NO_STACK 0u           /* id of the empty stack: never interned */
#define CHUNK_BYTES ((size_t)512 << 10) /* arena chunk: 64 Ki addresses */
#define MIN_ITEMS 1024u /* items allocated at first */

struct stack {
	const uint64_t *addr;
	uint32_t n;
};

/* One set of interned stacks (kernel and user are kept apart); an id is
 * an index into stacks[], whose [0] is unused (NO_STACK). */
struct interner {
	struct stack *stacks;
	uint32_t nstacks, capstacks;
	struct agg_index index;
};

struct key {
	uint64_t hash;
	uint64_t first_time;
	uint64_t count;
	uint64_t weight;
	uint64_t cgroup;
	uint32_t event, pid, tid, kid, uid;
};

struct agg_table {
	struct agg_config cfg;
	struct mem_arena arena; /* stack arrays never move: entries point into it */
	struct interner kint, uint;
	struct key *keys;
	uint32_t nkeys, capkeys; /* keys[0] unused: item 0 means empty */
	struct agg_index kindex;
	uint32_t last;           /* the key the last record went to (0: none) */
	struct agg_entry *entries; /* built lazily by agg_table_entries */
	size_t nentries;
	bool dirty;
	uint64_t records, dropped, dropped_weight;
};

static uint64_t hash_words(const uint64_t *w, uint32_t n)
{
	return agg_hash_words(0x243f6a8885a308d3ull, w, n);
}

static int interner_init(struct interner *in)
{
	memset(in, 0, sizeof(*in));
	in->stacks = malloc(MIN_ITEMS * sizeof(*in->stacks));
	if (!in->stacks || agg_index_reserve(&in->index) < 0)
		return -ENOMEM;
	in->capstacks = MIN_ITEMS;
	in->nstacks = 1; /* id 0 is NO_STACK */
	return 0;
}

static void interner_free(struct interner *in)
{
	agg_index_clear(&in->index);
	free(in->stacks);
	memset(in, 0, sizeof(*in));
}

/* Returns the id of the stack, or 0 (P then says where it goes) when absent. */
static uint32_t interner_find(const struct interner *in, const uint64_t *a,
			      uint32_t n, uint64_t h, struct agg_probe *p)
{
	for (uint32_t id = agg_index_first(&in->index, h, p); id;
	     id = agg_index_next(&in->index, p)) {
		const struct stack *s = &in->stacks[id];

		if (s->n == n && memcmp(s->addr, a, n * sizeof(*a)) == 0)
			return id;
	}
	return 0;
}

/* Makes room for one more stack before it is placed, so a failed growth
 * leaves a table that still has free slots. */
static int interner_reserve(struct interner *in)
{
	if (MEM_GROW(in->stacks, in->capstacks, (size_t)in->nstacks + 1, 1))
		return -ENOMEM;
	return agg_index_reserve(&in->index);
}

/* Copies the array into the arena and gives it the next id. */
static int interner_insert(struct agg_table *t, struct interner *in,
			   const uint64_t *a, uint32_t n, uint64_t h,
			   uint32_t *id)
{
	struct agg_probe p;
	uint64_t *copy;
	int err = interner_reserve(in);

	if (err)
		return err;
	copy = mem_arena_alloc(&t->arena, (size_t)n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, a, n * sizeof(*a));
	interner_find(in, a, n, h, &p); /* slots may have moved */
	*id = in->nstacks++;
	in->stacks[*id] = (struct stack){ .addr = copy, .n = n };
	agg_index_put(&in->index, &p, *id);
	return 0;
}

static uint64_t key_hash(const struct key *k)
{
	uint64_t h = agg_hash_mix(0x13198a2e03707344ull, (uint64_t)k->event << 32 | k->pid);

	h = agg_hash_mix(h, k->tid);
	h = agg_hash_mix(h, k->cgroup);
	return agg_hash_finish(agg_hash_mix(h, (uint64_t)k->kid << 32 | k->uid));
}

static uint32_t key_find(const struct agg_table *t, const struct key *k,
			 struct agg_probe *p)
{
	for (uint32_t idx = agg_index_first(&t->kindex, k->hash, p); idx;
	     idx = agg_index_next(&t->kindex, p)) {
		const struct key *e = &t->keys[idx];

		if (e->event == k->event && e->pid == k->pid && e->tid == k->tid &&
		    e->kid == k->kid && e->uid == k->uid && e->cgroup == k->cgroup)
			return idx;
	}
	return 0;
}

static int key_insert(struct agg_table *t, const struct key *k)
{
	struct agg_probe p;

	if (MEM_GROW(t->keys, t->capkeys, (size_t)t->nkeys + 1, 1))
		return -ENOMEM;
	if (agg_index_reserve(&t->kindex) < 0)
		return -ENOMEM;
	key_find(t, k, &p);
	t->keys[t->nkeys] = *k;
	agg_index_put(&t->kindex, &p, t->nkeys++);
	return 0;
}

static int table_init(struct agg_table *t)
{
	int err = interner_init(&t->kint);

	if (!err)
		err = interner_init(&t->uint);
	if (err)
		return err;
	t->keys = malloc(MIN_ITEMS * sizeof(*t->keys));
	if (!t->keys || agg_index_reserve(&t->kindex) < 0)
		return -ENOMEM;
	t->capkeys = MIN_ITEMS;
	t->nkeys = 1;
	t->dirty = true;
	return 0;
}

static void table_free(struct agg_table *t)
{
	mem_arena_free(&t->arena);
	interner_free(&t->kint);
	interner_free(&t->uint);
	agg_index_clear(&t->kindex);
	free(t->keys);
	free(t->entries);
	t->keys = NULL;
	t->entries = NULL;
	t->nkeys = t->capkeys = 0;
	t->last = 0;
	t->nentries = 0;
	t->records = t->dropped = t->dropped_weight = 0;
}

int agg_table_alloc(const struct agg_config *cfg, struct agg_table **out)
{
	struct agg_table *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (cfg)
		t->cfg = *cfg;
	t->arena.chunk = CHUNK_BYTES;
	if (table_init(t)) {
		agg_table_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void agg_table_free(struct agg_table *t)
{
	if (!t)
		return;
	table_free(t);
	free(t);
}

/* How many records R counts for */
static uint64_t records_of(const struct agg_record *r)
{
	return r->records ? r->records : 1;
}

static void count_into(struct key *e, const struct agg_record *r)
{
	if (r->time < e->first_time)
		e->first_time = r->time;
	e->count += records_of(r);
	e->weight += r->weight;
}

/* Looks a stack up; a new one is only copied once the key is admitted, so
 * dropped records never grow memory. *id is 0 for an empty stack. */
struct lookup {
	const uint64_t *a;
	uint32_t n, id;
	uint64_t h;
};

/* The frames of stack A, N long, that count: none without addresses, at
 * most AGG_MAX_DEPTH. */
static uint32_t depth(const uint64_t *a, uint32_t n)
{
	return !a ? 0 : n > AGG_MAX_DEPTH ? AGG_MAX_DEPTH : n;
}

static void stack_lookup(const struct interner *in, struct lookup *l)
{
	struct agg_probe p;

	l->n = depth(l->a, l->n);
	l->id = NO_STACK;
	if (l->n == 0)
		return;
	l->h = hash_words(l->a, l->n);
	l->id = interner_find(in, l->a, l->n, l->h, &p);
}

static int stack_admit(struct agg_table *t, struct interner *in,
		       struct lookup *l)
{
	if (l->n == 0 || l->id != NO_STACK)
		return 0;
	return interner_insert(t, in, l->a, l->n, l->h, &l->id);
}

/* R's key but for its stacks' ids, NU the frames of its user stack that
 * count: the pid is kept with a user stack (its addresses mean nothing
 * without their process) or when asked for. */
static struct key key_of(const struct agg_table *t, const struct agg_record *r, uint32_t nu)
{
	return (struct key){
		.event = r->event, .first_time = r->time, .count = records_of(r), .weight = r->weight,
		.pid = (t->cfg.key_pid || t->cfg.key_tid || nu > 0) ? r->pid : 0,
		.tid = t->cfg.key_tid ? r->tid : 0,
		.cgroup = t->cfg.key_cgroup ? r->cgroup : 0,
	};
}

/* Whether interned stack ID holds the N addresses at A (NO_STACK: none). */
static bool stack_is(const struct interner *in, uint32_t id, const uint64_t *a, uint32_t n)
{
	const struct stack *s = &in->stacks[id];
	return id == NO_STACK ? n == 0 : s->n == n && memcmp(s->addr, a, n * sizeof(*a)) == 0;
}

/* Whether R goes to the key the last record went to. Samples come in runs
 * (a loop calling the same function: the same stacks again and again), and
 * comparing with the last key's stacks, which the last record left in the
 * cache, costs less than hashing and probing them anew. */
static bool same_as_last(const struct agg_table *t, const struct agg_record *r)
{
	const struct key *e = &t->keys[t->last];
	uint32_t nk = depth(r->kstack, r->nkstack), nu = depth(r->ustack, r->nustack);
	struct key k = key_of(t, r, nu);
	return e->event == k.event && e->pid == k.pid && e->tid == k.tid && e->cgroup == k.cgroup &&
	       stack_is(&t->kint, e->kid, r->kstack, nk) && stack_is(&t->uint, e->uid, r->ustack, nu);
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
	struct key k;
	struct agg_probe p;
	uint32_t idx;
	int err;

	if (!t->kindex.slots || !t->keys)
		return -ENOMEM; /* a reset could not allocate */
	t->dirty = true;
	if (t->last && same_as_last(t, r)) {
		count_into(&t->keys[t->last], r);
		t->records += records_of(r);
		return 0;
	}
	stack_lookup(&t->kint, &kl);
	stack_lookup(&t->uint, &ul);
	k = key_of(t, r, ul.n);
	/* an unknown stack means an unknown key: skip the key probe */
	if ((kl.n == 0 || kl.id) && (ul.n == 0 || ul.id)) {
		set_key_ids(&k, &kl, &ul);
		idx = key_find(t, &k, &p);
		if (idx) {
			count_into(&t->keys[idx], r);
			t->records += records_of(r);
			t->last = idx;
			return 0;
		}
	}
	if (t->cfg.max_stacks && t->nkeys - 1 >= t->cfg.max_stacks) {
		t->last = 0; /* not this record's: agg_add_last must not take it */
		t->dropped += records_of(r);
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
	t->last = err ? 0 : t->nkeys - 1;
	if (!err)
		t->records += records_of(r);
	return err;
}

static void entry_from_key(const struct agg_table *t, const struct key *k,
			   struct agg_entry *e)
{
	const struct stack *ks = &t->kint.stacks[k->kid];
	const struct stack *us = &t->uint.stacks[k->uid];

	*e = (struct agg_entry){
		.event = k->event, .pid = k->pid, .tid = k->tid, .cgroup = k->cgroup, .first_time = k->first_time,
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

void agg_table_tasks(const struct agg_table *t,
		     void (*fn)(void *ctx, uint32_t pid, uint32_t tid), void *ctx)
{
	for (uint32_t i = 1; i < t->nkeys; i++)
		fn(ctx, t->keys[i].pid, t->keys[i].tid);
}

int agg_add_last(struct agg_table *t, uint64_t time, uint64_t weight)
{
	if (!t->last || !t->keys)
		return -ENOENT;
	const struct agg_record r = { .time = time, .weight = weight };
	count_into(&t->keys[t->last], &r);
	t->dirty = true;
	t->records++;
	return 0;
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
