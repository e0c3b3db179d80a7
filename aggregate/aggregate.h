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

/* One record crossing from a source to the aggregator. Addresses are
 * leaf first. Pointers are owned by the caller and only read during agg_add. */
struct agg_record {
	uint64_t time;   /* ns, the perf/trace clock */
	uint32_t pid;    /* process (tgid) */
	uint32_t tid;
	uint32_t cpu;
	uint32_t event;  /* index of the traced event in the plan */
	uint64_t weight; /* 1 per event; ns (profile) or us (offcpu) */
	const uint64_t *kstack;
	uint32_t nkstack;
	const uint64_t *ustack;
	uint32_t nustack;
};

struct agg_config {
	bool key_pid;        /* keep every stack per process (-P, profile, offcpu, or comm shown) */
	bool key_tid;        /* and per thread: the comm shown is the thread's */
	size_t max_stacks;   /* 0 = unlimited; distinct keys beyond it are dropped and counted */
};

/* One counted key, as handed out by agg_table_entries(). Stack pointers stay
 * valid until the table is destroyed or reset. */
struct agg_entry {
	uint32_t event;
	uint32_t pid;        /* 0 when the key does not include the process */
	uint32_t tid;        /* 0 unless key_tid */
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
int agg_table_create(const struct agg_config *cfg, struct agg_table **out);
/* Frees the table and every stack it interned. NULL is fine. */
void agg_table_destroy(struct agg_table *t);
/* Counts one record. Returns 0, -ENOSPC when it was dropped because
 * max_stacks distinct keys are already held (it is counted in stats), or
 * -ENOMEM. User stacks are always keyed with their pid internally: user
 * addresses mean nothing without their process. */
int agg_add(struct agg_table *t, const struct agg_record *r);
/* Returns the number of entries and points *out at a table-owned array
 * (valid until the next agg_add/agg_table_reset/destroy). */
size_t agg_table_entries(struct agg_table *t, const struct agg_entry **out);
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
int agg_named_create(struct agg_named **out);
void agg_named_destroy(struct agg_named *n);
/* Adds count/weight to the stack with these names (merging equal ones: same
 * event, pid, comm string and frame strings). Strings are copied.
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
