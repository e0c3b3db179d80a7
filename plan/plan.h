/* plan: event specs and what to open for which mode on this kernel;
 * every refusal of bad input happens here, before the kernel is touched.
 */
#ifndef FTSTACK_PLAN_H
#define FTSTACK_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "cli/cli.h"
#include "symbolize/symbolize.h"
#include "tracefs/tracefs.h"

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
	uint64_t kstart, kend; /* FT_EV_FUNCTION: the function's kernel text */
	char ftrace_func[128]; /* FT_EV_FUNCTION: its name in available_filter_functions */
	bool optional;       /* one of a pattern's matches: skipped if the kernel refuses it */
	int refused;         /* -errno the kernel refused an optional event with, 0 = attached */
};

struct ft_plan {
	struct ft_event *events;
	int nevents;
	size_t capevents;
	/* the roots read: tracefs ("" = found by ft_plan_build), /sys and
	 * /proc (NULL = the live ones); tests give fixture trees */
	char tracefs[256];
	const char *sys_root, *proc_root;
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

/* Whether planning O needs the kernel's symbols before anything is opened:
 * kernel functions are resolved against them and --through is checked.
 * Other runs load them only when a kernel stack is first counted. */
bool ft_plan_wants_kallsyms(const struct ft_options *o);
/* Resolves o's event specs into plan events. Returns 0, or -errno after
 * printing one line (with suggestions) saying what is wrong. */
int ft_plan_build(const struct ft_options *o, struct ft_plan *p);
struct ft_spec;
/* Kernel functions (plan_kfunc.c) and user functions/USDT (plan_uprobe.c). */
int ft_plan_kfunc(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p);
int ft_plan_uprobe(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p);
void ft_plan_destroy(struct ft_plan *p);

#endif
