/* Internals shared by plan.c, plan_kfunc.c, plan_uprobe.c and events.c. */
#ifndef FTSTACK_PLAN_INTERNAL_H
#define FTSTACK_PLAN_INTERNAL_H

#include "plan/plan.h"

/* Appends a copy of E to the plan. Returns 0 or -ENOMEM. */
int ft_plan_add(struct ft_plan *p, const struct ft_event *e);
/* True when some kernel-function event of O would use the function tracer
 * (no kprobes, or --mechanism function). */
bool ft_plan_kfunc_uses_function_tracer(const struct ft_options *o, struct ft_plan *p);

#endif
