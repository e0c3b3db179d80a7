/* What happens to each decoded perf record: side band goes to the process
 * history (and to offcpu), samples get their copied user stack walked and
 * go to offcpu or to counting (count.c). */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "collector/session.h"
#include "host/host.h"

static void on_sample(struct ft_session *s, const struct perfev_record *rec, int ev)
{
	struct perfev_sample walked;
	const struct perfev_sample *smp = &rec->sample;
	if (smp->pid != (uint32_t)s->self) /* ftstack's own samples are dropped unwalked */
		smp = ft_ustack_walk(&s->ustacks, s->procs, smp, &walked);
	if (s->offcpu) {
		/* every switch matters: it may switch a traced thread back in */
		if (ev >= 0)
			ft_offcpu_sample(s->offcpu, smp, (uint32_t)ev);
		return;
	}
	if (smp->pid == (uint32_t)s->self) {
		s->cnt.self_events++;
		return;
	}
	if (ev < 0)
		return;
	if (s->opt->cmd == FT_PROFILE && smp->pid == 0 && !s->opt->idle) {
		s->cnt.idle++;
		return;
	}
	ft_session_count(s, smp, (uint32_t)ev, s->opt->cmd == FT_PROFILE ? smp->period : 1);
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
		if (s->keep.need_procs && (rec->mmap2.prot & PROT_EXEC))
			sym_procs_mmap(s->procs, rec->pid, rec->time, rec->mmap2.start,
				       rec->mmap2.len, rec->mmap2.pgoff, true, rec->mmap2.filename);
		break;
	case PERFEV_COMM:
		if (s->keep.need_procs && (rec->pid == rec->tid || s->keep.key_tid))
			sym_procs_comm(s->procs, rec->tid, rec->time, rec->comm.comm,
				       rec->comm.exec && rec->pid == rec->tid);
		break;
	case PERFEV_FORK:
		if (rec->pid != rec->task.ppid && s->keep.need_procs) /* a process */
			sym_procs_fork(s->procs, rec->pid, rec->task.ppid, rec->task.ptid, rec->time);
		else if (rec->pid == rec->task.ppid && s->keep.key_tid) /* a thread */
			sym_procs_thread(s->procs, rec->pid, rec->tid, rec->task.ptid, rec->time);
		break;
	case PERFEV_EXIT:
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
