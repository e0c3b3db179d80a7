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
		.maps_alone = ft_ring_maps_alone(),
		.plan = &s->plan, .opt = s->opt, .want_user = s->keep.want_user,
		.user_chain = s->keep.want_user && s->ustacks.method == FT_USTACK_FP,
		/* --through reads the kernel stack even when only user stacks are shown */
		.kernel_chain = s->keep.want_kernel || s->kernel.filter.through.n,
		.user_mode_only = s->keep.user_mode_only, .ucopy_size = s->ustacks.copy_size,
		.uregs_mask = s->ustacks.regs_mask, .max_stack = s->keep.max_stack,
		.track = s->keep.track,
		/* profile's rate is the run's own (at most 1024 a second a CPU
		 * here): a wakeup a sample costs little, and python/ reads each
		 * sample's frames as soon as it can */
		.wake_each = s->ustacks.py && s->ustacks.follow,
		.child = s->traced.have_child ? s->traced.child.pid : 0,
		.host = &s->host,
		.cgroup_fd = s->cgroup.open ? s->cgroup.fd : -1, .cgroup_path = s->cgroup.path,
		.lost = &s->cnt.lost, .record = on_perf_record, .ctx = s,
	};
}

static struct ft_ftrace_config ftrace_config(struct ft_session *s)
{
	return (struct ft_ftrace_config){
		.plan = &s->plan, .opt = s->opt, .child = s->traced.have_child ? s->traced.child.pid : 0,
		.want_kernel = s->keep.want_kernel, .want_user = s->keep.want_user, .self = s->self,
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
	return !s->traced.have_child && (o->npids || o->ntids) &&
	       !ft_targets_alive(&s->traced.targets);
}
