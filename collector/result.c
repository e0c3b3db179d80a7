/* The one result writer: see result.h. */
#include <inttypes.h>
#include <string.h>
#include "collector/result.h"

int ft_result_write(struct agg_named *named, const struct ft_options *o,
		    const struct out_options *oo, bool by_weight, const char *event_label,
		    FILE *out, struct agg_named_stats *st)
{
	bool offcpu = o->cmd == FT_OFFCPU;
	struct agg_filter f = {
		.min_count = offcpu ? 0 : o->min_count, /* offcpu's -m is --min-block */
		.min_weight = offcpu ? o->min_total_us : 0,
		.top = o->top,
		.by_weight = by_weight,
		.exclude = o->excludes,
	};
	const struct agg_named_stack *stacks;
	size_t n = agg_named_finish(named, &f, &stacks, st);
	struct out_totals tot = { .named = st, .event_label = event_label };
	return out_write(out, oo, stacks, n, &tot);
}

/* What lost events mean and what to do, the same in both live summaries */
static const char *lost_why(uint64_t lost)
{
	return lost ? " (ring buffer full: raise --buffer-size)" : "";
}

void ft_result_summary(const struct ft_summary *c, const struct agg_named_stats *ns)
{
	if (c->live && c->intervals) /* each interval's table was reset: the run's totals */
		ft_warn("%" PRIu64 " events counted in %" PRIu32 " interval%s (at most %zu distinct "
			"stacks in one), %" PRIu64 " lost%s", c->counted, c->intervals,
			c->intervals == 1 ? "" : "s", c->interval_stacks, c->lost,
			lost_why(c->lost));
	else if (c->live)
		ft_warn("%" PRIu64 " events counted in %zu distinct stacks (%zu printed), %" PRIu64
			" lost%s", c->counted, ns->stacks_before, ns->stacks_after, c->lost,
			lost_why(c->lost));
	else
		ft_warn("%" PRIu64 " events in %zu distinct stacks (%zu printed)",
			ns->count_before, ns->stacks_before, ns->stacks_after);
	if (c->weighted)
		ft_warn("weighted by period: %" PRIu64 " in all (--weight samples "
			"counts samples instead)", ns->weight_before);
	if (c->throttled)
		ft_warn("the kernel throttled sampling %" PRIu64 " times "
			"(kernel.perf_event_max_sample_rate)", c->throttled);
	if (c->dropped)
		ft_warn("%" PRIu64 " events not counted: --max-stacks %zu distinct "
			"stacks reached", c->dropped, c->max_stacks);
	if (c->self_mmap || c->self_events)
		ft_warn("left out %" PRIu64 " events caused by ftstack's mmap "
			"tracking (perf_event_mmap) and %" PRIu64 " of ftstack itself",
			c->self_mmap, c->self_events);
	if (c->through_miss)
		ft_warn("left out %" PRIu64 " events whose kernel stack does not "
			"pass through %s", c->through_miss, c->through);
	if (c->idle)
		ft_warn("left out %" PRIu64 " samples of the idle task (-I keeps "
			"them)", c->idle);
	if (c->empty_stacks)
		ft_warn("%" PRIu64 " events had no stack the kernel could walk",
			c->empty_stacks);
	if (c->stack_cut)
		ft_warn("%" PRIu64 " user stacks reached the end of the %u-byte "
			"stack copy and may be cut (user stacks: %s; %s)",
			c->stack_cut, c->copy_size, c->ustack ? c->ustack : "?",
			!c->ustack || strcmp(c->ustack, "fp") == 0 ?
			"their top frames need more stack than was copied" :
			strcmp(c->ustack, "dwarf") == 0 ? "--call-graph dwarf,SIZE copies more" :
			"--call-graph copy,SIZE copies more; --call-graph fp walks them whole");
	if (c->filtered)
		ft_warn("%" PRIu64 " off-CPU intervals filtered out "
			"(--state, --min-block, --max-block, -u/-k)", c->filtered);
	if (c->open_at_end)
		ft_warn("%" PRIu64 " threads were still off CPU at the end; "
			"counted up to it", c->open_at_end);
	if (c->live && c->full_cpu >= 0 && c->full_pct >= 75)
		ft_warn("the ring of CPU %d came close to full: %u%% of its %zu KB waited "
			"to be read at once (--buffer-size KB makes it bigger)", c->full_cpu,
			c->full_pct, c->ring_kb);
	if (c->bad_records)
		ft_warn("%" PRIu64 " records could not be decoded", c->bad_records);
	if (ns->excluded)
		ft_warn("%zu stacks excluded by -x", ns->excluded);
}
