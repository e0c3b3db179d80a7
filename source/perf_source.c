/* The perf source as an object: its events' fds and their ids, its
 * per-CPU rings, their figures, and closing it all. Opening is in
 * perf_open.c, reading the rings in perf_drain.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "mem/mem.h"
#include "cli/progress.h"
#include "source/perf_source_int.h"

struct ft_perf_source *ft_perf_source_alloc(const struct ft_perf_config *cfg,
					    struct ft_event *events, int nevents, int ncpus)
{
	struct ft_perf_source *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->cfg = *cfg;
	ps->events = events;
	ps->nevents = nevents;
	ps->single_event = nevents == 1;
	ps->sample_type = PERFEV_SAMPLE_TYPE;
	ps->ncpus = ncpus;
	ps->rings = calloc(ncpus > 0 ? (size_t)ncpus : 1, sizeof(*ps->rings));
	if (!ps->rings) {
		free(ps);
		return NULL;
	}
	for (int c = 0; c < ncpus; c++)
		ps->rings[c].owner_fd = ps->rings[c].next_owner = -1;
	ps->epfd = -1;
	return ps;
}

int ft_perf_source_add_fd(struct ft_perf_source *ps, int fd, uint32_t event, int cpu)
{
	size_t cap = ps->capfds; /* one capacity for the three arrays */
	if (MEM_GROW(ps->fds, cap, ps->nfds + 1, 64))
		return -ENOMEM;
	cap = ps->capfds;
	if (MEM_GROW(ps->fd_event, cap, ps->nfds + 1, 64))
		return -ENOMEM;
	cap = ps->capfds;
	if (MEM_GROW(ps->fd_cpu, cap, ps->nfds + 1, 64))
		return -ENOMEM;
	ps->capfds = cap;
	ps->fd_event[ps->nfds] = event;
	ps->fd_cpu[ps->nfds] = cpu;
	ps->fds[ps->nfds++] = fd;
	return 0;
}

int ft_perf_source_add_id(struct ft_perf_source *ps, uint64_t id, uint32_t event)
{
	if (MEM_GROW(ps->ids, ps->capids, ps->nids + 1, 64))
		return -ENOMEM;
	ps->ids[ps->nids++] = (struct ft_id_map){ id, event };
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct ft_id_map *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

void ft_perf_source_ids_done(struct ft_perf_source *ps)
{
	if (ps->nids)
		qsort(ps->ids, ps->nids, sizeof(*ps->ids), id_cmp);
}

int ft_perf_source_event(const struct ft_perf_source *ps, uint64_t id)
{
	if (ps->single_event)
		return 0;
	size_t lo = 0, hi = ps->nids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ps->ids[mid].id == id)
			return (int)ps->ids[mid].event;
		if (ps->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const char *ft_perf_source_noun(const struct ft_event *events, int nevents)
{
	for (int e = 0; e < nevents; e++)
		if (!events[e].kfunc && events[e].kind != FT_EV_UPROBE_PMU &&
		    !events[e].dyn_file[0])
			return "events";
	return "probes";
}

int ft_perf_source_enable(struct ft_perf_source *ps)
{
	for (size_t i = 0; i < ps->nfds; i++) {
		int ret = perfev_enable(ps->fds[i]);
		if (ret < 0)
			return ret;
	}
	/* armed: the records wait in the rings helpers mapped till here */
	return ft_perf_source_maps_finish(ps);
}

void ft_perf_source_disable(struct ft_perf_source *ps)
{
	if (ps)
		ps->grow_kb = 0; /* the last drains start no growing (one under way ends) */
	for (size_t i = 0; ps && i < ps->nfds; i++)
		perfev_disable(ps->fds[i]);
}

int ft_perf_source_rings(const struct ft_perf_source *ps, int *cpus, int *fds, int max)
{
	int n = 0;
	for (int cpu = 0; ps && cpu < ps->ncpus && n < max; cpu++)
		if (ps->rings[cpu].ring.base) {
			cpus[n] = cpu;
			fds[n++] = ps->rings[cpu].ring.fd;
		}
	return n;
}

int ft_perf_source_watch(struct ft_perf_source *ps, int cpu, int epfd, bool watch)
{
	if (cpu < 0 || cpu >= ps->ncpus || !ps->rings[cpu].ring.base)
		return -ENOENT;
	return ft_perf_ring_watch(epfd, &ps->rings[cpu], ps->rings[cpu].ring.fd, watch);
}

size_t ft_perf_source_ring_kb(const struct ft_perf_source *ps, int cpu)
{
	if (!ps || cpu < 0 || cpu >= ps->ncpus)
		return 0;
	return ps->rings[cpu].ring.data_size / 1024;
}

int ft_perf_source_fullest(const struct ft_perf_source *ps, unsigned *pct)
{
	int fullest = -1;
	*pct = 0;
	for (int cpu = 0; ps && cpu < ps->ncpus; cpu++) {
		const struct perfev_ring *r = &ps->rings[cpu].ring;
		if (!r->data_size)
			continue;
		unsigned p = (unsigned)(r->max_fill * 100 / r->data_size);
		if (fullest < 0 || p > *pct) {
			*pct = p;
			fullest = cpu;
		}
	}
	return fullest;
}

void ft_perf_source_count_lost(struct ft_perf_source *ps)
{
	uint64_t sum = 0, lost;
	for (size_t i = 0; ps && i < ps->nfds; i++)
		if (perfev_lost(ps->fds[i], &lost) == 0)
			sum += lost;
	if (ps && ps->cfg.lost && sum > *ps->cfg.lost)
		*ps->cfg.lost = sum;
}

uint64_t ft_perf_source_bad_records(const struct ft_perf_source *ps)
{
	uint64_t n = 0;
	for (int cpu = 0; ps && cpu < ps->ncpus; cpu++)
		n += ps->rings[cpu].ring.bad_records;
	return n;
}

void ft_perf_source_adopt_rings(struct ft_perf_source *ps)
{
	for (size_t i = 0; i < ps->maps.n; i++) {
		struct ft_perf_ring *r = &ps->rings[ps->map_cpu[i]];
		if (r->ring.base || !ps->map_rings[i].base)
			continue;
		r->ring = ps->map_rings[i];
		r->cpu = ps->map_cpu[i];
		ft_debug("perf ring for CPU %d: %zu KB", r->cpu, r->ring.data_size / 1024);
	}
}

static void free_maps(struct ft_perf_source *ps)
{
	free(ps->map_rings);
	free(ps->map_fds);
	free(ps->map_cpu);
	ps->map_rings = NULL;
	ps->map_fds = ps->map_cpu = NULL;
}

int ft_perf_source_maps_finish(struct ft_perf_source *ps)
{
	if (!ps->maps_pending)
		return 0;
	ps->maps_pending = false;
	int ret = perfev_ring_maps_finish(&ps->maps);
	ft_perf_source_adopt_rings(ps);
	free_maps(ps);
	return ret < 0 ? ft_perf_source_map_failed(ps, ret) : 0;
}

int ft_perf_source_map_failed(const struct ft_perf_source *ps, int err)
{
	if (err == -EPERM) {
		/* the ring is locked memory: past kernel.perf_event_mlock_kb and
		 * RLIMIT_MEMLOCK only CAP_IPC_LOCK (or root) may map it */
		ft_error("a %zu KB ring a CPU is more than this user may lock (kernel.perf_event_mlock_kb, "
			 "ulimit -l): use a smaller --buffer-size, or give CAP_IPC_LOCK", ps->ring_kb);
		return -ENOLCK;
	}
	ft_error("cannot map a %zu KB perf ring: %s", ps->ring_kb, strerror(-err));
	return err;
}

/* Closing a probe's fds unregisters it, an RCU grace period or two each:
 * hundreds of them take a while, so they get progress too. */
static void close_fds(struct ft_perf_source *ps)
{
	int attached = 0;
	for (size_t i = 0; i < ps->nfds; i++)
		attached += i == 0 || ps->fd_event[i] != ps->fd_event[i - 1];
	struct ft_progress pg;
	ft_progress_start(&pg, "detaching", ft_perf_source_noun(ps->events, ps->nevents), attached);
	for (size_t i = 0; i < ps->nfds; i++) {
		close(ps->fds[i]);
		if (i + 1 == ps->nfds || ps->fd_event[i + 1] != ps->fd_event[i])
			ft_progress_step(&pg);
	}
	ft_progress_end(&pg);
}

/* Whether a child may take the events' last closes: not for probes (the
 * kernel lists kprobes in debugfs; a uprobe's breakpoint stays in its
 * file's code until unregistered), and not for many events, so that the
 * child is gone within a few grace periods (~0.5 s here). */
static bool may_close_behind(const struct ft_perf_source *ps)
{
	if (ps->nevents > FT_CLOSE_BEHIND_MAX_EVENTS)
		return false;
	for (int e = 0; e < ps->nevents; e++)
		if (ps->events[e].kind == FT_EV_KPROBE_PMU || ps->events[e].kind == FT_EV_UPROBE_PMU)
			return false;
	return ps->nfds > 0;
}

void ft_perf_source_close(struct ft_perf_source *ps, bool behind)
{
	if (!ps)
		return;
	if (ps->maps_pending) /* set up, never enabled */
		perfev_ring_maps_release(&ps->maps);
	free_maps(ps);
	ft_perf_source_grow_stop(ps);
	for (int cpu = 0; ps->rings && cpu < ps->ncpus; cpu++) {
		if (ps->rings[cpu].ring.base)
			perfev_ring_unmap(&ps->rings[cpu].ring);
		if (ps->dummy_owners && ps->rings[cpu].owner_fd >= 0)
			close(ps->rings[cpu].owner_fd); /* not one of fds */
	}
	if (behind && may_close_behind(ps) && perfev_close_behind(ps->fds, ps->nfds) == 0)
		ft_debug("perf: %zu events closed behind, by a child", ps->nfds);
	close_fds(ps);
	free(ps->fds);
	free(ps->fd_event);
	free(ps->fd_cpu);
	free(ps->rings);
	free(ps->ids);
	free(ps);
}
