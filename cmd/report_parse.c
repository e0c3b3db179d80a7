/* ftstack report's input: saved stack text (ftrace trace/trace_pipe, perf
 * script, hist triggers, folded) parsed by report/ into named stacks, with
 * -K/-U, --through, the events kept apart and weighted by their periods
 * where the input has them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mem/mem.h"
#include "cmd/report_cmd.h"
#include "fleet/fleet.h"

/* Reads FILE ("-": standard input) whole. Returns its length or -errno. */
static long read_all(const char *file, char **out)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	struct stat st;
	if (!f || !buf || (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))) {
		int e = !f ? errno : !buf ? ENOMEM : EISDIR;
		free(buf);
		if (f && f != stdin)
			fclose(f);
		return -e;
	}
	size_t n;
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap && MEM_GROW(buf, cap, len + 1, 1 << 16)) {
			free(buf);
			len = 0;
			buf = NULL;
			break;
		}
	}
	bool bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (!buf || bad) {
		free(buf);
		return buf ? -EIO : -ENOMEM;
	}
	*out = buf;
	return (long)len;
}

/* Parses one file into c->named. Returns 0, 2 after saying why (unreadable,
 * none of the formats, or clickhouse:// refused), or 1 (out of memory). */
int ft_report_parse_file(struct report_ctx *c, const char *file)
{
	if (fleet_is_url(file))
		return ft_report_clickhouse(c, file);
	char *buf = NULL;
	long len = read_all(file, &buf);
	if (len < 0) {
		ft_error("cannot read %s: %s", file, strerror((int)-len));
		return 2;
	}
	enum report_format fmt = REPORT_AUTO;
	if (c->o->input_format)
		report_format_parse(c->o->input_format, &fmt);
	struct report_stats st = { 0 };
	int ret = report_parse(buf, (size_t)len, fmt, ft_report_on_stack, c, &st);
	bool binary = ret < 0 && fmt == REPORT_AUTO && report_is_binary(buf, (size_t)len);
	free(buf);
	if (c->err) {
		ft_error("out of memory reading %s", file);
		return 1;
	}
	if (ret < 0) {
		ft_error("%s: no stack traces found (%snot ftrace text, perf script, "
			"hist trigger or folded output; --input-format forces one)", file,
			binary ? "binary data, " : "");
		return 2;
	}
	if (st.orphans)
		ft_warn("warning: %s: %" PRIu64 " frame lines follow a blank line "
			"without a sample header: ignored, as stackcollapse-perf.pl does", file,
			st.orphans);
	if (st.malformed || st.truncated)
		ft_warn("warning: %s: %" PRIu64 " lines could not be parsed%s; "
			"the result is partial", file, st.malformed,
			st.truncated ? " and the input ends inside a stack" : "");
	ft_warn("%s: %s, %" PRIu64 " stacks, %" PRIu64 " events, %" PRIu64
		" tracing-machinery frames dropped", file, report_format_name(st.format),
		st.stacks, st.events, st.machinery);
	return 0;
}

/* Which events print summed periods (c->ev_weighted), said on stderr.
 * Returns true when any does. */
bool ft_report_weigh(struct report_ctx *c)
{
	bool any = false;
	for (int i = 0; i < c->nevents; i++) {
		const char *name = *c->events[i] ? c->events[i] : "samples";
		uint64_t n = c->ev_samples[i], p = c->ev_periods[i];
		bool w = c->o->weight == FT_WEIGHT_PERIOD ? p > 0 :
			 c->o->weight == FT_WEIGHT_AUTO && p > 0 && p == n;
		c->ev_weighted[i] = w;
		any |= w;
		if (w)
			ft_warn("%s: %" PRIu64 " samples weighted by their period",
				name, n);
		if (w && p < n)
			ft_warn("%s: %" PRIu64 " samples show no period: "
				"counted 1 each", name, n - p);
		if (!w && p && c->o->weight == FT_WEIGHT_AUTO)
			ft_warn("%s: only %" PRIu64 " of %" PRIu64 " samples show a "
				"period: samples counted (--weight period sums periods)",
				name, p, n);
	}
	return any;
}

void ft_report_out_options(const struct report_ctx *c, struct out_options *oo)
{
	const struct ft_options *o = c->o;
	*oo = (struct out_options){
		.format = o->format, .delimiter = o->delimiter, .annotate = o->annotate,
		.per_process = o->per_process, .comm_pid = o->pid_frame,
		.show_comm = c->have_comm && out_format_shows_comm(o->format),
		.event_names = (const char *const *)c->events, .nevents = (uint32_t)c->nevents,
		.event_frame = c->nevents > 1, .title = "ftstack report",
		.event_weighted = c->ev_weighted,
		.weight_type = c->nevents == 1 ? c->events[0] : "event",
	};
}

void ft_report_ctx_free(struct report_ctx *c)
{
	agg_named_free(c->named);
	for (int i = 0; i < c->nevents; i++)
		free(c->events[i]);
}
