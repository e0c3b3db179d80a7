/* Kernel symbols from a kallsyms-format file: read whole into one buffer
 * that also holds the names (NUL-terminated in place), parsed by hand,
 * sorted by address (skipped when the file already is), looked up by binary
 * search; names are found through the hash index (aggregate/index.c),
 * built on the first lookup by name (naming stacks needs none: a third of the load's CPU spared). Only
 * text symbols are kept: stacks hold code addresses. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "aggregate/aggregate.h"
#include "symbolize/internal.h"
#include "symbolize/kallsyms_int.h"

/* What the last symbol (or the last of vmlinux/a module, whose successor is
 * elsewhere in memory) may span; no kernel function is larger. */
#define KSYM_LAST_SPAN (1u << 20)

/* Grows R to at least CAP bytes (a fresh mapping is populated). Returns 0
 * or -ENOMEM. */
static int sym_region_grow(struct sym_region *r, size_t cap)
{
	void *p;
	if (cap <= r->cap)
		return 0;
	if (r->p)
		p = mremap(r->p, r->cap, cap, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	r->p = p;
	r->cap = cap;
	return 0;
}

static void sym_region_free(struct sym_region *r)
{
	if (r->p)
		munmap(r->p, r->cap);
	r->p = NULL;
	r->cap = 0;
}

/* Reads PATH whole into R, NUL-terminated; /proc files have no size. */
static int read_whole(const char *path, struct sym_region *r, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	struct stat st;
	size_t n = 0;
	if (fd < 0)
		return -errno;
	size_t cap = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 4096 : 8u << 20;
	for (ret = sym_region_grow(r, cap); ret == 0;) {
		if (n + 1 >= r->cap) {
			ret = r->cap >= (1u << 30) ? -EFBIG : sym_region_grow(r, r->cap * 2);
			if (ret)
				break;
		}
		ssize_t got = read(fd, (char *)r->p + n, r->cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			ret = -errno;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (ret == 0) {
		((char *)r->p)[n] = '\0';
		*len = n;
	}
	return ret;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Hex number at *p (no prefix); *p is left on the first other character. */
static uint64_t parse_hex(char **p, bool *ok)
{
	uint64_t v = 0;
	char *s = *p;
	int digits = 0;
	for (;; s++, digits++) {
		unsigned c = (unsigned char)*s, d;
		if (c - '0' < 10)
			d = c - '0';
		else if ((c | 0x20) - 'a' < 6)
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		v = v << 4 | d;
	}
	*ok = digits > 0 && digits <= 16;
	*p = s;
	return v;
}

/* Cuts one "ADDR TYPE NAME[\t[MODULE]]" line in place; false to skip it. */
static bool parse_line(char *line, char *base, struct ksym *s)
{
	bool ok;
	char *q = line;
	s->addr = parse_hex(&q, &ok);
	if (!ok || q[0] != ' ' || !is_text(q[1]) || q[2] != ' ' || !q[3])
		return false;
	char *name = q + 3, *mod = strchr(name, '\t');
	s->module = 0;
	if (mod) {
		*mod++ = '\0';
		if (*mod == '[') {
			mod++;
			mod[strcspn(mod, "]")] = '\0';
			s->module = (uint32_t)(mod - base);
		}
	}
	s->name = (uint32_t)(name - base);
	s->global = q[1] == 'T' || q[1] == 'W';
	return true;
}

static int parse(struct sym_kernel *k, size_t len, bool *all_zero)
{
	size_t cap = len / 32 + 16;
	bool sorted = true;
	if (sym_region_grow(&k->rsyms, cap * sizeof(*k->syms)) < 0)
		return -ENOMEM;
	k->syms = k->rsyms.p;
	*all_zero = true;
	for (char *p = k->buf, *end = k->buf + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *line = p;
		if (!nl)
			nl = end;
		*nl = '\0';
		p = nl + 1;
		struct ksym s;
		if (!parse_line(line, k->buf, &s))
			continue;
		if (k->n == cap) {
			if (sym_region_grow(&k->rsyms, (cap *= 2) * sizeof(*k->syms)) < 0)
				return -ENOMEM;
			k->syms = k->rsyms.p;
		}
		s.line = (uint32_t)k->n;
		if (s.addr)
			*all_zero = false;
		if (k->n && k->syms[k->n - 1].addr > s.addr)
			sorted = false;
		k->syms[k->n++] = s;
	}
	if (!sorted)
		qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	return 0;
}

/* The symbol NAME names first (by address) in the index, or -1. */
static long indexed(const struct sym_kernel *k, const char *name, uint64_t h, struct agg_probe *p)
{
	for (uint32_t it = agg_index_first(&k->byname, h, p); it; it = agg_index_next(&k->byname, p))
		if (strcmp(k->buf + k->syms[it - 1].name, name) == 0)
			return it - 1;
	return -1;
}

/* Indexes the names, each under its first symbol by address. Returns 0 or
 * -ENOMEM. */
static int index_names(struct sym_kernel *k)
{
	if (k->n >= UINT32_MAX / 2 || agg_index_reset(&k->byname, (uint32_t)k->n) < 0)
		return -ENOMEM;
	for (size_t j = 0; j < k->n; j++) {
		const char *name = k->buf + k->syms[j].name;
		struct agg_probe p;
		if (indexed(k, name, agg_hash_str(name), &p) < 0)
			agg_index_put(&k->byname, &p, (uint32_t)j + 1);
	}
	k->indexed = true;
	return 0;
}

/* Index of the first symbol (by address) called NAME, or -1. The index is a
 * cache the const lookups fill (hence the cast), once. */
static long by_name(const struct sym_kernel *k, const char *name)
{
	struct agg_probe p;
	if (!k->indexed && index_names((struct sym_kernel *)k) < 0)
		return -1;
	return indexed(k, name, agg_hash_str(name), &p);
}

struct sym_kernel *sym_kernel_alloc(void)
{
	struct sym_kernel *k = calloc(1, sizeof(*k));
	if (k && pthread_mutex_init(&k->live_lock, NULL) != 0) {
		free(k);
		k = NULL;
	}
	return k;
}

int sym_kernel_load(const char *path, struct sym_kernel **out)
{
	size_t len = 0;
	bool all_zero = true;
	int ret;
	struct sym_kernel *k = sym_kernel_alloc();
	if (!k)
		return -ENOMEM;
	ret = read_whole(path, &k->rbuf, &len);
	k->buf = k->rbuf.p;
	if (ret == 0 && len >= UINT32_MAX)
		ret = -EFBIG; /* name offsets are 32-bit */
	if (ret == 0)
		ret = parse(k, len, &all_zero);
	if (ret == 0 && (k->n == 0 || all_zero))
		ret = k->n ? -EPERM : -ENOENT;
	if (ret < 0) {
		sym_kernel_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

void sym_kernel_free(struct sym_kernel *k)
{
	if (!k)
		return;
	sym_region_free(&k->rsyms);
	agg_index_clear(&k->byname);
	sym_region_free(&k->rbuf);
	sym_kernel_free(k->live);
	free(k->live_path);
	pthread_mutex_destroy(&k->live_lock);
	free(k);
}

/* Index of the last symbol at or below ADDR, or -1. */
static long find(const struct sym_kernel *k, uint64_t addr)
{
	return (long)sym_addr_upper_bound(k->syms, k->n, sizeof(*k->syms), addr) - 1;
}

static bool same_module(const struct sym_kernel *k, const struct ksym *a, const struct ksym *b)
{
	if (!a->module || !b->module)
		return a->module == b->module;
	return strcmp(k->buf + a->module, k->buf + b->module) == 0;
}

/* End of symbol I: the next higher address, capped where the next symbol is
 * in another module (or there is none), as module text is not contiguous.
 * *LAST: whether I is the last of vmlinux's or its module's symbols there
 * (what follows it may be code no symbol of theirs holds). */
static uint64_t end_of(const struct sym_kernel *k, size_t i, bool *last)
{
	const struct ksym *s = &k->syms[i];
	uint64_t cap = s->addr + KSYM_LAST_SPAN;
	if (cap < s->addr)
		cap = UINT64_MAX;
	*last = true;
	for (size_t j = i + 1; j < k->n; j++) {
		if (k->syms[j].addr == s->addr)
			continue;
		*last = !same_module(k, s, &k->syms[j]);
		if (!*last || k->syms[j].addr < cap)
			return k->syms[j].addr;
		break;
	}
	return cap;
}

/* Among aliases at one address a global symbol names it (the entry point
 * callers and kprobes use: __x64_sys_getppid, not its inlined static
 * __do_sys_getppid); then the fewest leading underscores (startup_64 over
 * _stext); then file order. */
static size_t best_alias(const struct sym_kernel *k, size_t i)
{
	size_t best = i, bu = strspn(k->buf + k->syms[i].name, "_");
	bool bg = k->syms[i].global;
	for (size_t j = i; j > 0 && k->syms[j - 1].addr == k->syms[i].addr; j--) {
		const struct ksym *c = &k->syms[j - 1];
		size_t u = strspn(k->buf + c->name, "_");
		if ((c->global && !bg) || (c->global == bg && u <= bu)) {
			best = j - 1;
			bu = u;
			bg = c->global;
		}
	}
	return best;
}

/* The kernel's own list, read now, or NULL when it cannot be. */
static struct sym_kernel *live(const struct sym_kernel *k)
{
	struct sym_kernel *w = (struct sym_kernel *)k; /* filled once, as the index */
	pthread_mutex_lock(&w->live_lock);
	if (!w->live && !w->live_failed && sym_kernel_load(w->live_path, &w->live) < 0)
		w->live_failed = true;
	pthread_mutex_unlock(&w->live_lock);
	return w->live;
}

bool sym_kernel_read_live(const struct sym_kernel *k)
{
	if (!k || !k->live_path)
		return false;
	struct sym_kernel *w = (struct sym_kernel *)k;
	pthread_mutex_lock(&w->live_lock);
	bool read = w->live || w->live_failed;
	pthread_mutex_unlock(&w->live_lock);
	return read;
}

/* Index of the (best alias of the) symbol containing ADDR in *KP, or -1;
 * *END its end. A saved table answers only for addresses between two
 * symbols of vmlinux or of one module: past a last symbol or below all
 * of them, *KP becomes the kernel's own list (kallsyms_int.h). */
static long containing(const struct sym_kernel **kp, uint64_t addr, uint64_t *end)
{
	const struct sym_kernel *k = *kp;
	long i = k && k->n ? find(k, addr) : -1;
	bool last = true;
	if (i >= 0)
		*end = end_of(k, (size_t)i, &last);
	const struct sym_kernel *l = k && k->live_path && last ? live(k) : NULL;
	if (l) {
		*kp = l;
		return containing(kp, addr, end);
	}
	if (i < 0 || addr >= *end)
		return -1;
	return (long)best_alias(k, (size_t)i);
}

const char *sym_kernel_lookup(const struct sym_kernel *k, uint64_t addr, uint64_t *off,
			      const char **module)
{
	uint64_t end;
	long i = containing(&k, addr, &end);
	if (i < 0)
		return NULL;
	if (off)
		*off = addr - k->syms[i].addr;
	if (module)
		*module = k->syms[i].module ? k->buf + k->syms[i].module : NULL;
	return k->buf + k->syms[i].name;
}

int sym_kernel_extent(const struct sym_kernel *k, uint64_t addr, uint64_t *start, uint64_t *end)
{
	long i = containing(&k, addr, end);
	if (i < 0)
		return -ENOENT;
	*start = k->syms[i].addr;
	return 0;
}

int sym_kernel_range(const struct sym_kernel *k, const char *name, uint64_t *start, uint64_t *end)
{
	long i = k && name ? by_name(k, name) : -1;
	if (i < 0)
		return -ENOENT;
	bool last;
	*start = k->syms[i].addr;
	*end = end_of(k, (size_t)i, &last);
	return 0;
}

int sym_kernel_aliases(const struct sym_kernel *k, uint64_t addr, const char **names, int max)
{
	long i = k && k->n ? find(k, addr) : -1;
	int n = 0;
	if (i < 0 || k->syms[i].addr != addr)
		return 0;
	while (i > 0 && k->syms[i - 1].addr == addr)
		i--;
	for (; (size_t)i < k->n && k->syms[i].addr == addr; i++, n++)
		if (n < max)
			names[n] = k->buf + k->syms[i].name;
	return n;
}

int sym_kernel_foreach(const struct sym_kernel *k,
		       int (*fn)(void *ctx, const char *name, uint64_t addr), void *ctx)
{
	for (size_t i = 0; k && i < k->n; i++) {
		int ret = fn(ctx, k->buf + k->syms[i].name, k->syms[i].addr);
		if (ret)
			return ret;
	}
	return 0;
}
