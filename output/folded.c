/* output: FlameGraph's folded lines, "comm;root;...;leaf COUNT". */
#include <inttypes.h>
#include "output/out_internal.h"

int out_write_folded(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		     size_t n)
{
	for (size_t i = 0; i < n && !ferror(f); i++) {
		char **names;
		enum out_kind *kernel;
		int nn = out_folded_names(o, &s[i], &names, &kernel);
		if (nn < 0)
			return nn;
		for (int j = 0; j < nn; j++)
			fprintf(f, "%s%s", j ? ";" : "", names[j]);
		fprintf(f, " %" PRIu64 "\n", out_value(o, &s[i]));
		out_names_free(names, (size_t)nn, kernel);
	}
	return out_finish(f);
}
