/* The session: built in three steps (ft_session_init, _configure once the
 * plan is known, _alloc for the tables), freed in one; and what happens to
 * each decoded perf record: side band goes to the process history (and to
 * offcpu), samples get their copied user stack walked and go to offcpu or
 * to counting (count.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "collector/session.h"
#include "host/host.h"

void ft_session_init(struct ft_session *s, const struct ft_options *o)
{
	memset(s, 0, sizeof(*s));
	s->opt = o;
	s->self = getpid();
	s->kernel.epfd = -1;
	s->cgroup.fd = -1;
	if (o->cmd == FT_PROFILE) {
		s->output.period_ns = o->period_ns ? o->period_ns : 1000000000ull / o->freq;
		s->output.title = "ftstack profile";
	} else {
		s->output.title = o->cmd == FT_OFFCPU ? "ftstack offcpu" : "ftstack count";
	}
}

/* kernel.perf_event_max_stack under PROC_ROOT, at most AGG_MAX_DEPTH (127
 * when unreadable, the kernel's default). */
static uint16_t max_stack(const char *proc_root)
{
	char line[32];
	unsigned v;
	if (host_read_line(proc_root, "sys/kernel/perf_event_max_stack", line, sizeof(line)) < 0 ||
	    sscanf(line, "%u", &v) != 1)
		v = 127;
	return (uint16_t)(v > AGG_MAX_DEPTH ? AGG_MAX_DEPTH : v);
}

void ft_session_configure(struct ft_session *s, const char *proc_root)
{
	const struct ft_options *o = s->opt;
	s->keep.want_user = !o->kernel_only;
	s->keep.want_kernel = !o->user_only;
	/* the sink's rows carry the comm whatever the format */
	bool comm = out_needs_comm(o->format, o->per_process) || o->sink;
	s->keep.need_procs = s->keep.want_user || comm;
	/* offcpu forgets threads that exit (they are not off CPU, they are gone) */
	s->keep.track = s->keep.need_procs || o->cmd == FT_OFFCPU;
	s->keep.key_pid = comm;
	s->keep.key_tid = comm; /* the comm shown is the thread's, as bcc and perf show it */
	s->keep.max_stack = max_stack(proc_root);
	s->ustacks.max_frames = s->keep.max_stack;
	s->plan.track_mmaps = s->keep.track && s->keep.want_user;
}


int ft_session_alloc(struct ft_session *s, const char *proc_root, const char *debug_root)
{
	const struct ft_options *o = s->opt;
	const struct sym_cache_style style = { .offsets = o->offsets, .addresses = o->addresses,
					       .demangle = !o->no_demangle,
					       .build_ids = o->build_ids || o->sink };
	struct agg_config ac = { .key_pid = s->keep.key_pid, .key_tid = s->keep.key_tid,
				 .key_cgroup = o->per_cgroup, .max_stacks = o->max_stacks };
	if (s->kernel.state == FT_KSYMS_READY &&
	    ft_kfilter_init(&s->kernel.filter, s->kernel.syms, s->plan.track_mmaps) < 0)
		return -ENOMEM;
	if (sym_procs_alloc(proc_root, debug_root, &s->procs) < 0 ||
	    agg_table_alloc(&ac, &s->agg) < 0 ||
	    sym_cache_alloc(s->kernel.syms, s->procs, &style, &s->output.symcache) < 0 ||
	    (s->ustacks.copy_size && sym_unwinder_alloc(s->procs, &s->ustacks.unwinder) < 0) ||
	    (s->ustacks.unwinder &&
	     py_reader_alloc(s->procs, proc_root, py_read_process, NULL, &s->ustacks.py) < 0))
		return -ENOMEM;
	sym_cache_use_deferred(s->output.symcache, o->build_ids); /* --sink's rows: sink.c */
	if (s->ustacks.py)
		sym_unwinder_sps(s->ustacks.unwinder, s->ustacks.sps);
	return 0;
}

void ft_session_free(struct ft_session *s)
{
	ft_offcpu_free(s->offcpu);
	sym_cache_free(s->output.symcache);
	agg_table_free(s->agg);
	sym_unwinder_free(s->ustacks.unwinder);
	py_reader_free(s->ustacks.py);
	perfev_clock_close(&s->ustacks.clock);
	sym_procs_free(s->procs);
	ft_ksyms_abandon(&s->kernel);
	ft_kfilter_free(&s->kernel.filter);
	sym_kernel_free(s->kernel.syms);
	host_cgroup_names_free(&s->cgroup.names);
	s->offcpu = NULL;
	s->output.symcache = NULL;
	s->agg = NULL;
	s->ustacks.unwinder = NULL;
	s->ustacks.py = NULL;
	s->procs = NULL;
	s->kernel.syms = NULL;
}

/* The weight a sample of this run counts with */
static uint64_t weight_of(const struct ft_session *s, const struct perfev_sample *smp)
{
	return s->opt->cmd == FT_PROFILE ? smp->period : 1;
}

/* Where helper PID is kept in s->helpers, or -1 */
static int helper_at(const struct ft_session *s, uint32_t pid)
{
	for (unsigned i = 0; i < s->nhelpers; i++)
		if (s->helpers[i] == pid)
			return (int)i;
	return -1;
}

/* Whether PID is ftstack or one of its helpers */
static bool is_self(const struct ft_session *s, uint32_t pid)
{
	return pid == (uint32_t)s->self || (s->nhelpers && helper_at(s, pid) >= 0);
}

/* PID, forked by ftstack, is a helper. Helpers exit once their rings are
 * mapped, so the table fills only when EXIT records were lost: then one
 * slot is taken over */
static void helper_add(struct ft_session *s, uint32_t pid)
{
	s->helpers[s->nhelpers < FT_SELF_HELPERS ? s->nhelpers++ : pid % FT_SELF_HELPERS] = pid;
}

static void helper_forget(struct ft_session *s, uint32_t pid)
{
	int i = helper_at(s, pid);
	if (i >= 0)
		s->helpers[i] = s->helpers[--s->nhelpers];
}

static void on_sample(struct ft_session *s, const struct perfev_record *rec, int ev)
{
	struct perfev_sample walked;
	const struct perfev_sample *smp = &rec->sample;
	/* a chain walked for the last sample is not this one's, though the
	 * decoder may hand this one over at the same address */
	s->ustacks.chain_of = NULL;
	if (ev >= 0 && ft_repeat_count(s, smp, (uint32_t)ev, weight_of(s, smp)))
		return;
	bool self = is_self(s, smp->pid);
	if (s->offcpu) {
		/* every switch matters: it may switch a traced thread back in
		 * (ftstack's own, and its helpers', offcpu leaves out) */
		if (ev >= 0 && !self)
			ft_offcpu_sample(s->offcpu, ft_ustack_walk(&s->ustacks, s->procs, smp, &walked),
					 (uint32_t)ev);
		return;
	}
	if (self) {
		s->cnt.self_events++;
		return;
	}
	if (ev < 0)
		return;
	if (s->opt->cmd == FT_PROFILE && smp->pid == 0 && !s->opt->idle) {
		/* the idle task never runs in user mode */
		bool user = (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
		if (s->keep.child_pidns && user)
			s->cnt.outside_pidns++;
		else
			s->cnt.idle++;
		return;
	}
	/* a sample the kernel-stack filters leave out is not walked */
	uint32_t kstart;
	if (ft_session_kernel_leaves_out(s, smp, &kstart))
		return;
	smp = ft_ustack_walk(&s->ustacks, s->procs, smp, &walked);
	ft_session_count_at(s, smp, (uint32_t)ev, weight_of(s, smp), kstart);
	ft_repeat_keep(s, &rec->sample, (uint32_t)ev);
}

int ft_session_record(struct ft_session *s, const struct perfev_record *rec, int event)
{
	if (rec->time > s->last_time)
		s->last_time = rec->time;
	switch (rec->kind) {
	case PERFEV_SAMPLE:
		on_sample(s, rec, event);
		break;
	case PERFEV_MMAP2:
		if (s->keep.need_procs && (rec->mmap2.prot & PROT_EXEC)) {
			const struct sym_file_id id = { makedev(rec->mmap2.maj, rec->mmap2.min),
							rec->mmap2.ino };
			sym_procs_mmap(s->procs, rec->pid, rec->time, rec->mmap2.start,
				       rec->mmap2.len, rec->mmap2.pgoff, true, rec->mmap2.filename,
				       &id);
		}
		break;
	case PERFEV_COMM:
		if (rec->comm.exec)
			helper_forget(s, rec->pid);
		if (s->keep.need_procs && (rec->pid == rec->tid || s->keep.key_tid))
			sym_procs_comm(s->procs, rec->tid, rec->time, rec->comm.comm,
				       rec->comm.exec && rec->pid == rec->tid);
		break;
	case PERFEV_FORK:
		if (rec->pid != rec->task.ppid && rec->task.ppid == (uint32_t)s->self)
			helper_add(s, rec->pid);
		if (rec->pid != rec->task.ppid && s->keep.need_procs) /* a process */
			sym_procs_fork(s->procs, rec->pid, rec->task.ppid, rec->task.ptid, rec->time);
		else if (rec->pid == rec->task.ppid && s->keep.key_tid) /* a thread */
			sym_procs_thread(s->procs, rec->pid, rec->tid, rec->task.ptid, rec->time);
		break;
	case PERFEV_EXIT:
		if (rec->pid == rec->tid) { /* the process */
			helper_forget(s, rec->pid);
			py_reader_exit(s->ustacks.py, rec->pid); /* the millisecond poll ends with the last */
		}
		/* marked only: its samples may still be unread (forget.c) */
		if (s->keep.need_procs)
			sym_procs_exit(s->procs, rec->pid, rec->tid, rec->time);
		if (s->keep.need_procs && s->keep.key_tid && rec->tid != rec->pid)
			sym_procs_thread_exit(s->procs, rec->tid, rec->time);
		if (s->offcpu)
			ft_offcpu_exit(s->offcpu, rec->tid, rec->time);
		break;
	case PERFEV_LOST:
	case PERFEV_LOST_SAMPLES:
		s->cnt.lost += rec->lost.lost;
		break;
	case PERFEV_SWITCH:
		if (s->offcpu && !rec->sw.out)
			ft_offcpu_switch_in(s->offcpu, rec->tid, rec->time);
		break;
	case PERFEV_THROTTLE:
		s->cnt.throttled++;
		break;
	case PERFEV_CGROUP: /* made while tracing (--per-cgroup) */
		if (s->opt->per_cgroup && rec->cgroup.path)
			host_cgroup_names_add(&s->cgroup.names, rec->cgroup.id, rec->cgroup.path);
		break;
	default:
		break;
	}
	return 0;
}
