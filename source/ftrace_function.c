/* The function tracer in the ftrace backend's private instance: the traced
 * functions in set_ftrace_filter, func_stack_trace for a kernel stack after
 * each hit, current_tracer=function. Its ftrace:function records carry the
 * function's fentry call site, mapped back to the plan event by address.
 * The tracer writes no user stack (userstacktrace follows events only), so
 * these events have kernel stacks only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "source/ftrace_source.h"

/* The instance's set_ftrace_filter as the kernel took it must name N
 * functions: with an empty one the tracer would trace every function in
 * the kernel (35,000 on Debian's 6.1), patching them all, which is never
 * what was asked. Returns 0, or -EINVAL or the read's -errno after saying
 * so. */
static int check_filter(struct ft_ftrace_source *fs, int n)
{
	const char *root = fs->cfg.plan->tracefs;
	int got = 0, ret = tfs_ftrace_filter_read(root, fs->inst, &got);
	if (ret < 0)
		ft_warn("cannot read back %s/%s/set_ftrace_filter: %s", root,
			fs->inst, strerror(-ret));
	else if (got == -1)
		ft_warn("%s/%s/set_ftrace_filter is empty after writing %d "
			"function%s to it: not starting a function tracer that would trace "
			"every function", root, fs->inst, n, n == 1 ? "" : "s");
	else if (got != n)
		ft_error("%s/%s/set_ftrace_filter names %d functions, not the "
			"%d written", root, fs->inst, got, n);
	return ret < 0 ? ret : got == n ? 0 : -EINVAL;
}

/* Whether an attached function event before I wrote the same name (the same
 * function asked for twice, or two aliases of one): one filter line. */
static bool written_before(const struct ft_plan *p, int i)
{
	for (int j = 0; j < i; j++) {
		const struct ft_event *e = &p->events[j];
		if (e->kind == FT_EV_FUNCTION && !e->refused &&
		    strcmp(e->ftrace_func, p->events[i].ftrace_func) == 0)
			return true;
	}
	return false;
}

/* Each FT_EV_FUNCTION event's name into set_ftrace_filter, its text range
 * into T. */
static int write_filter(struct ft_ftrace_source *fs, struct tfs_raw_types *t,
			struct tfs_raw_func *funcs)
{
	struct ft_plan *p = fs->cfg.plan;
	int n = 0, lines = 0;
	for (int i = 0; i < p->nevents; i++) {
		struct ft_event *e = &p->events[i];
		if (e->kind != FT_EV_FUNCTION)
			continue;
		/* the first write empties the filter; the rest add to it */
		char err[256];
		int ret = tfs_function_filter(&p->log, fs->ti, e->ftrace_func, n > 0, err,
					      sizeof(err));
		if (ret < 0 && e->optional && ft_plan_refusal(ret)) {
			ft_debug("set_ftrace_filter refused %s: %s%s%s", e->ftrace_func,
				 strerror(-ret), err[0] ? ": " : "", err);
			e->refused = ret; /* one of a pattern's: skipped, and said */
			continue;
		}
		if (ret < 0) {
			ft_error("cannot write '%s' to %s/%s/set_ftrace_filter: %s%s%s",
				e->ftrace_func, p->tracefs, fs->inst, strerror(-ret), err[0] ? ": " : "",
				err);
			return ret;
		}
		funcs[n++] = (struct tfs_raw_func){ e->kstart, e->kend, i };
		lines += !written_before(p, i);
	}
	t->nfuncs = n;
	if (!n) {
		/* an empty filter would trace every function */
		ft_error("the function tracer refused every function asked for");
		return -ENOENT;
	}
	return check_filter(fs, lines);
}

int ft_ftrace_function_setup(struct ft_ftrace_source *fs, struct tfs_raw_types *t)
{
	const struct ft_ftrace_config *c = &fs->cfg;
	uint32_t id = 0;
	int off = tfs_event_u64_offset(c->plan->tracefs, "ftrace", "function", "ip");
	int ret = tfs_event_id(c->plan->tracefs, "ftrace", "function", &id);
	if (ret < 0 || off < 0 || id > 65535) {
		ft_error("no usable events/ftrace/function/format in %s",
			c->plan->tracefs);
		return ret < 0 ? ret : off < 0 ? off : -EINVAL;
	}
	t->function = (uint16_t)id;
	t->function_ip_offset = (uint32_t)off;
	if ((ret = write_filter(fs, t, (struct tfs_raw_func *)t->funcs)) < 0)
		return ret;
	if (c->want_user)
		ft_warn("the function tracer records no user stacks: "
			"kernel stacks only for %d function%s", t->nfuncs,
			t->nfuncs == 1 ? "" : "s");
	if ((ret = ft_ftrace_write(fs, "options/func_stack_trace", "1", false, TRACEFS_UNDO_WRITE,
				   "0")) < 0)
		return ret;
	return ft_ftrace_write(fs, "current_tracer", "function", false, TRACEFS_UNDO_WRITE, "nop");
}

void ft_ftrace_function_cut(const struct ft_event *e, const uint64_t **ips, uint32_t *n)
{
	for (uint32_t i = 0; i < *n; i++) {
		if ((*ips)[i] >= e->kstart && (*ips)[i] < e->kend) {
			*ips += i;
			*n -= i;
			return;
		}
	}
}
