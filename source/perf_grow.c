/* Growing the perf source's rings (ring_kb to grow_kb a CPU) while the
 * events run: a run that writes fast (a stack copy in each sample) starts
 * on rings small enough to allocate quickly, and gets the big ones once a
 * ring is found 1/FT_GROW_AT full (the small ring's wake-up), long before
 * it can fill. Each CPU's ring is a dummy event's
 * (ft_perf_source_open_owner), so every event can be moved to the new
 * ring (perfev_ring_grow): the new rings are read beside the old ones
 * from before the first event moves, in one time order (perf_drain.c),
 * and an old ring is let go once every event left it a second ago and it
 * is empty. Only the rings found that full grow: a workload on one CPU
 * fills one ring, and growing the others costs the run their allocating
 * and zeroing for nothing. Another ring that fills later grows then, once
 * the growth under way is done (one at a time). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "source/perf_source_int.h"

enum { GROWING, ADOPTED, MOVED, SPLIT };

struct ft_perf_grow {
	struct perfev_ring_grow g;
	struct perfev_ring *rings; /* n new rings, of the CPUs cpus[] */
	int *owners, *cpus;
	int *fds;      /* the events that move, and their new ring's index */
	size_t *to;
	size_t n, nfds;
	size_t kb;     /* the new rings' size: grow_kb when planned */
	int phase;
	uint64_t started_ms, moved_ms;
};

int ft_perf_source_open_owner(const struct ft_perf_source *ps, int pid, int cpu,
			      uint32_t wakeup_bytes)
{
	struct perfev_opts po = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY, .sample_period = 1,
		.disabled = true, .exclude_kernel = ps->cfg.user_mode_only,
		.pid_is_cgroup = ps->cfg.cgroup_fd >= 0,
		.wakeup_bytes = wakeup_bytes,
	};
	return perfev_open(&po, pid, cpu, -1);
}

/* Rings that fill fast (a stack copy of at most 4 KB a sample, of no
 * known rate, a big default) start at half their size (1/FT_GROW_FROM)
 * and each grows once found 1/FT_GROW_AT full: the kernel
 * allocates and zeroes a ring before the events can be enabled (~16 ms
 * for 64 MB here), and a run that writes little never needs it all. A
 * quarter (16 MB) lost events in most runs of count's 500,000 getppid
 * calls while it grew, and alone in half of them: the reader's CPU is
 * the host's to take for 10-20 ms (doc/PERFORMANCE.md). Not for
 * --buffer-size, not for dwarf's 8 KB copies or offcpu's 16 KB (four and
 * eight times the bytes: the half ring could fill while it grows), not
 * for the readers on each CPU (they read the rings they were given), and
 * only where the rings are not bound by locked memory (the old and the
 * new are mapped at once for a while). */
void ft_perf_source_grow_plan(struct ft_perf_source *ps, size_t lockable, bool sideband)
{
	const struct ft_perf_config *c = &ps->cfg;
	if (c->opt->buffer_set || sideband || c->wake_each ||
	    !c->want_user || !c->ucopy_size || c->ucopy_size > 4096 || lockable != SIZE_MAX ||
	    ps->ring_kb < 16384)
		return;
	ps->grow_kb = ps->ring_kb;
	ps->ring_kb /= FT_GROW_FROM;
	ps->dummy_owners = true;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void grow_free(struct ft_perf_grow *gr)
{
	if (!gr)
		return;
	free(gr->rings);
	free(gr->owners);
	free(gr->cpus);
	free(gr->fds);
	free(gr->to);
	free(gr);
}

/* Whether R, a ring of PS, grows now: it is smaller than the rings grow
 * to, and was found 1/FT_GROW_AT full (its wake-up). A grown ring is
 * grow_kb already; one whose owner's task exited stays. */
static bool wants_growth(const struct ft_perf_source *ps, const struct ft_perf_ring *r)
{
	return r->ring.base && !r->stays && r->ring.data_size < ps->grow_kb * 1024 &&
	       r->ring.max_fill >= r->ring.data_size / FT_GROW_AT;
}

/* The CPUs of GR, for the debug line: "CPU 0" or "CPUs 0 2", into BUF */
static const char *cpu_list(const struct ft_perf_grow *gr, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "CPU%s", gr->n > 1 ? "s" : "");
	for (size_t i = 0; i < gr->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, " %d", gr->cpus[i]);
	return buf;
}

/* A new owner for each CPU whose ring wants to grow, and the events that
 * move with it. Returns the plan, or NULL: no memory (-ENOMEM in *ERR),
 * or no owner could be opened (-ENOENT: those rings stay as they are). */
static struct ft_perf_grow *grow_plan(struct ft_perf_source *ps, int *err)
{
	struct ft_perf_grow *gr = calloc(1, sizeof(*gr));
	size_t nc = (size_t)ps->ncpus;
	*err = -ENOMEM;
	if (!gr || !(gr->rings = calloc(nc, sizeof(*gr->rings))) ||
	    !(gr->owners = calloc(nc, sizeof(int))) || !(gr->cpus = calloc(nc, sizeof(int))) ||
	    !(gr->fds = calloc(ps->nfds, sizeof(int))) ||
	    !(gr->to = calloc(ps->nfds, sizeof(size_t)))) {
		grow_free(gr);
		return NULL;
	}
	gr->kb = ps->grow_kb;
	int at[FT_MAX_CPUS] = { 0 };
	for (int c = 0; c < ps->ncpus; c++) {
		struct ft_perf_ring *r = &ps->rings[c];
		int fd = wants_growth(ps, r) ? ft_perf_source_open_owner(ps, r->owner_pid, c,
									(uint32_t)(gr->kb * 1024 / 4)) :
					       -ENOENT;
		at[c] = fd < 0 ? -1 : (int)gr->n;
		if (fd < 0) {
			/* its task exited: its ring stays (not tried at each drain) */
			r->stays |= wants_growth(ps, r);
			continue;
		}
		gr->owners[gr->n] = fd;
		gr->cpus[gr->n++] = c;
	}
	for (size_t i = 0; i < ps->nfds; i++)
		if (at[ps->fd_cpu[i]] >= 0) {
			gr->fds[gr->nfds] = ps->fds[i];
			gr->to[gr->nfds++] = (size_t)at[ps->fd_cpu[i]];
		}
	if (gr->n == 0) {
		grow_free(gr);
		*err = -ENOENT;
		return NULL;
	}
	return gr;
}

static void grow_start(struct ft_perf_source *ps)
{
	int ret;
	char cpus[256];
	struct ft_perf_grow *gr = grow_plan(ps, &ret);
	if (!gr) {
		if (ret == -ENOMEM)
			ps->grow_kb = 0;
		return;
	}
	ret = perfev_ring_grow_start(&gr->g, gr->rings, gr->owners, gr->n, gr->kb * 1024, gr->fds,
				     gr->to, gr->nfds);
	if (ret < 0) {
		ft_debug("perf rings not grown: %s", strerror(-ret));
		for (size_t i = 0; i < gr->n; i++)
			close(gr->owners[i]);
		grow_free(gr);
		ps->grow_kb = 0;
		return;
	}
	gr->started_ms = now_ms();
	ft_debug("perf rings growing from %zu to %zu KB: %s", ps->ring_kb, gr->kb,
		 cpu_list(gr, cpus, sizeof(cpus)));
	ps->grow = gr;
}

/* The new rings read beside the old ones, and woken on too: then the
 * events may move. */
static int adopt(struct ft_perf_source *ps, struct ft_perf_grow *gr)
{
	for (size_t i = 0; i < gr->n; i++) {
		struct ft_perf_ring *r = &ps->rings[gr->cpus[i]];
		r->next = gr->rings[i];
		r->next_owner = gr->owners[i];
		int ret = ps->epfd >= 0 ? ft_perf_ring_watch(ps->epfd, r, r->next_owner, true) : 0;
		if (ret < 0)
			return ret;
	}
	perfev_ring_grow_move(&gr->g);
	gr->phase = ADOPTED;
	ft_debug("perf rings of %zu KB mapped after %" PRIu64 " ms: the events move", gr->kb,
		 now_ms() - gr->started_ms);
	return 0;
}

/* A new ring failed to map: nothing moved, nothing to read. */
static void give_up(struct ft_perf_source *ps, struct ft_perf_grow *gr)
{
	ft_debug("perf rings not grown: %s", strerror(-gr->g.err));
	for (size_t i = 0; i < gr->n; i++) {
		perfev_ring_unmap(&gr->rings[i]);
		close(gr->owners[i]);
	}
	grow_free(gr);
	ps->grow = NULL;
	ps->grow_kb = 0;
}

/* Each growing CPU's old ring let go once empty: the new one takes its
 * place. The CPUs that did not grow keep theirs, and may grow later. */
static void retire(struct ft_perf_source *ps, struct ft_perf_grow *gr)
{
	size_t left = 0;
	for (size_t i = 0; i < gr->n; i++) {
		struct ft_perf_ring *r = &ps->rings[gr->cpus[i]];
		uint64_t t;
		if (!r->next.base)
			continue;
		if (perfev_ring_first_time(&r->ring, ps->sample_type, ps->regs_mask, &t) != -ENOENT) {
			left++;
			continue;
		}
		if (ps->epfd >= 0)
			ft_perf_ring_watch(ps->epfd, r, r->owner_fd, false);
		perfev_ring_unmap(&r->ring);
		close(r->owner_fd);
		r->ring = r->next; /* the CPU's now: not the plan's to let go */
		r->owner_fd = r->next_owner;
		memset(&r->next, 0, sizeof(r->next));
		r->next_owner = -1;
		memset(&gr->rings[i], 0, sizeof(gr->rings[i]));
		gr->owners[i] = -1;
	}
	if (left)
		return;
	char cpus[256];
	ft_debug("perf rings grown to %zu KB: %s", gr->kb, cpu_list(gr, cpus, sizeof(cpus)));
	grow_free(gr);
	ps->grow = NULL;
}

bool ft_perf_source_grow_pending(const struct ft_perf_source *ps)
{
	if (ps->grow)
		return true;
	for (int c = 0; ps->grow_kb && c < ps->ncpus; c++) {
		const struct ft_perf_ring *r = &ps->rings[c];
		if (r->ring.base && !r->stays && r->ring.data_size < ps->grow_kb * 1024)
			return true;
	}
	return false;
}

int ft_perf_source_grow_step(struct ft_perf_source *ps)
{
	struct ft_perf_grow *gr = ps->grow;
	if (!gr) {
		for (int c = 0; ps->grow_kb && c < ps->ncpus; c++)
			if (wants_growth(ps, &ps->rings[c])) {
				grow_start(ps); /* every ring that wants to, at once */
				break;
			}
		return 0;
	}
	int state = gr->phase == GROWING || gr->phase == ADOPTED ? perfev_ring_grow_state(&gr->g) :
								     -1;
	if (gr->phase == GROWING && state == PERFEV_GROW_MAPPED)
		return adopt(ps, gr);
	if (gr->phase == GROWING && state == PERFEV_GROW_FAILED) {
		perfev_ring_grow_join(&gr->g);
		give_up(ps, gr);
	} else if (gr->phase == ADOPTED && (state == PERFEV_GROW_DONE || state == PERFEV_GROW_FAILED)) {
		int ret = perfev_ring_grow_join(&gr->g);
		/* some events may have moved: both rings read to the end */
		gr->phase = ret < 0 ? SPLIT : MOVED;
		gr->moved_ms = now_ms();
		ft_debug("perf events moved after %" PRIu64 " ms", gr->moved_ms - gr->started_ms);
		if (ret < 0)
			ft_warn("the perf rings could not all grow (%s): both sizes are read",
				strerror(-ret));
	} else if (gr->phase == MOVED && now_ms() - gr->moved_ms >= 1000) {
		retire(ps, gr); /* the writers on the old rings are long done */
	}
	return 0;
}

void ft_perf_source_grow_stop(struct ft_perf_source *ps)
{
	struct ft_perf_grow *gr = ps->grow;
	if (!gr)
		return;
	perfev_ring_grow_join(&gr->g); /* events not moved yet stay */
	for (size_t i = 0; i < gr->n; i++) {
		struct ft_perf_ring *r = &ps->rings[gr->cpus[i]];
		if (gr->owners[i] < 0)
			continue; /* retired: the CPU's ring now */
		memset(&r->next, 0, sizeof(r->next)); /* the same mapping as rings[i] */
		r->next_owner = -1;
		perfev_ring_unmap(&gr->rings[i]);
		close(gr->owners[i]);
	}
	grow_free(gr);
	ps->grow = NULL;
}
