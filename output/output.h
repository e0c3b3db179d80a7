/* output: the formats of doc/DESIGN.md section 2, written from named stacks that
 * aggregate has merged, filtered and ordered (least frequent first). Pure
 * code writing to a FILE*: no kernel, no symbolization.
 */
#ifndef FTSTACK_OUTPUT_H
#define FTSTACK_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "aggregate/aggregate.h"

enum out_format { OUT_TEXT, OUT_FOLDED, OUT_TOP, OUT_PPROF, OUT_SPEEDSCOPE, OUT_SVG };

enum out_mode { OUT_MODE_COUNT, OUT_MODE_PROFILE, OUT_MODE_OFFCPU };

struct out_options {
	enum out_format format;
	enum out_mode mode;
	bool delimiter;      /* -d: "--" (text) / "-" (folded) between kernel and user frames */
	bool annotate;       /* -a: kernel frames end in _[k] (folded) */
	bool per_process;    /* print "-  comm (pid)" lines (text) */
	bool show_comm;      /* folded: comm as the root frame */
	bool comm_pid;       /* folded: that frame is comm-PID (-P, stackcollapse-perf --pid) */
	const char *const *event_names; /* indexed by agg_named_stack.event */
	uint32_t nevents;
	bool event_frame;    /* leaf-most frame "[event]" where the stack does not end in it */
	const bool *event_in_stack; /* per event: the stack already ends in the event (functions) */
	uint64_t period_ns;  /* profile: ns per sample, for pprof/speedscope weights */
	const bool *event_weighted; /* per event: print weight (summed periods), not count */
	const char *weight_type;    /* pprof's type of the weight when some event is
	                             * weighted (unit "period"); NULL: "event" */
	const char *title;   /* svg title / speedscope name */
};

/* Summary numbers the `top` format prints (kmalloc-top's closing lines). */
struct out_totals {
	const struct agg_named_stats *named;
	const char *event_label; /* e.g. "kmalloc" in "Total kmallocs" */
};

/* Writes STACKS[0..n) to F in o->format. Returns 0 or -errno (-EPIPE when the
 * reader went away, -EIO on a write error). */
int out_write(FILE *f, const struct out_options *o, const struct agg_named_stack *stacks,
	      size_t n, const struct out_totals *totals);

/* report --diff: STACKS[0..n) as "folded-stack COUNT_A COUNT_B" lines sorted
 * by stack (A's counts in .count, B's in .weight). Returns as out_write. */
int out_write_diff(FILE *f, const struct out_options *o, const struct agg_named_stack *stacks,
		   size_t n);

/* Parses a --format name. Returns 0 or -EINVAL. */
int out_format_parse(const char *name, enum out_format *out);

/* The one rule for the comm. Returns whether format F prints each stack's
 * comm (as folded's root frame and its kin: every format but text and top,
 * which print it only per process, as bcc does). */
bool out_format_shows_comm(enum out_format f);
/* Returns whether stacks must carry their comm: F shows it, or -P prints
 * it per process (PER_PROCESS). */
bool out_needs_comm(enum out_format f, bool per_process);

/* Copies NAME to buf with ';' and newlines replaced (folded frame rule).
 * Returns buf. */
char *out_folded_frame(const char *name, char *buf, size_t len);

/* The one rule every format names things by: NAME with each invalid UTF-8
 * sequence (bad bytes, overlong forms, surrogates, beyond U+10FFFF, the
 * noncharacters U+FFFE/U+FFFF) replaced by U+FFFD and each control
 * character (C0, DEL, C1) written as "\xNN". Returns NULL when NAME needs
 * no change, else a malloc'd copy (NULL on -ENOMEM sets *err). */
char *out_clean_name(const char *name, int *err);
/* ---- -o FILE (out_file.c) ----
 * The result is written to a new file in FILE's folder and renamed over FILE
 * only when complete: a run that fails or is killed leaves FILE as it was. */
struct out_file;
/* Opens the new file for PATH; *f is where the result goes. Returns 0, or
 * -ELOOP (PATH is a symlink and not force), -EISDIR, or the -errno of the
 * folder or of an existing FILE this process may not write (nothing was
 * created then). With force, a symlink's target is what gets replaced. */
int out_file_open(const char *path, bool force, struct out_file **of, FILE **f);
/* Flushes, fsyncs and renames the new file over FILE, and frees of. Returns
 * 0, or -errno with FILE unchanged. */
int out_file_commit(struct out_file *of);
/* Drops the new file (FILE unchanged) and frees of. NULL is fine. */
void out_file_abort(struct out_file *of);

#endif
