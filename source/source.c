/* The one dispatcher over the two backends: the run calls these, and
 * only the backend --backend chose is opened (the perf side band too
 * under ftrace, when processes are followed). */
#include <stddef.h>
#include <sys/epoll.h>
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

int ft_sources_ready(struct ft_sources *src, void *cookie, uint32_t events, int epfd)
{
	int ret;
	if (ft_perf_source_owns(src->perf, cookie) && (events & EPOLLHUP))
		return (ret = ft_perf_source_hangup(src->perf, cookie, epfd)) < 0 ? ret :
		       FT_SOURCE_HUNGUP;
	if (ft_perf_source_owns(src->perf, cookie))
		ret = ft_perf_source_ready(src->perf, cookie);
	else if (ft_ftrace_source_owns(src->ftrace, cookie))
		ret = ft_ftrace_source_ready(src->ftrace, cookie);
	else
		return FT_SOURCE_NOT_OURS;
	return ret < 0 ? ret : FT_SOURCE_READ;
}

int ft_sources_poll(struct ft_sources *src)
{
	return ft_perf_source_drain_all(src->perf);
}

void ft_sources_stats(const struct ft_sources *src, struct ft_sources_stats *st)
{
	st->bad_records = ft_perf_source_bad_records(src->perf);
	st->full_cpu = ft_perf_source_fullest(src->perf, &st->full_pct);
	st->ring_kb = ft_perf_source_ring_kb(src->perf, st->full_cpu);
}

void ft_sources_count_lost(struct ft_sources *src)
{
	if (src->backend == FT_BACKEND_PERF)
		ft_perf_source_count_lost(src->perf);
}

void ft_sources_close(struct ft_sources *src, bool behind)
{
	ft_ftrace_source_close(src->ftrace);
	src->ftrace = NULL;
	ft_perf_source_close(src->perf, behind);
	src->perf = NULL;
}
