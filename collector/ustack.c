/* User stacks, whole by default. profile and offcpu walk every frame with
 * CFI in the largest copy their rates allow (ft_ustack_default: 65528
 * bytes for profile up to -F 1024, less above, and 16384 for offcpu), and count every stack that stops short of its start; count,
 * whose events may come at hundreds of thousands a second, works as follows.
 * Each sample carries the user registers
 * and a copy of the top of the stack; the frames of the functions at the
 * top that keep no frame pointer (frameless leaves, libc's syscall
 * wrappers, a function's first instructions) come from their CFI
 * (symbolize's libunwind walk, sym_unwind_splice), the rest from a
 * frame-pointer walk: the kernel's (fp: a 1 KB copy beside it) or
 * ftstack's own in a 2 KB copy (copy). fp is therefore perf record -g's
 * work (the kernel's walk) plus a copy: it can never cost less than perf
 * record -g, and copy, which replaces the walk by one bulk copy, costs
 * less wherever the kernel's reads of user memory are slow (some VMs,
 * ~0.6 us each, two a frame). The rule is perfev_ustack_judge's verdict on
 * `ftstack check`'s one measurement (perfev_ustack_cost, timing both as
 * the runs open them, also its "user stacks" line): fp only when it
 * measurably costs less than copy (a host whose walk costs nanoseconds and
 * whose copy does not: the walk then also keeps stacks deeper than the copy
 * whole); otherwise copy, whose stacks cut at the copy's end the summary
 * counts (naming --call-graph fp). Saved for the boot's runs, which read
 * it; before check has run, copy. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collector/result.h"
#include "collector/session.h"
#include "host/host.h"
#include "tracefs/tracefs.h"

#define SAVED_NAME "user-stacks"

int ft_ustack_check(const struct perfev_ustack_cost *c, struct tfs_check_item *it)
{
	char why[sizeof(it->detail)];
	enum ft_ustack_method m = ft_ustack_rule(c, why, sizeof(why));
	it->what = "user-stack method";
	it->ok = true;
	snprintf(it->detail, sizeof(it->detail), "%s (%s)%s", ft_ustack_name(m), why,
		 ft_ustack_save(m, why) == 0 ? "; saved for this boot" : "");
	return 0;
}

const char *ft_ustack_name(enum ft_ustack_method m)
{
	return m == FT_USTACK_COPY ? "copy" : m == FT_USTACK_DWARF ? "dwarf" : "fp";
}

enum ft_ustack_method ft_ustack_rule(const struct perfev_ustack_cost *c, char *why, size_t len)
{
	char fp[32], copy[32];
	bool is_fp = c->verdict == PERFEV_USTACK_FP;
	snprintf(why, len, "fp (%d-frame walk + %u-byte copy) %s, %u-byte copy %s: %s",
		 c->frames, c->fp_bytes, perfev_cost_text(fp, sizeof(fp), c->fp_measured, c->fp_ns),
		 c->copy_bytes, perfev_cost_text(copy, sizeof(copy), c->copy_measured, c->copy_ns),
		 is_fp ? "fp measurably cheaper" :
		 c->verdict == PERFEV_USTACK_COPY ? "copy measurably cheaper" :
		 "within the noise: copy (its cut stacks are counted)");
	return is_fp ? FT_USTACK_FP : FT_USTACK_COPY;
}

int ft_ustack_save(enum ft_ustack_method m, const char *why)
{
	char line[320];
	snprintf(line, sizeof(line), "%s %s", ft_ustack_name(m), why);
	return ft_saved_write(SAVED_NAME, line);
}

/* `ftstack check`'s answer, if this boot has one (/run is per boot). */
static int saved_answer(enum ft_ustack_method *m, char *why, size_t len)
{
	char line[256];
	int ret = ft_saved_read(SAVED_NAME, line, sizeof(line));
	if (ret < 0)
		return ret;
	if (strncmp(line, "fp ", 3) != 0 && strncmp(line, "copy ", 5) != 0)
		return -EINVAL;
	*m = line[0] == 'c' ? FT_USTACK_COPY : FT_USTACK_FP;
	snprintf(why, len, "ftstack check's answer (/run/ftstack/" SAVED_NAME "): %s",
		 strchr(line, ' ') + 1);
	return 0;
}

uint64_t ft_profile_rate(const struct ft_options *o)
{
	if (o->cmd != FT_PROFILE)
		return 0;
	return o->freq ? o->freq : o->period_ns ? 1000000000ull / o->period_ns :
	       FT_PROFILE_FREQ_DEFAULT;
}

enum ft_ustack_method ft_ustack_default(enum ft_cmd cmd, enum ft_ustack_method host_method,
					uint64_t rate, uint32_t *size)
{
	if (cmd == FT_PROFILE) {
		/* the most the kernel copies while a second of samples fits the
		 * default ring, halving (32 KB, 16 KB) down to dwarf's 8 KB */
		uint64_t budget = (uint64_t)FT_COPY_RING_KB * 1024;
		*size = FT_COPY_SIZE_MAX;
		while (*size > FT_DWARF_SIZE_DEFAULT && *size * rate > budget)
			*size = *size == FT_COPY_SIZE_MAX ? 32768 : *size / 2;
		return FT_USTACK_DWARF;
	}
	if (cmd == FT_OFFCPU) {
		*size = FT_OFFCPU_COPY_SIZE;
		return FT_USTACK_DWARF;
	}
	*size = host_method == FT_USTACK_FP ? FT_FIX_SIZE_DEFAULT : FT_COPY_SIZE_DEFAULT;
	return host_method;
}

void ft_ustack_choose(struct ft_ustacks *u, const struct ft_options *o)
{
	uint32_t dflt_size = 0;
	if (o->call_graph_set) {
		u->method = o->call_graph_dwarf ? FT_USTACK_DWARF :
			    o->call_graph_copy ? FT_USTACK_COPY : FT_USTACK_FP;
		snprintf(u->why, sizeof(u->why), "--call-graph %s",
			 ft_ustack_name(u->method));
	} else if (saved_answer(&u->method, u->why, sizeof(u->why)) < 0) {
		/* timing both takes about a second here (closing each timed
		 * event waits for an RCU grace period): that is ftstack check's
		 * job; until it has run, the copy, which never costs much more
		 * than the walk and far less where reads of user memory are slow */
		u->method = FT_USTACK_COPY;
		snprintf(u->why, sizeof(u->why),
			 "not timed on this boot yet (ftstack check times both and saves its choice)");
	}
	if (!o->call_graph_set) {
		enum ft_ustack_method host = u->method;
		u->method = ft_ustack_default(o->cmd, host, ft_profile_rate(o), &dflt_size);
		if (u->method != host)
			snprintf(u->why, sizeof(u->why),
				 "%s's default: CFI all the way in a %u-byte copy",
				 o->cmd == FT_PROFILE ? "profile" : "offcpu", dflt_size);
	}
	/* CFI for every frame may read any register; the walks of fp and copy
	 * start from ip, sp and bp (r10 and r11 for gcc's odd CFA rules), and
	 * each register asked for costs the kernel a call a sample
	 * (perfev_user_frame_regs_mask) */
	u->offcpu = o->cmd == FT_OFFCPU;
	u->follow = o->cmd == FT_PROFILE && ft_profile_rate(o) <= FT_PYTHON_WAKE_RATE;
	u->regs_mask = u->method == FT_USTACK_DWARF ? perfev_user_regs_mask() :
			perfev_user_frame_regs_mask();
	u->copy_size = !o->call_graph_set ? dflt_size :
			u->method == FT_USTACK_FP ? FT_FIX_SIZE_DEFAULT : o->copy_size;
	ft_debug("user stacks: %s (%s), %u bytes of stack a sample", ft_ustack_name(u->method),
		 u->why, u->copy_size);
}

/* The most frames a walk gives: kernel.perf_event_max_stack's, at most AGG_MAX_DEPTH */
static uint32_t max_frames(const struct ft_ustacks *u)
{
	return u->max_frames && u->max_frames < AGG_MAX_DEPTH ? u->max_frames : AGG_MAX_DEPTH;
}

uint32_t ft_ustack_chain(struct ft_ustacks *u, const struct perfev_sample *smp,
			 const uint64_t **chain, bool *cut)
{
	*cut = false;
	if (u->method != FT_USTACK_FP) {
		/* once a sample: the repeat check (repeat.c) walks it before the full count */
		if (u->chain_of != smp) {
			u->nchain = perfev_ustack_walk(smp, u->regs_mask, u->chain, max_frames(u),
						       &u->chain_cut);
			u->chain_of = smp;
		}
		*cut = u->chain_cut;
	}
	return ft_ustack_last_chain(u, smp, chain);
}

uint32_t ft_ustack_last_chain(const struct ft_ustacks *u, const struct perfev_sample *smp,
			      const uint64_t **chain)
{
	bool kernels = u->method == FT_USTACK_FP;
	*chain = kernels ? smp->uips : u->chain;
	return kernels ? smp->nuips : u->nchain;
}

/* SMP's user stack: walked in its copy and repaired or unwound with CFI,
 * into u->walk. Returns the number of frames, or -1 to keep the kernel's
 * (no registers: a kernel thread, or no copy taken). */
static int walk(struct ft_ustacks *u, struct sym_procs *procs, const struct perfev_sample *smp,
		uint32_t max, bool *cut)
{
	struct sym_ustack us = { .pid = smp->pid, .tid = smp->tid, .time = smp->time,
				 .stack = smp->ustack, .size = smp->ustack ? smp->ustack_size : 0 };
	bool chain_cut = false;
	if (!smp->pid || perfev_ustack_dwarf_regs(smp, u->regs_mask, us.regs, &us.regs_known) < 0) {
		if (u->method != FT_USTACK_COPY)
			return -1;
		const uint64_t *chain;
		uint32_t n = ft_ustack_chain(u, smp, &chain, cut);
		memcpy(u->walk, chain, n * sizeof(*chain));
		return (int)n;
	}
	ft_procs_know(procs, smp->pid, smp->time); /* its mappings, before the walk */
	if (u->method == FT_USTACK_DWARF) {
		perfev_ustack_prefetch(smp); /* its CFA rules read it frame by frame too */
		return (int)sym_unwind(u->unwinder, &us, u->walk, max, cut);
	}
	const uint64_t *chain;
	uint32_t nchain = ft_ustack_chain(u, smp, &chain, &chain_cut);
	if (nchain == 0)
		return -1;
	uint32_t n = sym_unwind_splice(u->unwinder, &us, chain, nchain, u->walk, max, cut);
	*cut |= chain_cut;
	u->spliced = true;
	return (int)n;
}

/* A cut stack whose last frame is at ADDR: counted under its file, with
 * the program it ran in (whether frame pointers would carry its walk on
 * depends on the callers too, mostly the program's). */
static struct ft_cut_file *note_cut(struct ft_ustacks *u, struct sym_procs *procs,
				    const struct perfev_sample *smp, uint64_t addr, bool at_end)
{
	const char *path = "", *prog = "";
	uint64_t bias;
	if (sym_procs_module(procs, smp->pid, smp->time, addr, &path, &bias) < 0)
		path = "";
	for (int i = 0; i < FT_CUT_FILES; i++) {
		struct ft_cut_file *f = &u->cut_files[i];
		if (f->at_end + f->stopped == 0) {
			snprintf(f->path, sizeof(f->path), "%s", path);
			if (sym_procs_program(procs, smp->pid, smp->time, &prog) < 0)
				prog = "";
			snprintf(f->prog, sizeof(f->prog), "%s", prog);
		} else if (strcmp(f->path, path) != 0) {
			continue;
		}
		f->at_end += at_end;
		f->stopped += !at_end;
		return f;
	}
	return NULL;
}

/* The file of FILES with the most stacks of a kind (AT_END or stopped). */
static const struct ft_cut_file *most_cut(const struct ft_cut_file *files, bool at_end)
{
	const struct ft_cut_file *best = NULL;
	for (int i = 0; i < FT_CUT_FILES; i++) {
		uint64_t n = at_end ? files[i].at_end : files[i].stopped;
		if (n && (!best || n > (at_end ? best->at_end : best->stopped)))
			best = &files[i];
	}
	return best;
}

/* How many functions in a thousand keep frame pointers where F's stacks
 * were cut: the file's own share, or its program's where that is less
 * (GMP's libgmp keeps them, 119 in 1000, but the cc1 that calls it does
 * not: an fp walk from GMP's code would stop in cc1); -1 unknown. */
static int fp_share(const struct ft_cut_file *f)
{
	int own = sym_elf_fp_share(f->path);
	int prog = f->prog[0] && strcmp(f->prog, f->path) != 0 ? sym_elf_fp_share(f->prog) : -1;
	return prog >= 0 && (own < 0 || prog < own) ? prog : own;
}

/* offcpu's switch-outs whose copies ran to the stack's top, at least this
 * many and this share of the whole walks, are worth a smaller copy's hint */
#define TOP_HINT_MIN 1000u
#define TOP_HINT_SHARE 0.9
/* the hint's copy: the farthest outermost frame and this much more (a
 * path a little deeper), in whole lines; little, since what lies between a
 * main thread's outermost frame and the stack's top (its arguments,
 * environment and auxiliary vector, and a random gap) may be ~0.5 KB */
#define TOP_HINT_ROOM 256u

/* A copy that would have taken every stack walked whole here whole again
 * and stopped short of each one's top, or 0: offcpu only (a blocked
 * thread's stack is copied at each switch-out), when none was cut at the
 * copy's end and most copies ran to the top. (A walk that stopped for want
 * of CFI stops there with any copy.) */
static uint32_t copy_enough(const struct ft_ustacks *u)
{
	if (!u->offcpu || u->method != FT_USTACK_DWARF || u->cut ||
	    u->at_top < TOP_HINT_MIN || (double)u->at_top < TOP_HINT_SHARE * (double)u->whole)
		return 0;
	uint64_t size = (u->reach_max + TOP_HINT_ROOM + 63) / 64 * 64;
	return size < u->top_min && size < u->copy_size ? (uint32_t)size : 0;
}

void ft_ustack_summary(const struct ft_ustacks *u, struct ft_summary *sm)
{
	const struct ft_cut_file *e = most_cut(u->cut_files, true);
	const struct ft_cut_file *t = most_cut(u->cut_files, false);
	sm->stack_cut = u->cut;
	sm->stack_cut_top = u->cut_top;
	sm->stack_stopped = u->stopped;
	sm->copy_at_top = u->at_top;
	sm->copy_whole = u->whole;
	sm->copy_enough = copy_enough(u);
	ft_jit_summary(&u->jit, sm);
	sm->copy_size = u->copy_size;
	sm->ustack = ft_ustack_name(u->method);
	sm->cut_file = e && e->path[0] ? basename(e->path) : NULL;
	sm->cut_fp = e && e->path[0] ? fp_share(e) : -1;
	sm->stop_file = t && t->path[0] ? basename(t->path) : NULL;
	sm->stop_fp = t && t->path[0] ? fp_share(t) : -1;
	struct py_counts pc = { 0 };
	if (u->py)
		py_reader_counts(u->py, &pc);
	sm->py_stacks = pc.stacks;
	sm->py_unread = pc.stacks - pc.read;
	uint64_t most = 0;
	for (int i = 1; i < PY_FAILS; i++)
		if (pc.failed[i] > most) {
			most = pc.failed[i];
			sm->py_why = py_fail_text((enum py_fail)i);
		}
	for (int i = 1; i < PY_FAILS; i++)
		if (pc.failed[i])
			ft_debug("python: %" PRIu64 " not read: %s", pc.failed[i],
				 py_fail_text((enum py_fail)i));
	ft_debug("python: %" PRIu64 " stacks ran Python code, %" PRIu64 " read (%" PRIu64
		 " frames put in, %" PRIu64 " reads of memory, %" PRIu64 " us reading)", pc.stacks,
		 pc.read, pc.frames, pc.reads, u->py_ns / 1000);
	if (pc.edge)
		ft_debug("python: %" PRIu64 " of them taken in an eval loop's entry or exit: its "
			 "callers' frames read, not the one it entered or left", pc.edge);
	if (u->py_on_cpu[0] + u->py_on_cpu[1])
		ft_debug("python: %" PRIu64 " of %" PRIu64 " samples read on the CPU they were taken on",
			 u->py_on_cpu[1], u->py_on_cpu[0] + u->py_on_cpu[1]);
	uint64_t ruled = 0, full = 0;
	if (u->unwinder)
		sym_unwinder_counts(u->unwinder, &ruled, &full);
	ft_debug("user stacks: %" PRIu64 " walked by the CFA rules learnt (%" PRIu64
		 " of them stepped from the sampled frame by libunwind), %" PRIu64 " full CFI walks",
		 ruled, u->unwinder ? sym_unwinder_leaf_steps(u->unwinder) : 0, full);
	uint64_t by_rule = 0, by_unw = 0, again = 0, shared = 0;
	if (u->unwinder)
		sym_unwinder_steps(u->unwinder, &by_rule, &by_unw, &again, &shared);
	ft_debug("user stacks: CFI walks' frames stepped by a rule kept for their ip: %" PRIu64
		 ", by libunwind or rbp: %" PRIu64 " (%" PRIu64 " walks made again without rules); "
		 "%" PRIu64 " rules taken from another process's walks of the same file",
		 by_rule, by_unw, again, shared);
}

/* A Python version the reader cannot read, said once */
static void say_unsupported(void *ctx, const char *what)
{
	(void)ctx;
	ft_warn("Python %s: its Python frames cannot be read (ftstack reads %s); "
		"its native frames are kept", what, py_versions());
}

/* How long before NOW (CLOCK_MONOTONIC) a sample of TIME (perf's clock)
 * was taken: the clocks' offset measured (perfev_clock_offset) and lowered
 * to any lag below it, so an age is never overestimated; where the clock
 * is not open, the least lag seen is the offset and ages are at worst
 * underestimated by how late the earliest samples were read */
static uint64_t sample_age(struct ft_ustacks *u, uint64_t now, uint64_t time)
{
	int64_t lag = (int64_t)(now - time), off;
	if (!u->clock_at || now - u->clock_at > FT_CLOCK_EVERY_NS) {
		/* opened at the first Python sample, not at start-up (most runs
		 * see none); refused (perf_event_paranoid 3, seccomp): ages from
		 * the least lag */
		if (!u->clock_at && perfev_clock_open(&u->clock) < 0)
			ft_debug("python: perf's clock not measured; samples' ages from their least lag");
		u->clock_at = now;
		if (u->clock.page && perfev_clock_offset(&u->clock, &off) == 0)
			u->py_offset = off, u->py_offset_known = true;
	}
	if (!u->py_offset_known || lag < u->py_offset)
		u->py_offset = lag, u->py_offset_known = true;
	return (uint64_t)(lag - u->py_offset);
}

/* The walk's N frames of SMP with each Python eval loop's Python frames
 * put in before it (python/): the count, in u->with_py, or -1 (u->walk
 * as it is). */
static int python_frames(struct ft_ustacks *u, const struct perfev_sample *smp, uint32_t n,
			 uint32_t max, bool whole)
{
	if (!u->py || !n || !u->sps[0] || !py_reader_runs_python(u->py, smp->pid, smp->time))
		return -1; /* before any per-sample work: most samples are of no Python */
	uint64_t regs[17] = { 0 };
	uint32_t known;
	struct py_stack ps = { .pid = smp->pid, .tid = smp->tid, .time = smp->time,
			       .ips = u->walk, .sps = u->sps, .n = n, .stack = smp->ustack,
			       .size = smp->ustack ? smp->ustack_size : 0, .whole = whole,
			       /* offcpu's blocked threads cost ~40 reads of their
				* memory each: at 40k switch-outs a second the
				* reads fell behind and lost most records */
			       .behind = smp->behind,
			       .regs = perfev_ustack_dwarf_regs(smp, u->regs_mask, regs, &known) == 0 ?
				       regs : NULL };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* offcpu's samples are of blocked threads, whose frames wait for them */
	ps.age_ns = u->offcpu ? 0 : sample_age(u, (uint64_t)t0.tv_sec * 1000000000ull +
						  (uint64_t)t0.tv_nsec, smp->time);
	int got = py_reader_expand(u->py, &ps, u->with_py, max);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	u->py_ns += (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec -
		    (uint64_t)t0.tv_nsec;
	if (got < 0)
		py_reader_unsupported(u->py, say_unsupported, NULL);
	else
		u->py_on_cpu[sched_getcpu() == (int)smp->cpu]++; /* profile's readers: where it was read */
	return got;
}

/* Whether ADDR, in SMP's process, is in ftstack's own executable. */
static bool runs_ftstack(struct sym_procs *procs, const struct perfev_sample *smp, uint64_t addr)
{
	static char self[PATH_MAX];
	const char *path;
	uint64_t bias;
	if (!self[0] && readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
		self[0] = '\0';
	return self[0] && sym_procs_module(procs, smp->pid, smp->time, addr, &path, &bias) == 0 &&
	       strcmp(path, self) == 0;
}

/* A whole walk of N frames: how far above the sample's rsp its outermost
 * frame lay, and whether its copy ran to the stack's top. The kernel stops
 * such a copy at a page fault past the top, which cost offcpu more than
 * the 16 KB it copies on this project's VM (doc/PERFORMANCE.md, offcpu). */
static void note_reach(struct ft_ustacks *u, struct sym_procs *procs,
		       const struct perfev_sample *smp, uint32_t n)
{
	if (!u->sps[0] || u->sps[n - 1] < u->sps[0])
		return;
	uint64_t reach = u->sps[n - 1] - u->sps[0];
	/* the command's process before its exec runs ftstack's code, whose
	 * stack is deeper than most: not the program's (checked only when a
	 * walk goes farther than all before it, a few times a run) */
	if (reach > u->reach_max && runs_ftstack(procs, smp, u->walk[n - 1]))
		return;
	u->whole++;
	if (reach > u->reach_max)
		u->reach_max = reach;
	if (smp->ustack_size < smp->ustack_room) {
		u->at_top++;
		if (!u->top_min || smp->ustack_size < u->top_min)
			u->top_min = smp->ustack_size;
	}
}

const struct perfev_sample *ft_ustack_walk(struct ft_ustacks *u, struct sym_procs *procs,
					   const struct perfev_sample *smp,
					   struct perfev_sample *tmp)
{
	u->repeatable = false;
	if (!u->copy_size || !u->unwinder)
		return smp;
	bool cut = false;
	uint32_t max = max_frames(u);
	u->sps[0] = 0; /* the walks that take no registers keep none */
	u->spliced = false;
	int n = walk(u, procs, smp, max, &cut);
	if (n < 0)
		return smp;
	/* CFI all the way knows where a stack ends (_start's CFI says it has
	 * no caller): one that stops anywhere else is not whole either */
	bool stopped = !cut && u->method == FT_USTACK_DWARF && !sym_unwind_ended(u->unwinder);
	u->last_cut = (struct ft_cut_of){ cut, cut && smp->ustack_size < smp->ustack_room, NULL };
	if ((cut || stopped) && n > 0)
		u->last_cut.file = note_cut(u, procs, smp, u->walk[n - 1], cut);
	u->stopped += stopped;
	if (u->method == FT_USTACK_DWARF && !cut && !stopped && n > 0)
		note_reach(u, procs, smp, (uint32_t)n);
	/* a copy shorter than its room ended at the top of the stack's mapping
	 * (or at a page the kernel could not read in then: offcpu's copy is
	 * taken with page faults off): no larger copy would have more, and a
	 * walk cut there read beyond what the kernel could copy (until
	 * 2026-11-26 every thread's did, in clone3's frame, at the top) */
	u->cut_top += u->last_cut.top;
	uint64_t anon = sym_unwind_anon(u->unwinder);
	if (anon)
		ft_jit_note(&u->jit, procs, smp, anon, u->walk, (uint32_t)n);
	*tmp = *smp;
	/* the Python frames come on top of the native walk's (at most max,
	 * as perf's callchains): a deep import's 100 native frames and its
	 * Python ones passed 127 in ~0.4% of split.py's samples */
	int with_py = python_frames(u, smp, (uint32_t)n, AGG_MAX_DEPTH,
				    !cut && u->method == FT_USTACK_DWARF &&
				    sym_unwind_ended(u->unwinder));
	/* repeat.c asks the splice whether kept rules made its frames (no
	 * JIT code: sym_unwind_walked_by_rules) */
	u->repeatable = u->spliced && with_py < 0;
	tmp->uips = with_py >= 0 ? u->with_py : u->walk;
	tmp->nuips = (uint32_t)(with_py >= 0 ? with_py : n);
	u->cut += cut;
	return tmp;
}
