/* offcpu: switch-outs paired with switch-ins into off-CPU intervals
 * (offcpu.c says how). Takes no session: what it needs is in its config,
 * and each interval goes to the count callback. */
#ifndef FTSTACK_OFFCPU_H
#define FTSTACK_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli/cli.h"
#include "perfev/perfev.h"

struct ft_offcpu;

struct ft_offcpu_config {
	const struct ft_options *opt; /* -p/-L, -u/-k, --state, --min-block, --max-block */
	pid_t self;                   /* ftstack itself: never counted */
	bool any_task;                /* -c: the per-task events see only the command's tasks */
	const char *proc_root;        /* /proc: which threads are kernel threads (-u/-k) */
	/* one interval: the switch-out's stacks and tgid/tid, WEIGHT in us */
	void (*count)(void *ctx, const struct perfev_sample *smp, uint32_t event, uint64_t weight);
	void *ctx;
};

/* Why intervals were not counted, for the summary. */
struct ft_offcpu_stats {
	uint64_t filtered;     /* --state, -u/-k, --min-block, --max-block */
	uint64_t open_at_end;  /* threads still off CPU at the end, counted up to it */
};

/* Reads sched_switch's field offsets from TRACEFS; with TRACEFS NULL or ""
 * (the context-switch software event: no fields, no --state) reads
 * nothing. Returns 0 (*out set) or -errno. */
int ft_offcpu_alloc(const char *tracefs, const struct ft_offcpu_config *c, struct ft_offcpu **out);
/* One sched_switch sample of EVENT: the switch-out of smp->tid. */
void ft_offcpu_sample(struct ft_offcpu *oc, const struct perfev_sample *smp, uint32_t event);
/* Thread TID came back on a CPU at TIME (a PERF_RECORD_SWITCH "in"). */
void ft_offcpu_switch_in(struct ft_offcpu *oc, uint32_t tid, uint64_t time);
/* Counts the off-CPU intervals that end before HORIZON: every ring has
 * been read up to it, so no switch of theirs is still to come. */
void ft_offcpu_settle(struct ft_offcpu *oc, uint64_t horizon);
/* Thread TID exited at TIME: its last switch-out, after that, ends nothing. */
void ft_offcpu_exit(struct ft_offcpu *oc, uint32_t tid, uint64_t time);
/* Counts everything left, and threads still off CPU at END up to it. */
void ft_offcpu_finish(struct ft_offcpu *oc, uint64_t end);
void ft_offcpu_stats(const struct ft_offcpu *oc, struct ft_offcpu_stats *st);
/* How many threads are followed (those that exited are forgotten by
 * ft_offcpu_settle once every ring was read well past their exit). */
size_t ft_offcpu_threads(const struct ft_offcpu *oc);
void ft_offcpu_free(struct ft_offcpu *oc);

#endif
