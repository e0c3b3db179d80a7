/* The plan: which kernel events to open for the specs on the command line.
 * Every check that can fail for bad input happens here, before anything is
 * created in the kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector/collector.h"
#include "collector/spec.h"
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

static int plan_add(struct ft_plan *p, const struct ft_event *e)
{
	struct ft_event *n = realloc(p->events, (p->nevents + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->events = n;
	p->events[p->nevents++] = *e;
	return 0;
}

/* syscalls:sys_enter_X / sys_exit_X have no kernel stack under perf (their
 * perf handler passes the user registers), so they are opened as
 * raw_syscalls:sys_enter/sys_exit filtered on the syscall number: same
 * events, with the kernel frames the ftrace trigger shows. */
static int syscall_redirect(const char *root, const struct tracefs_event *te, struct ft_event *e)
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
	struct tracefs_event *rawev = NULL;
	if (nr < 0 || tracefs_events_match(root, "raw_syscalls", raw, false, &rawev) != 1) {
		free(rawev);
		return 0; /* keep the syscall tracepoint: user stacks only */
	}
	e->perf_config = rawev->id;
	snprintf(e->filter, sizeof(e->filter), "id == %d", nr);
	free(rawev);
	return 0;
}

static int plan_tracepoints(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p)
{
	struct tracefs_event *evs = NULL;
	int n = tracefs_events_match(p->tracefs, sp->lib, sp->name, o->regex, &evs);
	if (n == -EINVAL) {
		fprintf(stderr, "ftstack: '%s': not a valid regular expression\n", sp->text);
		return -EINVAL;
	}
	if (n < 0) {
		fprintf(stderr, "ftstack: cannot list tracepoints in %s/events: %s\n", p->tracefs,
			strerror(-n));
		return n;
	}
	if (n == 0) {
		char sugg[512] = "";
		bool pattern = strpbrk(sp->text, "*?[") || o->regex;
		tracefs_events_suggest(p->tracefs, sp->lib, sp->name, 3, sugg, sizeof(sugg));
		fprintf(stderr, "ftstack: %s '%s' matches no tracepoint%s%s%s\n",
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
		int ret = syscall_redirect(p->tracefs, &evs[i], &e);
		if (ret == 0)
			ret = plan_add(p, &e);
		if (ret < 0) {
			free(evs);
			return ret;
		}
	}
	free(evs);
	return 0;
}

static int plan_spec(const struct ft_options *o, const char *text, struct ft_plan *p)
{
	struct ft_spec sp;
	int ret = ft_spec_parse(text, o->lib, &sp);
	if (ret == -EINVAL) {
		fprintf(stderr, "ftstack: malformed event '%s': use t:SUBSYS:EVENT, FUNC, LIB:FUNC, "
			"u:LIB:PROBE (see ftstack --help)\n", text);
		return -EINVAL;
	}
	if (ret < 0) {
		fprintf(stderr, "ftstack: event '%s' is too long\n", text);
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
	}
	return -EINVAL;
}

int ft_plan_build(const struct ft_options *o, struct ft_plan *p)
{
	int ret = tracefs_find_root(p->tracefs, sizeof(p->tracefs));
	if (ret < 0) {
		fprintf(stderr, "ftstack: no tracefs: %s (mount it: mount -t tracefs nodev "
			"/sys/kernel/tracing, as root)\n", ret == -EPERM ? "not allowed to mount it" :
			"this kernel has none");
		return ret;
	}
	for (int i = 0; i < o->nspecs; i++) {
		if ((ret = plan_spec(o, o->specs[i], p)) < 0)
			return ret;
	}
	if (p->nevents > FT_MAX_EVENTS) {
		fprintf(stderr, "ftstack: %d events match; at most %d at once (narrow the pattern)\n",
			p->nevents, FT_MAX_EVENTS);
		return -EINVAL;
	}
	return 0;
}

void ft_plan_free(struct ft_plan *p)
{
	free(p->events);
	p->events = NULL;
	p->nevents = 0;
}
