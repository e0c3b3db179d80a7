/* Internals shared by plan.c, plan_kfunc.c, kfunc_match.c, plan_uprobe.c and
 * events.c. */
#ifndef FTSTACK_PLAN_INTERNAL_H
#define FTSTACK_PLAN_INTERNAL_H

#include <regex.h>
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

/* ---- kernel functions a pattern names (kfunc_match.c, for plan_kfunc.c) ---- */

/* The matches of PATTERN (a glob, or a regex RE when REGEX), names owned */
struct func_list {
	char **names;
	int n;
	size_t cap;
	const char *pattern;
	regex_t re;
	bool regex;
};
/* Frees L's names and its compiled regex (L itself is the caller's). */
void ft_kfunc_list_free(struct func_list *l);
/* Adds to L the functions the kernel lets us probe that match its pattern:
 * from available_filter_functions when it can be read, else kallsyms'
 * text symbols. Returns 0, -ENOENT when neither can be read, or -ENOMEM. */
int ft_kfunc_find(struct ft_plan *p, struct func_list *l);
/* Leaves out of L the matches kprobes cannot trace (the kprobe blacklist,
 * ftrace's placeholders), with one warning naming them for PATTERN. */
void ft_kfunc_drop_untraceable(const struct ft_plan *p, struct func_list *l, const char *pattern);
/* available_filter_functions' text, read once per run; NULL when unreadable. */
const char *ft_plan_avail_funcs(struct ft_plan *p);
#endif
