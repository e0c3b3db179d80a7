/* Counting one sample: the kernel-stack filters (ftstack's own, tracing
 * machinery, --through), the uprobe entry caller, then the aggregator. The
 * hot path: no allocation, no I/O except the first sight of a process that
 * existed before tracing started. Both sources and offcpu count through it.
 * The filters need the kernel's symbols: the first sample with a kernel
 * stack starts loading them in a thread, and samples wait in a queue (a
 * copy of what counting needs) until they are in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "collector/session.h"


/* A process seen for the first time that was not born under tracing: read
 * its maps now, while it most likely still runs. */
void ft_procs_know(struct sym_procs *procs, uint32_t pid, uint64_t time)
{
	if (pid != 0 && !sym_procs_sampled(procs, pid, time))
		sym_procs_snapshot(procs, pid, time);
}

void ft_session_know_process(struct ft_session *s, uint32_t pid, uint64_t time)
{
	if (s->keep.need_procs)
		ft_procs_know(s->procs, pid, time);
}

/* The same for a thread whose comm is shown: one read of its comm. */
static void know_thread(struct ft_session *s, uint32_t pid, uint32_t tid, uint64_t time)
{
	if (s->keep.key_tid && tid != pid && pid != 0 && !sym_procs_thread_known(s->procs, tid))
		sym_procs_thread_snapshot(s->procs, pid, tid, time);
}

/* A uprobe at a function's first instruction runs before the function has
 * pushed its frame pointer, so the frame-pointer walk goes from the
 * function straight to its caller's caller. The return address at [sp] is
 * the missing caller; kernels that already add it (6.13+) have it at [1]. */
static void add_entry_caller(struct ft_session *s, const struct perfev_sample *smp,
			     struct agg_record *r, uint64_t samples)
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
	s->cnt.entry_callers += samples;
}

/* The kernel-stack filters' verdict on SMP (N samples alike): true when
 * it is kept, with *start the first kernel frame kept; a sample left out
 * is counted by why (the aggregator's last key, and so repeat.c's, stays
 * the last one counted). */
static bool kernel_keeps(struct ft_session *s, const struct perfev_sample *smp, uint32_t *start,
			 uint64_t n)
{
	*start = 0;
	if (!smp->nkips && !s->kernel.filter.through.n)
		return true;
	if (!smp->nkips) {
		s->cnt.through_miss += n; /* no kernel stack cannot pass through FUNC */
		return false;
	}
	switch (ft_kfilter_apply(&s->kernel.filter, smp->kips, smp->nkips, start)) {
	case FT_DROP_SELF:
		s->cnt.self_mmap += n;
		return false;
	case FT_DROP_THROUGH:
		s->cnt.through_miss += n;
		return false;
	case FT_KEEP:
		break;
	}
	return true;
}

bool ft_session_kernel_leaves_out(struct ft_session *s, const struct perfev_sample *smp,
				  uint32_t *start)
{
	*start = FT_KSTART_LATER;
	return s->kernel.state == FT_KSYMS_READY && !kernel_keeps(s, smp, start, 1);
}

/* Counts SMP, N samples alike of WEIGHT in all; START: its first kernel
 * frame kept, FT_KSTART_LATER when the filters have not seen it yet. */
static void count_now(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
		      uint64_t weight, uint32_t start, uint64_t n)
{
	struct agg_record r = {
		.time = smp->time, .pid = smp->pid, .tid = smp->tid, .cpu = smp->cpu,
		.event = event, .weight = weight, .cgroup = smp->cgroup, .records = n,
	};
	if (start == FT_KSTART_LATER && !kernel_keeps(s, smp, &start, n))
		return;
	/* the aggregator's last key is no longer the kept sample's */
	s->repeat.valid = false;
	s->repeat.counted = false;
	if (s->keep.want_kernel && smp->nkips) { /* a uprobe's sample has none */
		r.kstack = smp->kips + start;
		r.nkstack = smp->nkips - start;
		if (r.nkstack > AGG_MAX_DEPTH)
			r.nkstack = AGG_MAX_DEPTH;
	}
	uint64_t callers = s->cnt.entry_callers;
	if (s->keep.want_user) {
		r.ustack = smp->uips;
		r.nustack = smp->nuips > AGG_MAX_DEPTH ? AGG_MAX_DEPTH : smp->nuips;
		if (s->plan.events[event].entry_fix)
			add_entry_caller(s, smp, &r, n);
	}
	bool empty = !r.nkstack && !r.nustack;
	if (empty)
		s->cnt.empty_stacks += n;
	ft_session_know_process(s, smp->pid, smp->time);
	know_thread(s, smp->pid, smp->tid, smp->time);
	if (agg_add(s->agg, &r) == 0) {
		s->cnt.counted += n;
		s->repeat.counted = !empty;
		/* the caller put back comes from [sp]: repeat.c checks that word */
		s->repeat.entry = s->plan.events[event].entry_fix;
		s->repeat.entry_added = s->cnt.entry_callers != callers;
	}
}

/* Samples waiting for the kernel's symbols, alike in all count_now reads
 * but their weight: n of them, time the first's, weight their sum. */
struct pending {
	uint64_t time, weight, entry_ret, cgroup, n;
	uint32_t pid, tid, cpu, event, nk, nu;
	uint32_t has_ret;
	uint32_t pad;
	uint64_t ips[]; /* nk kernel addresses, then nu user ones */
};

/* Whether SMP of EVENT is alike the sample(s) P holds */
static bool pending_alike(const struct pending *p, const struct perfev_sample *smp,
			  uint32_t event)
{
	bool has_ret = smp->ustack && smp->ustack_size >= sizeof(p->entry_ret);
	if (p->pid != smp->pid || p->tid != smp->tid || p->cpu != smp->cpu || p->event != event ||
	    p->cgroup != smp->cgroup || p->nk != smp->nkips || p->nu != smp->nuips ||
	    p->has_ret != has_ret ||
	    (has_ret && memcmp(&p->entry_ret, smp->ustack, sizeof(p->entry_ret))))
		return false;
	return (!p->nk || memcmp(p->ips, smp->kips, p->nk * sizeof(uint64_t)) == 0) &&
	       (!p->nu || memcmp(p->ips + p->nk, smp->uips, p->nu * sizeof(uint64_t)) == 0);
}

/* Queues SMP, into the last entry when it is alike: a loop's samples, all
 * the same, wait in one entry (counted at once, each 3-8 MB of them one by
 * one had taken the loop 9-15 ms away from its rings). */
static int pending_push(struct ft_pending *q, const struct perfev_sample *smp, uint32_t event,
			uint64_t weight)
{
	if (q->len) {
		struct pending *last = (struct pending *)(q->buf + q->last);
		if (pending_alike(last, smp, event)) {
			last->n++;
			last->weight += weight;
			return 0;
		}
	}
	size_t need = sizeof(struct pending) + ((size_t)smp->nkips + smp->nuips) * sizeof(uint64_t);
	if (MEM_GROW(q->buf, q->cap, q->len + need, 1u << 16))
		return -ENOMEM;
	struct pending *p = (struct pending *)(q->buf + q->len);
	*p = (struct pending){ .time = smp->time, .weight = weight, .cgroup = smp->cgroup, .n = 1,
			       .pid = smp->pid,
			       .tid = smp->tid, .cpu = smp->cpu, .event = event,
			       .nk = smp->nkips, .nu = smp->nuips };
	if (smp->ustack && smp->ustack_size >= sizeof(p->entry_ret)) {
		memcpy(&p->entry_ret, smp->ustack, sizeof(p->entry_ret));
		p->has_ret = 1;
	}
	if (smp->nkips) /* -K: no user addresses at all (NULL), -U: no kernel ones */
		memcpy(p->ips, smp->kips, smp->nkips * sizeof(uint64_t));
	if (smp->nuips)
		memcpy(p->ips + smp->nkips, smp->uips, smp->nuips * sizeof(uint64_t));
	q->last = q->len;
	q->len += need;
	return 0;
}

/* Counts every waiting sample, in the order they came, and empties the queue. */
static void pending_count(struct ft_session *s)
{
	struct ft_pending *q = &s->kernel.pending;
	for (size_t off = 0; off < q->len;) {
		const struct pending *p = (const struct pending *)(q->buf + off);
		struct perfev_sample smp = {
			.pid = p->pid, .tid = p->tid, .time = p->time, .cpu = p->cpu,
			.cgroup = p->cgroup, .kips = p->ips, .nkips = p->nk, .uips = p->ips + p->nk, .nuips = p->nu,
			.ustack = p->has_ret ? (const uint8_t *)&p->entry_ret : NULL,
			.ustack_size = p->has_ret ? sizeof(p->entry_ret) : 0,
		};
		count_now(s, &smp, p->event, p->weight, FT_KSTART_LATER, p->n);
		off += sizeof(*p) + ((size_t)p->nk + p->nu) * sizeof(uint64_t);
	}
	free(q->buf);
	*q = (struct ft_pending){ 0 };
}

void ft_session_kernel_wait(struct ft_session *s)
{
	if (!ft_ksyms_wait(&s->kernel, s->output.symcache))
		return;
	ft_debug("%s loaded; counting the %zu bytes of samples that waited", s->kernel.path,
		 s->kernel.pending.len);
	pending_count(s);
}

void ft_session_count_at(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
			 uint64_t weight, uint32_t kstart)
{
	if (smp->time > s->last_time)
		s->last_time = smp->time;
	if (s->kernel.state == FT_KSYMS_NONE && smp->nkips)
		ft_ksyms_start(&s->kernel, s->kernel.source ? s->kernel.source : FT_KALLSYMS,
			       s->plan.track_mmaps, s->output.symcache);
	if (s->kernel.state == FT_KSYMS_LOADING) {
		/* its process is read now, while it most likely still runs */
		ft_session_know_process(s, smp->pid, smp->time);
		know_thread(s, smp->pid, smp->tid, smp->time);
		size_t before = s->kernel.pending.len;
		if (pending_push(&s->kernel.pending, smp, event, weight) == 0) {
			ft_ksyms_queued(&s->kernel, before);
			return;
		}
		ft_session_kernel_wait(s); /* out of memory: wait for them instead */
	}
	count_now(s, smp, event, weight, kstart, 1);
}

void ft_session_count(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
		      uint64_t weight)
{
	ft_session_count_at(s, smp, event, weight, FT_KSTART_LATER);
}

void ft_session_count_cb(void *ctx, const struct perfev_sample *smp, uint32_t event,
			 uint64_t weight)
{
	ft_session_count(ctx, smp, event, weight);
}
