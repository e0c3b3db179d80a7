/* host: what the running system says about its CPUs and tasks, and where
 * the calling thread runs (sched.c). Every reader takes its root (the /proc
 * or /sys directory), so unit tests give it a fixture tree instead of the
 * live kernel. Nothing here prints.
 */
#ifndef FTSTACK_HOST_H
#define FTSTACK_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads the first line of ROOT/REL into BUF (SIZE bytes, newline kept).
 * Returns 0, or -errno (-EINVAL for an empty file). */
int host_read_line(const char *root, const char *rel, char *buf, size_t size);

/* Marks the CPUs of a kernel CPU list ("0-1,4", as -C and
 * /sys/devices/system/cpu/online write it) in cpus[0..max). Returns the
 * highest CPU marked + 1, -EINVAL for a malformed list (then *bad, if
 * given, points at the offending item in S), or -ERANGE for a CPU >= max. */
int host_cpu_list_parse(const char *s, bool *cpus, int max, const char **bad);

/* Marks the online CPUs (SYS_ROOT/devices/system/cpu/online) in
 * online[0..max). Returns the highest marked + 1, or -errno. */
int host_online_cpus(const char *sys_root, bool *online, int max);

/* The thread ids of process PID (PROC_ROOT/PID/task) into out[0..max).
 * Returns how many (0 when the process is gone). */
int host_tasks(const char *proc_root, pid_t pid, pid_t *out, int max);

/* The fields of PROC_ROOT/TID/stat that ftstack reads. */
struct host_stat {
	char state;            /* R, S, D, Z, X, ... */
	unsigned long flags;   /* PF_*: PF_KTHREAD is 0x00200000 */
};
#define HOST_PF_KTHREAD 0x00200000ul
/* Returns 0, or -errno (-ENOENT: no such task, -EINVAL: unreadable). */
int host_stat(const char *proc_root, pid_t tid, struct host_stat *st);
/* True when task TID exists and is neither a zombie nor dead. */
bool host_task_running(const char *proc_root, pid_t tid);

/* The process (Tgid of PROC_ROOT/TID/status) of thread TID. Returns 0 or -errno. */
int host_tgid(const char *proc_root, pid_t tid, pid_t *tgid);

/* The effective capabilities (CapEff of PROC_ROOT/WHO/status; WHO is a pid
 * or "self"). Returns 0 or -errno. */
int host_cap_eff(const char *proc_root, const char *who, uint64_t *eff);
/* Whether WHO's pid namespace is not the initial one (the link
 * PROC_ROOT/WHO/ns/pid names another inode than PROC_PID_INIT_INO).
 * Returns 1, 0, or -errno. */
int host_child_pidns(const char *proc_root, const char *who);
/* The seccomp mode (Seccomp of PROC_ROOT/WHO/status, Linux 3.8+): 0 none,
 * 1 strict, 2 a filter. Returns 0 or -errno (-ENOENT: no such field). */
int host_seccomp(const char *proc_root, const char *who, int *mode);
#define HOST_CAP_IPC_LOCK 14
#define HOST_CAP_SYS_PTRACE 19
#define HOST_CAP_SYS_ADMIN 21
#define HOST_CAP_SYS_NICE 23
#define HOST_CAP_SYSLOG 34
#define HOST_CAP_PERFMON 38

/* What this user may do with perf here (access.c). Root counts by its
 * capabilities, as the kernel counts it (a root without CAP_PERFMON in a
 * container is refused like anyone). */
struct host_access {
	bool root;             /* euid 0 */
	uint64_t cap_eff;      /* CapEff of this process */
	int paranoid;          /* kernel.perf_event_paranoid (2 when unreadable) */
	int kptr_restrict;     /* kernel.kptr_restrict (1 when unreadable) */
	bool kallsyms;         /* /proc/kallsyms shows this user addresses */
	char lockdown[24];     /* the active lockdown mode, "" when unknown */
	int kprobe_pmu, uprobe_pmu; /* PMU types, -1 when absent */
	bool hw_pmu;           /* a hardware PMU (cycles, instructions, ...) */
	unsigned mlock_kb;     /* kernel.perf_event_mlock_kb (516 when unreadable) */
	int seccomp;           /* Seccomp of status: 0 none, 1 strict, 2 a filter; -1 unknown */
	bool child_pidns;      /* a pid namespace below the host's (host_child_pidns),
				* whose tasks outside it perf reports as pid 0 */
	int perf_seccomp;      /* 0, or the -errno this process's seccomp filter answers
				* perf_event_open with (host_access_probe; 0 until then) */
};
/* Fills H from PROC_ROOT (status, sysctls) and SYS_ROOT (PMUs, lockdown).
 * Returns 0, or -errno when CapEff could not be read (then 0 is assumed). */
int host_access_read(const char *proc_root, const char *sys_root, struct host_access *h);
/* Asks the kernel what no file says: whether this process's seccomp filter
 * (H->seccomp 2) answers perf_event_open itself, into H->perf_seccomp
 * (0 when the call reaches the kernel). Apart from host_access_read, whose
 * fixtures say nothing of the process that reads them. */
void host_access_probe(struct host_access *h);
/* Whether capability CAP is effective. */
bool host_access_has(const struct host_access *h, int cap);
/* Whether perf lets this user sample in kernel mode and take kernel
 * stacks: CAP_PERFMON (or CAP_SYS_ADMIN), or perf_event_paranoid <= 1. */
bool host_perf_kernel(const struct host_access *h);
/* Whether perf lets this user open per-CPU (system-wide) events:
 * CAP_PERFMON (or CAP_SYS_ADMIN), or perf_event_paranoid <= 0. */
bool host_perf_cpu(const struct host_access *h);
/* Whether perf_event_open is open to this user at all (paranoid 3, a
 * distribution patch, closes it to users without CAP_PERFMON). */
bool host_perf_any(const struct host_access *h);

/* The perf PMU type of SYS_ROOT/bus/event_source/devices/NAME ("kprobe",
 * "uprobe"), or -1 when the kernel has no such PMU. */
int host_pmu_type(const char *sys_root, const char *name);

/* ---- a library loaded when first used (lib.c) ---- */
struct host_lib_sym {
	const char *name; /* the symbol */
	void **fn;        /* set to its address */
};
/* Loads shared library SONAME and each of SYMS[0..N). Returns 0, or
 * -ENOENT with ERR saying what is missing (the library, or a symbol:
 * then nothing is set). Call once: the library stays loaded. */
int host_lib_load(const char *soname, const struct host_lib_sym *syms, size_t n, char *err,
		  size_t errlen);

/* ---- the calling thread's scheduling (sched.c) ---- */

/* Runs the calling thread on CPU alone from now on. Returns 0, or -errno
 * (-EINVAL: CPU is not one it may run on, as outside a cpuset's). */
int host_sched_run_on(uint32_t cpu);
/* Asks the scheduler (EEVDF, Linux 6.12+: sched_attr's runtime of a
 * SCHED_OTHER task) for slices of NS, so that the calling thread, woken,
 * preempts a CPU-bound task at once rather than after that task's slice
 * (milliseconds). Its share of the CPU is unchanged. Returns 0, or -errno
 * (-EINVAL on kernels before it, or NS outside 0.1-100 ms; -EPERM: the
 * thread runs under another policy, which is kept). */
int host_sched_short_slice(uint64_t ns);
/* Runs the calling thread under SCHED_FIFO at priority 1, so that, woken,
 * it preempts any SCHED_OTHER task on its CPU at once: EEVDF, short
 * slices or not, lets a woken task that ran ahead of its share wait until
 * it is eligible again (2.6-2.8 ms here, for ~0.8% of Python samples).
 * For a thread that ends with it: nothing gives the policy back. Returns
 * 0, or -errno (-EPERM without CAP_SYS_NICE or RLIMIT_RTPRIO, or under a
 * policy chosen with chrt, which is kept). */
int host_sched_realtime(void);
/* Whether host_sched_realtime may succeed for a thread with H's
 * capabilities: CAP_SYS_NICE, or an RLIMIT_RTPRIO of 1 or more. */
bool host_sched_realtime_allowed(const struct host_access *h);

/* ---- cgroup2 (cgroup.c): --cgroup and --per-cgroup ---- */

/* The cgroup2 mount point named in PROC_ROOT/self/mountinfo (the first
 * one) into buf. Returns 0, -ENOENT when none is mounted, or -errno. */
int host_cgroup2_mount(const char *proc_root, char *buf, size_t len);
/* The cgroup folder ARG names: ARG itself when it is a folder under MOUNT
 * given with MOUNT's path, else ARG read from MOUNT ("/a/b" and "a/b" both
 * as /proc/PID/cgroup writes them). The folder into abs, its path from the
 * cgroup root ("/a/b", "/" for the root) into rel. Returns 0, -ENOENT when
 * there is no such cgroup, -ENAMETOOLONG, or -errno. */
int host_cgroup_resolve(const char *mount, const char *arg, char *abs, size_t abslen,
			char *rel, size_t rellen);
/* The kernel's id of cgroup folder PATH (its file handle, what
 * PERF_SAMPLE_CGROUP carries). Returns 0 or -errno. */
int host_cgroup_id(const char *path, uint64_t *id);
/* Calls FN with the id and path from the cgroup root of MOUNT and of every
 * cgroup under it (perf synthesizes its CGROUP records so: the kernel names
 * only cgroups made while an event is open). FN returning non-zero stops
 * the walk. Returns 0, FN's value, or -errno. */
int host_cgroup_walk(const char *mount, int (*fn)(void *ctx, uint64_t id, const char *path),
		     void *ctx);

/* Cgroup ids and their paths, as perf's CGROUP records and
 * host_cgroup_walk give them. Zeroed is empty. */
struct host_cgroup_names {
	struct host_cgroup_name { uint64_t id; char *path; } *v;
	size_t n, cap;
};
/* Names cgroup ID PATH (a later name for the same id replaces the first:
 * a folder removed and made again). Returns 0 or -ENOMEM. */
int host_cgroup_names_add(struct host_cgroup_names *m, uint64_t id, const char *path);
/* The path of cgroup ID, or NULL when it was never named. */
const char *host_cgroup_names_find(const struct host_cgroup_names *m, uint64_t id);
void host_cgroup_names_free(struct host_cgroup_names *m);

#endif
