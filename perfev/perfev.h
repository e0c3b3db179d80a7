/* perfev: perf_event_open, mmap'd ring buffers read in place, and decoding
 * of the records they carry. Decoding works on bytes, so captured rings are
 * test input (tests/unit/perfev_decode_test.c). Nothing here prints.
 */
#ifndef FTSTACK_PERFEV_H
#define FTSTACK_PERFEV_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/* What every ftstack sample carries; records are decoded against it. */
#define PERFEV_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | \
			    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			    PERF_SAMPLE_CALLCHAIN)

struct perfev_opts {
	uint32_t type;          /* PERF_TYPE_TRACEPOINT, PERF_TYPE_SOFTWARE, or a PMU type */
	uint64_t config;        /* tracepoint id, PERF_COUNT_SW_CPU_CLOCK, ... */
	uint64_t config1, config2; /* kprobe/uprobe PMU: name or path pointer, offset */
	uint64_t sample_period; /* 0 with freq set */
	uint64_t sample_freq;   /* profile -F */
	bool freq;
	bool raw;               /* PERF_SAMPLE_RAW too (offcpu reads sched_switch fields) */
	/* not 0: PERF_SAMPLE_REGS_USER with these registers and STACK_USER with
	 * stack_dump bytes (user stacks walked by ftstack, uprobe [sp]) */
	uint64_t regs_user;
	uint32_t stack_dump;
	bool exclude_user_chain;   /* -K: exclude_callchain_user */
	bool exclude_kernel_chain; /* -U: exclude_callchain_kernel */
	/* user mode only (exclude_kernel, exclude_hv): what perf_event_paranoid 2
	 * allows a user without CAP_PERFMON; implies exclude_kernel_chain */
	bool exclude_kernel;
	bool track;             /* comm(+exec) + task records (side band) */
	bool track_mmap;        /* with track: mmap2 records too (user symbolization) */
	bool context_switch;    /* SWITCH records (CPU-wide for per-CPU events) */
	bool inherit;           /* follow children (per-task events) */
	/* PERF_SAMPLE_CGROUP (5.7+): each sample carries its task's cgroup id,
	 * and CGROUP records name the cgroups made while the event is open */
	bool cgroup_id;
	bool pid_is_cgroup;     /* pid is the fd of a cgroup2 folder (PERF_FLAG_PID_CGROUP, perf -G) */
	bool disabled;          /* start disabled; perfev_enable() later */
	uint16_t max_stack;     /* sample_max_stack; 0 = kernel default */
	uint32_t wakeup_bytes;  /* wake the reader when this much is waiting */
};

/* Opens one event for (pid, cpu) as perf_event_open(2) takes them, with
 * sample_id_all set. Record times are perf's clock (local_clock), the clock of
 * ftrace's default "local" trace clock; they compare with each other, not
 * with clock_gettime(). The wakeup is every record unless
 * wakeup_bytes is set (then a watermark). Returns the fd (>= 0, close-on-exec)
 * or -errno. */
int perfev_open(const struct perfev_opts *o, int pid, int cpu, int group_fd);
/* Returns 0 and the kernel's id of the event (PERF_EVENT_IOC_ID), or -errno. */
int perfev_id(int fd, uint64_t *id);
/* Returns 0 and in *LOST the samples of FD's event the kernel could not
 * write to its ring so far (PERF_FORMAT_LOST, Linux 6.0+), or -errno
 * (-EOPNOTSUPP: the kernel has no such count). A full ring's loss reaches
 * the ring as a LOST record only once a later record fits: after the last
 * event of a run, this count alone has it. */
int perfev_lost(int fd, uint64_t *lost);
/* Sends FD's records to OUTPUT_FD's ring (same CPU). Returns 0 or -errno. */
int perfev_set_output(int fd, int output_fd);
int perfev_enable(int fd);
int perfev_disable(int fd);

/* One mmap'd ring: the metadata page plus 2^n data pages. */
struct perfev_ring {
	int fd;
	void *base;        /* metadata page */
	uint8_t *data;
	size_t data_size;  /* power of two */
	size_t map_size;
	uint8_t *scratch;  /* a record wrapping the end is copied here */
	uint64_t bad_records; /* records perfev_ring_drain skipped: undecodable */
	uint64_t max_fill;    /* the most bytes waiting when a drain began */
};

/* Maps DATA_BYTES (rounded up to a power-of-two number of pages) of ring for
 * FD. Returns 0 or -errno (-EPERM: raise perf_event_mlock_kb or run as root).
 * The kernel refuses (-EINVAL) to map an inherit event opened with cpu == -1.
 * R does not own FD: perfev_ring_unmap() releases the mapping and scratch only. */
int perfev_ring_map(struct perfev_ring *r, int fd, size_t data_bytes);
/* The data bytes perfev_ring_map maps for DATA_BYTES (a power-of-two
 * number of pages, the metadata page besides), or 0 when too large. */
size_t perfev_ring_data_size(size_t data_bytes);
void perfev_ring_unmap(struct perfev_ring *r);
/* Has a child process take the last close of FDS[0..N) (perf events,
 * disabled), so that this process's own closes return at once: the child
 * lets go of every other fd now and of FDS when this process exits, and
 * the kernel's unregistration waits are its own. Returns 0 when a child
 * holds them, or -errno (nothing changed: the closes here pay the waits). */
int perfev_close_behind(const int *fds, size_t n);
/* The most processes perfev_ring_maps_start maps rings in at once. */
#define PERFEV_MAP_PROCS 16
/* Ring I of RINGS[0..N) mapped for FDS[I], DATA_BYTES each, as
 * perfev_ring_map, in up to PROCS processes at once (this one and helpers
 * it forks: the kernel allocates a ring under the mapping process's mmap
 * lock), in two steps, so that the caller may enable its events between
 * them. A helper's rings are charged to its own memory, so only a user
 * not bound by RLIMIT_MEMLOCK (CAP_IPC_LOCK) may have PROCS above 1.
 * PROCS above N: every ring is a helper's first, and start returns
 * without this process's mmap lock held for an allocation (a thread
 * growing rings beside a reader: its page faults would wait on it). M holds RINGS and FDS (the caller's,
 * kept until finish). */
struct perfev_ring_maps {
	struct perfev_ring *rings;
	const int *fds;
	size_t n, data_bytes;
	size_t helpers, running; /* the helpers the shares are of; those forked */
	bool self;      /* this process maps a share of the rings first */
	pid_t pid[PERFEV_MAP_PROCS];
	int release_w;  /* the helpers exit once it is closed */
	int done_r;     /* each helper's status byte, until wait */
};
/* Maps this process's share of the rings, and returns once the helpers
 * have mapped theirs: every ring exists, and an enabled event's records
 * wait in it. Returns 0, or the first -errno here or in a helper
 * (-ECHILD: one died). The same as begin, then wait. */
int perfev_ring_maps_start(struct perfev_ring_maps *m, struct perfev_ring *rings, const int *fds,
			   size_t n, size_t data_bytes, size_t procs);
/* Forks the helpers and maps this process's share; they map theirs
 * meanwhile (the caller may open its events, and send them to the rings
 * once wait returns: a ring that does not exist yet takes none). Returns
 * 0 or the first -errno here; then perfev_ring_maps_wait (or release) in
 * any case. */
int perfev_ring_maps_begin(struct perfev_ring_maps *m, struct perfev_ring *rings, const int *fds,
			   size_t n, size_t data_bytes, size_t procs);
/* Returns once every helper said how its mapping went: 0, or the first
 * -errno (-ECHILD: one died). */
int perfev_ring_maps_wait(struct perfev_ring_maps *m);
/* Maps here the rings the helpers mapped, then releases them. Returns 0,
 * or the first -errno (a ring not mapped has base NULL). */
int perfev_ring_maps_finish(struct perfev_ring_maps *m);
/* Lets the helpers exit (and reaps them) without mapping their rings
 * here: a set-up that failed. Safe to call more than once. */
void perfev_ring_maps_release(struct perfev_ring_maps *m);
/* The most rings perfev_ring_maps_time times at once. */
#define PERFEV_RING_TIME_MAX 64
/* Times N dummy per-CPU events' rings of BYTES (CPUs 0..N-1, at most
 * PERFEV_RING_TIME_MAX)
 * made by perfev_ring_maps_start in PROCS processes: *MS gets the
 * milliseconds until every ring exists (what arming waits for). Returns 0
 * or -errno (opening the events takes CAP_PERFMON where perf_event_paranoid
 * asks, mapping them beyond RLIMIT_MEMLOCK CAP_IPC_LOCK). */
int perfev_ring_maps_time(int n, size_t bytes, size_t procs, double *ms);
/* Sorts D[0..N) (N > 0) and returns its median, the mean of the middle two
 * when N is even (cost.c; the timings' of check and the benches). */
double perfev_median(double *d, int n);

/* Opens (and closes) a disabled dummy event on this process in a thread
 * of its own, at once: the kernel's first per-task event waits for a
 * grace period (9-15 ms here), and the caller's own, opened later, find
 * it over or under way (warm.c). Returns 0 (the thread runs, detached)
 * or -errno. */
int perfev_warm_task_events(void);

/* Rings grown while their events run (ring_grow.c): N new rings, one for
 * each of OWNERS (dummy events, open), DATA_BYTES each, allocated by
 * helper processes and mapped here in a thread; once the caller reads
 * them too (perfev_ring_grow_move), event FDS[I] is sent to OWNERS[TO[I]]
 * (SET_OUTPUT: a grace period each, so in threads at once). The caller's
 * arrays are kept until join. */
#define PERFEV_GROW_MOVERS 16
enum { PERFEV_GROW_MAPPING, PERFEV_GROW_MAPPED, PERFEV_GROW_DONE, PERFEV_GROW_FAILED };
struct perfev_ring_grow {
	struct perfev_ring *rings;
	const int *owners, *fds;
	const size_t *to;
	size_t n, nfds, data_bytes;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state, err;  /* PERFEV_GROW_*; the first -errno */
	bool go, cancel, started;
};
/* Starts growing. Returns 0 (the thread runs), or -errno. */
int perfev_ring_grow_start(struct perfev_ring_grow *g, struct perfev_ring *rings, const int *owners,
			   size_t n, size_t data_bytes, const int *fds, const size_t *to, size_t nfds);
/* Returns G's state: PERFEV_GROW_MAPPED once every new ring is mapped
 * here (read them, then perfev_ring_grow_move), DONE once every event
 * moved, FAILED (some events may have moved: read both rings). */
int perfev_ring_grow_state(struct perfev_ring_grow *g);
/* Lets G move the events to the new rings, once they are read too. */
void perfev_ring_grow_move(struct perfev_ring_grow *g);
/* Waits for G's thread (events not moved yet stay where they are).
 * Returns 0 when every event moved, else the first -errno. */
int perfev_ring_grow_join(struct perfev_ring_grow *g);

/* ---- perf's clock against CLOCK_MONOTONIC (clock.c) ---- */
/* CLOCK_MONOTONIC in nanoseconds (what every timing here reads). */
uint64_t perfev_mono_ns(void);
struct perfev_clock {
	int fd;                 /* a page-fault event on the opening thread */
	struct perfev_ring ring;
	void *page;             /* touched to fault (NULL: not open) */
};

/* Opens C on the calling thread (what perf_event_paranoid 2 allows any
 * user). Returns 0 or -errno (the event or its ring refused). */
int perfev_clock_open(struct perfev_clock *c);
/* Returns 0 and in *OFFSET_NS CLOCK_MONOTONIC minus perf's record clock,
 * to within a microsecond or two, measured now on the thread that opened
 * C; or -errno (-EAGAIN: no try was clean, -EBADF: C is not open). A
 * record's age is then clock_gettime(CLOCK_MONOTONIC) - offset - time. */
int perfev_clock_offset(struct perfev_clock *c, int64_t *offset_ns);
void perfev_clock_close(struct perfev_clock *c);

/* ---- decoded records ---- */
enum perfev_kind {
	PERFEV_SAMPLE = 1, PERFEV_MMAP2, PERFEV_COMM, PERFEV_FORK, PERFEV_EXIT,
	PERFEV_LOST, PERFEV_THROTTLE, PERFEV_UNTHROTTLE, PERFEV_LOST_SAMPLES,
	PERFEV_SWITCH, /* SWITCH / SWITCH_CPU_WIDE: pid/tid above is the task in context */
	PERFEV_CGROUP, /* a cgroup's id and path (attr.cgroup) */
	PERFEV_OTHER,
};

struct perfev_sample {
	uint64_t id;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	/* The callchain, split at PERF_CONTEXT_* markers; leaf first. */
	const uint64_t *kips;
	uint32_t nkips;
	const uint64_t *uips;
	uint32_t nuips;
	const void *raw;       /* PERF_SAMPLE_RAW payload, or NULL */
	uint32_t raw_size;
	const uint8_t *ustack; /* PERF_SAMPLE_STACK_USER copy, or NULL */
	uint64_t ustack_size;
	/* the copy's room in the record (the size asked, or less where the
	 * record's u16 size left less): a copy shorter than it ended where
	 * the stack's mapping did */
	uint64_t ustack_room;
	const uint64_t *uregs; /* PERF_SAMPLE_REGS_USER values, or NULL */
	uint64_t uregs_abi;
	uint64_t cgroup;       /* PERF_SAMPLE_CGROUP: the task's cgroup2 id, else 0 */
	/* set by the drain: more than 3/8 of the ring waited to be read when
	 * it handed this sample over (the reader is falling behind the kernel;
	 * a ring wakes its reader at a quarter full) */
	bool behind;
};

struct perfev_record {
	enum perfev_kind kind;
	uint16_t misc;
	/* from the record or its sample_id trailer (sample_id_all) */
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t id;
	union {
		struct perfev_sample sample;
		/* maj, min, ino: 0 in the build-id form */
		struct {
			uint64_t start, len, pgoff, ino;
			uint32_t maj, min, prot, flags;
			const char *filename;
		} mmap2;
		struct { const char *comm; bool exec; } comm;
		struct { uint32_t ppid, ptid; } task; /* FORK and EXIT; pid/tid above */
		struct { uint64_t lost; } lost;       /* LOST and LOST_SAMPLES */
		/* out: the task above leaves the CPU; else it comes in. The other
		 * task is known only for CPU-wide records (0 otherwise). */
		struct { bool out; uint32_t other_pid, other_tid; } sw;
		/* the cgroup2 id (its folder's file handle) and its path from
		 * the cgroup root ("/" is the root itself) */
		struct { uint64_t id; const char *path; } cgroup;
	};
};

/* Decodes one record of LEN bytes (header included) written by an event with
 * SAMPLE_TYPE (and the regs mask used for REGS_USER, 0 if none) and
 * sample_id_all: non-sample records end in a sample_id trailer. BUF should be
 * 8-byte aligned (as ring records are), since the address arrays in *out
 * point into BUF. Returns 0, or -EINVAL when the record is truncated or its
 * sizes disagree, or SAMPLE_TYPE has READ or BRANCH_STACK (never reads past
 * LEN). Samples may also carry PERF_SAMPLE_CGROUP (after the user stack,
 * as the kernel writes it; WEIGHT, DATA_SRC, TRANSACTION and PHYS_ADDR
 * before it are skipped, REGS_INTR is -EINVAL). Record types not listed in
 * perfev_kind decode as PERFEV_OTHER. */
int perfev_decode(const void *buf, size_t len, uint64_t sample_type,
		  uint64_t regs_mask, struct perfev_record *out);

/* Called for each record; return non-zero to stop the drain early. REC and
 * the bytes it points to are the ring's until FN returns, no longer: the
 * drain hands the space back to the kernel as it goes. */
typedef int (*perfev_record_fn)(void *ctx, const struct perfev_record *rec);

/* The time of the oldest unread record of R (decoded, not consumed).
 * Returns 0, -ENOENT when R is empty, -EINVAL when it cannot be read. */
int perfev_ring_first_time(struct perfev_ring *r, uint64_t sample_type, uint64_t regs_mask,
			   uint64_t *time);
/* Hands every unread record of R to FN in ring order and releases the space.
 * FN returning non-zero stops after that record. Undecodable records are
 * skipped and counted (bad_records). Returns the number of records handed
 * to FN, or -EINVAL when a record's header is broken (the space before it
 * is released). */
long perfev_ring_drain(struct perfev_ring *r, uint64_t sample_type, uint64_t regs_mask,
		       perfev_record_fn fn, void *ctx);
/* As perfev_ring_drain, but stops before the first record stamped later
 * than UNTIL, and sets *NEXT (if not NULL) to that record's time, or to
 * UINT64_MAX when none was left: the step of a merge of several rings into
 * time order. */
long perfev_ring_drain_until(struct perfev_ring *r, uint64_t sample_type, uint64_t regs_mask,
			     uint64_t until, perfev_record_fn fn, void *ctx, uint64_t *next);

/* The sample_regs_user mask of every general-purpose register (x86-64:
 * ax..ip, r8..r15), what --call-graph dwarf's CFI may read. 0 elsewhere. */
uint64_t perfev_user_regs_mask(void);

/* The sample_regs_user mask of the registers a frame walk starts from and
 * gcc's CFA rules use (x86-64: ip, sp, bp, r10, r11), what the fp and copy
 * methods take. 0 elsewhere. */
uint64_t perfev_user_frame_regs_mask(void);

/* Asks for the top (2 KB) of sample S's copied user stack ahead of a walk
 * of it: a walk's every frame address comes from the last one's load,
 * and the copy was written on another CPU long before the ring is read, so
 * fetched together they cost about one miss, not one a frame. */
void perfev_ustack_prefetch(const struct perfev_sample *s);
/* Follows frame pointers through sample S's copied user stack, as the
 * kernel's user callchain walk does through live memory: IPS[0] is the user
 * ip, then one return address per frame, at most MAX. REGS_MASK is the mask
 * the sample's user registers were taken with. *CUT is set when the walk
 * stopped at a frame pointer just past the copy's end (a deeper stack than
 * the copy holds). Returns the number of addresses, 0 without registers. */
uint32_t perfev_ustack_walk(const struct perfev_sample *s, uint64_t regs_mask,
			    uint64_t *ips, uint32_t max, bool *cut);

/* Sample S's user registers (taken with REGS_MASK) in DWARF numbering, for
 * a DWARF unwinder: x86-64 rax rdx rcx rbx rsi rdi rbp rsp r8..r15, rip;
 * those not taken are 0, and bit i of *KNOWN says whether OUT[i] was taken.
 * Returns 0, -ENOENT when the sample lacks ip or sp, -ENOTSUP elsewhere. */
int perfev_ustack_dwarf_regs(const struct perfev_sample *s, uint64_t regs_mask,
			     uint64_t out[17], uint32_t *known);

/* ---- what a sample's user stack costs on this host (cost.c) ---- */

/* Which way of taking whole user stacks is the cheaper here, by paired
 * timings (see cost.c). fp is the kernel's frame-pointer walk AND a small
 * stack copy (the CFI repairs its frameless top frames), so it costs what
 * perf record -g costs plus a copy; copy is a larger copy alone. */
enum perfev_ustack_verdict {
	PERFEV_USTACK_TOO_SMALL, /* fp and copy differ by less than the noise */
	PERFEV_USTACK_FP,        /* fp costs measurably less than copy */
	PERFEV_USTACK_COPY,      /* copy costs measurably less than fp */
};

struct perfev_ustack_cost {
	/* ns a sample costs more than one without a user stack: the median of
	 * paired differences. Never negative: 0 with *_measured false when the
	 * difference is within this host's noise ("too small to measure"). */
	double fp_ns;            /* the kernel's walk + fp_bytes of stack (--call-graph fp) */
	double copy_ns;          /* copy_bytes of stack alone (--call-graph copy) */
	bool fp_measured, copy_measured;
	enum perfev_ustack_verdict verdict;
	int rounds;              /* interleaved rounds timed */
	int calls, frames;       /* sampled calls per timing, frame-pointer frames above them */
	uint32_t fp_bytes, copy_bytes; /* the two kinds' stack copies, as timed */
};

/* Times getppid calls sampled by the tracepoint TP (raw_syscalls:sys_enter's
 * id, filtered on getppid) with a kernel callchain and, in turn, the three
 * kinds of sample the runs open: no user stack (the baseline); fp = the
 * kernel's walk of 16 frame-pointer frames plus the user registers and an
 * FP_BYTES copy of the stack; copy = the registers and a COPY_BYTES copy,
 * no walk. Rounds of one timing of each (about 1 ms of calls, 100 to 1000
 * calls), interleaved, for about 150 ms (9 to 31 rounds), judged by
 * perfev_ustack_judge. The calling thread is sampled; nothing is left open.
 * Returns 0, or -errno when the event cannot be opened or mapped
 * (-EACCES/-EPERM: not allowed). The one measurement of both `ftstack
 * check`'s "user stacks" line and the user-stack method it saves. */
int perfev_ustack_cost(int tp, uint32_t fp_bytes, uint32_t copy_bytes,
		       struct perfev_ustack_cost *out);
/* The judgement alone, on N rounds of ns per call without a user stack
 * (NONE), with fp (FP) and with copy (COPY): medians of the paired
 * differences, each measured only when its 95% interval is above zero; the
 * verdict from the pairs COPY - FP: FP when their 95% interval is above
 * zero, COPY when below, TOO_SMALL when it holds zero. Pure: unit tests
 * feed it made-up rounds. */
void perfev_ustack_judge(const double *none, const double *fp, const double *copy, int n,
			 struct perfev_ustack_cost *out);
/* One of those costs as a person reads it: "1.23 us" written into BUF, or
 * "too small to measure here" when it was not MEASURED (never a negative
 * figure). Returns BUF or that constant. */
const char *perfev_cost_text(char *buf, size_t size, bool measured, double ns);


#endif
