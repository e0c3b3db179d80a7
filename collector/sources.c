/* The run's sources, built from the session: what each source needs goes
 * into its config (source/ takes no session), and what it reads comes back
 * through the config's callback into the session's pipeline. */
#include "collector/session.h"

/* the perf source's record callback: CTX is the session */
static int on_perf_record(void *ctx, const struct perfev_record *rec, int event)
{
	return ft_session_record(ctx, rec, event);
}

static struct ft_perf_config perf_config(struct ft_session *s)
{
	return (struct ft_perf_config){
		.plan = &s->plan, .opt = s->opt, .want_user = s->want_user,
		.user_chain = s->want_user && s->ustack == FT_USTACK_FP,
		/* --through reads the kernel stack even when only user stacks are shown */
		.kernel_chain = s->want_kernel || s->kfilter.through.n,
		.user_mode_only = s->user_mode_only, .ucopy_size = s->ucopy_size,
		.uregs_mask = s->uregs_mask, .max_stack = s->max_stack, .track = s->track,
		.child = s->have_child ? s->child.pid : 0,
		.cgroup_fd = s->cgroup_open ? s->cgroup_fd : -1, .cgroup_path = s->cgroup_path,
		.lost = &s->cnt.lost, .record = on_perf_record, .ctx = s,
	};
}

static struct ft_ftrace_config ftrace_config(struct ft_session *s)
{
	return (struct ft_ftrace_config){
		.plan = &s->plan, .opt = s->opt, .child = s->have_child ? s->child.pid : 0,
		.want_kernel = s->want_kernel, .want_user = s->want_user, .self = s->self,
		.lost = &s->cnt.lost, .self_events = &s->cnt.self_events,
		.count = ft_session_count_cb, .ctx = s,
	};
}

int ft_session_open_sources(struct ft_session *s, int epfd)
{
	struct ft_perf_config pc = perf_config(s);
	struct ft_ftrace_config fc = ftrace_config(s);
	return ft_sources_open(&s->src, s->plan.backend, &pc, &fc, epfd);
}

bool ft_session_targets_gone(const struct ft_session *s)
{
	const struct ft_options *o = s->opt;
	return !s->have_child && (o->npids || o->ntids) && !ft_targets_alive(&s->targets);
}
