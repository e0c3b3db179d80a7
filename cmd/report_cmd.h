/* ftstack report internals shared by report_cmd.c, report_parse.c,
 * report_stack.c and report_diff.c. */
#ifndef FTSTACK_REPORT_CMD_H
#define FTSTACK_REPORT_CMD_H

#include <stdio.h>
#include "cmd/cmd.h"
#include "report/report.h"

struct report_ctx {
	const struct ft_options *o;
	struct agg_named *named;
	char *events[FT_MAX_EVENTS];
	int nevents;
	const char *frames[2 * REPORT_MAX_FRAMES];
	uint64_t through_miss;
	bool have_comm;            /* some input named its task */
	int err;
	/* per event: samples, samples whose header showed a period, weighted by it */
	uint64_t ev_samples[FT_MAX_EVENTS], ev_periods[FT_MAX_EVENTS];
	bool ev_weighted[FT_MAX_EVENTS];
	struct sym_namer *namer;   /* names deferred frames; NULL: none */
};

/* Adds one parsed stack to c->named (-K/-U/--through applied). Returns 0
 * or -ENOMEM. */
int ft_report_on_stack(void *arg, const struct report_stack *s);
/* Has ClickHouse group URL's table by stack into c->named. Returns 0, or
 * the exit status (2: bad URL, unreachable, credentials) after saying why. */
int ft_report_clickhouse(struct report_ctx *c, const char *url);
/* Parses FILE ("-" = stdin; clickhouse://...: the fleet's table, grouped
 * there) into c->named. Returns 0, or 2 after saying why not (a file that
 * cannot be read, or is none of the formats; a bad, unreachable or refusing
 * sink), or 1 (out of memory, a server failing mid-query). */
int ft_report_parse_file(struct report_ctx *c, const char *file);
/* Decides which events print summed periods (c->ev_weighted) and says so on
 * stderr. Returns true when any does. */
bool ft_report_weigh(struct report_ctx *c);
/* The output options for c's stacks in c->o's format. */
void ft_report_out_options(const struct report_ctx *c, struct out_options *oo);
/* Filters, orders and writes c->named in the -f/--format of c->o, with the
 * summary on stderr. Returns 0 or -errno. */
int ft_report_write(struct report_ctx *c, FILE *out);
void ft_report_ctx_free(struct report_ctx *c);
/* Readies N (debuginfod, as for a run) and c->namer for deferred frames.
 * Returns 0, or the exit status after saying why. */
int ft_report_names_open(struct report_ctx *c, struct ft_names *n);
/* Says how many deferred frames were named, and frees c->namer and N. */
void ft_report_names_close(struct report_ctx *c, struct ft_names *n);
/* report --diff A B. Returns the exit status. */
int ft_cmd_report_diff(const struct ft_options *o, FILE *out);

#endif
