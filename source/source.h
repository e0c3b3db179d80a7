/* source: where a run's records come from: the perf rings (perf_source.h),
 * the ftrace instance (ftrace_source.c and its function-tracer and
 * instance-file helpers), and the one dispatcher over the backend --backend
 * chose (source.c). Neither source takes the run's session: each gets a
 * config of what it needs and hands what it reads to the config's callback
 * (the perf source each decoded record, the ftrace source each sample);
 * collector/ builds the configs. */
#ifndef FTSTACK_SOURCE_H
#define FTSTACK_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli/cli.h"
#include "perfev/perfev.h"
#include "plan/plan.h"
#include "source/perf_source.h" /* the perf source: perf_source.c, perf_open.c, perf_drain.c */

struct ft_ftrace_source;

/* ---- ftrace source (ftrace_source.c): a private instance, stacktrace
 * triggers, per-CPU trace_pipe_raw. Takes no session: what it needs is in
 * its config, and each sample goes to the count callback. ---- */
struct ft_ftrace_config {
	struct ft_plan *plan;          /* events, tracefs root, group, the undo log */
	const struct ft_options *opt;  /* -C, --buffer-size, -p, -L */
	pid_t child;                   /* the -c command (followed with its children), or 0 */
	bool want_kernel, want_user;   /* which stacks the records carry */
	pid_t self;                    /* ftstack itself: its events are left out */
	uint64_t *lost;                /* where events the kernel could not store are added */
	uint64_t *self_events;         /* where ftstack's own events are added */
	/* one sample of plan event EVENT, weight 1 */
	void (*count)(void *ctx, const struct perfev_sample *smp, uint32_t event, uint64_t weight);
	void *ctx;
};
/* Makes the instance, sets up every plan event and opens the CPUs' buffers
 * into EPFD (cookies: the CPUs). *OUT is set as soon as it is allocated, so
 * a set-up that fails half way is released by ft_ftrace_source_close.
 * Returns 0, or -errno after saying what failed. */
int ft_ftrace_source_open(const struct ft_ftrace_config *cfg, int epfd,
			  struct ft_ftrace_source **out);
/* tracing_on. Returns 0 or -errno. */
int ft_ftrace_source_enable(struct ft_ftrace_source *fs);
void ft_ftrace_source_disable(struct ft_ftrace_source *fs);
/* True when an epoll COOKIE is one of FS's CPUs (FS may be NULL). */
bool ft_ftrace_source_owns(const struct ft_ftrace_source *fs, const void *cookie);
/* Reads a bounded number of pages of the CPU behind COOKIE. Returns 0 or -errno. */
int ft_ftrace_source_ready(struct ft_ftrace_source *fs, void *cookie);
/* Reads every CPU to its end and adds what the kernel lost. Returns 0 or -errno. */
int ft_ftrace_source_drain_all(struct ft_ftrace_source *fs);
/* Closes the buffers and frees FS (NULL is fine); the instance itself is
 * removed by the plan's undo log. */
void ft_ftrace_source_close(struct ft_ftrace_source *fs);

/* Marks the online CPUs (sysfs "0-1,4"), restricted by -C, in online[0..max).
 * Returns the highest marked CPU + 1 (cpus.c). */
int ft_online_cpus(const struct ft_options *o, bool *online, int max);

/* ---- the backend chosen by --backend, one call for both (source.c) ---- */
struct ft_sources {
	enum ft_backend backend;
	struct ft_perf_source *perf;     /* the perf backend, or ftrace's side band; NULL without */
	struct ft_ftrace_source *ftrace; /* --backend ftrace */
};
/* Opens the backend BACKEND: the perf source of PC, or the ftrace source of
 * FC (with the perf side band of PC first when PC->track). The other is
 * never opened. What was opened is in SRC even on failure, for
 * ft_sources_close. Returns 0, or -errno after saying what failed. */
int ft_sources_open(struct ft_sources *src, enum ft_backend backend,
		    const struct ft_perf_config *pc, const struct ft_ftrace_config *fc, int epfd);
/* Enables what is open. Returns 0 or -errno. */
int ft_sources_enable(struct ft_sources *src);
void ft_sources_disable(struct ft_sources *src);
/* Reads every record left, the perf side band first (the samples'
 * processes must be known when counted). Returns 0 or -errno. */
int ft_sources_drain_all(struct ft_sources *src);
/* What an epoll cookie was to the sources (ft_sources_ready). */
enum ft_source_ready {
	FT_SOURCE_NOT_OURS, /* no ring or CPU of theirs */
	FT_SOURCE_READ,     /* read */
	FT_SOURCE_HUNGUP,   /* a perf ring whose task (and every inherited child) exited */
};
/* Reads what epoll says is ready behind COOKIE (EVENTS, its epoll
 * events): a perf ring or a CPU of the ftrace instance. A perf ring that
 * hung up is taken off EPFD (ft_perf_source_hangup): other threads may
 * still write into it, so the caller drains on a timeout from then on
 * (ft_sources_poll). Returns an enum ft_source_ready, or -errno. */
int ft_sources_ready(struct ft_sources *src, void *cookie, uint32_t events, int epfd);
/* A poll timeout: reads the perf rings, those that hung up too. Returns 0
 * or -errno. */
int ft_sources_poll(struct ft_sources *src);
/* How the perf rings fared, for the summary (all 0, full_cpu -1, without). */
struct ft_sources_stats {
	uint64_t bad_records;  /* records the rings could not decode */
	size_t ring_kb;        /* full_cpu's ring (rings that grow differ), 0 without */
	int full_cpu;          /* the CPU whose ring was the fullest at a drain's start, or -1 */
	unsigned full_pct;     /* how full, percent */
};
void ft_sources_stats(const struct ft_sources *src, struct ft_sources_stats *st);
/* After the last drain: the perf backend's losses its rings never
 * reported (ft_perf_source_count_lost); the ftrace backend's are read from
 * the instance's stats as it drains. */
void ft_sources_count_lost(struct ft_sources *src);
/* Closes both (either may be NULL) and clears SRC's pointers; BEHIND as
 * ft_perf_source_close's (the perf events' last closes by a child). */
void ft_sources_close(struct ft_sources *src, bool behind);

#endif
