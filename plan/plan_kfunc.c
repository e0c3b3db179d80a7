/* Kernel functions as events: `func`, `p::func`, `kprobe:func`, globs and
 * regexes. Mechanism, best first: the kprobe PMU (nothing to clean up); a
 * kprobe event in tracefs kprobe_events (group ftstack_<pid>, undone at exit);
 * where kprobes are missing, the function tracer with func_stack_trace in the
 * ftrace backend's private instance; else a tracepoint that fires inside the function,
 * kept only when its kernel stack passes through the function and cut there
 * (doc/KFUNC.md says when that is exact). */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plan/internal.h"
#include "plan/spec.h"
#include "host/host.h"

#define FT_MAX_PROBES_DEFAULT 1000

/* Tracepoints that fire once inside each call of these functions, on the
 * call's own stack. 6.10+ names (_noprof) and older ones side by side. */
static const struct { const char *func, *system, *event; } fallback[] = {
	{ "__kmalloc", "kmem", "kmalloc" },
	{ "__kmalloc_noprof", "kmem", "kmalloc" },
	{ "__kmalloc_node", "kmem", "kmalloc" },
	{ "__kmalloc_node_noprof", "kmem", "kmalloc" },
	{ "__kmalloc_cache_noprof", "kmem", "kmalloc" },
	{ "__kmalloc_cache_node_noprof", "kmem", "kmalloc" },
	{ "__kmalloc_node_track_caller", "kmem", "kmalloc" },
	{ "__kmalloc_node_track_caller_noprof", "kmem", "kmalloc" },
	{ "__kvmalloc_node_noprof", "kmem", "kmalloc" },
	{ "kmalloc_trace", "kmem", "kmalloc" },
	{ "kmalloc_node_trace", "kmem", "kmalloc" },
	{ "kmem_cache_alloc", "kmem", "kmem_cache_alloc" },
	{ "kmem_cache_alloc_noprof", "kmem", "kmem_cache_alloc" },
	{ "kmem_cache_alloc_node", "kmem", "kmem_cache_alloc" },
	{ "kmem_cache_alloc_node_noprof", "kmem", "kmem_cache_alloc" },
	{ "kmem_cache_alloc_lru", "kmem", "kmem_cache_alloc" },
	{ "kmem_cache_alloc_lru_noprof", "kmem", "kmem_cache_alloc" },
	{ "kfree", "kmem", "kfree" },
	{ "kmem_cache_free", "kmem", "kmem_cache_free" },
	{ "__alloc_pages", "kmem", "mm_page_alloc" },
	{ "__alloc_pages_noprof", "kmem", "mm_page_alloc" },
	{ "__alloc_frozen_pages_noprof", "kmem", "mm_page_alloc" },
	{ "__free_pages", "kmem", "mm_page_free" },
	{ "free_pages", "kmem", "mm_page_free" },
	{ "__schedule", "sched", "sched_switch" },
	{ "schedule", "sched", "sched_switch" },
	{ "try_to_wake_up", "sched", "sched_waking" },
	{ "wake_up_new_task", "sched", "sched_wakeup_new" },
};

/* 6.10+ renamed the allocators (__kmalloc → __kmalloc_noprof). */
static void follow_rename(const struct ft_plan *p, char *name, size_t len)
{
	uint64_t a, b;
	char alt[160];
	if (!p->ksyms || sym_kernel_range(p->ksyms, name, &a, &b) == 0)
		return;
	snprintf(alt, sizeof(alt), "%s_noprof", name);
	if (sym_kernel_range(p->ksyms, alt, &a, &b) == 0) {
		ft_warn("%s is called %s in this kernel; tracing that", name, alt);
		snprintf(name, len, "%s", alt);
	}
}

enum mechanism { MECH_NONE, MECH_KPROBE_PMU, MECH_KPROBE_EVENTS, MECH_FUNCTION, MECH_TRACEPOINT };

/* The name set_ftrace_filter takes for FUNC (at E's kstart) into OUT: the tracer
 * lists one name per address, so an alias (__x64_sys_getppid on 6.1, which
 * lists __do_sys_getppid) must be written as the listed one, or the write
 * fails and leaves the filter empty. A pattern's matches came from the list. */
static int ftrace_filter_name(struct ft_plan *p, const struct ft_event *e, const char *func,
			      char *out, size_t len)
{
	const char *avail = e->optional ? NULL : ft_plan_avail_funcs(p);
	const char *names[8];
	snprintf(out, len, "%s", func);
	if (!avail || tfs_functions_listed(avail, func))
		return 0;
	int n = sym_kernel_aliases(p->ksyms, e->kstart, names, 8);
	for (int i = 0; i < n && i < 8; i++) {
		if (tfs_functions_listed(avail, names[i])) {
			snprintf(out, len, "%s", names[i]);
			ft_warn("the function tracer knows %s as %s (the same "
				"address)", func, names[i]);
			return 0;
		}
	}
	ft_error("the function tracer cannot trace %s: it is not in "
		"%s/available_filter_functions (notrace, or no ftrace call site)", func,
		p->tracefs);
	return -EINVAL;
}

/* The function tracer: the ftrace backend maps each record's ip back to the
 * event through the function's text range. */
static int add_function(struct ft_plan *p, struct ft_event *e, const char *func)
{
	int ret;
	if (!p->ksyms || sym_kernel_range(p->ksyms, func, &e->kstart, &e->kend) < 0) {
		ft_error("no kernel function %s (see /proc/kallsyms)", func);
		return -EINVAL;
	}
	if ((ret = ftrace_filter_name(p, e, func, e->ftrace_func, sizeof(e->ftrace_func))) < 0)
		return ret;
	e->kind = FT_EV_FUNCTION;
	snprintf(e->system, sizeof(e->system), "ftrace");
	snprintf(e->event, sizeof(e->event), "function");
	p->function_tracer = true;
	p->mechanism = "function tracer";
	return ft_plan_add(p, e);
}

static int add_probe(struct ft_plan *p, const char *func, enum mechanism mech, bool optional)
{
	struct ft_event e = { .in_stack = true, .kfunc = true, .optional = optional };
	p->noptional += optional;
	snprintf(e.name, sizeof(e.name), "%s", func);
	snprintf(e.label, sizeof(e.label), "%s", func);
	snprintf(e.event, sizeof(e.event), "%s", func);
	if (mech == MECH_FUNCTION)
		return add_function(p, &e, func);
	if (mech == MECH_KPROBE_PMU) {
		e.kind = FT_EV_KPROBE_PMU;
		e.perf_type = (uint32_t)host_pmu_type(p->sys_root, "kprobe");
		p->mechanism = "kprobe PMU";
	} else {
		/* made in tracefs by ft_plan_create; event names allow [A-Za-z0-9_] */
		char ev[128];
		snprintf(ev, sizeof(ev), "%.100s", func);
		for (char *c = ev; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9') || *c == '_'))
				*c = '_';
		e.kind = FT_EV_TRACEPOINT;
		e.perf_type = PERF_TYPE_TRACEPOINT;
		snprintf(e.system, sizeof(e.system), "%s", p->group);
		snprintf(e.event, sizeof(e.event), "%s", ev);
		snprintf(e.dyn_file, sizeof(e.dyn_file), "kprobe_events");
		snprintf(e.dyn_def, sizeof(e.dyn_def), "p:%s/%s %s", p->group, ev, func);
		p->mechanism = "kprobe_events";
	}
	return ft_plan_add(p, &e);
}

/* Whether kprobe_events is under the plan's tracefs and this user may
 * write it (ft_plan.tracefs_write) */
static bool kprobe_events_present(const struct ft_plan *p)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/kprobe_events", p->tracefs);
	if (p->tracefs_write == FT_TRACEFS_WRITE_ASK)
		return access(path, W_OK) == 0;
	return p->tracefs_write == FT_TRACEFS_WRITE_YES && access(path, F_OK) == 0;
}

struct near_funcs {
	const char *want;
	char names[3][128];
	int dist[3], n;
};

/* Keeps the three kernel functions nearest to the name asked for. */
static int on_near(void *ctx, const char *name, uint64_t addr)
{
	struct near_funcs *nf = ctx;
	(void)addr;
	size_t lw = strlen(nf->want), ln = strlen(name);
	if (ln + 3 < lw || lw + 3 < ln || ln >= sizeof(nf->names[0]))
		return 0; /* farther than 3 edits anyway */
	int d = tfs_name_distance(nf->want, name), i = nf->n;
	if (d > 3)
		return 0;
	while (i > 0 && nf->dist[i - 1] > d)
		i--;
	if (i >= 3)
		return 0;
	for (int j = nf->n < 3 ? nf->n : 2; j > i; j--) {
		nf->dist[j] = nf->dist[j - 1];
		memcpy(nf->names[j], nf->names[j - 1], sizeof(nf->names[j]));
	}
	nf->dist[i] = d;
	snprintf(nf->names[i], sizeof(nf->names[i]), "%s", name);
	nf->n += nf->n < 3;
	return 0;
}

/* "no kernel function X", with up to three close names from kallsyms. */
static void no_such_function(const struct ft_plan *p, const char *func)
{
	struct near_funcs nf = { .want = func };
	if (p->ksyms)
		sym_kernel_foreach(p->ksyms, on_near, &nf);
	ft_error("no kernel function %s%s%s%s%s%s%s%s", func,
		nf.n ? " (did you mean " : " (see /proc/kallsyms)", nf.n ? nf.names[0] : "",
		nf.n > 1 ? ", " : "", nf.n > 1 ? nf.names[1] : "", nf.n > 2 ? ", " : "",
		nf.n > 2 ? nf.names[2] : "", nf.n ? "?)" : "");
}

/* tfs_function_tracer_try, once per run. */
static int function_tracer(struct ft_plan *p)
{
	if (!p->function_tracer_tried) {
		p->function_tracer_err = tfs_function_tracer_try(p->tracefs, ft_plan_avail_funcs(p));
		p->function_tracer_tried = true;
	}
	return p->function_tracer_err;
}

/* Best first: the kprobe PMU (not for --backend ftrace, which reads tracefs
 * events only), kprobe_events, the function tracer (tried in a private
 * instance: it can be listed yet refused), a tracepoint inside the function.
 * --mechanism picks one. Returns MECH_NONE after saying why. */
static enum mechanism choose_mechanism(const struct ft_options *o, struct ft_plan *p)
{
	bool pmu = !p->tfs_events && host_pmu_type(p->sys_root, "kprobe") >= 0;
	bool events = kprobe_events_present(p);
	const char *m = o->mechanism;
	if (!m && p->inherit && events)
		return MECH_KPROBE_EVENTS; /* children inherit those; see ft_plan.inherit */
	if (!m)
		return pmu ? MECH_KPROBE_PMU : events ? MECH_KPROBE_EVENTS :
		       function_tracer(p) == 0 ? MECH_FUNCTION : MECH_TRACEPOINT;
	if (strcmp(m, "tracepoint") == 0)
		return MECH_TRACEPOINT;
	if (strcmp(m, "kprobe-pmu") == 0 && pmu && p->inherit)
		ft_warn("warning: with the kprobe PMU, forks of the traced "
			"processes fail (EFAULT: the kernel re-reads the probe's name in the "
			"forking process); kprobe-events has no such limit");
	if (strcmp(m, "kprobe-pmu") == 0 && pmu)
		return MECH_KPROBE_PMU;
	if (strcmp(m, "kprobe-events") == 0 && events)
		return MECH_KPROBE_EVENTS;
	int ret = strcmp(m, "function") == 0 ? function_tracer(p) : 0;
	if (strcmp(m, "function") == 0 && ret == 0)
		return MECH_FUNCTION;
	if (strcmp(m, "function") == 0)
		ft_error("--mechanism function: the kernel refuses the function "
			"tracer (%s)", strerror(-ret));
	else if (strcmp(m, "kprobe-pmu") == 0)
		ft_error("--mechanism kprobe-pmu: %s", p->tfs_events ?
			"--backend ftrace needs kprobe_events" : "this kernel has no kprobe PMU");
	else
		ft_error("--mechanism kprobe-events: no writable %s/kprobe_events",
			p->tracefs);
	return MECH_NONE;
}

/* No kprobes: a tracepoint inside the function, filtered by --through. */
static int plan_fallback(const struct ft_spec *sp, struct ft_plan *p, const char *func)
{
	for (size_t i = 0; i < sizeof(fallback) / sizeof(*fallback); i++) {
		if (strcmp(fallback[i].func, func) != 0)
			continue;
		struct tfs_event *te = NULL;
		if (ft_plan_match_events(p->tracefs, fallback[i].system, fallback[i].event, false,
					 &te) != 1) {
			free(te);
			continue;
		}
		if (p->through_name && strcmp(p->through_name, func) != 0) {
			ft_error("without kprobes only one kernel function can be "
				"traced at a time (%s and %s)", p->through_name, func);
			free(te);
			return -EINVAL;
		}
		struct ft_event e = { .kind = FT_EV_TRACEPOINT, .perf_type = PERF_TYPE_TRACEPOINT,
				      .perf_config = te->id, .in_stack = true, .kfunc = true };
		free(te);
		snprintf(e.name, sizeof(e.name), "%s", func);
		snprintf(e.label, sizeof(e.label), "%s", func);
		snprintf(e.system, sizeof(e.system), "%s", fallback[i].system);
		snprintf(e.event, sizeof(e.event), "%s", fallback[i].event);
		snprintf(p->through_buf, sizeof(p->through_buf), "%s", func);
		p->through_name = p->through_buf;
		ft_warn("no kprobes in this kernel: counting t:%s:%s events whose "
			"kernel stack passes through %s (--through %s)", fallback[i].system,
			fallback[i].event, func, func);
		p->mechanism = "tracepoint + --through";
		return ft_plan_add(p, &e);
	}
	/* say which tracepoints share the function's words */
	char sugg[512] = "";
	char word[128];
	snprintf(word, sizeof(word), "%s", sp->name);
	for (char *c = word; *c; c++)
		if (*c == '_')
			*c = ' ';
	char *w = strtok(word, " ");
	while (w && strlen(w) < 3)
		w = strtok(NULL, " ");
	if (w) {
		char pat[140];
		snprintf(pat, sizeof(pat), "*%s*", w);
		struct tfs_event *te = NULL;
		int n = tfs_events_match(p->tracefs, "*", pat, false, &te);
		for (int i = 0; i < n && i < 6; i++) {
			size_t l = strlen(sugg);
			snprintf(sugg + l, sizeof(sugg) - l, "%st:%s:%s", l ? ", " : "", te[i].system,
				 te[i].name);
		}
		free(te);
	}
	ft_error("cannot trace kernel function %s: this kernel has no kprobes and "
		"no tracepoint known to fire inside it%s%s%s", func, *sugg ? " (try " : "", sugg,
		*sugg ? " with --through)" : "");
	return -EINVAL;
}

int ft_plan_kfunc(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p)
{
	struct func_list l = { .pattern = sp->name, .regex = o->regex };
	bool pattern = o->regex || strpbrk(sp->name, "*?[");
	char func[160];
	int ret = 0;
	if (o->regex) {
		char anchored[300];
		snprintf(anchored, sizeof(anchored), "^(%s)$", sp->name);
		if (regcomp(&l.re, anchored, REG_EXTENDED | REG_NOSUB) != 0) {
			ft_error("'%s': not a valid regular expression", sp->name);
			return -EINVAL;
		}
	}
	if (!p->tracefs[0] && host_pmu_type(p->sys_root, "kprobe") < 0) {
		/* tracefs-less: the kprobe PMU or nothing */
		ft_error("kernel function %s: this kernel has no kprobe PMU, and %s", sp->name,
			 ft_tracefs_missing(p->tracefs_state));
		ft_kfunc_list_free(&l);
		return -EINVAL;
	}
	enum mechanism mech = choose_mechanism(o, p);
	if (mech == MECH_NONE) {
		ft_kfunc_list_free(&l);
		return -EINVAL;
	}
	if (!pattern) {
		snprintf(func, sizeof(func), "%s", sp->name);
		follow_rename(p, func, sizeof(func));
		uint64_t a, b;
		if (p->ksyms && sym_kernel_range(p->ksyms, func, &a, &b) < 0) {
			no_such_function(p, func);
			ret = -EINVAL;
		} else if (mech == MECH_TRACEPOINT) {
			ret = plan_fallback(sp, p, func);
		} else {
			ret = add_probe(p, func, mech, false);
		}
		ft_kfunc_list_free(&l);
		return ret;
	}
	if (mech == MECH_TRACEPOINT) {
		ft_warn("'%s': this kernel has no kprobes and no usable function "
			"tracer, so function patterns cannot be traced; name one function "
			"(e.g. -e __kmalloc) or a tracepoint", sp->name);
		ft_kfunc_list_free(&l);
		return -EINVAL;
	}
	if ((ret = ft_kfunc_find(p, &l)) < 0 || l.n == 0) {
		ft_warn("'%s' matches no kernel function", sp->name);
		ft_kfunc_list_free(&l);
		return -EINVAL;
	}
	ft_kfunc_drop_untraceable(p, &l, sp->name);
	if (l.n == 0) {
		ft_warn("'%s' matches no kernel function kprobes can trace",
			sp->name);
		ft_kfunc_list_free(&l);
		return -EINVAL;
	}
	int max = o->max_probes ? (int)o->max_probes : FT_MAX_PROBES_DEFAULT;
	if (l.n > max)
		ft_warn("'%s' matches %d functions; tracing the first %d "
			"(--max-probes), skipping %d", sp->name, l.n, max, l.n - max);
	for (int i = 0; i < l.n && i < max && ret == 0; i++)
		ret = add_probe(p, l.names[i], mech, true);
	ft_kfunc_list_free(&l);
	return ret;
}

bool ft_plan_kfunc_uses_function_tracer(const struct ft_options *o, struct ft_plan *p)
{
	bool kfunc = false;
	for (int i = 0; i < o->nspecs && !kfunc; i++) {
		struct ft_spec sp;
		kfunc = ft_spec_parse(o->specs[i], o->lib, &sp) == 0 && sp.kind == FT_SPEC_KFUNC;
	}
	if (!kfunc || (o->mechanism && strcmp(o->mechanism, "function") != 0))
		return false;
	/* the kprobe PMU is out of reach of the ftrace backend, not of perf */
	if (!o->mechanism && (host_pmu_type(p->sys_root, "kprobe") >= 0 || kprobe_events_present(p)))
		return false;
	return function_tracer(p) == 0; /* refused: choose_mechanism says so */
}
