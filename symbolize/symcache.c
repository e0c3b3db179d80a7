/* Names of addresses, each distinct address resolved once: kernel addresses
 * through kallsyms, user addresses through the process history as it was when
 * the stack was first seen. Names live as long as the cache, so named stacks
 * can point at them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/symcache.h"

struct slot {
	uint64_t addr;
	uint32_t pid;     /* 0 for kernel addresses */
	uint32_t used;
	const char *name;
};

struct ft_symcache {
	struct slot *slots;
	size_t cap, n;
	char **names;     /* every string made, for freeing */
	size_t nnames, capnames;
	struct ft_symcache_style style;
	const struct sym_kernel *k;
	struct sym_procs *procs;
	uint64_t resolved;
};

int ft_symcache_create(const struct sym_kernel *k, struct sym_procs *procs,
		       const struct ft_symcache_style *style, struct ft_symcache **out)
{
	struct ft_symcache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cap = 4096;
	c->slots = calloc(c->cap, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return -ENOMEM;
	}
	c->k = k;
	c->procs = procs;
	c->style = *style;
	*out = c;
	return 0;
}

void ft_symcache_set_kernel(struct ft_symcache *c, const struct sym_kernel *k)
{
	c->k = k;
}

void ft_symcache_free(struct ft_symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c->slots);
	free(c);
}

static size_t slot_hash(uint64_t addr, uint32_t pid)
{
	uint64_t h = (addr ^ ((uint64_t)pid << 32)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 29));
}

static int grow(struct ft_symcache *c)
{
	size_t cap = c->cap * 2;
	struct slot *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->slots[i].used)
			continue;
		size_t j = slot_hash(c->slots[i].addr, c->slots[i].pid) & (cap - 1);
		while (n[j].used)
			j = (j + 1) & (cap - 1);
		n[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = n;
	c->cap = cap;
	return 0;
}

static const char *keep(struct ft_symcache *c, char *s)
{
	if (!s)
		return NULL;
	if (c->nnames == c->capnames) {
		size_t cap = c->capnames ? c->capnames * 2 : 1024;
		char **n = realloc(c->names, cap * sizeof(*n));
		if (!n) {
			free(s);
			return NULL;
		}
		c->names = n;
		c->capnames = cap;
	}
	c->names[c->nnames++] = s;
	return s;
}

/* Formats a frame as -s / -v ask: "name", "name+0x1a", "0xaddr name". */
static char *format(const struct ft_symcache *c, uint64_t addr, const char *name, uint64_t off)
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

static char *resolve(struct ft_symcache *c, uint32_t pid, uint64_t time, uint64_t addr, bool leaf)
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
		/* no symbol in a known file: "[libc.so.6]", as stackcollapse-perf names it */
		const char *base = strrchr(f.dso, '/');
		char *bracketed = NULL;
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

const char *ft_symcache_name(struct ft_symcache *c, uint32_t pid, uint64_t time, uint64_t addr,
			     bool leaf)
{
	/* leaf and non-leaf lookups of one user address may differ: key apart */
	uint64_t key = pid && !leaf ? addr | (1ull << 63) : addr;
	size_t i = slot_hash(key, pid) & (c->cap - 1);
	while (c->slots[i].used) {
		if (c->slots[i].addr == key && c->slots[i].pid == pid)
			return c->slots[i].name;
		i = (i + 1) & (c->cap - 1);
	}
	const char *name = keep(c, resolve(c, pid, time, addr, leaf));
	if (!name)
		return "[unknown]";
	c->slots[i] = (struct slot){ .addr = key, .pid = pid, .used = 1, .name = name };
	if (++c->n * 2 > c->cap && grow(c) < 0)
		c->n--; /* stays usable, just fuller */
	return name;
}

uint64_t ft_symcache_resolved(const struct ft_symcache *c)
{
	return c->resolved;
}
