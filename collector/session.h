/* One tracing run (count, profile, offcpu): what every part of collector/
 * shares while the loop runs, in named parts (struct ft_session below).
 * Internal to collector/ (and cmd/run.c, which builds it). */
#ifndef FTSTACK_SESSION_H
#define FTSTACK_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "aggregate/aggregate.h"
#include "collector/collector.h"
#include "task/task.h"
#include "collector/kfilter.h"
#include "collector/offcpu.h"
#include "collector/repeat.h"
#include "perfev/perfev.h"
#include "host/host.h"
#include "python/python.h"
#include "symbolize/symbolize.h"
#include "source/source.h"

struct fleet;
struct ft_summary;

/* Why records were not counted; all of it goes into the summary. */
struct ft_counters {
	uint64_t counted;        /* records given to the aggregator */
	uint64_t lost;           /* PERF_RECORD_LOST / LOST_SAMPLES */
	uint64_t throttled;      /* THROTTLE records */
	uint64_t self_events;    /* ftstack's own process */
	uint64_t self_mmap;      /* caused by ftstack's mmap tracking */
	uint64_t through_miss;   /* --through: stack did not pass through */
	uint64_t idle;           /* profile: idle task samples left out */
	uint64_t outside_pidns;  /* profile: pid 0 in user mode, so not the idle task: outside our pid namespace */
	uint64_t empty_stacks;   /* no frame could be walked */
	uint64_t entry_callers;  /* uprobe entry: callers added from [sp] */
};

/* The files where cut user stacks ended (their last frame's), for the
 * summary's advice: the one with the most is named. */
#define FT_CUT_FILES 8
struct ft_cut_file {
	char path[256];
	char prog[256]; /* the program of the first stack cut here */
	uint64_t at_end, stopped; /* cut at the copy's end; stopped otherwise */
};

/* The language runtimes ftstack knows (runtimes.c): what tells one apart
 * (the basename of its program or of a library it maps, up to a dot or
 * the end), how its frames are walked and named, and what it must be run
 * with for that. */
#define FT_RUNTIME_FILES 6
struct ft_runtime {
	const char *name;                    /* "node", "java", ... */
	const char *files[FT_RUNTIME_FILES]; /* NULL-ended */
	const char *walk;                    /* how its frames come out */
	const char *needs;                   /* the flags that name its frames */
};
/* The table, its N rows. */
const struct ft_runtime *ft_runtime_table(size_t *n);
/* The runtime whose program or library PATH is, or NULL. */
const struct ft_runtime *ft_runtime_of(const char *path);
struct tfs_check_item;
/* ftstack check's lines, one a runtime, into ITEMS (at most MAX): the count. */
int ft_runtimes_check(struct tfs_check_item *items, int max);

/* Processes whose stacks went through code in no file (JIT code), for the
 * summary's advice when no perf map names it: the first such address of
 * each (up to FT_JIT_PIDS) and the runtime its files tell. */
#define FT_JIT_PIDS 8
/* a process's first JIT samples asked which runtime they ran in, at most */
#define FT_JIT_RUNTIME_TRIES 64
struct ft_jit_pid {
	uint32_t pid;
	uint64_t time, addr, samples;
	const struct ft_runtime *runtime;
};
struct ft_jit_notes {
	struct sym_procs *procs; /* borrowed: the run's */
	struct ft_jit_pid pids[FT_JIT_PIDS];
};
/* Notes SMP, whose walk (N user FRAMES) met code in no file at ANON. */
void ft_jit_note(struct ft_jit_notes *j, struct sym_procs *procs,
		 const struct perfev_sample *smp, uint64_t anon, const uint64_t *frames,
		 uint32_t n);
/* Into SM: the samples whose JIT code no perf map names (asked at the
 * end: a JVM writes its map as it exits), and the runtime of the process
 * with the most, with what it needs. */
void ft_jit_summary(const struct ft_jit_notes *j, struct ft_summary *sm);

struct sym_unwinder;
enum ft_ustack_method { FT_USTACK_FP, FT_USTACK_COPY, FT_USTACK_DWARF };

/* How user stacks are taken and walked (ustack.c): the kernel's walk (fp)
 * or ftstack's of a copy (copy), both repaired with CFI, or CFI alone
 * (dwarf); chosen by ft_ustack_choose, read by the perf source when it
 * opens events, and what the walks left short, for the summary. */
/* profile wakes the reader at each sample up to this rate (python/) */
#define FT_PYTHON_WAKE_RATE 1024
/* and its readers on each CPU ask for slices this short without SCHED_FIFO (host_sched_short_slice) */
#define FT_PYTHON_SLICE_NS 100000ull
/* the clocks' offset is measured again this often (NTP slews one of them) */
#define FT_CLOCK_EVERY_NS 1000000000ull

struct ft_ustacks {
	enum ft_ustack_method method;
	uint32_t copy_size;      /* bytes of stack copied a sample (0: none, no walk here) */
	uint64_t regs_mask;      /* the user registers each sample takes with the copy */
	uint16_t max_frames;     /* walked at most: kernel.perf_event_max_stack (0: AGG_MAX_DEPTH) */
	char why[256];           /* why this method (chosen for the host, or asked) */
	struct sym_unwinder *unwinder; /* CFI of the mapped files */
	uint64_t cut;            /* stacks cut at the copy's end */
	uint64_t cut_top;        /* of them, copied whole (the copy ended at the stack's top) */
	struct ft_jit_notes jit; /* stacks through JIT code */
	uint64_t stopped;        /* dwarf: stacks that stopped short of their start otherwise */
	/* dwarf: walks whole to the process's start; of them, copies that ran
	 * to the stack's top (shorter than their room); the farthest such a
	 * walk's outermost frame lay above the sample's rsp, and the least
	 * room any copy had up to the top (ft_ustack_summary's copy_enough) */
	uint64_t whole, at_top, reach_max, top_min;
	struct ft_cut_file cut_files[FT_CUT_FILES]; /* where they ended */
	uint64_t walk[AGG_MAX_DEPTH];  /* the user frames walked here */
	uint64_t sps[AGG_MAX_DEPTH];   /* their stack pointers (sym_unwinder_sps) */
	struct py_reader *py;          /* Python's frames, put in place (python/) */
	uint64_t with_py[AGG_MAX_DEPTH]; /* the walk with them */
	uint64_t py_ns;                /* time spent reading them (bench/python) */
	/* CLOCK_MONOTONIC - perf's clock: a sample's age is its lag less this.
	 * Measured (clock, each FT_CLOCK_EVERY_NS), and lowered to any lag seen
	 * below it (where the clock cannot be opened, the least lag seen) */
	struct perfev_clock clock;
	int64_t py_offset;
	uint64_t clock_at;             /* when it was last measured (CLOCK_MONOTONIC) */
	bool py_offset_known;
	bool offcpu;                   /* offcpu's samples: of blocked threads */
	/* profile at up to FT_PYTHON_WAKE_RATE: each sample wakes a reader,
	 * one on each CPU from the run's start (collector/loop.c,
	 * cpu_readers.h); py_on_cpu[1] of the samples read were read on the
	 * CPU they were taken on, py_on_cpu[0] elsewhere */
	bool follow;
	uint64_t py_on_cpu[2];
	uint64_t chain[AGG_MAX_DEPTH]; /* copy: the frame-pointer walk of the copy */
	uint32_t nchain;               /* its length, */
	bool chain_cut;                /* whether it ran off the copy, */
	/* and of which sample (ft_ustack_chain), NULL when each sample's
	 * handling starts (on_sample) */
	const struct perfev_sample *chain_of;
	bool spliced;                  /* the last walk repaired a chain (sym_unwind_splice) */
	/* the last walk repaired its chain, no Python frames, no JIT code:
	 * its frames then come from the chain, the layout and the copy's words
	 * the splice's kept rules read (sym_unwind_spliced_by_rule,
	 * sym_unwind_walked_by_rules; repeat.c), */
	bool repeatable;
	/* and whether it was cut: counted again with it (cut, cut_top and
	 * its file's at_end) */
	struct ft_cut_of last_cut;
};

/* What the run wants from the kernel and keeps of each record: set by
 * ft_session_configure from the options (user_mode_only by the mechanism
 * chosen), read by the sources when they open events and by counting. */
struct ft_keep {
	bool want_user, want_kernel;
	/* perf_event_paranoid 2 without CAP_PERFMON: events exclude kernel
	 * mode, so samples carry user stacks only (plan/mech.c) */
	bool user_mode_only;
	bool need_procs;         /* user stacks or comm shown: follow processes */
	bool track;              /* side-band records wanted (comm/task, mmap2 with user stacks) */
	bool key_pid;            /* the aggregator keeps processes apart */
	bool key_tid;            /* and threads: their comm is shown */
	uint16_t max_stack;      /* kernel.perf_event_max_stack */
	/* ftstack's pid namespace is below the host's: the tasks outside it
	 * are reported as pid 0, as the idle task is */
	bool child_pidns;
};

/* Bounded memory (forget.c): how far the rings were read, and what the
 * last sweep had to keep, which sets when the next one is due. */
struct ft_forgetting {
	uint64_t read_until;     /* every ring was read up to this time (the last full drain) */
	size_t kept;             /* exited tasks the table still needed at the last sweep */
};

/* -i (print.c): what the intervals printed so far had, for the summary's
 * run totals (each interval's table is reset after it is printed). */
struct ft_interval_stats {
	uint32_t printed;        /* intervals printed so far */
	size_t most_stacks;      /* the most distinct stacks one interval had */
	uint64_t dropped;        /* --max-stacks drops of the intervals printed */
	uint64_t counted_at_reset; /* cnt.counted when the last interval was printed */
};

/* --sink (sink.c): the connection to ClickHouse and its batches. */
struct ft_sink_state {
	struct fleet *fleet;     /* NULL without --sink */
	uint64_t since;          /* ms (monotonic) the current batch began */
	char host[256];          /* the host column */
	bool lost;               /* a batch could not be built (memory) */
};

/* Whose events are traced: -c's command, the -p/-L targets. */
struct ft_traced {
	struct ft_child child;
	bool have_child;
	struct ft_targets targets; /* -p, -L */
};

/* --cgroup and --per-cgroup. */
struct ft_cgroup_scope {
	/* --cgroup: the folder's fd, the pid of every event (PERF_FLAG_PID_CGROUP) */
	int fd;
	bool open;
	char path[512];          /* --cgroup's path from the cgroup root ("/a/b") */
	struct host_cgroup_names names; /* --per-cgroup: ids to paths */
};

struct sym_cache;
/* Where and how the result is written (print.c). */
struct ft_output {
	FILE *file;              /* stdout or -o FILE */
	const char *title;       /* svg/speedscope title */
	uint64_t period_ns;      /* profile: ns per sample */
	struct sym_cache *symcache; /* names of addresses, kept across -i intervals */
};


#define FT_SELF_HELPERS 16

/* The run: what it was asked (opt) and may use (mech, plan), its parts,
 * each a struct above that the functions working on it alone take, and
 * what counting shares. Built by ft_session_init/_configure/_alloc, freed
 * by ft_session_free. */
struct ft_session {
	const struct ft_options *opt;
	struct ft_plan plan;
	struct ft_mech mech;      /* what this host lets the run use (plan/mech.c) */
	struct host_access host;  /* what this user may do here, read once (choose_mechanism) */
	pid_t self;               /* ftstack's pid: its own samples are left out */
	/* and those of processes it forked that have not exec'd (perfev's ring
	 * mappers, forked from the thread that grows the rings mid-run), as
	 * their FORK records tell, until their EXIT or exec */
	uint32_t helpers[FT_SELF_HELPERS];
	unsigned nhelpers;
	struct ft_keep keep;
	struct ft_traced traced;
	struct ft_cgroup_scope cgroup;
	/* the sources (source/; collector/sources.c opens them) and offcpu's
	 * pairing, which records go to */
	struct ft_sources src;
	struct ft_offcpu *offcpu;
	bool poll_rings;         /* a ring left epoll, or -p with no perf ring:
				  * drain and look for the targets on a timeout too */
	/* what counting adds to */
	struct agg_table *agg;
	struct sym_procs *procs; /* the process history: maps and comms over time */
	struct ft_kernel_syms kernel;
	struct ft_ustacks ustacks;
	struct ft_counters cnt;
	struct ft_repeat repeat;  /* the last sample counted, to count again (repeat.c) */
	uint64_t last_time;      /* newest record time seen (perf/ftrace clock): the end */
	uint64_t settled;        /* offcpu's last settle, up to this time (loop.c) */
	uint64_t scratch_u[AGG_MAX_DEPTH + 1]; /* a uprobe entry's stack with its caller put back */
	/* what is done with it */
	struct ft_forgetting forget;
	struct ft_interval_stats intervals;
	struct ft_output output;
	struct ft_sink_state sink;
};

/* ---- building it (session.c) ---- */
/* S empty for the options O (kept by address): nothing allocated, no fd
 * (-1), its own pid, the output's title and profile's period. Then the
 * caller fills the plan and the mechanism, ft_session_configure, and
 * ft_session_alloc. */
void ft_session_init(struct ft_session *s, const struct ft_options *o);
/* What this run wants from the kernel and keeps per record (s->keep, the
 * walk's frame bound, the plan's track_mmaps), from s->opt and PROC_ROOT's
 * kernel.perf_event_max_stack. */
void ft_session_configure(struct ft_session *s, const char *proc_root);
/* The tables every run needs, once configured: the process history (maps
 * under PROC_ROOT, debug files under DEBUG_ROOT), the aggregator keyed as
 * s->keep says, the name cache, the unwinder when user stacks are copied,
 * and the kernel filters when the symbols are in (s->kernel READY).
 * Returns 0 or -ENOMEM (ft_session_free frees what was made). */
int ft_session_alloc(struct ft_session *s, const char *proc_root, const char *debug_root);
/* Frees what the session holds in memory; the kernel objects (plan,
 * sources) and the fds (targets, --cgroup's folder, the sink's connection)
 * are their owners' to close or destroy first. S may be half built. */
void ft_session_free(struct ft_session *s);

/* Handles one decoded perf record (sample or side band); EVENT is the plan
 * index of a sample's event, -1 when it is none of the plan's. Returns 0. */
int ft_session_record(struct ft_session *s, const struct perfev_record *rec, int event);

/* ---- counting (count.c) ---- */
/* Counts one sample's stacks (weight w) after the kernel-stack filters. */
void ft_session_count(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
		      uint64_t weight);
/* Whether the kernel-stack filters leave SMP out, asked before its user
 * stack is walked so that no walk is spent, nor its cut counted, on a
 * sample that is not counted (--through kept 1 in 28 of the kmalloc
 * samples of a system-wide run). They answer once the kernel's symbols are
 * in: then a sample left out is counted as such and true is returned;
 * else false, with *kstart the first kernel frame kept, or FT_KSTART_LATER
 * when they have not answered (the sample is filtered when counted). */
bool ft_session_kernel_leaves_out(struct ft_session *s, const struct perfev_sample *smp,
				  uint32_t *kstart);
#define FT_KSTART_LATER UINT32_MAX
/* ft_session_count of a sample ft_session_kernel_leaves_out kept, with the
 * *kstart it gave. */
void ft_session_count_at(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
			 uint64_t weight, uint32_t kstart);
/* ft_session_count for callbacks (the ftrace source's and offcpu's count):
 * CTX is the session. */
void ft_session_count_cb(void *ctx, const struct perfev_sample *smp, uint32_t event,
			 uint64_t weight);
/* A process seen for the first time that was not born under tracing: its
 * maps are read now, while it most likely still runs. */
void ft_session_know_process(struct ft_session *s, uint32_t pid, uint64_t time);

/* ---- the sample like the last one (repeat.c) ---- */
/* Counts SMP (of plan EVENT, WEIGHT) into the last sample's key when every
 * input of that key is the same: true, and nothing else to do; false when
 * it must be counted whole. */
bool ft_repeat_count(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
		     uint64_t weight);
/* After SMP (as decoded, before its walk) was counted whole: kept for
 * ft_repeat_count when its key was a function of its inputs alone. */
void ft_repeat_keep(struct ft_session *s, const struct perfev_sample *smp, uint32_t event);
/* The same in PROCS, whatever the session follows. */
void ft_procs_know(struct sym_procs *procs, uint32_t pid, uint64_t time);
/* Waits for the kernel's symbols if they are loading, takes them in (saying
 * once when they cannot be had) and counts the samples that waited. */
void ft_session_kernel_wait(struct ft_session *s);

/* ---- user stacks (ustack.c) ---- */
/* Sets U's method, copy size, registers and why from the options O: what
 * --call-graph asked, else the host's cheaper of fp and copy (ftstack
 * check's saved answer; copy before check has run on this boot). */
void ft_ustack_choose(struct ft_ustacks *u, const struct ft_options *o);
/* The copy size and method the default takes where --call-graph is not
 * given, from the mode and its rate: profile, whose samples come at the
 * RATE the run sets (-F, a second / --period: ft_profile_rate), copies the
 * most the kernel takes while a second of samples fits the default ring
 * (FT_COPY_RING_KB: 65528 bytes up to -F 1024, then 32, 16 and at least
 * 8 KB) and walks it all with CFI (dwarf); offcpu, whose switches may come at 100k a second, the same with
 * a 16 KB copy (a 64 MB ring then holds 4000 of them); count, whose events may
 * come at hundreds of thousands a second, keeps the host's frame-pointer
 * method and its small copy (HOST_METHOD). Returns the method; *SIZE gets
 * the bytes of stack copied a sample. */
enum ft_ustack_method ft_ustack_default(enum ft_cmd cmd, enum ft_ustack_method host_method,
					uint64_t rate, uint32_t *size);
/* Profile's samples a second on each CPU: -F, or a second over --period,
 * else FT_PROFILE_FREQ_DEFAULT (0 for the other modes). */
uint64_t ft_profile_rate(const struct ft_options *o);
/* The summary's cut-stack figures of U into SM: the counts, and the file
 * where most of each kind ended with its frame-pointer verdict. */
void ft_ustack_summary(const struct ft_ustacks *u, struct ft_summary *sm);
/* The rule on perfev_ustack_cost's measurement (its verdict: fp only when
 * it measurably costs less than copy, else copy); WHY gets the figures and
 * reason. */
enum ft_ustack_method ft_ustack_rule(const struct perfev_ustack_cost *c, char *why, size_t len);
/* Saves the answer for this boot's runs (/run/ftstack). Returns 0 or -errno. */
int ft_ustack_save(enum ft_ustack_method m, const char *why);
/* ftstack check's answers for this boot's runs, a line each in
 * /run/ftstack/NAME (saved.c): write returns 0 or -errno; read puts the
 * line (no newline) in LINE and returns 0, or -errno (-ENOENT: check has
 * not run since boot). */
int ft_saved_write(const char *name, const char *line);
int ft_saved_read(const char *name, char *line, size_t len);
/* The rule on the milliseconds until every ring existed, mapped by this
 * process ALONE and with a helper a CPU (HELPED), ROUNDS of each: true
 * (alone) when alone was sooner in the median round. WHY gets the figures
 * (ring_maps.c). */
bool ft_ring_maps_rule(const double *alone, const double *helped, int rounds, char *why,
		       size_t len);
/* ftstack check's line: times both ways on this host's CPUs and saves the
 * rule's answer for this boot's runs. Returns 0. */
int ft_ring_maps_check(struct tfs_check_item *it);
/* Whether this boot's answer says this process maps the rings alone. */
bool ft_ring_maps_alone(void);
const char *ft_ustack_name(enum ft_ustack_method m);
struct tfs_check_item;
/* ftstack check's line: the method C's measurement chooses here and why,
 * saved for later runs. Returns 0. */
int ft_ustack_check(const struct perfev_ustack_cost *c, struct tfs_check_item *it);
/* SMP with its user frames walked here (into u->walk, in TMP), or SMP
 * itself when the kernel's frames stand; PROCS has the mappings (a process
 * seen for the first time is read now). */
const struct perfev_sample *ft_ustack_walk(struct ft_ustacks *u, struct sym_procs *procs,
					   const struct perfev_sample *smp,
					   struct perfev_sample *tmp);
/* The frame-pointer chain SMP's user stack starts from, in *CHAIN: the
 * kernel's (fp), or the walk of its copy (copy: walked once a sample,
 * kept in U; *CUT when it ran off the copy). Returns its length. */
uint32_t ft_ustack_chain(struct ft_ustacks *u, const struct perfev_sample *smp,
			 const uint64_t **chain, bool *cut);
/* The chain ft_ustack_chain gave for SMP, the last sample walked, in
 * *CHAIN without walking again (its copy's walk is kept in U until the
 * next sample's). Returns its length. */
uint32_t ft_ustack_last_chain(const struct ft_ustacks *u, const struct perfev_sample *smp,
			      const uint64_t **chain);

/* ---- the sources (sources.c) ---- */
/* Opens the backend the plan chose, its config built from S, its records
 * handed to ft_session_record (perf) or ft_session_count (ftrace), into
 * s->src. Returns 0, or -errno after saying what failed. */
int ft_session_open_sources(struct ft_session *s, int epfd);
/* True when the run follows -p/-L tasks and none of them runs any more. */
bool ft_session_targets_gone(const struct ft_session *s);

/* ---- the loop ---- */
/* Runs until the duration ends, a signal, or the command exits; prints every
 * -i interval. Returns 0 or -errno. */
int ft_loop_run(struct ft_session *s, int epfd);
/* The signals a run takes from its signalfd (INT, TERM, HUP, CHLD) into
 * MASK: the run blocks them before anything starts, and the loop reads them. */
void ft_loop_signals(sigset_t *mask);

/* ---- printing ---- */
/* Symbolizes, merges, filters and writes the result; then the summary on
 * stderr. Returns 0, -EPIPE when the reader went away, or -errno. */
int ft_print_result(struct ft_session *s, FILE *out);
void ft_print_summary(struct ft_session *s, const struct agg_named_stats *ns);
/* Names every counted stack into NAMED (comm included when COMM). Returns 0
 * or -ENOMEM. */
int ft_build_named(struct ft_session *s, struct agg_named *named, bool comm);

/* ---- --sink (sink.c) ---- */
/* Connects K to O's --sink and creates the table; nothing without --sink.
 * Returns 0, or -EINVAL after printing one line (exit 2: an unreachable
 * sink is bad usage). */
int ft_sink_open(struct ft_sink_state *k, const struct ft_options *o);
/* Queues what was counted since the last call as one batch. */
void ft_sink_interval(struct ft_session *s);
/* Flushes K (bounded), stops the sender, prints the sink's summary line
 * (O: the --sink-buffer it names). */
void ft_sink_close(struct ft_sink_state *k, const struct ft_options *o);

/* -i: prints what was counted since the last interval and starts afresh.
 * Returns 0 or -errno. */
int ft_print_interval(struct ft_session *s);

/* ---- bounded memory (forget.c) ---- */
/* Every ring was just read; SEEN is the newest record time read before:
 * records stamped before it (less the margin a record's stamp may precede
 * its write by) are all in. */
void ft_session_drained(struct ft_session *s, uint64_t seen);
/* Forgets what the counted stacks no longer need, after the rings were
 * drained: the name cache's names (an interval's are printed), the tasks
 * that exited (those the table still counts stay); then ft_heap_trim. */
void ft_session_forget(struct ft_session *s);
/* Gives the allocator's free pages back to the system (glibc: malloc_trim;
 * with --debug, the heap's figures). */
void ft_heap_trim(void);
/* True when enough exited tasks wait (a sweep costs the table's size, so
 * it comes after a number of exits that grows with what it had to keep). */
bool ft_session_forget_due(const struct ft_session *s);

#endif
