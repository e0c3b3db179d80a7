/* Names of addresses, each distinct address resolved once: kernel addresses
 * through kallsyms, user addresses through the process history as it was when
 * the stack was first seen. A user address is one per pid and layout
 * (sym_procs_image): after an exec, or another library mapped where one
 * was, the same pid and address name other code. Names live until the cache is cleared (each -i
 * interval) or freed, so named stacks can point at them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "aggregate/aggregate.h"
#include "symbolize/symbolize.h"

struct entry {
	uint64_t addr;    /* with bit 63 set for a user return address */
	uint32_t pid;     /* 0 for kernel addresses */
	uint64_t image;   /* the process's layout; 0 for kernel addresses */
	const char *name;
	const char *deferred; /* its deferred text (style.build_ids), else NULL */
};

struct sym_cache {
	struct entry *entries; /* [0] unused: index items start at 1 */
	uint32_t n, cap;
	struct agg_index index;
	char **names;     /* every string made, for freeing */
	size_t nnames, capnames;
	struct sym_cache_style style;
	const struct sym_kernel *k;
	struct sym_procs *procs;
	uint64_t resolved;
	bool use_deferred; /* sym_cache_name hands out the deferred text */
};

int sym_cache_alloc(const struct sym_kernel *k, struct sym_procs *procs,
		       const struct sym_cache_style *style, struct sym_cache **out)
{
	struct sym_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->n = 1;
	c->k = k;
	c->procs = procs;
	c->style = *style;
	*out = c;
	return 0;
}

void sym_cache_set_kernel(struct sym_cache *c, const struct sym_kernel *k)
{
	c->k = k;
}

void sym_cache_clear(struct sym_cache *c)
{
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c->entries);
	agg_index_clear(&c->index);
	c->names = NULL;
	c->nnames = c->capnames = 0;
	c->entries = NULL;
	c->n = 1;
	c->cap = 0;
}

void sym_cache_free(struct sym_cache *c)
{
	if (!c)
		return;
	sym_cache_clear(c);
	free(c);
}

/* Room for one more entry. Returns 0 or -ENOMEM. */
static int reserve(struct sym_cache *c)
{
	if (MEM_GROW(c->entries, c->cap, (size_t)c->n + 1, 4096))
		return -ENOMEM;
	return agg_index_reserve(&c->index);
}

static const char *keep(struct sym_cache *c, char *s)
{
	if (!s)
		return NULL;
	if (MEM_GROW(c->names, c->capnames, (size_t)c->nnames + 1, 1024)) {
		free(s);
		return NULL;
	}
	c->names[c->nnames++] = s;
	return s;
}

/* Formats a frame as -s / -v ask: "name", "name+0x1a", "0xaddr name". */
static char *format(const struct sym_cache *c, uint64_t addr, const char *name, uint64_t off)
{
	char *s = NULL;
	char addrbuf[24] = "";
	if (c->style.addresses)
		snprintf(addrbuf, sizeof(addrbuf), "0x%" PRIx64 " ", addr);
	if (!name)
		name = "[unknown]";
	int r;
	if (c->style.offsets && name[0] != '[')
		r = asprintf(&s, "%s%s+0x%" PRIx64, addrbuf, name, off);
	else
		r = asprintf(&s, "%s%s", addrbuf, name);
	return r < 0 ? NULL : s;
}

/* Resolves a user or kernel address into its name; *DEFERRED (with
 * style.build_ids) gets the deferred text of a frame in a file with a
 * build-id but no symbol there, else stays NULL. */
static char *resolve(struct sym_cache *c, uint32_t pid, uint64_t time, uint64_t addr, bool leaf,
		     char **deferred)
{
	uint64_t off = 0;
	c->resolved++;
	if (pid == 0) {
		const char *name = c->k ? sym_kernel_lookup(c->k, addr, &off, NULL) : NULL;
		return format(c, addr, name, off);
	}
	/* a return address: the call is the instruction before it */
	uint64_t look = leaf ? addr : addr - 1;
	struct sym_frame f = { 0 };
	if (!c->procs || sym_procs_lookup(c->procs, pid, time, look, &f) < 0)
		return format(c, addr, NULL, 0);
	if (!f.name && f.dso) {
		/* no symbol in a known file: "[libc.so.6]", as stackcollapse-perf names
		 * it, or what names it later (build-id and address) */
		const char *base = strrchr(f.dso, '/');
		char *bracketed = NULL, *id = NULL;
		if (c->style.build_ids && f.build_id &&
		    (id = sym_deferred_format(base ? base + 1 : f.dso, f.vaddr, f.build_id,
					      f.build_id_len))) {
			*deferred = format(c, addr, id, 0);
			free(id);
		}
		if (asprintf(&bracketed, "[%s]", base ? base + 1 : f.dso) < 0)
			return NULL;
		char *s = format(c, addr, bracketed, 0);
		free(bracketed);
		return s;
	}
	if (!f.name)
		return format(c, addr, NULL, 0);
	char *readable = c->style.demangle ? sym_demangle(f.name) : NULL;
	char *s = format(c, addr, readable ? readable : f.name, f.offset + (leaf ? 0 : 1));
	free(readable);
	return s;
}

const char *sym_cache_name(struct sym_cache *c, uint32_t pid, uint64_t time, uint64_t addr,
			     bool leaf)
{
	/* leaf and non-leaf lookups of one user address may differ: key apart */
	uint64_t key = pid && !leaf ? addr | (1ull << 63) : addr;
	uint64_t image = pid && c->procs ? sym_procs_image(c->procs, pid, time) : 0;
	struct agg_probe p;
	bool room = reserve(c) == 0;
	uint64_t h = agg_hash_finish(agg_hash_mix(agg_hash_mix(key, pid), image));
	for (uint32_t i = agg_index_first(&c->index, h, &p); i; i = agg_index_next(&c->index, &p))
		if (c->entries[i].addr == key && c->entries[i].pid == pid &&
		    c->entries[i].image == image)
			return c->use_deferred && c->entries[i].deferred ? c->entries[i].deferred :
									  c->entries[i].name;
	char *later = NULL;
	const char *name = keep(c, resolve(c, pid, time, addr, leaf, &later));
	const char *deferred = later ? keep(c, later) : NULL;
	if (!name)
		return "[unknown]";
	if (room) { /* else named again next time */
		c->entries[c->n] = (struct entry){ .addr = key, .pid = pid, .image = image,
						   .name = name, .deferred = deferred };
		agg_index_put(&c->index, &p, c->n++);
	}
	return c->use_deferred && deferred ? deferred : name;
}

uint64_t sym_cache_resolved(const struct sym_cache *c)
{
	return c->resolved;
}

void sym_cache_use_deferred(struct sym_cache *c, bool on)
{
	c->use_deferred = on;
}
