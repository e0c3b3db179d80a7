/* output: bcc stackcount/profile/offcputime text. */
#include <inttypes.h>
#include "output/out_internal.h"

static void text_stack(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		       const struct out_path *p)
{
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "    %s\n", p->v[i].name);
	if (o->per_process && p->comm)
		fprintf(f, "    -                %s (%" PRIu32 ")\n", p->comm, s->pid);
	if (p->cgroup)
		fprintf(f, "    -                cgroup %s\n", p->cgroup);
	fprintf(f, "        %" PRIu64 "\n\n", out_value(o, s));
}

int out_write_text(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		   size_t n)
{
	for (size_t i = 0; i < n && !ferror(f); i++) {
		struct out_path p;
		int ret = out_path_build(o, &s[i], "--", &p);
		if (ret)
			return ret;
		text_stack(f, o, &s[i], &p);
		out_path_free(&p);
	}
	return out_finish(f);
}
