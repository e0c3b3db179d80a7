/* Internals shared by plan.c, plan_kfunc.c, plan_uprobe.c and events.c. */
#ifndef FTSTACK_PLAN_INTERNAL_H
#define FTSTACK_PLAN_INTERNAL_H

#include "plan/plan.h"

/* Appends a copy of E to the plan. Returns 0 or -ENOMEM. */
int ft_plan_add(struct ft_plan *p, const struct ft_event *e);
/* True when some kernel-function event of O would use the function tracer
 * (no kprobes, or --mechanism function). */
bool ft_plan_kfunc_uses_function_tracer(const struct ft_options *o, struct ft_plan *p);
/* tfs_events_match, but a name without glob characters (and not a regex) is
 * looked up by its id file alone instead of listing every event system:
 * ~400 directory reads fewer at start-up. Same return and ownership. */
int ft_plan_match_events(const char *root, const char *system, const char *name, bool regex,
			 struct tfs_event **out);

#endif
