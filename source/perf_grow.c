/* A CPU's ring: the carrier that owns it, and growing it. A run whose
 * default ring is large (copied user stacks: 64 MB a CPU) starts on a
 * 16 MB one, because the kernel allocates and zeroes a ring while it is
 * mapped (~14 ms for 64 MB on this project's VM, per CPU) and the command
 * waits for it; short commands never need more. When a drain first finds
 * the ring a quarter full, a thread maps the large one on a carrier of its
 * own and points each of the CPU's events at it, the loop draining all
 * along. SET_OUTPUT moves an event at once: records already in the small
 * ring, or in flight to it, stay there, and the merge drains both rings in
 * time order until the source closes. Nothing is lost or reordered. The
 * loop polls the carriers, which never move: a moving event is on neither
 * ring's wake-up list while the kernel waits for RCU, yet writes on into
 * the old ring (16 MB filled in such a window at 800k events/s). The new
 * carrier joins the epoll set only once every event has moved: polling it
 * takes the mutex that SET_OUTPUT holds through that wait, which stopped
 * the loop, and so lost samples, when the loop added it. */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "source/source.h"
#include "source/perf_source_int.h"

/* The carrier owns the ring and samples nothing. Its attributes set the
 * ring's wake-up: a watermark of a quarter of it, or (wake_each) half,
 * with each sample waking the reader by its own event's wakeup_events. */
int ft_perf_carrier_open(const struct ft_perf_source *ps, int owner, int cpu, size_t kb,
			 struct perfev_ring *ring)
{
	struct perfev_opts po = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY, .disabled = true,
		.exclude_kernel = ps->cfg.user_mode_only, .pid_is_cgroup = ps->cfg.cgroup_fd >= 0,
		.inherit = ps->cfg.child > 0 || ps->cfg.opt->npids > 0,
		.wakeup_bytes = ps->cfg.wake_each ? 0 : (uint32_t)(kb * 1024 / 4),
	};
	int fd = perfev_open(&po, owner, cpu, -1);
	if (fd < 0)
		return fd;
	int ret = perfev_ring_map(ring, fd, kb * 1024);
	if (ret < 0)
		close(fd);
	return ret;
}

struct ft_perf_grow {
	pthread_t thread;
	const struct ft_perf_source *ps; /* the thread reads its config and fds */
	struct ft_perf_ring *r;          /* the epoll cookie */
	int owner, cpu, old_carrier;
	size_t kb;
	struct perfev_ring ring; /* the thread's until mapped, then the loop's */
	int carrier;             /* its fd, for the thread's SET_OUTPUT */
	int err;
	size_t moved, kept;      /* the CPU's events moved, or left on the old ring */
	atomic_bool mapped;      /* err and ring are set */
	atomic_bool done;        /* moved and kept are set */
	bool installed;          /* the loop drains ring as the CPU's */
};

/* Maps the large ring, moves the CPU's events to it, then has the loop
 * wait on its carrier instead of the old one. Moving an event off a ring
 * waits for an RCU grace period (ring_buffer_attach; ~11 ms each here):
 * here, not in the loop, which drains both rings meanwhile. */
static void *grow_thread(void *arg)
{
	struct ft_perf_grow *g = arg;
	const struct ft_perf_source *ps = g->ps;
	g->err = ft_perf_carrier_open(ps, g->owner, g->cpu, g->kb, &g->ring);
	g->carrier = g->ring.fd;
	atomic_store_explicit(&g->mapped, true, memory_order_release);
	if (g->err)
		goto out;
	for (size_t i = 0; i < ps->nfds; i++) {
		if (ps->fd_cpu[i] != g->cpu)
			continue;
		if (perfev_set_output(ps->fds[i], g->carrier) == 0)
			g->moved++;
		else
			g->kept++; /* writes on into the old ring, drained all along */
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = g->r };
	if (epoll_ctl(ps->epfd, EPOLL_CTL_ADD, g->carrier, &ev) == 0 && !g->kept)
		epoll_ctl(ps->epfd, EPOLL_CTL_DEL, g->old_carrier, NULL);
out:
	atomic_store_explicit(&g->done, true, memory_order_release);
	return NULL;
}

/* Starts growing R. A failure leaves R as it is. */
static void grow_start(struct ft_perf_source *ps, struct ft_perf_ring *r)
{
	struct ft_perf_grow *g = calloc(1, sizeof(*g));
	size_t kb = r->grow_kb;
	r->grow_kb = 0; /* once */
	if (!g)
		return;
	*g = (struct ft_perf_grow){ .ps = ps, .r = r, .owner = r->owner, .cpu = r->cpu,
				    .old_carrier = r->ring.fd, .kb = kb };
	/* The kernel zeroes the new ring on the CPU that maps it (~14 ms for
	 * 64 MB): on R's own CPU that time is taken from the tasks filling R,
	 * not from the reader draining it. */
	pthread_attr_t attr;
	cpu_set_t on;
	CPU_ZERO(&on);
	CPU_SET(r->cpu, &on);
	int ret = pthread_attr_init(&attr);
	if (ret == 0 && r->cpu < CPU_SETSIZE)
		pthread_attr_setaffinity_np(&attr, sizeof(on), &on);
	if (ret == 0)
		ret = pthread_create(&g->thread, &attr, grow_thread, g);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		ft_debug("perf ring for CPU %d: cannot grow (%s)", r->cpu, strerror(ret));
		free(g);
		return;
	}
	r->grow = g;
}

/* The drain takes R's new ring as soon as it is mapped: events moved to
 * it write there from then on. */
static void grow_install(struct ft_perf_ring *r, struct ft_perf_grow *g)
{
	if (g->installed)
		return;
	g->installed = true;
	if (g->err) {
		ft_debug("perf ring for CPU %d: cannot grow to %zu KB (%s)", r->cpu, g->kb,
			 strerror(-g->err));
		return;
	}
	r->old = r->ring;
	r->ring = g->ring;
}

/* Joins R's grow thread, installs its ring (events may write there) and
 * frees it. */
static void grow_end(struct ft_perf_ring *r)
{
	struct ft_perf_grow *g = r->grow;
	r->grow = NULL;
	pthread_join(g->thread, NULL);
	grow_install(r, g);
	if (g->err == 0)
		ft_debug("perf ring for CPU %d: grew to %zu KB (%zu events moved, %zu left on the "
			 "%zu KB ring)", r->cpu, r->ring.data_size / 1024, g->moved, g->kept,
			 r->old.data_size / 1024);
	free(g);
}

int ft_perf_grow_step(struct ft_perf_source *ps)
{
	for (int cpu = 0; cpu < ps->ncpus; cpu++) {
		struct ft_perf_ring *r = &ps->rings[cpu];
		struct ft_perf_grow *g = r->grow;
		if (g && atomic_load_explicit(&g->done, memory_order_acquire))
			grow_end(r);
		else if (g && atomic_load_explicit(&g->mapped, memory_order_acquire))
			grow_install(r, g);
		else if (!g && r->grow_kb && r->ring.base && r->ring.max_fill * 4 >= r->ring.data_size)
			grow_start(ps, r);
	}
	return 0;
}

void ft_perf_grow_cancel(struct ft_perf_ring *r)
{
	if (r->grow)
		grow_end(r);
}
