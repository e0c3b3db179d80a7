/* cli: the command line (options, usage, -c splitting), progress, and the
 * messages module: every line a person reads goes through ft_warn/ft_error/ft_debug.
 */
#ifndef FTSTACK_CLI_H
#define FTSTACK_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "output/output.h"

#define FTSTACK_VERSION "0.1.0"
#define FT_MAX_EVENTS 1024
/* --call-graph copy: bytes of user stack per sample. Small on purpose: a copy
 * that runs past the top of the stack's mapping faults, which costs more
 * than the walk it replaces (doc/PERFORMANCE.md). */
#define FT_COPY_SIZE_DEFAULT 2048
/* profile's -F when neither -F nor --period is given (bcc's profile's too) */
#define FT_PROFILE_FREQ_DEFAULT 49
/* --call-graph dwarf: perf's default; code without frame pointers keeps
 * its frames deeper in the stack */
#define FT_DWARF_SIZE_DEFAULT 8192
/* --call-graph fp: the top of the stack copied with each sample, where the
 * CFI finds the callers of functions that keep no frame pointer */
#define FT_FIX_SIZE_DEFAULT 1024
/* profile and offcpu by default: the most the kernel copies (perf's limit,
 * under 64 KB and 8-byte aligned). Debian's cc1 runs 30-60 KB deep, python3
 * and perl 4-20 KB; a copy costs the bytes the stack holds, not its size:
 * it stops at the top of the stack's mapping */
#define FT_COPY_SIZE_MAX 65528
/* offcpu by default: its switches may come at 100k a second (a pipe
 * ping-pong), and each sample reserves its whole copy in the ring: a 64 MB
 * ring holds ~4000 of 16 KB, ~1000 of 64 KB; a python3 script sleeping in
 * nested functions is whole at 16 KB (realprog_test) */
#define FT_OFFCPU_COPY_SIZE 16384
/* The ring a CPU gets by default when samples carry a stack copy (perf
 * source, KB), and so what one second of profile's samples may fill: at
 * -F 10000 a 64 KB copy a sample would fill it ten times a second, and a
 * reader that loses its CPU to busy neighbours for a moment loses samples
 * (7306 of 100000 in bench/run's -F 10000 row, 2026-11-26), so profile's
 * default copy shrinks with the rate (ft_ustack_default) */
#define FT_COPY_RING_KB 65536
#define FT_ENTRY_RA "ftstack_ra" /* uprobe_events field: the return address at entry */
#define FT_MAX_CPUS 1024

enum ft_cmd { FT_COUNT, FT_PROFILE, FT_OFFCPU, FT_REPORT, FT_CHECK, FT_CLEANUP };
enum ft_backend { FT_BACKEND_PERF, FT_BACKEND_FTRACE };

/* Everything the command line said, validated. */
struct ft_options {
	enum ft_cmd cmd;
	const char *specs[FT_MAX_EVENTS]; /* -e and positional events */
	int nspecs;
	const char *lib;         /* -l LIB */
	pid_t pids[256];
	int npids;
	pid_t tids[256];
	int ntids;
	char **command;          /* -c / -- : argv of the command, NULL-terminated */
	bool cpus_set;
	bool cpus[FT_MAX_CPUS];  /* -C */
	bool user_only, kernel_only; /* -U / -K */
	enum out_format format;
	const char *output;      /* -o */
	bool force;              /* --force: -o writes through a symlink at FILE */
	bool keep_root;          /* --keep-root: under sudo, -c's command stays root */
	const char *cgroup;      /* --cgroup PATH: only this cgroup2's tasks (perf -G) */
	bool per_cgroup;         /* --per-cgroup: stacks of different cgroups kept apart */
	bool delimiter, annotate, offsets, addresses, per_process;
	bool no_demangle;        /* --no-demangle: C++/Rust names as the ELF file has them */
	/* --debuginfod / --no-debuginfod; by default on when DEBUGINFOD_URLS is set */
	enum ft_debuginfod { FT_DEBUGINFOD_ENV, FT_DEBUGINFOD_ON, FT_DEBUGINFOD_OFF } debuginfod;
	bool build_ids;          /* --build-ids: unnamed frames as [FILE+0xADDR@BUILDID] */
	const char *debug_dir;   /* --debug-dir DIR: separate debug files (/usr/lib/debug) */
	bool pid_frame;          /* -P given (not implied by profile/offcpu): folded's
	                          * first frame is comm-PID */
	uint64_t min_count;      /* -m (count/profile) */
	size_t top;              /* -t */
	const char *excludes[64]; /* -x globs, at most 63: NULL-terminated, as agg_filter takes them */
	int nexcludes;
	bool regex;              /* -r */
	double interval;         /* -i SECS, 0 = none */
	bool timestamp;          /* -T */
	double duration;         /* DURATION or -D, 0 = until Ctrl-C / command end */
	uint64_t freq;           /* -F */
	uint64_t period_ns;      /* --period */
	bool idle;               /* -I */
	bool user_threads, kernel_threads; /* -u / -k (offcpu) */
	uint64_t min_block_us, max_block_us, min_total_us;
	long state;              /* --state, -1 = any */
	enum ft_backend backend;
	bool call_graph_set;     /* --call-graph given; else the host's cheaper of fp and copy */
	bool call_graph_copy;    /* --call-graph copy or dwarf: walk a copied user stack */
	bool call_graph_dwarf;   /* --call-graph dwarf: with DWARF CFI, not frame pointers */
	uint32_t copy_size;      /* bytes of user stack copied per sample */
	size_t buffer_kb;        /* per-CPU ring size */
	bool buffer_set;         /* --buffer-size given: the ftrace instance is resized */
	size_t max_stacks;
	const char *through;     /* --through FUNC */
	uint64_t max_probes;     /* --max-probes N, 0 = default */
	const char *mechanism;   /* --mechanism: force how kernel functions are traced */
	bool debug;
	const char *input_format;  /* report --input-format, NULL = auto */
	bool diff;                 /* report --diff A B */
	/* report --weight: count samples, or weight each by its period
	 * (FT_WEIGHT_AUTO: by period where every sample of the event has one) */
	enum ft_weight { FT_WEIGHT_AUTO, FT_WEIGHT_SAMPLES, FT_WEIGHT_PERIOD } weight;
	const char *report_files[64];
	const char *sink;          /* --sink clickhouse://... */
	size_t sink_buffer;        /* --sink-buffer, bytes */
	bool sink_buffer_given;    /* --sink-buffer was given (it needs --sink) */
	const char *host_name;     /* --host-name: the host column, default gethostname */
	const char *since, *until; /* report --since/--until (clickhouse://) */
	const char *host_pattern;  /* report --host PATTERN */
	const char *event_filter;  /* report --event EVENT */
	const char *mode_filter;   /* report --mode MODE */
	void *owned[130];          /* what parsing allocated, for ft_options_free */
	int nowned;
	int nreport_files;
};

/* Parses argv into *o. Returns 0, or 1 after printing help/version (exit 0),
 * or -EINVAL after printing one line saying what is wrong (exit 2). */
int ft_options_parse(int argc, char **argv, struct ft_options *o);
void ft_usage(FILE *f);
/* Frees what ft_options_parse allocated (the -c argv, -x copies). */
void ft_options_free(struct ft_options *o);

/* Splits a -c command string into a NULL-terminated argv (*out, malloc'd):
 * plain words and quotes are split here; a string with shell syntax
 * (pipes, redirections, $, globs, ;) becomes /bin/sh -c STRING.
 * Returns 0 or -EINVAL (unbalanced quotes, empty). */
int ft_command_split(const char *s, char ***out);

/* ---- messages (messages.c): the one writer of stderr ---- */
extern bool ft_debug_on;
/* --debug: "ftstack: debug: ..." lines, nothing without --debug. */
void ft_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Something the user should know, the run goes on: "ftstack: ..." */
void ft_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line as it is, without "ftstack: " (bcc's "Tracing ... Hit Ctrl-C"). */
void ft_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Progress on a terminal: "\rftstack: ..." rewritten in place, flushed;
 * FMT NULL clears the line. */
void ft_progress_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Why the run fails or the input is refused, once, with what to do
 * about it: "ftstack: ..." (the caller exits 1 or 2). */
void ft_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


#endif
