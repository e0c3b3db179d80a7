/* The one result writer: see result.h. */
#include <inttypes.h>
#include <string.h>
#include "collector/result.h"
#include "symbolize/symbolize.h"

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

const char *ft_result_cut_advice(const struct ft_summary *c, char *buf, size_t len)
{
	const char *m = c->ustack ? c->ustack : "fp";
	const char *file = c->cut_file ? c->cut_file : "?";
	bool known = c->cut_file && c->cut_fp >= 0;
	bool fp = known && c->cut_fp >= FT_KEEPS_FP, nofp = known && !fp;
	if (c->stack_cut_top == c->stack_cut)
		snprintf(buf, len, "the kernel copied less than it had room for, up to the stack's "
			 "top or a page it could not read then: a step in %s read beyond it, no "
			 "larger copy helps", file);
	else if (strcmp(m, "fp") == 0)
		snprintf(buf, len, "their top frames need more stack than was copied");
	else if (strcmp(m, "copy") == 0 && !nofp)
		snprintf(buf, len, "--call-graph copy,SIZE copies more; --call-graph fp walks them whole");
	else if (strcmp(m, "copy") == 0 || c->copy_size < FT_COPY_SIZE_MAX)
		snprintf(buf, len, "%s%s%s--call-graph dwarf,%u copies the most%s", nofp ? file : "",
			 nofp ? " keeps no frame pointers, so --call-graph fp would not help; " : "",
			 fp ? "--call-graph fp walks them whole, or " : "", (unsigned)FT_COPY_SIZE_MAX,
			 fp ? "" : " and walks it all with CFI");
	else
		snprintf(buf, len, "deeper than the kernel copies; %s%s", file,
			 fp ? " keeps frame pointers: --call-graph fp walks them whole" :
			 " keeps no frame pointers: --call-graph fp would not help");
	return buf;
}

/* The copy size below which a smaller copy would not help much: a sample's
 * other fields are a few hundred bytes */
#define FT_LOST_COPY_HINT 4096u

/* What lost events mean and what to do, the same in both live summaries,
 * into BUF: a large stack copy per sample fills the ring first (offcpu's
 * default copies 16 KB a switch), so a smaller one is named too. */
static const char *lost_why(const struct ft_summary *c, char *buf, size_t len)
{
	if (!c->lost)
		return "";
	if (c->sample_copy <= FT_LOST_COPY_HINT)
		return " (ring buffer full: raise --buffer-size)";
	snprintf(buf, len, " (ring buffer full: raise --buffer-size, or copy less stack: each "
		 "sample reserves its %u bytes, --call-graph dwarf,%u)", c->sample_copy,
		 FT_LOST_COPY_HINT);
	return buf;
}

void ft_result_summary(const struct ft_summary *c, const struct agg_named_stats *ns)
{
	char why[160];
	if (c->live && c->intervals) /* each interval's table was reset: the run's totals */
		ft_warn("%" PRIu64 " events counted in %" PRIu32 " interval%s (at most %zu distinct "
			"stacks in one), %" PRIu64 " lost%s", c->counted, c->intervals,
			c->intervals == 1 ? "" : "s", c->interval_stacks, c->lost,
			lost_why(c, why, sizeof(why)));
	else if (c->live)
		ft_warn("%" PRIu64 " events counted in %zu distinct stacks (%zu printed), %" PRIu64
			" lost%s", c->counted, ns->stacks_before, ns->stacks_after, c->lost,
			lost_why(c, why, sizeof(why)));
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
	if (c->outside_pidns)
		ft_warn("left out %" PRIu64 " samples of tasks outside this pid namespace (the "
			"kernel reports them as pid 0): run ftstack in the host's pid namespace "
			"(podman/docker run --pid host) to see them", c->outside_pidns);
	if (c->idle && c->child_pidns)
		ft_warn("left out %" PRIu64 " samples in kernel mode the kernel reports as pid 0: "
			"the idle task's, or tasks' outside this pid namespace (-I keeps them)",
			c->idle);
	else if (c->idle)
		ft_warn("left out %" PRIu64 " samples of the idle task (-I keeps "
			"them)", c->idle);
	if (c->empty_stacks)
		ft_warn("%" PRIu64 " events had no stack the kernel could walk",
			c->empty_stacks);
	if (c->stack_cut) {
		char advice[256];
		ft_warn("%" PRIu64 " user stacks reached the end of the %u-byte "
			"stack copy and may be cut (user stacks: %s; %s)",
			c->stack_cut, c->copy_size, c->ustack ? c->ustack : "?",
			ft_result_cut_advice(c, advice, sizeof(advice)));
	}
	if (c->jit_unnamed && c->jit_runtime)
		ft_warn("%" PRIu64 " user stacks went through JIT code no perf map names: run %s "
			"with %s", c->jit_unnamed, c->jit_runtime, c->jit_needs);
	else if (c->jit_unnamed)
		ft_warn("%" PRIu64 " user stacks went through JIT code no perf map names (a JIT "
			"names its code in /tmp/perf-PID.map when asked to)", c->jit_unnamed);
	if (c->stack_stopped)
		ft_warn("%" PRIu64 " user stacks may be cut: their walk stopped short of the "
			"process's start, most in %s (user stacks: %s; %s)", c->stack_stopped,
			c->stop_file ? c->stop_file : "code in no file",
			c->ustack ? c->ustack : "?",
			c->stop_file && c->stop_fp >= FT_KEEPS_FP ? "no CFI there, but frame pointers: "
			"--call-graph fp follows them" : "no CFI there to go on with");
	if (c->copy_enough)
		ft_warn("%" PRIu64 " of %" PRIu64 " user stacks were copied up to their stack's top, "
			"where the kernel's copy stops at a page fault (on some hosts dearer than "
			"the copy, doc/PERFORMANCE.md): --call-graph dwarf,%u would have taken "
			"each of them whole and stopped short of its top", c->copy_at_top,
			c->copy_whole, c->copy_enough);
	if (c->py_unread)
		ft_warn("%" PRIu64 " of %" PRIu64 " samples' Python frames could not be read: "
			"most because %s (their native frames are kept)", c->py_unread,
			c->py_stacks, c->py_why ? c->py_why : "?");
	const char *no_demangler = sym_demangle_load_error();
	if (no_demangler)
		ft_warn("C++ names were left mangled: %s (the C++ runtime's demangler; "
			"Debian's libstdc++6 has it)", no_demangler);
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
