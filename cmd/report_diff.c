/* ftstack report --diff A B: each file is parsed into its own merge by name
 * (and weighed by periods as `report` would print it); then both are merged
 * by name into one more, A's values in each stack's count and B's in its
 * weight, and written in difffolded.pl's "stack countA countB" form
 * (output/diff.c). Stacks are named exactly as the folded format names
 * them, so -d, -a, -K, -U, --through and -x apply; -m and -t do not (a diff
 * keeps every stack). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/report_cmd.h"

/* The index of event NAME in the merged table's names, added if new. */
static int merged_event(char **names, int *n, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	if (*n == FT_MAX_EVENTS || !(names[*n] = strdup(name)))
		return -1;
	return (*n)++;
}

/* Adds side SIDE's stacks (as its folded output would count them) to M. */
static int merge_side(struct report_ctx *c, int side, struct agg_named *m, char **names, int *n)
{
	struct agg_filter f = { .exclude = c->o->excludes };
	struct agg_named_stats st;
	const struct agg_named_stack *stacks;
	ft_report_weigh(c);
	size_t ns = agg_named_finish(c->named, &f, &stacks, &st);
	for (size_t i = 0; i < ns; i++) {
		struct agg_named_stack s = stacks[i];
		int ev = merged_event(names, n, c->events[s.event]);
		if (ev < 0)
			return -ENOMEM;
		/* what `report -f` prints for it: summed periods where weighted */
		uint64_t v = c->ev_weighted[stacks[i].event] ? stacks[i].weight : stacks[i].count;
		s.event = (uint32_t)ev;
		s.count = side == 0 ? v : 0;
		s.weight = side == 0 ? 0 : v;
		int ret = agg_named_add(m, &s);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int ft_cmd_report_diff(const struct ft_options *o, FILE *out)
{
	struct ft_options one = *o;
	one.format = OUT_FOLDED;
	struct report_ctx c[2] = { { .o = &one }, { .o = &one } };
	struct agg_named *m = NULL;
	char *names[FT_MAX_EVENTS];
	struct ft_names dbg = { 0 };
	int n = 0, status = 1, ret = 0;
	if (agg_named_alloc(&c[0].named) < 0 || agg_named_alloc(&c[1].named) < 0 ||
	    agg_named_alloc(&m) < 0 || (status = ft_report_names_open(&c[0], &dbg)) != 0)
		goto cleanup;
	c[1].namer = c[0].namer; /* one namer: each debug file opened once */
	for (int side = 0; side < 2; side++)
		if ((status = ft_report_parse_file(&c[side], o->report_files[side])) != 0)
			goto cleanup;
	status = 1;
	for (int side = 0; side < 2 && ret == 0; side++)
		ret = merge_side(&c[side], side, m, names, &n);
	if (ret < 0)
		goto cleanup;
	struct agg_filter f = { 0 };
	struct agg_named_stats st;
	const struct agg_named_stack *stacks;
	size_t ns = agg_named_finish(m, &f, &stacks, &st);
	struct out_options oo;
	ft_report_out_options(&c[0], &oo);
	oo.show_comm = c[0].have_comm || c[1].have_comm;
	oo.event_names = (const char *const *)names;
	oo.nevents = (uint32_t)n;
	oo.event_frame = n > 1;
	oo.event_weighted = NULL;
	ret = out_write_diff(out, &oo, stacks, ns);
	if (ret < 0 && ret != -EPIPE)
		ft_error("writing the result failed: %s", strerror(-ret));
	else
		status = 0;
cleanup:
	c[1].namer = NULL;
	ft_report_names_close(&c[0], &dbg);
	agg_named_free(m);
	for (int i = 0; i < n; i++)
		free(names[i]);
	ft_report_ctx_free(&c[0]);
	ft_report_ctx_free(&c[1]);
	return status;
}
