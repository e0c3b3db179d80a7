/* Kernel-stack filters applied to every record before it is counted:
 *  - tracing machinery frames at the leaf (perf_trace_*, perf_syscall_enter,
 *    trace_event_raw_event_*, kprobe dispatch...) are cut, so a stack starts
 *    at the traced site whichever backend recorded it;
 *  - records whose stack passes through ftstack's own side-band machinery
 *    (perf_event_mmap* while mmap tracking is on) are left out;
 *  - --through FUNC keeps only stacks through FUNC, cut there.
 * Ranges come from kallsyms once (the names: report_is_machinery(), the one
 * table saved text and live runs share), when the first kernel stack is
 * counted, in a thread (kload.c); per record a look-up an ip in a memo of
 * what each was found to be (binary searches the first time). */
#ifndef FTSTACK_KFILTER_H
#define FTSTACK_KFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbolize/symbolize.h"

struct ft_range {
	uint64_t start, end;
};

struct ft_ranges {
	struct ft_range *r;
	size_t n, cap;
};

struct ft_kfilter_memo;

struct ft_kfilter {
	struct ft_ranges machinery;
	struct ft_ranges self;      /* empty unless mmap tracking is on */
	struct ft_ranges through;   /* empty unless --through / function fallback */
	struct ft_kfilter_memo *memo; /* which ranges each ip was found in; NULL: none kept */
};

enum ft_kfilter_verdict { FT_KEEP, FT_DROP_SELF, FT_DROP_THROUGH };

/* Builds the machinery ranges (and self ranges when track_mmaps) from K.
 * Returns 0 or -ENOMEM. */
int ft_kfilter_init(struct ft_kfilter *f, const struct sym_kernel *k, bool track_mmaps);
/* Adds every text symbol named NAME to the --through set. Returns 0 or -ENOENT. */
int ft_kfilter_add_through(struct ft_kfilter *f, const struct sym_kernel *k, const char *name);
void ft_kfilter_free(struct ft_kfilter *f);
/* Filters the leaf-first stack in place: *start is set to the first frame to
 * keep (machinery cut, --through cut). Returns the verdict. */
enum ft_kfilter_verdict ft_kfilter_apply(const struct ft_kfilter *f, const uint64_t *ips,
					 uint32_t n, uint32_t *start);
/* True when ADDR is inside one of the ranges. */
bool ft_ranges_contain(const struct ft_ranges *r, uint64_t addr);

/* ---- loading kallsyms and the filters (kload.c) ---- */
struct ft_kload;
/* The kernel's own list of its symbols. */
#define FT_KALLSYMS "/proc/kallsyms"
/* sym_kernel_load of PATH, through the copy saved between runs when PATH
 * is FT_KALLSYMS (sym_kernel_load_cached; --debug says whence). Returns
 * what sym_kernel_load does. */
int ft_ksyms_read(const char *path, struct sym_kernel **k);
/* Loads the kallsyms-format file PATH into *k (ft_ksyms_read) and builds
 * *f from it (the self ranges when TRACK_MMAPS). Returns 0, or -errno with
 * *k NULL and *f empty (-EPERM: every address is zero, kptr_restrict). */
int ft_kload_now(const char *path, bool track_mmaps, struct sym_kernel **k,
		 struct ft_kfilter *f);
/* The same in a thread of its own; ft_kload_fd becomes readable when it is
 * done. Returns 0, or -errno when no thread could be made. */
int ft_kload_start(const char *path, bool track_mmaps, struct ft_kload **out);
int ft_kload_fd(const struct ft_kload *kl);
/* Gives the thread the process's priority (its priority when the load
 * started) back, now or, when the thread has not yet yielded, as soon as
 * it has (root may; for others it keeps yielding). */
void ft_kload_hurry(struct ft_kload *kl);
/* Waits for the thread and hands over ft_kload_now's results (the caller
 * owns them) and its return value; frees KL. */
int ft_kload_finish(struct ft_kload *kl, struct sym_kernel **k, struct ft_kfilter *f);
/* The one kptr_restrict warning: when ERR (what a load of kallsyms
 * returned) is -EPERM, says on stderr that kernel frames print as
 * [unknown] and how to see them, and returns true; else says nothing and
 * returns false. */
bool ft_kload_warn_hidden(int err);

/* ---- the run's kernel symbols (kload.c) ---- */
/* Loaded before the plan when it needs them (kernel functions, --through),
 * else when a kernel stack is first counted, in a thread, while the loop
 * goes on reading the rings; the samples counted meanwhile wait in a queue
 * (count.c). */
enum ft_ksyms_state { FT_KSYMS_NONE, FT_KSYMS_LOADING, FT_KSYMS_READY };

struct ft_pending {
	unsigned char *buf;
	size_t len, cap;
	size_t last; /* where the last entry starts (count.c) */
};

struct ft_kernel_syms {
	struct sym_kernel *syms;   /* NULL until READY, or when they cannot be had */
	struct ft_kfilter filter;  /* the kernel-stack filters made from them */
	enum ft_ksyms_state state;
	const char *path;          /* what is loading (kallsyms' format) */
	const char *source;        /* what to load on first need; NULL: FT_KALLSYMS (tests: a fixture) */
	struct ft_kload *load;     /* the thread loading them (FT_KSYMS_LOADING) */
	struct ft_pending pending; /* samples counted while they load */
	int epfd;                  /* the loop's, where the thread's fd is watched; -1: none */
};

struct sym_cache;
/* Starts loading PATH into KS: in a thread whose fd KS's epfd watches
 * (LOADING), or now when no thread can be made (READY: NAMES names kernel
 * addresses with them from then on). */
void ft_ksyms_start(struct ft_kernel_syms *ks, const char *path, bool track_mmaps,
		    struct sym_cache *names);
/* When KS is LOADING: waits for the thread and takes in what it made (NAMES
 * names with it), saying once when they cannot be had. Returns true when it
 * was loading: the samples that waited can be counted now. */
bool ft_ksyms_wait(struct ft_kernel_syms *ks, struct sym_cache *names);
/* The load yields to the traced program (nice 19), but where both CPUs of
 * a small machine stay busy it can be starved for seconds: a 500,000-call
 * getppid run, kallsyms read for the first time, queued all its samples
 * (60 MB before alike ones shared an entry; samples of many stacks still
 * take ~120 B and more each, the longer the run the more). Once this many
 * bytes wait, the load runs at the process's priority (ft_kload_hurry). */
#define FT_PENDING_HURRY (8u << 20)
/* Called when samples were queued in KS, whose queue held BEFORE bytes:
 * hurries the load when the queue has just reached FT_PENDING_HURRY. */
void ft_ksyms_queued(struct ft_kernel_syms *ks, size_t before);
/* True when COOKIE (from epoll) says KS's loading thread is done: then
 * ft_ksyms_wait does not block. */
bool ft_ksyms_owns(const struct ft_kernel_syms *ks, const void *cookie);
/* Error paths: ends the loading thread and drops what waits, uncounted. */
void ft_ksyms_abandon(struct ft_kernel_syms *ks);

#endif
