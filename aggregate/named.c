/* agg_named: stacks of symbol names. Every string is interned once, so two
 * stacks are equal exactly when their frame pointers are equal; merging is
 * a hash lookup over pointers. Then filters (-x, -m, -t) and ordering. */
#include "mem/mem.h"
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct named_entry {
	struct agg_named_stack s; /* comm and frames point at interned strings */
};

/* Output arrays of earlier finish calls stay valid until destroy. */
struct named_out {
	struct named_out *next;
	struct agg_named_stack stacks[];
};

/* The indexes hold index+1 into their item array (items are never 0). */
struct agg_named {
	struct mem_arena arena; /* interned strings and frame arrays never move */
	const char **strs;
	uint32_t nstrs, capstrs;
	struct agg_index str_index;
	struct named_entry *stacks;
	uint32_t nstacks, capstacks;
	struct agg_index index;
	struct named_out *outs;
};

#define CHUNK_BYTES (256 * 1024)
#define MIN_ITEMS 256u

static int intern(struct agg_named *n, const char *s, const char **out)
{
	size_t len = strlen(s);
	struct agg_probe p;
	char *copy;

	if (agg_index_reserve(&n->str_index))
		return -ENOMEM;
	for (uint32_t i = agg_index_first(&n->str_index, agg_hash_str(s), &p); i;
	     i = agg_index_next(&n->str_index, &p)) {
		if (strcmp(n->strs[i - 1], s) == 0) {
			*out = n->strs[i - 1];
			return 0;
		}
	}
	if (MEM_GROW(n->strs, n->capstrs, (size_t)n->nstrs + 1, MIN_ITEMS))
		return -ENOMEM;
	copy = mem_arena_alloc(&n->arena, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len + 1);
	n->strs[n->nstrs++] = copy;
	agg_index_put(&n->str_index, &p, n->nstrs);
	*out = copy;
	return 0;
}

static uint64_t stack_hash(const struct agg_named_stack *s)
{
	uint64_t h = agg_hash_mix(0x452821e638d01377ull, (uint64_t)s->event << 32 | s->pid);

	h = agg_hash_mix(h, (uintptr_t)s->comm);
	h = agg_hash_mix(h, (uintptr_t)s->cgroup);
	h = agg_hash_mix(h, (uint64_t)s->nkframes << 32 | s->nuframes);
	for (uint32_t i = 0; i < s->nkframes + s->nuframes; i++)
		h = agg_hash_mix(h, (uintptr_t)s->frames[i]);
	return agg_hash_finish(h);
}

/* Both stacks hold interned strings: pointer equality is string equality. */
static bool stack_equal(const struct agg_named_stack *a,
			const struct agg_named_stack *b)
{
	uint32_t nf = a->nkframes + a->nuframes;

	return a->event == b->event && a->pid == b->pid &&
	       a->comm == b->comm && a->cgroup == b->cgroup && a->nkframes == b->nkframes &&
	       a->nuframes == b->nuframes &&
	       (nf == 0 || memcmp(a->frames, b->frames, nf * sizeof(char *)) == 0);
}

int agg_named_alloc(struct agg_named **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out)
		(*out)->arena.chunk = CHUNK_BYTES;
	return *out ? 0 : -ENOMEM;
}

void agg_named_free(struct agg_named *n)
{
	struct named_out *o, *onext;

	if (!n)
		return;
	mem_arena_free(&n->arena);
	for (o = n->outs; o; o = onext) {
		onext = o->next;
		free(o);
	}
	free(n->strs);
	agg_index_clear(&n->str_index);
	free(n->stacks);
	agg_index_clear(&n->index);
	free(n);
}

/* Interns comm and frames into a key in arena memory (frames array is only
 * kept when the stack turns out to be new; otherwise it is small waste). */
static int make_key(struct agg_named *n, const struct agg_named_stack *s,
		    struct agg_named_stack *key, const char **tmp)
{
	uint32_t nf = s->nkframes + s->nuframes;

	*key = *s;
	key->frames = tmp;
	if (s->comm && intern(n, s->comm, &key->comm))
		return -ENOMEM;
	if (s->cgroup && intern(n, s->cgroup, &key->cgroup))
		return -ENOMEM;
	for (uint32_t i = 0; i < nf; i++)
		if (intern(n, s->frames[i] ? s->frames[i] : "", &tmp[i]))
			return -ENOMEM;
	return 0;
}

static int insert_new(struct agg_named *n, struct named_entry *e, const struct agg_probe *p)
{
	uint32_t nf = e->s.nkframes + e->s.nuframes;
	const char **frames = NULL;

	if (MEM_GROW(n->stacks, n->capstacks, (size_t)n->nstacks + 1, MIN_ITEMS))
		return -ENOMEM;
	if (nf) {
		frames = mem_arena_alloc(&n->arena, nf * sizeof(*frames));
		if (!frames)
			return -ENOMEM;
		memcpy(frames, e->s.frames, nf * sizeof(*frames));
	}
	e->s.frames = frames;
	n->stacks[n->nstacks++] = *e;
	agg_index_put(&n->index, p, n->nstacks);
	return 0;
}

int agg_named_add(struct agg_named *n, const struct agg_named_stack *s)
{
	uint32_t nf = s->nkframes + s->nuframes;
	const char *small[64], **tmp = small;
	struct named_entry e;
	struct agg_probe p;
	int err = -ENOMEM;

	if (nf < s->nkframes || (nf && !s->frames))
		return -EINVAL;
	if (nf > 64 && !(tmp = malloc(nf * sizeof(*tmp))))
		return -ENOMEM;
	if (make_key(n, s, &e.s, tmp))
		goto out;
	if (agg_index_reserve(&n->index))
		goto out;
	for (uint32_t i = agg_index_first(&n->index, stack_hash(&e.s), &p); i;
	     i = agg_index_next(&n->index, &p)) {
		struct named_entry *o = &n->stacks[i - 1];

		if (stack_equal(&o->s, &e.s)) {
			o->s.count += s->count;
			o->s.weight += s->weight;
			err = 0;
			goto out;
		}
	}
	err = insert_new(n, &e, &p);
out:
	if (tmp != small)
		free(tmp);
	return err;
}

/* ---- filtering and ordering ---- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

/* Everything but the rank: event, frames (lexicographic, shorter first,
 * then the kernel/user split), comm, pid, cgroup. Equal keys were merged, so this
 * is a total order and the output does not depend on insertion order. */
static int cmp_key(const struct agg_named_stack *a,
		   const struct agg_named_stack *b)
{
	uint32_t na = a->nkframes + a->nuframes, nb = b->nkframes + b->nuframes;
	int c = cmp_u64(a->event, b->event);

	for (uint32_t i = 0; !c && i < na && i < nb; i++)
		c = cmp_str(a->frames[i], b->frames[i]);
	if (!c)
		c = cmp_u64(na, nb);
	if (!c)
		c = cmp_u64(a->nkframes, b->nkframes);
	if (!c)
		c = cmp_str(a->comm, b->comm);
	if (!c)
		c = cmp_u64(a->pid, b->pid);
	if (!c)
		c = cmp_str(a->cgroup, b->cgroup);
	return c;
}

static int cmp_by_count(const void *pa, const void *pb)
{
	const struct agg_named_stack *a = pa, *b = pb;
	int c = cmp_u64(a->count, b->count);

	return c ? c : cmp_key(a, b);
}

static int cmp_by_weight(const void *pa, const void *pb)
{
	const struct agg_named_stack *a = pa, *b = pb;
	int c = cmp_u64(a->weight, b->weight);

	return c ? c : cmp_key(a, b);
}

static bool excluded(const struct agg_named_stack *s, const char *const *pats)
{
	if (!pats)
		return false;
	for (uint32_t i = 0; i < s->nkframes + s->nuframes; i++)
		for (const char *const *p = pats; *p; p++)
			if (agg_glob_match(*p, s->frames[i]))
				return true;
	return false;
}

static bool kept(const struct agg_named_stack *s, const struct agg_filter *f)
{
	uint64_t rank = f->by_weight ? s->weight : s->count;

	return rank >= f->min_count && s->weight >= f->min_weight;
}

size_t agg_named_finish(struct agg_named *n, const struct agg_filter *f,
			const struct agg_named_stack **out,
			struct agg_named_stats *stats)
{
	static const struct agg_filter none;
	struct agg_named_stats st = { .stacks_before = n->nstacks };
	struct named_out *o;
	size_t k = 0;

	if (!f)
		f = &none;
	*out = NULL;
	o = malloc(sizeof(*o) + (n->nstacks + 1) * sizeof(o->stacks[0]));
	if (!o) { /* -ENOMEM: nothing kept */
		if (stats)
			*stats = st;
		return 0;
	}
	o->next = n->outs;
	n->outs = o;
	for (uint32_t i = 0; i < n->nstacks; i++) {
		const struct agg_named_stack *s = &n->stacks[i].s;

		st.count_before += s->count;
		st.weight_before += s->weight;
		if (excluded(s, f->exclude))
			st.excluded++;
		else if (kept(s, f))
			o->stacks[k++] = *s;
	}
	qsort(o->stacks, k, sizeof(o->stacks[0]),
	      f->by_weight ? cmp_by_weight : cmp_by_count);
	/* ascending order: the top N are the last N */
	*out = o->stacks;
	if (f->top && k > f->top) {
		*out = o->stacks + (k - f->top);
		k = f->top;
	}
	st.stacks_after = k;
	for (size_t i = 0; i < k; i++) {
		st.count_after += (*out)[i].count;
		st.weight_after += (*out)[i].weight;
	}
	if (stats)
		*stats = st;
	return k;
}
