/* Reading the perf source's rings: every ring drained in place, the
 * records merged into time order across the CPUs and handed to the
 * config's record callback with their plan event. */
#include <errno.h>
#include <sys/epoll.h>
#include "source/perf_source_int.h"

bool ft_perf_source_owns(const struct ft_perf_source *ps, const void *cookie)
{
	return ps && ps->rings && (const struct ft_perf_ring *)cookie >= ps->rings &&
	       (const struct ft_perf_ring *)cookie < ps->rings + ps->ncpus;
}

/* perfev's record callback: the sample's plan event looked up by its id.
 * Stops the drain (1) once the pass's budget is spent. */
static int on_record(void *ctx, const struct perfev_record *rec)
{
	struct ft_perf_source *ps = ctx;
	int ev = rec->kind == PERFEV_SAMPLE ? ft_perf_source_event(ps, rec->sample.id) : -1;
	int ret = ps->cfg.record(ps->cfg.ctx, rec, ev);
	return ret ? ret : ps->budget > 0 && --ps->budget == 0;
}

static int drain_ring(struct ft_perf_source *ps, struct perfev_ring *r)
{
	long n = perfev_ring_drain(r, ps->sample_type, ps->regs_mask, on_record, ps);
	return n < 0 ? (int)n : 0;
}

/* The ring whose next record is the oldest (-1 when none has any), and in
 * *UNTIL the next-oldest time among the others: that ring may be read up
 * to it before another ring's record comes first. */
static int oldest_ring(const uint64_t *next, int n, uint64_t *until)
{
	int a = -1;
	*until = UINT64_MAX;
	for (int c = 0; c < n; c++) {
		if (next[c] == UINT64_MAX)
			continue;
		if (a < 0 || next[c] < next[a]) {
			if (a >= 0)
				*until = next[a];
			a = c;
		} else if (next[c] < *until) {
			*until = next[c];
		}
	}
	return a;
}

/* Records a pass hands over before it stops for the rings' growth, while
 * one may grow: a pass lasts as long as the rings keep filling, and a
 * reader slower than the writers (new processes' files to load, as
 * pyenv's shims run a dozen bash processes before python) adopted a
 * grown ring only when its pass ended, 0.9-1.7 s after it was mapped,
 * while the small one overflowed: 11-19k of ~50k mallocs lost */
#define GROW_CHECK_RECORDS 256

/* The rings' records merged into time order: user stacks are walked as
 * samples are read, and a sample needs its process's exec and mmap records,
 * which sit in the ring of whichever CPU the process ran on then (a ring
 * that may not have filled enough to wake the loop). Draining ring after
 * ring, oldest first, was not enough: a process that ran on CPU 1, then
 * mapped a library on CPU 0 and ran on CPU 1 again had its later samples
 * walked (and left short, as if their code were unknown) before the mmap.
 * Each step drains the ring holding the oldest record up to the next ring's
 * oldest; first times are kept between steps (one decode a step). A CPU
 * whose ring grows has two for a while (perf_grow.c), merged alike. */
static int drain_pass(struct ft_perf_source *ps, bool *more)
{
	struct perfev_ring *rs[2 * FT_MAX_CPUS];
	uint64_t next[2 * FT_MAX_CPUS], until;
	bool broken[2 * FT_MAX_CPUS];
	int n = 0, ret, a;
	for (int c = 0; c < ps->ncpus; c++) {
		if (ps->rings[c].ring.base)
			rs[n++] = &ps->rings[c].ring;
		if (ps->rings[c].next.base)
			rs[n++] = &ps->rings[c].next;
	}
	for (int i = 0; i < n; i++) {
		ret = perfev_ring_first_time(rs[i], ps->sample_type, ps->regs_mask, &next[i]);
		broken[i] = ret < 0 && ret != -ENOENT;
		if (ret < 0)
			next[i] = UINT64_MAX;
	}
	ps->budget = ft_perf_source_grow_pending(ps) ? GROW_CHECK_RECORDS : -1;
	/* spent: the rest after a growth step, in order (a stopped drain's
	 * next time is not known: the pass ends there) */
	while (ps->budget && (a = oldest_ring(next, n, &until)) >= 0) {
		uint64_t was = next[a];
		long got = perfev_ring_drain_until(rs[a], ps->sample_type, ps->regs_mask, until,
						   on_record, ps, &next[a]);
		if (got < 0)
			return (int)got;
		if (got == 0 && next[a] == was)
			next[a] = UINT64_MAX; /* no progress: cannot happen; never spin */
	}
	/* a ring whose oldest record could not be decoded: as it comes (the
	 * drain skips what it cannot decode, and says when a header is broken) */
	for (int i = 0; i < n && ps->budget; i++)
		if (broken[i] && (ret = drain_ring(ps, rs[i])) < 0)
			return ret;
	*more = ps->budget == 0;
	return ft_perf_source_grow_step(ps);
}

static int drain_merged(struct ft_perf_source *ps)
{
	bool more;
	int ret;
	if (!ps)
		return 0;
	do
		ret = drain_pass(ps, &more);
	while (ret >= 0 && more);
	return ret;
}

int ft_perf_source_ready(struct ft_perf_source *ps, void *cookie)
{
	(void)cookie; /* every ring is drained, in time order */
	return drain_merged(ps);
}

int ft_perf_source_hangup(struct ft_perf_source *ps, void *cookie, int epfd)
{
	struct ft_perf_ring *r = cookie;
	int ret = drain_merged(ps);
	if (ret < 0)
		return ret;
	/* a ring growing has two owners, the same task's, each hanging up
	 * (in one batch of the loop's: the second finds neither watched) */
	if ((ret = ft_perf_ring_watch(epfd, r, r->ring.fd, false)) < 0)
		return ret;
	if (r->next_owner >= 0)
		ft_perf_ring_watch(epfd, r, r->next_owner, false);
	ft_debug("perf ring for CPU %d: its task exited", r->cpu);
	return 0;
}

int ft_perf_source_drain_all(struct ft_perf_source *ps)
{
	return drain_merged(ps);
}
