/* agg_named: stacks of symbol names. Every string is interned once, so two
 * stacks are equal exactly when their frame pointers are equal; merging is
 * a hash lookup over pointers. Then filters (-x, -m, -t) and ordering. */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct named_chunk {
	struct named_chunk *next;
	size_t used, cap;
	_Alignas(8) char bytes[];
};

struct named_str {
	const char *s;
	uint64_t hash;
};

struct named_entry {
	struct agg_named_stack s; /* comm and frames point at interned strings */
	uint64_t hash;
};

/* Output arrays of earlier finish calls stay valid until destroy. */
struct named_out {
	struct named_out *next;
	struct agg_named_stack stacks[];
};

/* Slot arrays hold index+1 into their item array, 0 meaning empty. */
struct agg_named {
	struct named_chunk *chunks;
	struct named_str *strs;
	uint32_t nstrs, capstrs;
	uint32_t *str_slots;
	uint32_t nstr_slots;
	struct named_entry *stacks;
	uint32_t nstacks, capstacks;
	uint32_t *slots;
	uint32_t nslots;
	struct named_out *outs;
};

#define CHUNK_BYTES (256 * 1024)
#define MIN_SLOTS 256u

static uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* FNV-1a: strings are short symbol names, this is not the hot path. */
static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 32);
}

/* Chunked bytes, 8-aligned: interned strings and frame arrays never move. */
static void *arena_alloc(struct agg_named *n, size_t size)
{
	struct named_chunk *c = n->chunks;

	size = (size + 7) & ~(size_t)7;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > CHUNK_BYTES ? size : CHUNK_BYTES;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = n->chunks;
		c->used = 0;
		c->cap = cap;
		n->chunks = c;
	}
	c->used += size;
	return c->bytes + c->used - size;
}

/* Rebuilds an index of slots (0 = empty, else index+1) from stored hashes. */
static int rehash(uint32_t **slots, uint32_t *nslots, const void *items,
		  size_t item_size, size_t hash_off, uint32_t count)
{
	uint32_t n = *nslots ? *nslots * 2 : MIN_SLOTS, mask = n - 1;
	uint32_t *s;

	if (n <= *nslots)
		return -ENOMEM;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t h;
		uint32_t j;

		memcpy(&h, (const char *)items + i * item_size + hash_off,
		       sizeof(h));
		for (j = (uint32_t)h & mask; s[j]; j = (j + 1) & mask)
			;
		s[j] = i + 1;
	}
	free(*slots);
	*slots = s;
	*nslots = n;
	return 0;
}

static int grow_array(void **arr, uint32_t *cap, uint32_t count, size_t size)
{
	uint32_t ncap;
	void *p;

	if (count < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : MIN_SLOTS;
	if (ncap <= *cap)
		return -ENOMEM;
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int intern(struct agg_named *n, const char *s, const char **out)
{
	size_t len = strlen(s);
	uint64_t h = hash_str(s, len);
	uint32_t mask, i;
	char *copy;

	if ((uint64_t)(n->nstrs + 1) * 2 > n->nstr_slots &&
	    rehash(&n->str_slots, &n->nstr_slots, n->strs, sizeof(*n->strs),
		   offsetof(struct named_str, hash), n->nstrs))
		return -ENOMEM;
	mask = n->nstr_slots - 1;
	for (i = (uint32_t)h & mask; n->str_slots[i]; i = (i + 1) & mask) {
		const struct named_str *e = &n->strs[n->str_slots[i] - 1];

		if (e->hash == h && strcmp(e->s, s) == 0) {
			*out = e->s;
			return 0;
		}
	}
	if (grow_array((void **)&n->strs, &n->capstrs, n->nstrs,
		       sizeof(*n->strs)))
		return -ENOMEM;
	copy = arena_alloc(n, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len + 1);
	n->strs[n->nstrs++] = (struct named_str){ .s = copy, .hash = h };
	n->str_slots[i] = n->nstrs;
	*out = copy;
	return 0;
}

static uint64_t stack_hash(const struct agg_named_stack *s)
{
	uint64_t h = mix(0x452821e638d01377ull, (uint64_t)s->event << 32 | s->pid);

	h = mix(h, (uintptr_t)s->comm);
	h = mix(h, (uint64_t)s->nkframes << 32 | s->nuframes);
	for (uint32_t i = 0; i < s->nkframes + s->nuframes; i++)
		h = mix(h, (uintptr_t)s->frames[i]);
	return h ^ (h >> 32);
}

/* Both stacks hold interned strings: pointer equality is string equality. */
static bool stack_equal(const struct agg_named_stack *a,
			const struct agg_named_stack *b)
{
	uint32_t nf = a->nkframes + a->nuframes;

	return a->event == b->event && a->pid == b->pid &&
	       a->comm == b->comm && a->nkframes == b->nkframes &&
	       a->nuframes == b->nuframes &&
	       (nf == 0 || memcmp(a->frames, b->frames, nf * sizeof(char *)) == 0);
}

int agg_named_create(struct agg_named **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void agg_named_destroy(struct agg_named *n)
{
	struct named_chunk *c, *next;
	struct named_out *o, *onext;

	if (!n)
		return;
	for (c = n->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	for (o = n->outs; o; o = onext) {
		onext = o->next;
		free(o);
	}
	free(n->strs);
	free(n->str_slots);
	free(n->stacks);
	free(n->slots);
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
	for (uint32_t i = 0; i < nf; i++)
		if (intern(n, s->frames[i] ? s->frames[i] : "", &tmp[i]))
			return -ENOMEM;
	return 0;
}

static int insert_new(struct agg_named *n, struct named_entry *e, uint32_t slot)
{
	uint32_t nf = e->s.nkframes + e->s.nuframes;
	const char **frames = NULL;

	if (grow_array((void **)&n->stacks, &n->capstacks, n->nstacks,
		       sizeof(*n->stacks)))
		return -ENOMEM;
	if (nf) {
		frames = arena_alloc(n, nf * sizeof(*frames));
		if (!frames)
			return -ENOMEM;
		memcpy(frames, e->s.frames, nf * sizeof(*frames));
	}
	e->s.frames = frames;
	n->stacks[n->nstacks++] = *e;
	n->slots[slot] = n->nstacks;
	return 0;
}

int agg_named_add(struct agg_named *n, const struct agg_named_stack *s)
{
	uint32_t nf = s->nkframes + s->nuframes, mask, i;
	const char *small[64], **tmp = small;
	struct named_entry e;
	int err = -ENOMEM;

	if (nf < s->nkframes || (nf && !s->frames))
		return -EINVAL;
	if (nf > 64 && !(tmp = malloc(nf * sizeof(*tmp))))
		return -ENOMEM;
	if (make_key(n, s, &e.s, tmp))
		goto out;
	e.hash = stack_hash(&e.s);
	if ((uint64_t)(n->nstacks + 1) * 2 > n->nslots &&
	    rehash(&n->slots, &n->nslots, n->stacks, sizeof(*n->stacks),
		   offsetof(struct named_entry, hash), n->nstacks))
		goto out;
	mask = n->nslots - 1;
	for (i = (uint32_t)e.hash & mask; n->slots[i]; i = (i + 1) & mask) {
		struct named_entry *o = &n->stacks[n->slots[i] - 1];

		if (o->hash == e.hash && stack_equal(&o->s, &e.s)) {
			o->s.count += s->count;
			o->s.weight += s->weight;
			err = 0;
			goto out;
		}
	}
	err = insert_new(n, &e, i);
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
 * then the kernel/user split), comm, pid. Equal keys were merged, so this
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
