/* Kernel symbols from a kallsyms-format file: read whole, parsed by hand
 * (122k lines load in a few ms), sorted by address, looked up by binary
 * search. Only text symbols are kept: stacks hold code addresses. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/symbolize.h"

/* The last symbol has no next one to end it; nothing is larger than this. */
#define KSYM_LAST_SPAN (1u << 20)

struct ksym {
	uint64_t addr;
	uint32_t name;   /* offset into names */
	uint32_t module; /* offset into names, 0 = vmlinux */
};

struct sym_kernel {
	struct ksym *syms;
	size_t n;
	char *names; /* the file's own bytes, NUL-terminated in place */
};

static char *read_whole(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 20, n = 0;
	char *buf = fd >= 0 ? malloc(cap) : NULL;
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		n += (size_t)r;
	}
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (buf)
		buf[n] = '\0';
	*len = n;
	errno = buf ? 0 : (e ? e : ENOMEM);
	return buf;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Parses "ADDR TYPE NAME[\t[MODULE]]" lines in place. */
static int parse(struct sym_kernel *k, size_t len, bool *all_zero)
{
	size_t cap = len / 24 + 16;
	k->syms = malloc(cap * sizeof(*k->syms));
	if (!k->syms)
		return -ENOMEM;
	*all_zero = true;
	for (char *p = k->names, *end = k->names + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line = p;
		if (!nl)
			nl = end;
		*nl = '\0';
		p = nl + 1;
		char *q;
		uint64_t addr = strtoull(line, &q, 16);
		if (q == line || *q != ' ' || !is_text(q[1]) || q[2] != ' ')
			continue;
		char *name = q + 3, *mod = strchr(name, '\t');
		uint32_t modoff = 0;
		if (mod) {
			*mod++ = '\0';
			if (*mod == '[') {
				mod++;
				mod[strcspn(mod, "]")] = '\0';
				modoff = (uint32_t)(mod - k->names);
			}
		}
		if (addr)
			*all_zero = false;
		if (k->n == cap) {
			struct ksym *ns = realloc(k->syms, (cap *= 2) * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			k->syms = ns;
		}
		k->syms[k->n++] = (struct ksym){ addr, (uint32_t)(name - k->names), modoff };
	}
	qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	return 0;
}

int sym_kernel_load(const char *path, struct sym_kernel **out)
{
	size_t len;
	struct sym_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->names = read_whole(path, &len);
	if (!k->names) {
		int e = -errno;
		free(k);
		return e;
	}
	if (len >= UINT32_MAX) {
		sym_kernel_free(k);
		return -EFBIG;
	}
	bool all_zero;
	int ret = parse(k, len, &all_zero);
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
	free(k->syms);
	free(k->names);
	free(k);
}

/* Index of the last symbol at or below ADDR, or -1. */
static long find(const struct sym_kernel *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static uint64_t end_of(const struct sym_kernel *k, size_t i)
{
	for (size_t j = i + 1; j < k->n; j++)
		if (k->syms[j].addr > k->syms[i].addr)
			return k->syms[j].addr;
	return k->syms[i].addr + KSYM_LAST_SPAN;
}

const char *sym_kernel_lookup(const struct sym_kernel *k, uint64_t addr, uint64_t *off,
			      const char **module)
{
	long i = k ? find(k, addr) : -1;
	if (i < 0 || addr >= end_of(k, (size_t)i))
		return NULL;
	if (off)
		*off = addr - k->syms[i].addr;
	if (module)
		*module = k->syms[i].module ? k->names + k->syms[i].module : NULL;
	return k->names + k->syms[i].name;
}

int sym_kernel_extent(const struct sym_kernel *k, uint64_t addr, uint64_t *start, uint64_t *end)
{
	long i = find(k, addr);
	if (i < 0 || addr >= end_of(k, (size_t)i))
		return -ENOENT;
	*start = k->syms[i].addr;
	*end = end_of(k, (size_t)i);
	return 0;
}

int sym_kernel_range(const struct sym_kernel *k, const char *name, uint64_t *start, uint64_t *end)
{
	for (size_t i = 0; i < k->n; i++) {
		if (strcmp(k->names + k->syms[i].name, name) == 0) {
			*start = k->syms[i].addr;
			*end = end_of(k, i);
			return 0;
		}
	}
	return -ENOENT;
}

int sym_kernel_foreach(const struct sym_kernel *k,
		       int (*fn)(void *ctx, const char *name, uint64_t addr), void *ctx)
{
	for (size_t i = 0; i < k->n; i++) {
		int ret = fn(ctx, k->names + k->syms[i].name, k->syms[i].addr);
		if (ret)
			return ret;
	}
	return 0;
}
