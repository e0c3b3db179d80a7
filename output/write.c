/* output: the dispatch to one file per format; the formats' shared
 * helpers are in format.c, so no two files call each other. */
#include <errno.h>
#include "output/out_internal.h"

int out_write(FILE *f, const struct out_options *o, const struct agg_named_stack *stacks,
	      size_t n, const struct out_totals *totals)
{
	if (!f || !o || (n && !stacks))
		return -EINVAL;
	switch (o->format) {
	case OUT_TEXT:
		return out_write_text(f, o, stacks, n);
	case OUT_FOLDED:
		return out_write_folded(f, o, stacks, n);
	case OUT_TOP:
		return out_write_top(f, o, stacks, n, totals);
	case OUT_PPROF:
		return out_write_pprof(f, o, stacks, n);
	case OUT_SPEEDSCOPE:
		return out_write_speedscope(f, o, stacks, n);
	case OUT_SVG:
		return out_write_svg(f, o, stacks, n);
	}
	return -EINVAL;
}
