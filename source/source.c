/* The one dispatcher over the two backends: the run calls these, and
 * only the backend --backend chose is opened (the perf side band too
 * under ftrace, when processes are followed). */
#include <stddef.h>
#include "source/source.h"

int ft_sources_open(struct ft_sources *src, enum ft_backend backend,
		    const struct ft_perf_config *pc, const struct ft_ftrace_config *fc, int epfd)
{
	*src = (struct ft_sources){ .backend = backend };
	if (backend == FT_BACKEND_PERF)
		return ft_perf_source_open(pc, epfd, &src->perf);
	int ret = pc->track ? ft_perf_source_open_sideband(pc, epfd, &src->perf) : 0;
	return ret < 0 ? ret : ft_ftrace_source_open(fc, epfd, &src->ftrace);
}

int ft_sources_enable(struct ft_sources *src)
{
	int ret = src->perf ? ft_perf_source_enable(src->perf) : 0;
	if (ret == 0 && src->backend == FT_BACKEND_FTRACE)
		ret = ft_ftrace_source_enable(src->ftrace);
	return ret;
}

void ft_sources_disable(struct ft_sources *src)
{
	if (src->backend == FT_BACKEND_FTRACE)
		ft_ftrace_source_disable(src->ftrace);
	ft_perf_source_disable(src->perf);
}

int ft_sources_drain_all(struct ft_sources *src)
{
	int ret = ft_perf_source_drain_all(src->perf);
	if (ret == 0 && src->backend == FT_BACKEND_FTRACE)
		ret = ft_ftrace_source_drain_all(src->ftrace);
	return ret;
}

void ft_sources_count_lost(struct ft_sources *src)
{
	if (src->backend == FT_BACKEND_PERF)
		ft_perf_source_count_lost(src->perf);
}

void ft_sources_close(struct ft_sources *src)
{
	ft_ftrace_source_close(src->ftrace);
	src->ftrace = NULL;
	ft_perf_source_close(src->perf);
	src->perf = NULL;
}
