/* The one dispatcher over the two backends: the run calls these, and
 * only the backend --backend chose is opened (the perf side band too
 * under ftrace, when processes are followed). */
#include "collector/session.h"
#include "source/source.h"

/* The backend --backend chose; the other one is never opened. */
int ft_source_open(struct ft_session *s, int epfd)
{
	if (s->plan.backend == FT_BACKEND_PERF)
		return ft_perf_source_open(s, epfd);
	struct ft_ftrace_config c = {
		.plan = &s->plan, .opt = s->opt, .child = s->traced.have_child ? s->traced.child.pid : 0,
		.want_kernel = s->keep.want_kernel, .want_user = s->keep.want_user, .self = s->self,
		.lost = &s->cnt.lost, .self_events = &s->cnt.self_events,
		.count = ft_session_count_cb, .ctx = s,
	};
	int ret = ft_perf_source_open_sideband(s, epfd);
	return ret < 0 ? ret : ft_ftrace_source_open(&c, epfd, &s->ftrace);
}

int ft_source_enable(struct ft_session *s)
{
	if (s->plan.backend == FT_BACKEND_PERF)
		return ft_perf_source_enable(s);
	int ret = s->perf ? ft_perf_source_enable(s) : 0;
	return ret < 0 ? ret : ft_ftrace_source_enable(s->ftrace);
}

void ft_source_disable(struct ft_session *s)
{
	if (s->plan.backend == FT_BACKEND_FTRACE)
		ft_ftrace_source_disable(s->ftrace);
	ft_perf_source_disable(s);
}

int ft_source_drain_all(struct ft_session *s)
{
	/* side band first: the samples' processes must be known when counted */
	int ret = ft_perf_source_drain_all(s);
	if (ret == 0 && s->plan.backend == FT_BACKEND_FTRACE)
		ret = ft_ftrace_source_drain_all(s->ftrace);
	return ret;
}

void ft_source_count_lost(struct ft_session *s)
{
	if (s->plan.backend == FT_BACKEND_PERF)
		ft_perf_source_count_lost(s);
}

void ft_source_close(struct ft_session *s)
{
	ft_ftrace_source_close(s->ftrace);
	s->ftrace = NULL;
	ft_perf_source_close(s);
}
