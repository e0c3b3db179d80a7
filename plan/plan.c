/* The plan: which kernel events to open for the specs on the command line.
 * Every check that can fail for bad input happens here, before anything is
 * created in the kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plan/plan.h"
#include "plan/spec.h"
#include "plan/internal.h"
#include "cli/progress.h"
#include "host/host.h"
#include "tracefs/tracefs.h"

static const struct { const char *name; int nr; } syscall_names[] = {
#include "syscall_names.h"
};

/* The architecture's number of syscall NAME, or -1. */
static int syscall_nr(const char *name)
{
	for (size_t i = 0; i < sizeof(syscall_names) / sizeof(*syscall_names); i++)
		if (strcmp(syscall_names[i].name, name) == 0)
			return syscall_names[i].nr;
	return -1;
}


/* syscalls:sys_enter_X / sys_exit_X have no kernel stack under perf (their
 * perf handler passes the user registers), so they are opened as
 * raw_syscalls:sys_enter/sys_exit filtered on the syscall number: same
 * events, with the kernel frames the ftrace trigger shows. */
static int syscall_redirect(const char *root, const struct tfs_event *te, struct ft_event *e)
{
	const char *name = te->name;
	const char *raw;
	if (strncmp(name, "sys_enter_", 10) == 0) {
		raw = "sys_enter";
		name += 10;
	} else if (strncmp(name, "sys_exit_", 9) == 0) {
		raw = "sys_exit";
		name += 9;
	} else {
		return 0;
	}
	int nr = syscall_nr(name);
	struct tfs_event *rawev = NULL;
	if (nr < 0 || ft_plan_match_events(root, "raw_syscalls", raw, false, &rawev) != 1) {
		free(rawev);
		return 0; /* keep the syscall tracepoint: user stacks only */
	}
	e->perf_config = rawev->id;
	snprintf(e->filter, sizeof(e->filter), "id == %d", nr);
	free(rawev);
	return 0;
}

/* Names bcc's examples use that kernels spell otherwise (stackcount's
 * t:sched:sched_fork is sched:sched_process_fork in every kernel here). */
static const struct { const char *system, *name, *now; } tracepoint_alias[] = {
	{ "sched", "sched_fork", "sched_process_fork" },
	{ "sched", "sched_exec", "sched_process_exec" },
	{ "sched", "sched_exit", "sched_process_exit" },
};

static int match_tracepoints(const struct ft_options *o, const struct ft_spec *sp,
			     struct ft_plan *p, struct tfs_event **evs)
{
	int n = ft_plan_match_events(p->tracefs, sp->lib, sp->name, o->regex, evs);
	for (size_t i = 0; n == 0 && i < sizeof(tracepoint_alias) / sizeof(*tracepoint_alias); i++) {
		if (strcmp(sp->lib, tracepoint_alias[i].system) != 0 ||
		    strcmp(sp->name, tracepoint_alias[i].name) != 0)
			continue;
		free(*evs);
		*evs = NULL;
		n = ft_plan_match_events(p->tracefs, sp->lib, tracepoint_alias[i].now, false, evs);
		if (n > 0)
			ft_error("%s:%s is called %s:%s in this kernel; tracing that",
				sp->lib, sp->name, sp->lib, tracepoint_alias[i].now);
	}
	return n;
}

static int plan_tracepoints(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p)
{
	struct tfs_event *evs = NULL;
	int n = match_tracepoints(o, sp, p, &evs);
	if (n == -EINVAL) {
		ft_error("'%s': not a valid regular expression", sp->text);
		return -EINVAL;
	}
	if (n < 0) {
		ft_error("cannot list tracepoints in %s/events: %s", p->tracefs,
			strerror(-n));
		return n;
	}
	if (n == 0) {
		char sugg[512] = "";
		bool pattern = strpbrk(sp->text, "*?[") || o->regex;
		tfs_events_suggest(p->tracefs, sp->lib, sp->name, 3, sugg, sizeof(sugg));
		ft_warn("%s '%s' matches no tracepoint%s%s%s",
			pattern ? "pattern" : "event", sp->text, *sugg ? " (did you mean " : "",
			sugg, *sugg ? "?)" : "; see ftstack check, or /sys/kernel/tracing/available_events");
		free(evs);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		struct ft_event e = { .kind = FT_EV_TRACEPOINT, .perf_type = PERF_TYPE_TRACEPOINT };
		snprintf(e.name, sizeof(e.name), "t:%s:%s", evs[i].system, evs[i].name);
		snprintf(e.label, sizeof(e.label), "%s", evs[i].name);
		snprintf(e.system, sizeof(e.system), "%s", evs[i].system);
		snprintf(e.event, sizeof(e.event), "%s", evs[i].name);
		e.perf_config = evs[i].id;
		int ret = p->backend == FT_BACKEND_PERF ? syscall_redirect(p->tracefs, &evs[i], &e) : 0;
		if (ret == 0)
			ret = ft_plan_add(p, &e);
		if (ret < 0) {
			free(evs);
			return ret;
		}
	}
	free(evs);
	return 0;
}

/* perf's generic events: software (page-faults, context-switches, ...) and
 * hardware (cycles, ...), every event or sampled by period or frequency.
 * Their stack does not end in the event: with several events, it is
 * named as the leaf-most frame. */
static int plan_generic(const struct ft_spec *sp, struct ft_plan *p)
{
	struct ft_event e = {
		.kind = FT_EV_GENERIC, .perf_type = sp->perf_type, .perf_config = sp->perf_config,
		.sample_period = sp->period, .sample_freq = sp->freq,
	};
	snprintf(e.name, sizeof(e.name), "%s:%s", sp->lib, sp->name);
	snprintf(e.label, sizeof(e.label), "%s", sp->name);
	return ft_plan_add(p, &e);
}

static int plan_spec(const struct ft_options *o, const char *text, struct ft_plan *p)
{
	struct ft_spec sp;
	int ret = ft_spec_parse(text, o->lib, &sp);
	if (ret == -EINVAL) {
		ft_error("malformed event '%s': use t:SUBSYS:EVENT, FUNC, LIB:FUNC, "
			"u:LIB:PROBE, software:NAME[:N], hardware:NAME[:N] (see ftstack --help)", text);
		return -EINVAL;
	}
	if (ret < 0) {
		ft_error("event '%s' is too long", text);
		return -EINVAL;
	}
	switch (sp.kind) {
	case FT_SPEC_TRACEPOINT:
		return plan_tracepoints(o, &sp, p);
	case FT_SPEC_KFUNC:
		return ft_plan_kfunc(o, &sp, p);
	case FT_SPEC_UPROBE:
	case FT_SPEC_USDT:
		return ft_plan_uprobe(o, &sp, p);
	case FT_SPEC_PERF:
		return plan_generic(&sp, p);
	}
	return -EINVAL;
}

/* profile: cpu-clock samples at -F HZ (or every --period ns of CPU time). */
static int plan_profile(const struct ft_options *o, struct ft_plan *p)
{
	unsigned long max = 0;
	char path[512];
	snprintf(path, sizeof(path), "%s/sys/kernel/perf_event_max_sample_rate", p->proc_root);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lu", &max) != 1)
			max = 0;
		fclose(f);
	}
	if (o->freq && max && o->freq > max) {
		ft_error("-F %llu is above this kernel's limit of %lu Hz "
			"(kernel.perf_event_max_sample_rate)", (unsigned long long)o->freq, max);
		return -EINVAL;
	}
	struct ft_event e = {
		.kind = FT_EV_CPU_CLOCK, .perf_type = PERF_TYPE_SOFTWARE,
		.perf_config = PERF_COUNT_SW_CPU_CLOCK, .in_stack = true,
		.sample_freq = o->period_ns ? 0 : o->freq, .sample_period = o->period_ns,
	};
	snprintf(e.name, sizeof(e.name), "cpu-clock");
	snprintf(e.label, sizeof(e.label), "sample");
	return ft_plan_add(p, &e);
}

/* offcpu: sched_switch, sampled in the context of the task switched out
 * (prev_pid is the sample's tid), so its fields are copied (PERF_SAMPLE_RAW)
 * only for --state's prev_state. */
static int plan_offcpu(const struct ft_options *o, struct ft_plan *p)
{
	if (p->offcpu_ctxsw) {
		/* no tracefs: perf's context-switch event, counted at every
		 * switch-out in the leaving task's context (perf_event_task_sched_out),
		 * so its callchain is the switched-out stack; no fields (--state
		 * was refused by ft_mech_choose) */
		struct ft_event e = {
			.kind = FT_EV_CTXSW, .perf_type = PERF_TYPE_SOFTWARE,
			.perf_config = PERF_COUNT_SW_CONTEXT_SWITCHES, .in_stack = true,
		};
		snprintf(e.name, sizeof(e.name), "software:context-switches");
		snprintf(e.label, sizeof(e.label), "switch");
		return ft_plan_add(p, &e);
	}
	struct tfs_event *ev = NULL;
	if (ft_plan_match_events(p->tracefs, "sched", "sched_switch", false, &ev) != 1) {
		free(ev);
		ft_error("offcpu needs the sched:sched_switch tracepoint, which "
			"this kernel lacks");
		return -ENOENT;
	}
	struct ft_event e = {
		.kind = FT_EV_SCHED_SWITCH, .perf_type = PERF_TYPE_TRACEPOINT,
		.perf_config = ev->id, .in_stack = true, .raw = o->state >= 0,
	};
	free(ev);
	snprintf(e.name, sizeof(e.name), "t:sched:sched_switch");
	snprintf(e.label, sizeof(e.label), "switch");
	snprintf(e.system, sizeof(e.system), "sched");
	snprintf(e.event, sizeof(e.event), "sched_switch");
	return ft_plan_add(p, &e);
}


static int count_dynevents(const struct ft_plan *p)
{
	int n = 0;
	for (int i = 0; i < p->nevents; i++)
		n += p->events[i].dyn_file[0] != '\0';
	return n;
}

int ft_plan_create(struct ft_plan *p)
{
	struct ft_progress pg;
	ft_progress_start(&pg, "creating", "dynamic events", count_dynevents(p));
	for (int i = 0; i < p->nevents; i++) {
		struct ft_event *e = &p->events[i];
		if (!e->dyn_file[0])
			continue;
		char err[256] = "";
		int ret = tfs_dynevent_create(&p->log, e->dyn_file, e->system, e->event, e->dyn_def,
						  err, sizeof(err));
		uint32_t id = 0;
		if (ret == 0)
			ret = tfs_event_id(p->tracefs, e->system, e->event, &id);
		ft_progress_step(&pg);
		if (ret < 0 && e->optional && ft_plan_refusal(ret)) {
			/* one of a pattern's matches: said with the others after opening */
			ft_debug("%s refused '%s': %s%s%s", e->dyn_file, e->dyn_def, strerror(-ret),
				 *err ? ": " : "", err);
			e->refused = ret;
			continue;
		}
		if (ret < 0) {
			ft_progress_end(&pg);
			ft_error("the kernel refused '%s' in %s: %s%s%s", e->dyn_def,
				e->dyn_file, strerror(-ret), *err ? ": " : "", err);
			return ret;
		}
		e->perf_config = id;
		ft_debug("%s: %s/%s id %u", e->dyn_file, e->system, e->event, id);
	}
	ft_progress_end(&pg);
	return 0;
}

static int plan_specs(const struct ft_options *o, struct ft_plan *p)
{
	for (int i = 0; i < o->nspecs; i++) {
		int ret = plan_spec(o, o->specs[i], p);
		if (ret < 0)
			return ret;
	}
	return 0;
}

bool ft_plan_wants_kallsyms(const struct ft_options *o)
{
	if (o->through)
		return true;
	if (o->cmd != FT_COUNT)
		return false;
	for (int i = 0; i < o->nspecs; i++) {
		struct ft_spec sp;
		if (ft_spec_parse(o->specs[i], o->lib, &sp) == 0 && sp.kind == FT_SPEC_KFUNC)
			return true;
	}
	return false;
}

int ft_plan_build(const struct ft_options *o, struct ft_plan *p)
{
	int ret = p->tracefs[0] ? 0 : tfs_find_root(p->tracefs, sizeof(p->tracefs));
	if (!p->sys_root)
		p->sys_root = "/sys";
	if (!p->proc_root)
		p->proc_root = "/proc";
	if (ret < 0 && p->tracefs_state != FT_TRACEFS_OK) {
		p->tracefs[0] = '\0'; /* ft_mech_choose refused what needs it */
	} else if (ret < 0) {
		ft_error("no tracefs: %s (mount it: mount -t tracefs nodev "
			"/sys/kernel/tracing, as root)", ret == -EPERM ? "not allowed to mount it" :
			"this kernel has none");
		return ret;
	}
	tfs_owned_name(getpid(), p->group, sizeof(p->group));
	tfs_log_init(&p->log, p->tracefs); /* "" without tracefs: nothing is written */
	p->backend = o->backend;
	p->tfs_events = o->backend == FT_BACKEND_FTRACE;
	p->inherit = o->command || o->npids;
	if (o->cmd == FT_PROFILE)
		return plan_profile(o, p);
	if (o->cmd == FT_OFFCPU)
		return plan_offcpu(o, p);
	if (p->backend != FT_BACKEND_FTRACE && ft_plan_kfunc_uses_function_tracer(o, p)) {
		/* its records exist in tracefs only: every event is planned for
		 * the ftrace backend (probes as tracefs events, syscalls as such) */
		ft_warn("the function tracer is read through --backend ftrace; "
			"using it%s", o->call_graph_copy ?
			" (user stacks the kernel's walk: --call-graph copy is perf's)" : "");
		p->backend = FT_BACKEND_FTRACE;
		p->tfs_events = true;
	}
	if ((ret = plan_specs(o, p)) < 0)
		return ret;
	if (p->nevents > FT_MAX_EVENTS) {
		ft_error("%d events match; at most %d at once (narrow the pattern)",
			p->nevents, FT_MAX_EVENTS);
		return -EINVAL;
	}
	return 0;
}

void ft_plan_destroy(struct ft_plan *p)
{
	tfs_log_undo(&p->log);
	tfs_log_free(&p->log);
	free(p->events);
	p->events = NULL;
	p->nevents = 0;
	p->capevents = 0;
	free(p->avail_funcs);
	p->avail_funcs = NULL;
	p->avail_funcs_read = false;
}
