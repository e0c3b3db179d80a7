/* Counting one sample: the kernel-stack filters (ftstack's own, tracing
 * machinery, --through), the uprobe entry caller, then the aggregator. The
 * hot path: no allocation, no I/O except the first sight of a process that
 * existed before tracing started. Both sources and offcpu count through it. */
#include <string.h>
#include "collector/session.h"

/* A process seen for the first time that was not born under tracing: read
 * its maps now, while it most likely still runs. */
void ft_session_know_process(struct ft_session *s, uint32_t pid, uint64_t time)
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
	ft_session_know_process(s, smp->pid, smp->time);
	know_thread(s, smp->pid, smp->tid, smp->time);
	if (agg_add(s->agg, &r) == 0)
		s->cnt.counted++;
}
