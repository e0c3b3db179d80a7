/* Kernel-stack filters: see kfilter.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "collector/kfilter.h"
#include "report/report.h"

/* The memo of which ranges an ip is in: a count run's kernel stacks hold a
 * few hundred distinct ips, each seen again in most samples, and looking
 * them up in it costs less than three binary searches each (the machinery
 * ranges are thousands: every event's perf_trace_* and its kin) */
#define MEMO_SLOTS 4096u
enum { IN_MACHINERY = 1, IN_SELF = 2, IN_THROUGH = 4 };
struct ft_kfilter_memo {
	struct {
		uint64_t ip;
		uint8_t in;
	} slot[MEMO_SLOTS];
};

/* ftstack's own side band: with mmap tracking on, the kernel allocates in
 * perf_event_mmap (and its static helpers) on every mmap of every process. */
static bool is_self(const char *name)
{
	return name[0] == 'p' && strncmp(name, "perf_event_mmap", 15) == 0;
}

static int ranges_add(struct ft_ranges *r, uint64_t start, uint64_t end)
{
	if (MEM_GROW(r->r, r->cap, r->n + 1, 64))
		return -ENOMEM;
	r->r[r->n++] = (struct ft_range){ start, end };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct ft_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

bool ft_ranges_contain(const struct ft_ranges *r, uint64_t addr)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < r->r[mid].start)
			hi = mid;
		else if (addr >= r->r[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

struct init_ctx {
	struct ft_kfilter *f;
	const struct sym_kernel *k;
	bool track;
	const char *through; /* collecting --through ranges instead */
	int found;
	int err;
};

static int collect(void *arg, const char *name, uint64_t addr)
{
	struct init_ctx *c = arg;
	struct ft_ranges *dst[2] = { NULL, NULL };
	uint64_t start, end;
	if (c->through) {
		if (strcmp(name, c->through) == 0)
			dst[0] = &c->f->through; /* same-named statics: each its own range */
	} else {
		if (report_is_machinery(name))
			dst[0] = &c->f->machinery;
		if (c->track && is_self(name))
			dst[1] = &c->f->self;
	}
	if (!dst[0] && !dst[1])
		return 0;
	if (sym_kernel_extent(c->k, addr, &start, &end) < 0)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (dst[i] && ranges_add(dst[i], start, end) < 0)
			return c->err = -ENOMEM;
	}
	c->found++;
	return 0;
}

static int collect_all(struct init_ctx *c)
{
	sym_kernel_foreach(c->k, collect, c);
	struct ft_ranges *all[] = { &c->f->machinery, &c->f->self, &c->f->through };
	for (size_t i = 0; i < 3; i++)
		if (all[i]->n)
			qsort(all[i]->r, all[i]->n, sizeof(struct ft_range), range_cmp);
	return c->err;
}

int ft_kfilter_init(struct ft_kfilter *f, const struct sym_kernel *k, bool track_mmaps)
{
	memset(f, 0, sizeof(*f));
	if (!k)
		return 0;
	struct init_ctx c = { .f = f, .k = k, .track = track_mmaps };
	f->memo = calloc(1, sizeof(*f->memo)); /* none: every ip searched */
	return collect_all(&c);
}

int ft_kfilter_add_through(struct ft_kfilter *f, const struct sym_kernel *k, const char *name)
{
	struct init_ctx c = { .f = f, .k = k, .through = name };
	if (f->memo)
		memset(f->memo, 0, sizeof(*f->memo)); /* what was not --through may be now */
	int ret = collect_all(&c);
	if (ret < 0)
		return ret;
	return c.found ? 0 : -ENOENT;
}

void ft_kfilter_free(struct ft_kfilter *f)
{
	free(f->machinery.r);
	free(f->self.r);
	free(f->through.r);
	free(f->memo);
	memset(f, 0, sizeof(*f));
}

/* Which of F's ranges IP is in (IN_*), from the memo when it has it */
static unsigned where(const struct ft_kfilter *f, uint64_t ip)
{
	typeof(f->memo->slot[0]) *m = f->memo ?
		&f->memo->slot[((ip >> 4) ^ (ip >> 16)) & (MEMO_SLOTS - 1)] : NULL;
	if (m && m->ip == ip) /* an empty slot is ip 0, in no range */
		return m->in;
	unsigned in = (ft_ranges_contain(&f->machinery, ip) ? IN_MACHINERY : 0) |
		      (ft_ranges_contain(&f->self, ip) ? IN_SELF : 0) |
		      (ft_ranges_contain(&f->through, ip) ? IN_THROUGH : 0);
	if (m)
		*m = (typeof(*m)){ .ip = ip, .in = (uint8_t)in };
	return in;
}

enum ft_kfilter_verdict ft_kfilter_apply(const struct ft_kfilter *f, const uint64_t *ips,
					 uint32_t n, uint32_t *start)
{
	uint32_t i = 0;
	while (i < n && (where(f, ips[i]) & IN_MACHINERY))
		i++;
	*start = i;
	if (!f->self.n && !f->through.n)
		return FT_KEEP;
	uint32_t through = n;
	for (uint32_t j = i; j < n; j++) {
		unsigned in = where(f, ips[j]);
		if (in & IN_SELF)
			return FT_DROP_SELF;
		if ((in & IN_THROUGH) && through == n)
			through = j;
	}
	if (!f->through.n)
		return FT_KEEP;
	if (through == n)
		return FT_DROP_THROUGH;
	*start = through;
	return FT_KEEP;
}
