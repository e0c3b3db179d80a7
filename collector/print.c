/* From counted address stacks to what a person reads: name every frame
 * (once per distinct address), merge stacks that name the same path, filter
 * and order them, write the format, then the summary on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collector/result.h"
#include "collector/session.h"
#include "source/source.h"

/* The comm of E's thread (else its process) in PROCS when it was counted. */
static const char *entry_comm(const struct sym_procs *procs, const struct agg_entry *e)
{
	const char *comm = NULL;
	if (e->tid && e->tid != e->pid && procs)
		comm = sym_procs_comm_at(procs, e->tid, e->first_time);
	if (!comm && e->pid && procs)
		comm = sym_procs_comm_at(procs, e->pid, e->first_time);
	if (!comm)
		comm = e->pid ? "[unknown]" : "swapper"; /* pid 0 is the idle task */
	return comm;
}

/* A kernel function event's leaf is that function; kallsyms may list other
 * names at its address (6.1: __ia32_sys_getppid = __x64_sys_getppid), and
 * the name the person asked for is the one to print. */
static void name_kfunc_leaf(struct ft_session *s, const struct agg_entry *e, const char **frames)
{
	const struct ft_event *ev = &s->plan.events[e->event];
	uint64_t start, end;
	if (ev->kfunc && e->nkstack && !s->opt->offsets && !s->opt->addresses && s->kernel.syms &&
	    sym_kernel_range(s->kernel.syms, ev->name, &start, &end) == 0 &&
	    e->kstack[0] >= start && e->kstack[0] < end)
		frames[0] = ev->name;
}

/* Names one entry's frames into FRAMES (room for both stacks). */
static void name_frames(struct ft_session *s, const struct agg_entry *e, const char **frames)
{
	for (uint32_t i = 0; i < e->nkstack; i++)
		frames[i] = sym_cache_name(s->output.symcache, 0, e->first_time, e->kstack[i],
					   true);
	name_kfunc_leaf(s, e, frames);
	for (uint32_t i = 0; i < e->nustack; i++) {
		const char *py = py_frame_name(s->ustacks.py, e->ustack[i]); /* a Python function */
		frames[e->nkstack + i] = py ? py : sym_cache_name(s->output.symcache, e->pid,
								  e->first_time, e->ustack[i], i == 0);
	}
}

/* --per-cgroup: the path of the entry's cgroup in NAMES (into BUF when the
 * id was never named: a cgroup gone before the run began naming them);
 * NULL without NAMES. */
static const char *entry_cgroup(const struct host_cgroup_names *names, const struct agg_entry *e,
				char *buf, size_t len)
{
	if (!names)
		return NULL;
	const char *p = host_cgroup_names_find(names, e->cgroup);
	if (p)
		return p;
	snprintf(buf, len, "[cgroup %llu]", (unsigned long long)e->cgroup);
	return buf;
}

int ft_build_named(struct ft_session *s, struct agg_named *named, bool comm)
{
	const struct ft_options *o = s->opt;
	const struct agg_entry *ents;
	size_t n = agg_table_entries(s->agg, &ents);
	const char **frames = malloc(2 * AGG_MAX_DEPTH * sizeof(*frames));
	int ret = frames ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && ret == 0; i++) {
		const struct agg_entry *e = &ents[i];
		char cgbuf[48];
		name_frames(s, e, frames);
		struct agg_named_stack ns = {
			.event = e->event,
			.pid = o->per_process ? e->pid : 0,
			.comm = comm ? entry_comm(s->procs, e) : NULL,
			.cgroup = entry_cgroup(o->per_cgroup ? &s->cgroup.names : NULL, e, cgbuf,
					       sizeof(cgbuf)),
			.frames = frames,
			.nkframes = e->nkstack,
			.nuframes = e->nustack,
			.count = e->count,
			.weight = e->weight,
		};
		ret = agg_named_add(named, &ns);
	}
	free(frames);
	return ret;
}

static void out_options_for(const struct ft_session *s, struct out_options *oo,
			    const char **names, bool *in_stack)
{
	const struct ft_options *o = s->opt;
	for (int i = 0; i < s->plan.nevents; i++) {
		names[i] = s->plan.events[i].name;
		in_stack[i] = s->plan.events[i].in_stack;
	}
	*oo = (struct out_options){
		.format = o->format,
		.mode = o->cmd == FT_PROFILE ? OUT_MODE_PROFILE :
			o->cmd == FT_OFFCPU ? OUT_MODE_OFFCPU : OUT_MODE_COUNT,
		.delimiter = o->delimiter,
		.annotate = o->annotate,
		.per_process = o->per_process,
		.comm_pid = o->pid_frame,
		.show_comm = out_format_shows_comm(o->format),
		.event_names = names,
		.nevents = (uint32_t)s->plan.nevents,
		.event_frame = s->plan.nevents > 1,
		.event_in_stack = in_stack,
		.period_ns = s->output.period_ns,
		.title = s->output.title,
	};
}

static int write_result(struct ft_session *s, struct agg_named_stats *st)
{
	const struct ft_options *o = s->opt;
	struct agg_named *named = NULL;
	const char **names = calloc(s->plan.nevents + 1, sizeof(*names));
	bool *in_stack = calloc(s->plan.nevents + 1, sizeof(*in_stack));
	int ret = names && in_stack ? agg_named_alloc(&named) : -ENOMEM;
	if (ret == 0)
		ret = ft_build_named(s, named, out_needs_comm(o->format, o->per_process));
	if (ret == 0) {
		struct out_options oo;
		out_options_for(s, &oo, names, in_stack);
		ret = ft_result_write(named, s->opt, &oo, s->opt->cmd == FT_OFFCPU,
				      s->plan.nevents == 1 ? s->plan.events[0].label : "event",
				      s->output.file, st);
	}
	agg_named_free(named);
	free(names);
	free(in_stack);
	return ret;
}

int ft_print_result(struct ft_session *s, FILE *out)
{
	struct agg_named_stats st = { 0 };
	s->output.file = out;
	ft_session_kernel_wait(s); /* samples may wait for the kernel's symbols */
	int ret = write_result(s, &st);
	if (ret == 0 && fflush(out) != 0)
		ret = -errno;
	ft_print_summary(s, &st);
	return ret;
}

/* An interval was printed: its DROPPED and STACKS join IV's totals; COUNTED
 * is the run's count at its end. */
static void interval_printed(struct ft_interval_stats *iv, uint64_t dropped, size_t stacks,
			     uint64_t counted)
{
	iv->printed++;
	iv->dropped += dropped;
	if (stacks > iv->most_stacks)
		iv->most_stacks = stacks;
	iv->counted_at_reset = counted;
}

/* The intervals of IV the summary tells and the most stacks one had: with
 * -i (ON), what this print had is the last interval, unless it is empty
 * (the run ended right after an interval was printed); COUNTED and STACKS
 * are the run's count and this print's stacks. */
static uint32_t interval_totals(const struct ft_interval_stats *iv, bool on, uint64_t counted,
				size_t stacks, size_t *most)
{
	uint32_t n = iv->printed;
	*most = iv->most_stacks;
	if (on && (counted > iv->counted_at_reset || !n)) {
		n++;
		if (stacks > *most)
			*most = stacks;
	}
	return n;
}

int ft_print_interval(struct ft_session *s)
{
	ft_session_kernel_wait(s);
	if (s->opt->timestamp) {
		time_t now = time(NULL);
		struct tm tm;
		char buf[32];
		strftime(buf, sizeof(buf), "%H:%M:%S", localtime_r(&now, &tm));
		fprintf(s->output.file, "%s\n", buf);
	}
	struct agg_named_stats st = { 0 };
	struct agg_stats as;
	int ret = write_result(s, &st);
	if (ret == 0)
		ret = fflush(s->output.file) == 0 ? 0 : -errno;
	if (ret == 0 && s->opt->format == OUT_TEXT)
		fputc('\n', s->output.file);
	/* the summary at the end tells the run's totals: kept before the reset */
	agg_table_stats(s->agg, &as);
	interval_printed(&s->intervals, as.dropped, st.stacks_before, s->cnt.counted);
	agg_table_reset(s->agg);
	return ret;
}

/* Whether the uprobe entry-caller fix ran: the tests show with it that the
 * caller came from [sp] on kernels that do not add it themselves. */
static void debug_entry_callers(const struct ft_session *s)
{
	for (int i = 0; i < s->plan.nevents; i++) {
		if (!s->plan.events[i].entry_fix)
			continue;
		ft_debug("uprobe entry callers put back from [sp]: %" PRIu64 "%s",
			 s->cnt.entry_callers, s->cnt.entry_callers ? "" :
			 " (the kernel adds them itself, or no user stack)");
		return;
	}
}

void ft_print_summary(struct ft_session *s, const struct agg_named_stats *ns)
{
	const struct ft_counters *c = &s->cnt;
	const struct ft_options *o = s->opt;
	struct ft_offcpu_stats os;
	struct agg_stats as;
	struct ft_sources_stats ss;
	ft_offcpu_stats(s->offcpu, &os);
	ft_sources_stats(&s->src, &ss);
	agg_table_stats(s->agg, &as);
	size_t most;
	uint32_t intervals = interval_totals(&s->intervals, o->interval > 0, c->counted,
					     ns->stacks_before, &most);
	struct ft_summary sm = {
		.live = true, .counted = c->counted, .lost = c->lost, .throttled = c->throttled,
		.dropped = s->intervals.dropped + as.dropped, .max_stacks = o->max_stacks,
		.intervals = intervals, .interval_stacks = most,
		.self_mmap = c->self_mmap, .self_events = c->self_events,
		.through_miss = c->through_miss, .through = s->plan.through_name,
		.idle = c->idle, .empty_stacks = c->empty_stacks,
		.outside_pidns = c->outside_pidns, .child_pidns = s->keep.child_pidns,
		.filtered = os.filtered, .open_at_end = os.open_at_end,
		.bad_records = ss.bad_records, .ring_kb = ss.ring_kb,
		.full_cpu = ss.full_cpu, .full_pct = ss.full_pct,
		/* the perf backend's samples carry it (the ftrace backend's never) */
		.sample_copy = s->plan.backend == FT_BACKEND_PERF && s->keep.want_user ?
			       s->ustacks.copy_size : 0,
	};
	ft_ustack_summary(&s->ustacks, &sm);
	if (sym_kernel_read_live(s->kernel.syms))
		ft_debug("kernel symbols: %s read too, for addresses the saved copy "
			 "does not name alone (code made since it was saved, a module's last function)",
			 s->kernel.path);
	ft_result_summary(&sm, ns);
	debug_entry_callers(s);
	ft_debug("samples counted as the last one again (no walk, filter or hash): %" PRIu64
		 " of %" PRIu64, s->repeat.hits, c->counted);
}
