/* aggregate: interning stacks and counting them. Pure code: no I/O, no kernel.
 *
 * Two tables live here:
 *  - agg_table: the hot path. Records (address stacks) from the sources are
 *    interned by a hash of their address arrays and counted under the key
 *    (event, pid, tid, kernel stack id, user stack id). Memory grows with distinct
 *    keys, never with events.
 *  - agg_named: after symbolization, stacks are named frames (strings); the
 *    same path taken by many processes is merged here, then filtered
 *    (-x, -m, -t) and ordered for output.
 */
#ifndef FTSTACK_AGGREGATE_H
#define FTSTACK_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGG_MAX_DEPTH 512 /* frames kept per kernel or user stack */

/* ---- the one hash index (index.c), under every table of ftstack ----
 * It maps hashes to item numbers (never 0) of an array its user owns; the
 * user compares the candidates. Lookup, then insert where the lookup ended:
 *
 *	struct agg_probe p;
 *	if (agg_index_reserve(&x) < 0) return -ENOMEM;  // before a possible insert
 *	for (uint32_t it = agg_index_first(&x, h, &p); it; it = agg_index_next(&x, &p))
 *		if (equal(items[it], key)) return it;
 *	agg_index_put(&x, &p, new_item);
 */
struct agg_index_slot {
	uint32_t hash;       /* the hash's low 32 bits: where it goes, and a cheap compare */
	uint32_t item;       /* 0: empty */
};
struct agg_index {
	struct agg_index_slot *slots; /* NULL until the first reserve */
	uint32_t mask;       /* slots - 1, a power of two minus one */
	uint32_t used;
};
struct agg_probe {
	uint32_t hash;
	uint32_t pos;
};

/* Makes room for one more item (doubling when half full). Returns 0 or -ENOMEM;
 * a failure leaves the index as it was. */
int agg_index_reserve(struct agg_index *x);
/* Puts ITEM where the probe P (which returned 0) ended. */
void agg_index_put(struct agg_index *x, const struct agg_probe *p, uint32_t item);
/* Empties X and sizes it for N items, smaller too: puts need no reserve
 * until N (a table refilled after dropping or renumbering its items, or
 * built at once). Returns 0, or -ENOMEM (X as it was); it cannot fail when
 * X held more than N items before (its old slots are emptied instead). */
int agg_index_reset(struct agg_index *x, uint32_t n);
/* Puts ITEM under hash H without comparing (the caller knows it is new);
 * room must have been made (reserve or reset). */
void agg_index_add(struct agg_index *x, uint64_t h, uint32_t item);
/* Frees the slots; the index is empty again. */
void agg_index_clear(struct agg_index *x);

/* The next item whose hash is P's, or 0 when there is none (P then points
 * at the empty slot an insert takes). */
static inline uint32_t agg_index_next(const struct agg_index *x, struct agg_probe *p)
{
	for (;;) {
		p->pos = (p->pos + 1) & x->mask;
		const struct agg_index_slot *s = &x->slots[p->pos];
		if (!s->item)
			return 0;
		if (s->hash == p->hash)
			return s->item;
	}
}
/* The first item whose hash is H (0: none). An index never reserved is
 * empty: 0, and nothing can be put. */
static inline uint32_t agg_index_first(const struct agg_index *x, uint64_t h, struct agg_probe *p)
{
	p->hash = (uint32_t)h;
	p->pos = (p->hash - 1) & x->mask; /* next() steps onto hash & mask first */
	return x->slots ? agg_index_next(x, p) : 0;
}

/* The hashes the tables use: a word mixed in, the final avalanche, an
 * array of words, a string. */
static inline uint64_t agg_hash_mix(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}
static inline uint64_t agg_hash_finish(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}
uint64_t agg_hash_words(uint64_t seed, const uint64_t *w, uint32_t n);
uint64_t agg_hash_str(const char *s);

/* Fixed-size caches of what was learnt of a key (cache.c): an item may
 * take any of the AGG_CACHE_WAYS slots of its key's set. */
#define AGG_CACHE_WAYS 4
/* The first slot of the set of KEY, qualified by QUAL (a pid), in a cache
 * of N slots (a power of two, at least AGG_CACHE_WAYS). */
unsigned agg_cache_set(uint64_t key, uint64_t qual, unsigned n);
/* Room at the first slot of SET (AGG_CACHE_WAYS items of SIZE bytes):
 * each moves down one, the last (the least recently put) leaves. Returns
 * SET. */
void *agg_cache_front(void *set, size_t size);

/* One record crossing from a source to the aggregator. Addresses are
 * leaf first. Pointers are owned by the caller and only read during agg_add. */
struct agg_record {
	uint64_t time;   /* ns, the perf/trace clock */
	uint32_t pid;    /* process (tgid) */
	uint32_t tid;
	uint32_t cpu;
	uint32_t event;  /* index of the traced event in the plan */
	uint64_t weight; /* 1 per event; ns (profile) or us (offcpu) */
	uint64_t cgroup; /* the task's cgroup2 id (--per-cgroup), else 0 */
	uint64_t records; /* how many alike records this one counts for, weight their sum (0: one) */
	const uint64_t *kstack;
	uint32_t nkstack;
	const uint64_t *ustack;
	uint32_t nustack;
};

struct agg_config {
	bool key_pid;        /* keep every stack per process (-P, profile, offcpu, or comm shown) */
	bool key_tid;        /* and per thread: the comm shown is the thread's */
	bool key_cgroup;     /* and per cgroup (--per-cgroup) */
	size_t max_stacks;   /* 0 = unlimited; distinct keys beyond it are dropped and counted */
};

/* One counted key, as handed out by agg_table_entries(). Stack pointers stay
 * valid until the table is destroyed or reset. */
struct agg_entry {
	uint32_t event;
	uint32_t pid;        /* 0 when the key does not include the process */
	uint32_t tid;        /* 0 unless key_tid */
	uint64_t cgroup;     /* 0 unless key_cgroup */
	uint64_t first_time; /* time of the first record: names user addresses */
	uint64_t count;      /* records counted under this key */
	uint64_t weight;     /* summed record weights */
	const uint64_t *kstack;
	uint32_t nkstack;
	const uint64_t *ustack;
	uint32_t nustack;
};

struct agg_stats {
	uint64_t records;      /* records counted */
	uint64_t dropped;      /* records whose new key did not fit under max_stacks */
	uint64_t dropped_weight;
	size_t keys;           /* distinct keys */
	size_t stacks;         /* distinct interned address stacks */
};

struct agg_table;

/* Returns 0 and a new empty table in *out, or -ENOMEM. */
int agg_table_alloc(const struct agg_config *cfg, struct agg_table **out);
/* Frees the table and every stack it interned. NULL is fine. */
void agg_table_free(struct agg_table *t);
/* Counts one record. Returns 0, -ENOSPC when it was dropped because
 * max_stacks distinct keys are already held (it is counted in stats), or
 * -ENOMEM. User stacks are always keyed with their pid internally: user
 * addresses mean nothing without their process. */
int agg_add(struct agg_table *t, const struct agg_record *r);
/* Counts one more record into the key the last agg_add counted into, at
 * TIME with WEIGHT: for a caller that knows the record is that one's
 * again. Returns 0, or -ENOENT when there is no such key (none counted
 * yet, the last add dropped, or a reset since). */
int agg_add_last(struct agg_table *t, uint64_t time, uint64_t weight);
/* Returns the number of entries and points *out at a table-owned array
 * (valid until the next agg_add/agg_table_reset/destroy). */
size_t agg_table_entries(struct agg_table *t, const struct agg_entry **out);
/* Calls FN with the process and thread ids of each counted key (0 when the
 * key has none), in no order: the tasks whose names the stacks still need. */
void agg_table_tasks(const struct agg_table *t,
		     void (*fn)(void *ctx, uint32_t pid, uint32_t tid), void *ctx);
/* Forgets every count and stack (for -i intervals); keeps the config. */
void agg_table_reset(struct agg_table *t);
void agg_table_stats(const struct agg_table *t, struct agg_stats *out);

/* ---- named stacks: merging after symbolization, filters, ordering ---- */

/* A stack of names. frames[0 .. nkframes) are kernel frames leaf first,
 * frames[nkframes .. nkframes+nuframes) user frames leaf first. */
struct agg_named_stack {
	uint32_t event;
	uint32_t pid;          /* 0 unless kept per process */
	const char *comm;      /* NULL when comm is not part of the key */
	const char *cgroup;    /* the cgroup2 path (--per-cgroup), else NULL */
	const char **frames;
	uint32_t nkframes;
	uint32_t nuframes;
	uint64_t count;
	uint64_t weight;
};

struct agg_filter {
	uint64_t min_count;     /* -m: keep stacks with count >= this (0: all) */
	uint64_t min_weight;    /* offcpu --min-total (in weight units) */
	size_t top;             /* -t: keep the N with the highest count (0: all) */
	bool by_weight;         /* rank and -m by weight instead of count (profile, offcpu) */
	const char *const *exclude; /* -x globs (fnmatch), NULL-terminated; NULL = none */
};

struct agg_named_stats {
	size_t stacks_before;   /* distinct named stacks before filtering */
	size_t stacks_after;
	uint64_t count_before;
	uint64_t count_after;
	uint64_t weight_before;
	uint64_t weight_after;
	size_t excluded;        /* stacks removed by -x */
};

struct agg_named;

/* Returns 0 and an empty named table, or -ENOMEM. */
int agg_named_alloc(struct agg_named **out);
void agg_named_free(struct agg_named *n);
/* Adds count/weight to the stack with these names (merging equal ones: same
 * event, pid, comm and cgroup strings and frame strings). Strings are copied.
 * Returns 0 or -ENOMEM. */
int agg_named_add(struct agg_named *n, const struct agg_named_stack *s);
/* Applies the filter and orders what is left from least to most frequent
 * (ties broken by frames, so output is deterministic). Returns the number of
 * stacks kept and points *out at a table-owned array valid until destroy. */
size_t agg_named_finish(struct agg_named *n, const struct agg_filter *f,
			const struct agg_named_stack **out, struct agg_named_stats *stats);

/* Returns true when NAME matches glob PAT (fnmatch without flags). */
bool agg_glob_match(const char *pat, const char *name);

#endif
