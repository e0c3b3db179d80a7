/* ftstack report: saved stack text (report_parse.c) written with the
 * count-mode options and formats through the result writer; --diff A B
 * (report_diff.c) prints each stack's count in A and in B. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/report_cmd.h"
#include "collector/result.h"

int ft_report_write(struct report_ctx *c, FILE *out)
{
	struct agg_named_stats st;
	struct out_options oo;
	bool any_weighted = ft_report_weigh(c);
	ft_report_out_options(c, &oo);
	int ret = ft_result_write(c->named, c->o, &oo, any_weighted,
				  c->nevents == 1 ? c->events[0] : "event", out, &st);
	struct ft_summary sm = { .weighted = any_weighted, .through_miss = c->through_miss,
				 .through = c->o->through };
	ft_result_summary(&sm, &st);
	return ret;
}

int ft_cmd_report(const struct ft_options *o)
{
	if (o->diff) {
		struct ft_dest res = { 0 };
		int status = ft_dest_open(o, &res);
		if (status == 0)
			status = ft_cmd_report_diff(o, res.f);
		if (ft_dest_close(o, &res, status == 0) != 0)
			status = 1;
		return status;
	}
	struct report_ctx c = { .o = o };
	struct ft_dest res = { 0 };
	struct ft_names names = { 0 };
	int status = 1;
	if (agg_named_alloc(&c.named) < 0)
		return 1;
	/* -o is refused (a symlink, a directory) before any input is read */
	if ((status = ft_dest_open(o, &res)) != 0 || (status = ft_report_names_open(&c, &names)) != 0)
		goto cleanup;
	for (int i = 0; i < o->nreport_files; i++)
		if ((status = ft_report_parse_file(&c, o->report_files[i])) != 0)
			goto cleanup;
	int ret = ft_report_write(&c, res.f);
	status = 1;
	if (ret < 0 && ret != -EPIPE)
		ft_error("writing the result failed: %s", strerror(-ret));
	else
		status = 0;
cleanup:
	if (ft_dest_close(o, &res, status == 0) != 0)
		status = 1;
	ft_report_names_close(&c, &names);
	ft_report_ctx_free(&c);
	return status;
}
