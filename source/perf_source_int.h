/* The perf source's insides, shared by its files (perf_source.c: the
 * object; perf_open.c: opening events and rings; perf_drain.c: draining
 * them in time order) and by its unit test, which fills rings in memory.
 * Not for other folders. */
#ifndef FTSTACK_PERF_SOURCE_INT_H
#define FTSTACK_PERF_SOURCE_INT_H

#include <errno.h>
#include <sys/epoll.h>
#include "source/perf_source.h"

struct ft_perf_ring {
	struct perfev_ring ring;   /* owned by the CPU's first fd, owner_fd */
	int owner_fd;              /* -1 until the CPU has an fd */
	int owner_pid;             /* the task (or cgroup fd) of owner_fd */
	/* growing (perf_grow.c): the bigger ring, read beside this one while
	 * the events move to it; its owner (-1: none) */
	struct perfev_ring next;
	int next_owner;
	bool stays;    /* grows no more: a new owner could not be opened */
	int cpu;
	bool tracked;  /* an fd on this CPU writes the side band (comm, mmap, ...) */
};

struct ft_id_map {
	uint64_t id;
	uint32_t event;
};

struct ft_perf_source {
	struct ft_perf_config cfg;
	int *fds;
	uint32_t *fd_event; /* the event of each fd; an event's fds are adjacent */
	int *fd_cpu;        /* the CPU of each fd */
	size_t nfds, capfds;
	struct ft_perf_ring *rings; /* indexed by CPU */
	int ncpus;
	/* per-CPU ring as opened: --buffer-size or default_ring_kb; rings
	 * that grow differ from it (each ring's own: its data_size) */
	size_t ring_kb;
	struct ft_id_map *ids;     /* sorted by id once every event is open */
	size_t nids, capids;
	uint64_t sample_type;
	uint64_t regs_mask;
	bool single_event;
	struct ft_event *events; /* the plan's, or the side-band dummy */
	int nevents;
	/* rings mapped by helpers, not yet here, until the events are enabled
	 * (ft_perf_source_enable): their fds, CPUs and rings, in step */
	struct perfev_ring_maps maps;
	int *map_fds, *map_cpu;
	struct perfev_ring *map_rings;
	bool maps_pending;
	/* rings that grow (perf_grow.c): their owners are dummies of their
	 * own (dummy_owners); grow_kb the size they grow to, 0 when no more
	 * start to (each ring grows alone, when it fills); the loop's epoll,
	 * where new rings are watched */
	bool dummy_owners;
	size_t grow_kb;
	struct ft_perf_grow *grow;
	int epfd;
	/* records a drain hands over before it stops for a growth step; -1:
	 * no limit (perf_drain.c) */
	long budget;
};

/* Watches (or stops watching, WATCH false) FD, an owner of R's rings, on
 * the loop's EPFD, with R as its cookie: the loop drains every ring when
 * any wakes. Already so is no error. Returns 0 or -errno. */
static inline int ft_perf_ring_watch(int epfd, struct ft_perf_ring *r, int fd, bool watch)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };
	if (epoll_ctl(epfd, watch ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev) == 0)
		return 0;
	return errno == (watch ? EEXIST : ENOENT) ? 0 : -errno;
}

/* Takes the rings mapped here so far into their CPUs' slots. */
void ft_perf_source_adopt_rings(struct ft_perf_source *ps);
/* Maps here the rings helpers mapped (once the events are enabled) and
 * frees the arrays that followed them. Returns 0, or -errno after saying
 * so (ft_perf_source_map_failed). */
int ft_perf_source_maps_finish(struct ft_perf_source *ps);
/* Says why a ring could not be mapped (ERR, -errno), with what to do when
 * it is more than this user may lock. Returns ERR, or -ENOLCK for that. */
int ft_perf_source_map_failed(const struct ft_perf_source *ps, int err);

/* A ring that will grow wakes the loop when this part of it is waiting,
 * and starts growing then (perf_grow.c). */
#define FT_GROW_AT 16
/* ... and starts at this part of the size it grows to */
#define FT_GROW_FROM 2
/* Opens a dummy event for (PID, CPU) to own a ring, waking the loop when
 * WAKEUP_BYTES wait in it. Returns its fd or -errno. */
int ft_perf_source_open_owner(const struct ft_perf_source *ps, int pid, int cpu,
			      uint32_t wakeup_bytes);
/* Whether PS's rings (ring_kb a CPU, as sized; LOCKABLE: lockable_kb;
 * SIDEBAND: the side band's source) start smaller and grow: sets
 * grow_kb, ring_kb and dummy_owners. */
void ft_perf_source_grow_plan(struct ft_perf_source *ps, size_t lockable, bool sideband);
/* One step of growing the rings, at each drain: starts once a ring was
 * found 1/FT_GROW_AT full (those rings grow, the others stay until they
 * fill, one growth at a time), reads the new rings once mapped, lets the
 * old ones go once every event left them. Returns 0 or -errno. */
int ft_perf_source_grow_step(struct ft_perf_source *ps);
/* Whether a growth is under way, or some ring may still grow: a drain
 * then stops now and then for ft_perf_source_grow_step. */
bool ft_perf_source_grow_pending(const struct ft_perf_source *ps);
/* Stops growing (waits for moves under way) and lets the new rings that
 * did not take an old one's place go. */
void ft_perf_source_grow_stop(struct ft_perf_source *ps);

/* A source of CFG (copied) for EVENTS with NCPUS rings, none mapped yet,
 * and the one sample layout PERFEV_SAMPLE_TYPE. Returns it, or NULL. */
struct ft_perf_source *ft_perf_source_alloc(const struct ft_perf_config *cfg,
					    struct ft_event *events, int nevents, int ncpus);
/* Keeps FD, an opened perf event of plan event EVENT on CPU, to be closed
 * with the source. Returns 0 or -ENOMEM. */
int ft_perf_source_add_fd(struct ft_perf_source *ps, int fd, uint32_t event, int cpu);
/* Maps kernel id ID to plan event EVENT. Returns 0 or -ENOMEM. */
int ft_perf_source_add_id(struct ft_perf_source *ps, uint64_t id, uint32_t event);
/* Sorts the ids for ft_perf_source_event, once every event is open. */
void ft_perf_source_ids_done(struct ft_perf_source *ps);
/* Kernel functions and uprobes are "probes"; anything else is "events". */
const char *ft_perf_source_noun(const struct ft_event *events, int nevents);

#endif
