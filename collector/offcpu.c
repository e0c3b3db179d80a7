/* offcpu: time each thread spends switched out, by the stack it was switched
 * out with (bcc offcputime without BPF).
 *  - The switch-out is the sched:sched_switch sample: it is taken in the
 *    leaving task's context, so it carries that task's stack.
 *  - The switch-in is the perf switch record ("in"), written in the incoming
 *    task's context (PERF_RECORD_SWITCH per task with -c/-p/-L, else
 *    PERF_RECORD_SWITCH_CPU_WIDE); sched_switch's next_pid is not relied on
 *    (doc/ARCHITECTURE.md says why).
 *  - Rings are drained one CPU at a time, so a thread's switches arrive out
 *    of order when it moves between CPUs: each thread keeps its switches
 *    sorted by time, and a switch-out is paired with the switch-in right
 *    after it only once every ring has been read past both
 *    (ft_offcpu_settle, perf's finished-round rule).
 *  - Switch-outs that --state, -u or -k leave out are kept without a stack,
 *    so their switch-ins have a partner and end nothing else.
 *  - A switch-out after the thread's EXIT record (do_task_dead) ends nothing.
 *  - A thread that exited is forgotten once every ring was read well past
 *    its exit (symbolize's grace): the table holds the threads that live.
 *  - Each switch-out's stacks wait in a buffer from a pool (stack_pool.h),
 *    not one malloc and free per switch: a busy system switches out
 *    hundreds of thousands of times a second.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate.h"
#include "mem/mem.h"
#include "collector/offcpu.h"
#include "collector/stack_pool.h"
#include "host/host.h"
#include "symbolize/symbolize.h"
#include "tracefs/tracefs.h"

/* unmatched switches kept per thread: a switch whose partner was lost
 * (ring overflow) stays until this many newer ones push it out */
#define OFFCPU_PENDING_MAX 65536

struct switch_ev {
	uint64_t time;
	bool out;
	bool filtered;       /* a switch-out left out: pairs, counts nothing */
	uint32_t pid;        /* tgid of a switch-out */
	uint64_t cgroup;     /* its cgroup2 id (--per-cgroup) */
	uint64_t *ips;       /* switch-out: kernel then user addresses */
	uint32_t nk, nu;
};

struct thread {
	uint32_t tid;
	bool exited;         /* an EXIT record seen, at exit_time */
	uint8_t kind;        /* -u/-k: 0 not read yet, 1 user, 2 kernel thread */
	uint64_t exit_time;
	uint32_t n, cap;
	struct switch_ev *ev; /* by time */
};

struct ft_offcpu {
	struct ft_offcpu_config c;
	struct ft_offcpu_stats st;
	struct thread *t;    /* the threads, in no order; item i + 1 of tids */
	uint32_t n, cap;
	struct agg_index tids;
	uint32_t off_prev_pid, off_prev_state;
	uint32_t size_prev_state;
	uint32_t event;
	struct ft_stack_pool pool; /* the switch-outs' ips */
};

/* Knuth's multiplier: tids are dense, and its low bits place them apart */
static uint32_t tid_hash(uint32_t tid)
{
	return tid * 2654435761u;
}

/* Thread TID, NULL when it is new and CREATE is false, or no memory.
 * Creating one may move the others (the pointer lives until the next). */
static struct thread *thread_get(struct ft_offcpu *oc, uint32_t tid, bool create)
{
	struct agg_probe p;
	if (create && agg_index_reserve(&oc->tids) < 0)
		return NULL;
	for (uint32_t it = agg_index_first(&oc->tids, tid_hash(tid), &p); it;
	     it = agg_index_next(&oc->tids, &p))
		if (oc->t[it - 1].tid == tid)
			return &oc->t[it - 1];
	if (!create || oc->n >= UINT32_MAX - 1 || MEM_GROW(oc->t, oc->cap, (size_t)oc->n + 1, 1024) < 0)
		return NULL;
	oc->t[oc->n] = (struct thread){ .tid = tid };
	agg_index_put(&oc->tids, &p, oc->n + 1);
	return &oc->t[oc->n++];
}

static uint64_t field(const void *raw, uint32_t raw_size, uint32_t off, uint32_t size)
{
	uint64_t v = 0;
	/* no raw record (the context-switch event) is no field at all */
	if (!raw || size == 0 || off + size > raw_size || size > 8)
		return 0;
	memcpy(&v, (const uint8_t *)raw + off, size); /* little-endian: low bytes first */
	return v;
}

int ft_offcpu_alloc(const char *tracefs, const struct ft_offcpu_config *c, struct ft_offcpu **out)
{
	if (!tracefs || !tracefs[0]) {
		/* the context-switch event: no fields, the sampled task is prev */
		struct ft_offcpu *oc = calloc(1, sizeof(*oc));
		if (!oc)
			return -ENOMEM;
		oc->c = *c;
		*out = oc;
		return 0;
	}
	struct tfs_field *f = NULL;
	int n = tfs_event_fields(tracefs, "sched", "sched_switch", &f);
	struct ft_offcpu *oc = calloc(1, sizeof(*oc));
	if (!oc || n < 0) {
		free(f);
		free(oc);
		return n < 0 ? n : -ENOMEM;
	}
	const struct tfs_field *pp = tfs_field_find(f, n, "prev_pid");
	const struct tfs_field *ps = tfs_field_find(f, n, "prev_state");
	if (!pp || !ps) {
		free(f);
		free(oc);
		return -ENOENT;
	}
	oc->off_prev_pid = pp->offset;
	oc->off_prev_state = ps->offset;
	oc->size_prev_state = ps->size;
	free(f);
	oc->c = *c;
	*out = oc;
	return 0;
}

/* Whether thread TID of process PID is one the options ask for. */
static bool wanted(const struct ft_offcpu *oc, uint32_t pid, uint32_t tid)
{
	const struct ft_options *o = oc->c.opt;
	if (pid == 0 || pid == (uint32_t)oc->c.self)
		return false; /* the idle task is not blocked; ftstack is not traced */
	if (oc->c.any_task)
		return true; /* per-task events the command's children inherit */
	if (o->npids) {
		for (int i = 0; i < o->npids; i++)
			if ((uint32_t)o->pids[i] == pid)
				return true;
		return false;
	}
	if (o->ntids) {
		for (int i = 0; i < o->ntids; i++)
			if ((uint32_t)o->tids[i] == tid)
				return true;
		return false;
	}
	return true;
}

/* Kernel threads have PF_KTHREAD in /proc/PID/stat's flags; read once per
 * thread, not per switch. */
static bool is_kthread(const struct ft_offcpu *oc, struct thread *t)
{
	struct host_stat st;
	if (t->kind)
		return t->kind == 2;
	if (host_stat(oc->c.proc_root, (pid_t)t->tid, &st) < 0)
		return false; /* gone: asked again next time */
	t->kind = st.flags & HOST_PF_KTHREAD ? 2 : 1;
	return t->kind == 2;
}

static void count_interval(struct ft_offcpu *oc, uint32_t tid, const struct switch_ev *o,
			   uint64_t end, bool open)
{
	uint64_t us = (end - o->time) / 1000;
	const struct ft_options *opt = oc->c.opt;
	if (us < opt->min_block_us || (opt->max_block_us && us > opt->max_block_us)) {
		oc->st.filtered++;
		return;
	}
	struct perfev_sample smp = {
		.pid = o->pid, .tid = tid, .time = o->time, .cgroup = o->cgroup,
		.kips = o->ips, .nkips = o->nk, .uips = o->ips + o->nk, .nuips = o->nu,
	};
	if (open)
		oc->st.open_at_end++;
	oc->c.count(oc->c.ctx, &smp, oc->event, us);
}

/* Gives E's stacks back to the pool. */
static void release(struct ft_offcpu *oc, const struct switch_ev *e)
{
	ft_stack_pool_put(&oc->pool, e->ips, e->nk + e->nu + 1);
}

static void drop(struct ft_offcpu *oc, struct thread *t, uint32_t i)
{
	release(oc, &t->ev[i]);
	memmove(&t->ev[i], &t->ev[i + 1], (size_t)(t->n - i - 1) * sizeof(t->ev[0]));
	t->n--;
}

/* Room for one more switch: the array grows, up to OFFCPU_PENDING_MAX,
 * beyond which the oldest (whose partner was lost) goes. */
static int make_room(struct ft_offcpu *oc, struct thread *t)
{
	if (t->n == OFFCPU_PENDING_MAX)
		drop(oc, t, 0);
	return MEM_GROW(t->ev, t->cap, (size_t)t->n + 1, 8);
}

/* Inserts E in time order; ft_offcpu_settle pairs. Takes E's ips. */
static void add_switch(struct ft_offcpu *oc, struct thread *t, struct switch_ev *e)
{
	if (make_room(oc, t) < 0) {
		release(oc, e);
		return;
	}
	uint32_t i = t->n;
	while (i > 0 && t->ev[i - 1].time > e->time)
		i--;
	memmove(&t->ev[i + 1], &t->ev[i], (size_t)(t->n - i) * sizeof(t->ev[0]));
	t->ev[i] = *e;
	t->n++;
}

/* Pairs T's switches older than HORIZON in time order: a switch-out and
 * the switch-in right after it are an interval. A switch-in with no
 * switch-out before it (off CPU since before tracing, or its switch-out
 * lost) and a switch-out followed by another (its switch-in lost) end
 * nothing. A last switch-out waits for its switch-in. */
static void settle_thread(struct ft_offcpu *oc, struct thread *t, uint64_t horizon)
{
	uint32_t i = 0;
	while (i < t->n && t->ev[i].time < horizon) {
		const struct switch_ev *e = &t->ev[i], *next = i + 1 < t->n ? e + 1 : NULL;
		if (next && next->time >= horizon)
			next = NULL;
		if (e->out && !next)
			break;
		if (e->out && !next->out) {
			if (!e->filtered)
				count_interval(oc, t->tid, e, next->time, false);
			i += 2;
		} else {
			i++;
		}
	}
	for (uint32_t j = 0; j < i; j++)
		release(oc, &t->ev[j]);
	memmove(&t->ev[0], &t->ev[i], (size_t)(t->n - i) * sizeof(t->ev[0]));
	t->n -= i;
}

/* Whether T exited long enough before HORIZON that nothing of it can come:
 * its last switch-out (after its EXIT record) is in, what is left of it
 * pairs with nothing, and no new thread took its tid since. */
static bool gone_for_good(const struct thread *t, uint64_t horizon)
{
	uint64_t end = t->exit_time + SYM_EXIT_GRACE_NS;
	return t->exited && end > t->exit_time && horizon > end && (!t->n || t->ev[t->n - 1].time <= end);
}

/* Drops the threads gone for good: the array is compacted and indexed
 * again (its slots fewer after many exits), so it holds the threads that
 * live. */
static void forget_exited(struct ft_offcpu *oc, uint64_t horizon)
{
	uint32_t keep = 0;
	for (uint32_t i = 0; i < oc->n; i++)
		keep += !gone_for_good(&oc->t[i], horizon);
	if (keep == oc->n || agg_index_reset(&oc->tids, keep) < 0)
		return; /* none gone, or kept until a later settle */
	keep = 0;
	for (uint32_t i = 0; i < oc->n; i++) {
		struct thread *t = &oc->t[i];
		if (gone_for_good(t, horizon)) {
			for (uint32_t j = 0; j < t->n; j++)
				release(oc, &t->ev[j]);
			free(t->ev);
			continue;
		}
		oc->t[keep] = *t;
		agg_index_add(&oc->tids, tid_hash(t->tid), ++keep);
	}
	oc->n = keep;
	uint32_t cap = oc->cap;
	while (cap / 2 >= 1024 && (keep + 1) * 4 <= cap / 2)
		cap /= 2;
	struct thread *nt = cap < oc->cap ? realloc(oc->t, cap * sizeof(*nt)) : NULL;
	if (nt) {
		oc->t = nt;
		oc->cap = cap;
	}
}

void ft_offcpu_settle(struct ft_offcpu *oc, uint64_t horizon)
{
	for (uint32_t i = 0; oc && i < oc->n; i++)
		if (oc->t[i].n)
			settle_thread(oc, &oc->t[i], horizon);
	if (oc)
		forget_exited(oc, horizon);
}

/* Whether a switch-out at TIME is the exiting thread's last one
 * (do_task_dead, after its EXIT record), which ends nothing: one after the
 * exit with no switch-in between (a new thread with the old tid starts
 * with a switch-in). */
static bool dead_switch_out(const struct thread *t, uint64_t time)
{
	if (!t->exited || time < t->exit_time)
		return false;
	for (uint32_t i = 0; i < t->n; i++)
		if (!t->ev[i].out && t->ev[i].time > t->exit_time && t->ev[i].time < time)
			return false;
	return true;
}

void ft_offcpu_sample(struct ft_offcpu *oc, const struct perfev_sample *smp, uint32_t event)
{
	const struct ft_options *o = oc->c.opt;
	/* without RAW (no --state) the sampled task is the one switched out */
	uint32_t prev = smp->raw ? (uint32_t)field(smp->raw, smp->raw_size, oc->off_prev_pid, 4)
				 : smp->tid;
	uint64_t state = field(smp->raw, smp->raw_size, oc->off_prev_state, oc->size_prev_state);
	struct thread *t;
	oc->event = event;
	if (prev != smp->tid || !wanted(oc, smp->pid, prev))
		return;
	if (!(t = thread_get(oc, prev, true)) || dead_switch_out(t, smp->time))
		return;
	struct switch_ev out = { .time = smp->time, .out = true, .pid = smp->pid,
				 .cgroup = smp->cgroup,
				 .nk = smp->nkips, .nu = smp->nuips };
	if ((o->state >= 0 && state != (uint64_t)o->state) ||
	    ((o->user_threads || o->kernel_threads) && is_kthread(oc, t) != o->kernel_threads)) {
		oc->st.filtered++;
		out.filtered = true;
		out.nk = out.nu = 0;
		add_switch(oc, t, &out);
		return;
	}
	out.ips = ft_stack_pool_get(&oc->pool, out.nk + out.nu + 1);
	if (!out.ips)
		return;
	if (out.nk) /* -U: no kernel callchain at all */
		memcpy(out.ips, smp->kips, out.nk * sizeof(uint64_t));
	if (out.nu)
		memcpy(out.ips + out.nk, smp->uips, out.nu * sizeof(uint64_t));
	add_switch(oc, t, &out);
}

void ft_offcpu_switch_in(struct ft_offcpu *oc, uint32_t tid, uint64_t time)
{
	/* created when unknown: its switch-out may still be in another CPU's ring */
	struct thread *t = tid ? thread_get(oc, tid, true) : NULL;
	struct switch_ev in = { .time = time, .out = false };
	if (t)
		add_switch(oc, t, &in);
}

void ft_offcpu_exit(struct ft_offcpu *oc, uint32_t tid, uint64_t time)
{
	struct thread *t = oc ? thread_get(oc, tid, true) : NULL;
	if (!t)
		return;
	t->exited = true;
	t->exit_time = time;
	t->kind = 0; /* a new thread may get the tid */
	/* its last switch-out may already be here (read from another ring) */
	for (uint32_t i = t->n; i > 0; i--)
		if (t->ev[i - 1].out && dead_switch_out(t, t->ev[i - 1].time)) {
			drop(oc, t, i - 1);
			break;
		}
}

void ft_offcpu_finish(struct ft_offcpu *oc, uint64_t end)
{
	ft_offcpu_settle(oc, UINT64_MAX); /* every ring is read */
	for (uint32_t i = 0; oc && i < oc->n; i++) {
		struct thread *t = &oc->t[i];
		/* a switch-out with nothing after it: still off CPU now */
		const struct switch_ev *last = t->n ? &t->ev[t->n - 1] : NULL;
		if (last && last->out && !last->filtered && last->time < end)
			count_interval(oc, t->tid, last, end, true);
	}
}

void ft_offcpu_stats(const struct ft_offcpu *oc, struct ft_offcpu_stats *st)
{
	*st = oc ? oc->st : (struct ft_offcpu_stats){ 0 };
}

size_t ft_offcpu_threads(const struct ft_offcpu *oc)
{
	return oc ? oc->n : 0;
}

void ft_offcpu_free(struct ft_offcpu *oc)
{
	if (!oc)
		return;
	for (uint32_t i = 0; i < oc->n; i++) {
		for (uint32_t j = 0; j < oc->t[i].n; j++)
			release(oc, &oc->t[i].ev[j]);
		free(oc->t[i].ev);
	}
	ft_stack_pool_clear(&oc->pool);
	agg_index_clear(&oc->tids);
	free(oc->t);
	free(oc);
}
