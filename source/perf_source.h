/* The perf source: every plan event opened with perf_event_open, one ring
 * per CPU, its records handed in time order to the config's record
 * callback. It takes no session: what it needs is in its config. */
#ifndef FTSTACK_PERF_SOURCE_H
#define FTSTACK_PERF_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli/cli.h"
#include "host/host.h"
#include "perfev/perfev.h"
#include "plan/plan.h"

struct ft_perf_source;

struct ft_perf_config {
	struct ft_plan *plan;          /* the events (an optional one the kernel refuses is marked) */
	const struct ft_options *opt;  /* -C, --buffer-size, -p, -L, --per-cgroup */
	bool want_user;                /* samples carry user stacks (the side band then has mmaps) */
	bool user_chain;               /* the kernel walks the user frames (--call-graph fp) */
	bool kernel_chain;             /* the kernel stack is read (shown, or --through) */
	bool user_mode_only;           /* events exclude kernel mode (perf_event_paranoid 2) */
	uint32_t ucopy_size;           /* bytes of user stack each sample copies (0: none) */
	uint64_t uregs_mask;           /* the user registers taken with the copy */
	uint16_t max_stack;            /* kernel.perf_event_max_stack */
	bool track;                    /* side band wanted: comm, task, mmap2 with user stacks */
	bool wake_each;                /* wake the reader at each record (python/ reads a sample's
					* frames from the process: the sooner, the likelier the same) */
	bool maps_alone;               /* this process maps every ring at start-up, no helper a CPU
					* (ftstack check's answer on this host: ring_maps.c) */
	pid_t child;                   /* the -c command (followed with its children), or 0 */
	const struct host_access *host; /* what this user may do here, as the run read it */
	int cgroup_fd;                 /* --cgroup's folder, every event's pid; -1 without */
	const char *cgroup_path;       /* --cgroup's path, for messages */
	uint64_t *lost;                /* the run's lost count (raised by ft_perf_source_count_lost) */
	/* each decoded record (LOST ones too: the callback counts them), in
	 * time order across the CPUs; EVENT is the plan index of a sample's
	 * event, -1 for side band or an id no event has. Returns 0. */
	int (*record)(void *ctx, const struct perfev_record *rec, int event);
	void *ctx;
};

/* Opens every event of CFG's plan (per CPU, or per task with -p/-L/-c),
 * maps one ring per CPU and registers it with EPFD. *OUT is set as soon as
 * it is allocated, so a set-up that fails half way is released by
 * ft_perf_source_close. CFG is copied. Returns 0, or -errno after printing
 * what to do. */
int ft_perf_source_open(const struct ft_perf_config *cfg, int epfd, struct ft_perf_source **out);
/* --backend ftrace: only the side band (comm, mmap, fork, exit) from a
 * dummy event; CFG's plan is not opened. As ft_perf_source_open. */
int ft_perf_source_open_sideband(const struct ft_perf_config *cfg, int epfd,
				 struct ft_perf_source **out);
/* Drains every ring (end of run, -i interval, a poll timeout), merged into
 * time order. Returns 0 or -errno. */
int ft_perf_source_drain_all(struct ft_perf_source *ps);
/* A ring's epoll COOKIE is readable: drains every ring, in time order.
 * Returns 0 or -errno. */
int ft_perf_source_ready(struct ft_perf_source *ps, void *cookie);
/* The ring COOKIE reported EPOLLHUP: the task its fd follows (and every
 * inherited child) exited, and poll would say so forever. Drains the rings
 * and takes that ring out of EPFD; other threads may still write into it,
 * so the caller then drains on a timeout. Returns 0 or -errno. */
int ft_perf_source_hangup(struct ft_perf_source *ps, void *cookie, int epfd);
/* True when COOKIE is one of PS's rings (PS may be NULL). */
bool ft_perf_source_owns(const struct ft_perf_source *ps, const void *cookie);

/* Enables every event. Returns 0 or -errno. */
int ft_perf_source_enable(struct ft_perf_source *ps);
/* Disables every event (PS may be NULL). */
void ft_perf_source_disable(struct ft_perf_source *ps);
/* The most events whose last closes a child may take (a grace period
 * or two each). */
#define FT_CLOSE_BEHIND_MAX_EVENTS 8
/* Unmaps the rings, closes the events, frees PS (NULL is fine). BEHIND:
 * the last closes, the kernel's unregistration waits, are left to a
 * child that makes them once this process has exited (perfev_close_behind),
 * unless the events are probes or more than FT_CLOSE_BEHIND_MAX_EVENTS;
 * only for a caller with nothing to undo that needs the events gone. */
void ft_perf_source_close(struct ft_perf_source *ps, bool behind);
/* Returns the plan index of the event with kernel id ID, or -1. */
int ft_perf_source_event(const struct ft_perf_source *ps, uint64_t id);
/* Raises the config's lost count to the samples the kernel counted as lost
 * (perfev_lost, summed over the events) when they are more than the LOST
 * records read: a ring full at the run's last event never gets its LOST
 * record. Call after the last drain (PS may be NULL). */
void ft_perf_source_count_lost(struct ft_perf_source *ps);
/* Returns the records the rings could not decode (counted, never silent);
 * 0 for NULL. */
uint64_t ft_perf_source_bad_records(const struct ft_perf_source *ps);
/* Returns the CPU whose ring was the fullest when a drain began, and how
 * full (*PCT, percent of its size); -1 without rings. */
int ft_perf_source_fullest(const struct ft_perf_source *ps, unsigned *pct);
/* The CPUs that have a ring, into CPUS, and the fds their rings wake,
 * into FDS (room for MAX each). Returns how many (0 for NULL). */
int ft_perf_source_rings(const struct ft_perf_source *ps, int *cpus, int *fds, int max);
/* EPFD waits on the ring of CPU again (WATCH), or no longer: a reader of
 * its own waits on it (collector/cpu_readers.h). Returns 0 or -errno
 * (-ENOENT: CPU has no ring). */
int ft_perf_source_watch(struct ft_perf_source *ps, int cpu, int epfd, bool watch);
/* Returns the KB of CPU's ring (rings that grow differ in size: each
 * grows when it fills, perf_grow.c); 0 for NULL or a CPU without one. */
size_t ft_perf_source_ring_kb(const struct ft_perf_source *ps, int cpu);

#endif
