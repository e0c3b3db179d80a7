/* The perf source's insides, shared by its files (perf_source.c: the
 * object; perf_open.c: opening events and rings; perf_drain.c: draining
 * them in time order) and by its unit test, which fills rings in memory.
 * Not for other folders. */
#ifndef FTSTACK_PERF_SOURCE_INT_H
#define FTSTACK_PERF_SOURCE_INT_H

#include "source/perf_source.h"

/* A growing ring's first size: the kernel allocates and zeroes a ring as
 * it is mapped (~16 ms for 64 MB here), before the command may run; 4 MB
 * is the default of kernel-only stacks. */
#define FT_START_RING_KB 16384

struct ft_perf_grow;

/* A CPU's ring, mapped on a carrier: a dummy event that samples nothing
 * and owns the ring, into which the CPU's events write (SET_OUTPUT). An
 * event that owns its ring cannot be pointed at another, a carrier's
 * events can: that is how a ring grows (perf_grow.c). */
struct ft_perf_ring {
	struct perfev_ring ring;  /* ring.fd: its carrier, which epoll waits on */
	struct perfev_ring old;   /* the ring before it grew, drained to the end */
	int cpu;
	int owner;     /* the carrier's pid argument: the first task, -1, a cgroup's fd */
	size_t grow_kb;            /* grow to this when a quarter full; 0: never */
	struct ft_perf_grow *grow; /* a new ring being mapped */
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
	size_t ring_kb;            /* per-CPU ring: --buffer-size or default_ring_kb */
	bool grow;                 /* rings start at FT_START_RING_KB, grow to ring_kb */
	int epfd;                  /* the loop's: a grown ring's carrier joins it */
	struct ft_id_map *ids;     /* sorted by id once every event is open */
	size_t nids, capids;
	uint64_t sample_type;
	uint64_t regs_mask;
	bool single_event;
	struct ft_event *events; /* the plan's, or the side-band dummy */
	int nevents;
};

/* A source of CFG (copied) for EVENTS with NCPUS rings, none mapped yet,
 * and the one sample layout PERFEV_SAMPLE_TYPE. Returns it, or NULL. */
struct ft_perf_source *ft_perf_source_alloc(const struct ft_perf_config *cfg,
					    struct ft_event *events, int nevents, int ncpus);
/* Keeps FD, an opened perf event of plan event EVENT on CPU, to be closed
 * with the source. Returns 0 or -ENOMEM. */
int ft_perf_source_add_fd(struct ft_perf_source *ps, int fd, uint32_t event, int cpu);
/* ---- carriers and growing rings (perf_grow.c) ---- */
/* Opens the carrier of a KB ring on CPU for OWNER (perf_event_open's pid),
 * inherited as the events are (its hang-up is theirs: the task and every
 * child gone), and maps the ring into *RING. Thread-safe: reads PS's config only.
 * Returns 0, or -errno (RING unmapped, the carrier closed). */
int ft_perf_carrier_open(const struct ft_perf_source *ps, int owner, int cpu, size_t kb,
			 struct perfev_ring *ring);

/* After a drain: starts mapping the large ring of each CPU whose small one
 * was seen a quarter full, and points the CPU's events at each large ring
 * that is ready (the small one is then drained to its end). Returns 0. */
int ft_perf_grow_step(struct ft_perf_source *ps);
/* Waits for a ring being mapped and releases it (closing the source). */
void ft_perf_grow_cancel(struct ft_perf_ring *r);
/* Maps kernel id ID to plan event EVENT. Returns 0 or -ENOMEM. */
int ft_perf_source_add_id(struct ft_perf_source *ps, uint64_t id, uint32_t event);
/* Sorts the ids for ft_perf_source_event, once every event is open. */
void ft_perf_source_ids_done(struct ft_perf_source *ps);
/* Kernel functions and uprobes are "probes"; anything else is "events". */
const char *ft_perf_source_noun(const struct ft_event *events, int nevents);

#endif
