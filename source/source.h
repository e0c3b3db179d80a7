/* source: where a run's records come from: the perf rings (perf_source.c),
 * the ftrace instance (ftrace_source.c and its function-tracer and
 * instance-file helpers), and the one dispatcher over the backend --backend
 * chose (source.c). Each hands its records to the session. */
#ifndef FTSTACK_SOURCE_H
#define FTSTACK_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli/cli.h"
#include "perfev/perfev.h"
#include "plan/plan.h"

/* The perf source and the dispatcher still take the run's session
 * (collector/session.h); the ftrace source takes its own config. */
struct ft_session;
struct ft_perf_source;
struct ft_ftrace_source;

/* ---- perf source ---- */
/* Opens every event of the plan (per CPU, or per task with -p/-L/-c), maps
 * one ring per CPU and registers it with the loop. Returns 0, or -errno after
 * printing what to do. */
int ft_perf_source_open(struct ft_session *s, int epfd);
/* --backend ftrace: only the side band (comm, mmap, fork, exit) from a
 * dummy event, when processes are followed. Returns 0 or -errno. */
int ft_perf_source_open_sideband(struct ft_session *s, int epfd);
/* Drains every ring (end of run, -i interval). Returns 0 or -errno. */
int ft_perf_source_drain_all(struct ft_session *s);
/* Drains the ring behind an epoll cookie. */
int ft_perf_source_ready(struct ft_session *s, void *cookie);
/* The ring COOKIE reported EPOLLHUP: the task its fd follows (and every
 * inherited child) exited, and poll would say so forever. Drains the ring and
 * stops polling it. Returns 1 when none of the -p/-L tasks is left (the run
 * can end), 0 when some are (the loop then drains every ring on a short
 * timeout), or -errno. */
int ft_perf_source_hangup(struct ft_session *s, void *cookie, int epfd);
/* True when the run follows -p/-L tasks and none of them runs any more. */
bool ft_perf_source_targets_gone(const struct ft_session *s);

int ft_perf_source_enable(struct ft_session *s);
void ft_perf_source_disable(struct ft_session *s);
void ft_perf_source_close(struct ft_session *s);
/* Returns the plan index of the event with kernel id ID, or -1. */
int ft_perf_source_event(const struct ft_session *s, uint64_t id);
/* Puts into the run's lost count the samples the kernel counted as lost
 * (perfev_lost, summed over the events) when they are more than the LOST
 * records read: a ring full at the run's last event never gets its LOST
 * record. Call after the last drain. */
void ft_perf_source_count_lost(struct ft_session *s);
/* Records the rings could not decode (counted, never silent). */
uint64_t ft_perf_source_bad_records(const struct ft_session *s);
/* The CPU whose ring was the fullest when a drain began, and how full
 * (*PCT, percent of its size); -1 without rings. */
int ft_perf_source_fullest(const struct ft_session *s, unsigned *pct);
size_t ft_perf_source_ring_kb(const struct ft_session *s);
/* True when cookie belongs to the perf source. */
bool ft_perf_source_owns(const struct ft_session *s, const void *cookie);

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

/* ---- the backend chosen by --backend, one call for both ---- */
int ft_source_open(struct ft_session *s, int epfd);
int ft_source_enable(struct ft_session *s);
void ft_source_disable(struct ft_session *s);
int ft_source_drain_all(struct ft_session *s);
/* After the last drain: the perf backend's losses its rings never
 * reported (ft_perf_source_count_lost); the ftrace backend's are read from
 * the instance's stats as it drains. */
void ft_source_count_lost(struct ft_session *s);
void ft_source_close(struct ft_session *s);

#endif
