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
#include "host/host.h"
#include "symbolize/symbolize.h"
#include "tracefs/tracefs.h"

/* The state of tracefs for this user (ft_tracefs_state). */
enum ft_tracefs_state {
	FT_TRACEFS_OK,         /* events readable */
	FT_TRACEFS_UNMOUNTED,  /* not mounted, and this user may not mount it */
	FT_TRACEFS_UNREADABLE, /* mounted, not readable by this user */
	FT_TRACEFS_LOCKDOWN,   /* closed by lockdown=confidentiality */
	FT_TRACEFS_NONE,       /* no mount point: the kernel or /sys lacks it */
};

/* ---- the plan: what to open ---- */

enum ft_event_kind {
	FT_EV_TRACEPOINT,    /* by tracefs id (also kprobe/uprobe events made in tracefs) */
	FT_EV_CPU_CLOCK,
	FT_EV_SCHED_SWITCH,
	FT_EV_KPROBE_PMU,    /* kprobe PMU: config1 = function name */
	FT_EV_UPROBE_PMU,    /* uprobe PMU: config1 = path, config2 = offset */
	FT_EV_FUNCTION,      /* the function tracer (ftrace backend): kstart..kend */
	FT_EV_CTXSW,         /* offcpu without tracefs: PERF_COUNT_SW_CONTEXT_SWITCHES */
	FT_EV_GENERIC,       /* perf's software and hardware events */
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
	/* whether this user may write the dynamic event files under tracefs
	 * (kprobe_events): ASK (zeroed) asks the kernel, with access(2) on the
	 * live file; tests give their fixture host's answer */
	enum ft_tracefs_write { FT_TRACEFS_WRITE_ASK, FT_TRACEFS_WRITE_YES,
				FT_TRACEFS_WRITE_NO } tracefs_write;
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
	/* from ft_mech_choose, set before ft_plan_build (zeroed: tracefs, kernel) */
	enum ft_tracefs_state tracefs_state;
	bool offcpu_ctxsw;       /* offcpu through PERF_COUNT_SW_CONTEXT_SWITCHES */
};

/* ---- the mechanism: what this host lets each mode use (mech.c) ---- */

/* What tfs_find_root's FIND_ERR (0 or -errno) means here, from
 * SYS_ROOT/kernel/tracing and H's lockdown mode. */
enum ft_tracefs_state ft_tracefs_state(const char *sys_root, int find_err,
				       const struct host_access *h);
/* What is missing, as a person reads it ("" when tracefs is there). Static. */
const char *ft_tracefs_missing(enum ft_tracefs_state t);

/* What a run asks for, from its options (ft_mech_ask_from). */
struct ft_mech_ask {
	enum ft_cmd cmd;
	bool system_wide;    /* no -c, -p or -L */
	bool tracepoints, kfuncs, ufuncs, usdt, software, hardware; /* count's specs */
	bool ftrace;         /* --backend ftrace */
	bool state;          /* offcpu --state: sched_switch's prev_state */
	bool kernel_only;    /* -K */
	pid_t other_user;    /* a -p/-L task of another user (the caller checks), 0 = none */
};
void ft_mech_ask_from(const struct ft_options *o, struct ft_mech_ask *a);

/* The mechanism chosen for a run. */
struct ft_mech {
	bool kernel;         /* kernel-mode samples and kernel stacks allowed */
	bool offcpu_ctxsw;   /* offcpu through the context-switch software event */
	char what[160];      /* "offcpu through ...": the run's first stderr line */
	char note[200];      /* said once with it ("kernel stacks are left out"), or "" */
	char why[480];       /* the one-line refusal, or "" */
};
/* Chooses the mechanism of A's run on host H with tracefs in state T.
 * Returns 0, or -EACCES with M->why saying what is missing, its value
 * (perf_event_paranoid) and what would lift it (the exit status is 2). */
int ft_mech_choose(const struct host_access *h, enum ft_tracefs_state t,
		   const struct ft_mech_ask *a, struct ft_mech *m);
/* When H's seccomp filter answers perf_event_open itself (H->perf_seccomp,
 * host_access_probe): the one-line refusal saying so and what lifts it,
 * into BUF; else "". */
void ft_mech_seccomp_why(const struct host_access *h, char *buf, size_t len);
/* Why perf_event_open answered EPERM or EACCES for an event on a task
 * (TASK) or on every task of a CPU, from what H knows (seccomp filter,
 * paranoid, capabilities), with what lifts it: one line into BUF. */
void ft_mech_open_why(const struct host_access *h, bool task, char *buf, size_t len);
/* True when H's lockdown mode (integrity or confidentiality) closes kprobes,
 * the PMU's and kprobe_events alike. */
bool ft_lockdown_blocks_kprobes(const struct host_access *h);
/* The modes that work on host H with tracefs in state T, comma-separated,
 * into BUF ("nothing" when none). */
void ft_mech_still_work(const struct host_access *h, enum ft_tracefs_state t, char *buf,
			size_t len);

/* What perf_event_open answered this user (0 or -errno), for the matrix. */
struct ft_access_probe {
	int cpu_clock_user;   /* cpu-clock on this process, user mode, user callchain */
	int cpu_clock_kernel; /* the same in kernel mode too, kernel callchain */
	int ctxsw_kernel;     /* context-switches on this process (kernel mode) */
	int page_faults;      /* page-faults on this process, user mode */
	int cycles;           /* hardware cycles on this process, user mode */
	int system_wide;      /* cpu-clock on CPU 0 for every task */
	int tracepoint;       /* sched:sched_switch by its tracefs id */
	int kprobe_pmu;       /* the kprobe PMU on a kernel function */
	int uprobe_pmu;       /* the uprobe PMU on a file this process has not mapped */
	int kprobe_events, uprobe_events; /* 0 writable in tracefs, else -errno */
};
struct ft_matrix_row {
	const char *what;     /* "tracepoints", "kernel functions", ... */
	bool ok;
	char detail[256];     /* how, or for no, what is missing */
};
/* The rows of ftstack check's matrix for host H, tracefs in state T and
 * the answers P, into ROWS[0..MAX). Returns how many (12 when MAX allows). */
int ft_mech_matrix(const struct host_access *h, enum ft_tracefs_state t,
		   const struct ft_access_probe *p, struct ft_matrix_row *rows, int max);

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
