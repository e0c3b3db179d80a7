/* The one result writer, shared by live runs (print.c) and `ftstack report`
 * (report_cmd.c): named stacks filtered (-x, -m, -t; offcpu's --min-total),
 * ordered and written in the --format asked, then the summary on stderr. */
#ifndef FTSTACK_RESULT_H
#define FTSTACK_RESULT_H

#include <stdio.h>
#include "aggregate/aggregate.h"
#include "cli/cli.h"
#include "output/output.h"

/* Filters and orders NAMED as O asks and writes it to OUT with OO; ST gets
 * the filter's numbers. BY_WEIGHT ranks by summed weights (offcpu's time,
 * report's periods) instead of counts; EVENT_LABEL names the events in
 * `top`'s totals. Returns 0, -EPIPE when the reader went away, or -errno. */
int ft_result_write(struct agg_named *named, const struct ft_options *o,
		    const struct out_options *oo, bool by_weight, const char *event_label,
		    FILE *out, struct agg_named_stats *st);

/* What the summary says besides the filter's numbers; zeros print nothing. */
struct ft_summary {
	bool live;               /* a run: "N events counted ..., M lost"; report: "N events in ..." */
	uint64_t counted, lost, throttled;
	uint64_t dropped;        /* --max-stacks reached */
	size_t max_stacks;
	uint64_t self_mmap, self_events;
	uint64_t through_miss;
	const char *through;
	uint64_t idle, empty_stacks;
	uint64_t outside_pidns;  /* pid 0 in user mode: tasks outside ftstack's pid namespace */
	bool child_pidns;        /* ftstack's pid namespace is below the host's */
	uint64_t stack_cut;      /* --call-graph copy/dwarf walks that reached the copy's end */
	uint64_t stack_cut_top;  /* of them, copies shorter than their room (the stack's top, a page not in) */
	uint64_t jit_unnamed;    /* stacks through JIT code no perf map names */
	const char *jit_runtime, *jit_needs; /* the runtime of most of them, what it needs (NULL: unknown) */
	uint64_t stack_stopped;  /* dwarf: walks that stopped short of the stack's start otherwise */
	/* offcpu: copies that ran to their stack's top (the kernel's copy
	 * stops there at a page fault), and a smaller copy that would have
	 * held every stack of the run whole and stopped short of it (0: none) */
	uint64_t copy_at_top, copy_whole;
	uint32_t copy_enough;
	uint32_t copy_size;
	const char *ustack;      /* the user-stack method: fp, copy or dwarf */
	/* the file where most of each kind ended (NULL: none known), and the
	 * share per mille of its functions keeping a frame pointer (-1: not known) */
	const char *cut_file, *stop_file;
	int cut_fp, stop_fp;
	uint64_t py_stacks, py_unread; /* stacks in Python code; those without its frames */
	const char *py_why;      /* why most of those could not be read */
	uint64_t filtered, open_at_end; /* offcpu */
	uint64_t bad_records;
	int full_cpu;            /* the CPU whose ring was the fullest at a drain's start, or -1 */
	unsigned full_pct;       /* how full, percent */
	size_t ring_kb;          /* full_cpu's ring, KB (rings that grow differ) */
	uint32_t sample_copy;    /* bytes of user stack each perf sample reserves in the ring (0: none) */
	bool weighted;           /* report: some event printed summed periods */
	uint32_t intervals;      /* -i: intervals printed (the counts are the run's) */
	size_t interval_stacks;  /* -i: the most distinct stacks one of them had */
};

/* A binary keeps frame pointers when at least this share (per mille) of
 * its functions set one up (sym_elf_fp_share): Debian's python3, perl, cc1
 * and libc are at 0-15, code built with -fno-omit-frame-pointer at 140-1000
 * (the fewer its own functions, the more crt1's frameless ones weigh). */
#define FT_KEEPS_FP 100
/* The advice for user stacks cut at the copy's end, into BUF: the option
 * that would walk them further for the method and the binary where most
 * ended (--call-graph fp only for a binary that keeps frame pointers).
 * Returns BUF. */
const char *ft_result_cut_advice(const struct ft_summary *sm, char *buf, size_t len);

/* The summary lines on stderr, through the messages module. */
void ft_result_summary(const struct ft_summary *sm, const struct agg_named_stats *st);

#endif
