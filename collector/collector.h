/* collector: main, option parsing, the plan (what to open for which mode),
 * the event loop, the child command, the cleanup stack and the summary.
 * This is the only module that prints; it decides what a person sees.
 */
#ifndef FTSTACK_COLLECTOR_H
#define FTSTACK_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "aggregate/aggregate.h"
#include "output/output.h"
#include "symbolize/symbolize.h"
#include "tracefs/tracefs.h"

#define FTSTACK_VERSION "0.1.0"
#define FT_MAX_EVENTS 1024
/* --call-graph copy: bytes of user stack per sample. Small on purpose: a copy
 * that runs past the top of the stack's mapping faults, which costs more
 * than the walk it replaces (doc/PERFORMANCE.md). */
#define FT_COPY_SIZE_DEFAULT 2048
/* --call-graph dwarf: perf's default; code without frame pointers keeps
 * its frames deeper in the stack */
#define FT_DWARF_SIZE_DEFAULT 8192
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
	bool delimiter, annotate, offsets, addresses, per_process;
	bool no_demangle;        /* --no-demangle: C++/Rust names as the ELF file has them */
	uint64_t min_count;      /* -m (count/profile) */
	bool min_set;
	size_t top;              /* -t */
	const char *excludes[64];
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
	const char *report_files[64];
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

/* ---- the plan: what to open ---- */

enum ft_event_kind {
	FT_EV_TRACEPOINT,    /* by tracefs id (also kprobe/uprobe events made in tracefs) */
	FT_EV_CPU_CLOCK,
	FT_EV_SCHED_SWITCH,
	FT_EV_KPROBE_PMU,    /* kprobe PMU: config1 = function name */
	FT_EV_UPROBE_PMU,    /* uprobe PMU: config1 = path, config2 = offset */
	FT_EV_FUNCTION,      /* the function tracer (ftrace backend): kstart..kend */
};

struct ft_event {
	enum ft_event_kind kind;
	char name[192];      /* as printed: "t:syscalls:sys_enter_getppid" */
	char label[64];      /* short name for the top format: "kmalloc" */
	char system[64];     /* tracefs system and event behind it */
	char event[128];
	char filter[64];     /* perf filter (raw_syscalls id), "" = none */
	uint32_t perf_type;
	uint64_t perf_config;
	uint64_t perf_config1, perf_config2; /* kprobe/uprobe PMU */
	uint64_t sample_period;  /* 0 = every event */
	uint64_t sample_freq;    /* profile -F */
	bool raw;                /* needs PERF_SAMPLE_RAW (offcpu) */
	bool in_stack;       /* the stack itself ends in the event (functions) */
	bool kfunc;          /* a kernel function: its leaf frame is named as asked */
	char path[256];      /* uprobe: the ELF file; kprobe PMU: unused */
	uint64_t offset;     /* uprobe: file offset of the probe */
	uint64_t ref_ctr;    /* USDT semaphore file offset, 0 = none */
	bool entry_fix;      /* uprobe at a function's entry: add the caller from [sp] */
	char dyn_file[16];   /* "kprobe_events"/"uprobe_events" when made in tracefs */
	char dyn_def[640];   /* the definition line written there */
	uint32_t pid_only;   /* uprobe -p resolution: only this process's hits */
	uint64_t kstart, kend; /* FT_EV_FUNCTION: the function's kernel text */
	char ftrace_func[128]; /* FT_EV_FUNCTION: its name in available_filter_functions */
	bool optional;       /* one of a pattern's matches: skipped if the kernel refuses it */
	int refused;         /* -errno the kernel refused an optional event with, 0 = attached */
};

struct ft_plan {
	struct ft_event *events;
	int nevents;
	char tracefs[256];
	bool track_mmaps;    /* side-band records for user symbolization */
	uint64_t through_start, through_end; /* --through range, 0 = none */
	const char *through_name;
	char through_buf[128];
	const struct sym_kernel *ksyms; /* loaded before the plan: names are resolved against it */
	struct tfs_log log;         /* every change made to tracefs, undone at exit */
	char group[32];                 /* ftstack_<pid>: dynamic events made by this run */
	const char *mechanism;          /* what kernel functions use, said on stderr */
	bool tfs_events;            /* --backend ftrace: probes must be tracefs events */
	/* -c/-p: events are inherited by children, which a kprobe/uprobe PMU
	 * event cannot be (the kernel re-reads its name/path pointer in the
	 * forking process: fork fails with EFAULT), so the tracefs kind is used */
	bool inherit;
	enum ft_backend backend;        /* --backend, or ftrace for the function tracer */
	bool function_tracer;           /* some events are FT_EV_FUNCTION */
	bool function_tracer_tried;     /* and what trying it in an instance said */
	int function_tracer_err;
	int noptional;                  /* events from patterns (ft_event.optional) */
	char *avail_funcs;              /* available_filter_functions, read once (NULL: not yet) */
	bool avail_funcs_read;
};

/* Creates what the plan needs in tracefs (dynamic events), recording each
 * change in p->log, and fills in their ids. Returns 0, or -errno after printing
 * the kernel's complaint. */
int ft_plan_create(struct ft_plan *p);

/* Whether the kernel's refusal ERR (-errno) of an optional event means "this
 * function cannot be probed" (skip it) rather than a failure of the run. */
bool ft_plan_refusal(int err);
/* After the events were opened: says how many pattern matches were attached
 * and which the kernel refused, and why. Returns 0, or -ENOENT (said) when
 * every one was refused. */
int ft_plan_report_refused(const struct ft_plan *p);

/* Resolves o's event specs into plan events. Returns 0, or -errno after
 * printing one line (with suggestions) saying what is wrong. */
int ft_plan_build(const struct ft_options *o, struct ft_plan *p);
struct ft_spec;
/* Kernel functions (plan_kfunc.c) and user functions/USDT (plan_uprobe.c). */
int ft_plan_kfunc(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p);
int ft_plan_uprobe(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p);
void ft_plan_free(struct ft_plan *p);

/* ---- logging ---- */
extern bool ft_debug_on;
void ft_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ft_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- subcommands ---- */
int ft_cmd_record(const struct ft_options *o);  /* count, profile, offcpu */
int ft_cmd_check(const struct ft_options *o);
int ft_cmd_cleanup(const struct ft_options *o);
int ft_cmd_report(const struct ft_options *o);

#endif
