/* output: systemtap kmalloc-top's report. */
#include <inttypes.h>
#include "output/out_internal.h"

static void top_summary(FILE *f, const struct agg_named_stack *s, size_t n,
			const struct out_totals *totals)
{
	struct agg_named_stats st = { .stacks_before = n, .stacks_after = n };
	const char *label = totals && totals->event_label ? totals->event_label : "event";
	if (totals && totals->named) {
		st = *totals->named;
	} else {
		for (size_t i = 0; i < n; i++)
			st.count_before += s[i].count;
		st.count_after = st.count_before;
	}
	double pct = st.count_before ? (double)st.count_after * 100.0 / (double)st.count_before
				     : 0.0;
	fprintf(f, "Num stacks before filtering: %zu\n", st.stacks_before);
	fprintf(f, "Num stacks after filtering: %zu\n", st.stacks_after);
	fprintf(f, "Total %ss (before filtering): %" PRIu64 "\n", label, st.count_before);
	fprintf(f, "Total %ss (after filtering): %" PRIu64 "\n", label, st.count_after);
	fprintf(f, "The filter stacks have %.1f%% of the %ss\n", pct, label);
}

int out_write_top(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		  size_t n, const struct out_totals *totals)
{
	for (size_t i = 0; i < n && !ferror(f); i++) {
		struct out_path p;
		int ret = out_path_build(o, &s[i], "--", &p);
		if (ret)
			return ret;
		fprintf(f, "This path seen %" PRIu64 " times:\n", s[i].count);
		for (size_t j = 0; j < p.n; j++)
			fprintf(f, " %s\n", p.v[j].name);
		fputc('\n', f);
		out_path_free(&p);
	}
	top_summary(f, s, n, totals);
	return out_finish(f);
}
