/* What happens to each decoded record: side band goes to the process history,
 * samples are filtered (ftstack's own, tracing machinery, --through) and
 * counted. The hot path: no allocation, no I/O except the first sight of a
 * process that existed before tracing started. */
#include <string.h>
#include <sys/mman.h>
#include "collector/session.h"

/* A process seen for the first time that was not born under tracing: read
 * its maps now, while it most likely still runs. */
static void know_process(struct ft_session *s, uint32_t pid, uint64_t time)
{
	if (!s->need_procs || pid == 0 || sym_procs_known(s->procs, pid))
		return;
	sym_procs_snapshot(s->procs, pid, time);
}

/* The same for a thread whose comm is shown: one read of its comm. */
static void know_thread(struct ft_session *s, uint32_t pid, uint32_t tid, uint64_t time)
{
	if (s->key_tid && tid != pid && pid != 0 && !sym_procs_thread_known(s->procs, tid))
		sym_procs_thread_snapshot(s->procs, pid, tid, time);
}

/* A uprobe at a function's first instruction runs before the function has
 * pushed its frame pointer, so the frame-pointer walk goes from the
 * function straight to its caller's caller. The return address at [sp] is
 * the missing caller; kernels that already add it (6.13+) have it at [1]. */
static void add_entry_caller(struct ft_session *s, const struct perfev_sample *smp,
			     struct agg_record *r)
{
	uint64_t ret;
	if (!smp->ustack || smp->ustack_size < sizeof(ret) || r->nustack == 0)
		return;
	memcpy(&ret, smp->ustack, sizeof(ret));
	if (r->nustack > 1 && r->ustack[1] == ret)
		return;
	uint32_t n = r->nustack < AGG_MAX_DEPTH ? r->nustack : AGG_MAX_DEPTH - 1;
	s->scratch_u[0] = r->ustack[0];
	s->scratch_u[1] = ret;
	memcpy(&s->scratch_u[2], &r->ustack[1], (n - 1) * sizeof(uint64_t));
	r->ustack = s->scratch_u;
	r->nustack = n + 1;
	s->cnt.entry_callers++;
}

void ft_session_count(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
		      uint64_t weight)
{
	if (smp->time > s->last_time)
		s->last_time = smp->time;
	struct agg_record r = {
		.time = smp->time, .pid = smp->pid, .tid = smp->tid, .cpu = smp->cpu,
		.event = event, .weight = weight,
	};
	uint32_t start = 0;
	if (smp->nkips) {
		switch (ft_kfilter_apply(&s->kfilter, smp->kips, smp->nkips, &start)) {
		case FT_DROP_SELF:
			s->cnt.self_mmap++;
			return;
		case FT_DROP_THROUGH:
			s->cnt.through_miss++;
			return;
		case FT_KEEP:
			break;
		}
	} else if (s->kfilter.through.n) {
		s->cnt.through_miss++; /* no kernel stack cannot pass through FUNC */
		return;
	}
	if (s->want_kernel && smp->nkips) { /* a uprobe's sample has none */
		r.kstack = smp->kips + start;
		r.nkstack = smp->nkips - start;
		if (r.nkstack > AGG_MAX_DEPTH)
			r.nkstack = AGG_MAX_DEPTH;
	}
	if (s->want_user) {
		r.ustack = smp->uips;
		r.nustack = smp->nuips > AGG_MAX_DEPTH ? AGG_MAX_DEPTH : smp->nuips;
		if (s->plan.events[event].entry_fix)
			add_entry_caller(s, smp, &r);
	}
	if (!r.nkstack && !r.nustack)
		s->cnt.empty_stacks++;
	know_process(s, smp->pid, smp->time);
	know_thread(s, smp->pid, smp->tid, smp->time);
	if (agg_add(s->agg, &r) == 0)
		s->cnt.counted++;
}

/* --call-graph dwarf: SMP's copied stack unwound into s->walk_u with the
 * CFI of the files its process maps. Returns the number of frames, 0 for a
 * kernel thread (no user registers). */
static uint32_t unwind_copied_stack(struct ft_session *s, const struct perfev_sample *smp,
				    uint32_t max, bool *cut)
{
	struct sym_ustack us = { .pid = smp->pid, .tid = smp->tid, .time = smp->time,
				 .stack = smp->ustack, .size = smp->ustack ? smp->ustack_size : 0 };
	if (!smp->pid || perfev_ustack_dwarf_regs(smp, perfev_user_regs_mask(), us.regs) < 0)
		return 0;
	know_process(s, smp->pid, smp->time); /* its mappings, before the walk */
	return sym_unwind(s->unwinder, &us, s->walk_u, max, cut);
}

/* --call-graph copy and dwarf: the sample's user frames, walked here from
 * the copied stack (frame pointers, or DWARF CFI), replace the (absent)
 * kernel-walked ones in a copy of the sample. */
static const struct perfev_sample *walk_copied_stack(struct ft_session *s,
						     const struct perfev_sample *smp,
						     struct perfev_sample *tmp)
{
	if (!s->opt->call_graph_copy || !s->want_user || smp->pid == (uint32_t)s->self)
		return smp; /* ftstack's own samples are dropped unwalked */
	bool cut = false;
	uint32_t max = s->max_stack && s->max_stack < AGG_MAX_DEPTH ? s->max_stack : AGG_MAX_DEPTH;
	*tmp = *smp;
	tmp->uips = s->walk_u;
	tmp->nuips = s->unwinder ? unwind_copied_stack(s, smp, max, &cut) :
		     perfev_ustack_walk(smp, perfev_user_regs_mask(), s->walk_u, max, &cut);
	s->cnt.stack_cut += cut;
	return tmp;
}

static void on_sample(struct ft_session *s, const struct perfev_record *rec)
{
	struct perfev_sample walked;
	const struct perfev_sample *smp = walk_copied_stack(s, &rec->sample, &walked);
	s->cnt.samples++;
	if (s->offcpu) {
		/* every switch matters: it may switch a traced thread back in */
		int ev = ft_perf_source_event(s, smp->id);
		if (ev >= 0)
			ft_offcpu_sample(s, smp, (uint32_t)ev);
		return;
	}
	if (smp->pid == (uint32_t)s->self) {
		s->cnt.self_events++;
		return;
	}
	int ev = ft_perf_source_event(s, smp->id);
	if (ev < 0)
		return;
	if (s->opt->cmd == FT_PROFILE && smp->pid == 0 && !s->opt->idle) {
		s->cnt.idle++;
		return;
	}
	ft_session_count(s, smp, (uint32_t)ev, s->opt->cmd == FT_PROFILE ? smp->period : 1);
}

int ft_session_record(struct ft_session *s, const struct perfev_record *rec)
{
	if (rec->time > s->last_time)
		s->last_time = rec->time;
	switch (rec->kind) {
	case PERFEV_SAMPLE:
		on_sample(s, rec);
		break;
	case PERFEV_MMAP2:
		if (s->need_procs && (rec->mmap2.prot & PROT_EXEC))
			sym_procs_mmap(s->procs, rec->pid, rec->time, rec->mmap2.start,
				       rec->mmap2.len, rec->mmap2.pgoff, true, rec->mmap2.filename);
		break;
	case PERFEV_COMM:
		if (s->need_procs && (rec->pid == rec->tid || s->key_tid))
			sym_procs_comm(s->procs, rec->tid, rec->time, rec->comm.comm,
				       rec->comm.exec && rec->pid == rec->tid);
		break;
	case PERFEV_FORK:
		if (rec->pid != rec->task.ppid && s->need_procs) /* a process */
			sym_procs_fork(s->procs, rec->pid, rec->task.ppid, rec->task.ptid, rec->time);
		else if (rec->pid == rec->task.ppid && s->key_tid) /* a thread */
			sym_procs_thread(s->procs, rec->pid, rec->tid, rec->task.ptid, rec->time);
		break;
	case PERFEV_EXIT:
		/* a process's history stays: its samples may still be unread */
		if (s->offcpu)
			ft_offcpu_exit(s, rec->tid, rec->time);
		break;
	case PERFEV_LOST:
	case PERFEV_LOST_SAMPLES:
		s->cnt.lost += rec->lost.lost;
		break;
	case PERFEV_SWITCH:
		if (s->offcpu && !rec->sw.out)
			ft_offcpu_switch_in(s, rec->tid, rec->time);
		break;
	case PERFEV_THROTTLE:
		s->cnt.throttled++;
		break;
	default:
		break;
	}
	return 0;
}
