/* ftstack report --diff A B: every stack with its count in A and in B, in
 * difffolded.pl's "stack countA countB" form (a stack missing from one side
 * counts 0 there), sorted by stack. Stacks are named exactly as the folded
 * format names them, so -d, -a, -K, -U, --through and -x apply. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "collector/report_cmd.h"

struct diff_line {
	char *stack;
	uint64_t count[2];
};

struct diff {
	struct diff_line *l;
	size_t n, cap;
};

/* Folds FILE (as `report -f` would print it) into D under side SIDE. */
static int fold_side(const struct ft_options *o, const char *file, int side, struct diff *d)
{
	struct ft_options one = *o;
	one.format = OUT_FOLDED;
	one.min_count = 0;
	one.top = 0;
	struct report_ctx c = { .o = &one };
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int ret = mem && agg_named_create(&c.named) == 0 ? 0 : -ENOMEM;
	if (ret == 0 && ft_report_parse_file(&c, file) != 0)
		ret = -EINVAL;
	if (ret == 0)
		ret = ft_report_write(&c, mem);
	if (mem)
		fclose(mem);
	ft_report_ctx_free(&c);
	for (char *save = NULL, *line = ret == 0 && text ? strtok_r(text, "\n", &save) : NULL;
	     line && ret == 0; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		if (d->n == d->cap) {
			size_t cap = d->cap ? d->cap * 2 : 256;
			struct diff_line *nl = realloc(d->l, cap * sizeof(*nl));
			if (!nl) {
				ret = -ENOMEM;
				break;
			}
			d->l = nl;
			d->cap = cap;
		}
		struct diff_line *l = &d->l[d->n];
		memset(l, 0, sizeof(*l));
		if (!(l->stack = strdup(line))) {
			ret = -ENOMEM;
			break;
		}
		l->count[side] = strtoull(sp + 1, NULL, 10);
		d->n++;
	}
	free(text);
	return ret;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct diff_line *)a)->stack, ((const struct diff_line *)b)->stack);
}

int ft_cmd_report_diff(const struct ft_options *o, FILE *out)
{
	struct diff d = { 0 };
	int status = 1;
	int ret = fold_side(o, o->report_files[0], 0, &d);
	if (ret == 0)
		ret = fold_side(o, o->report_files[1], 1, &d);
	if (ret < 0) {
		status = ret == -EINVAL ? 2 : 1; /* bad input, as in report */
		goto cleanup;
	}
	qsort(d.l, d.n, sizeof(*d.l), line_cmp);
	for (size_t i = 0; i < d.n;) {
		size_t j = i + 1;
		uint64_t a = d.l[i].count[0], b = d.l[i].count[1];
		for (; j < d.n && strcmp(d.l[j].stack, d.l[i].stack) == 0; j++) {
			a += d.l[j].count[0];
			b += d.l[j].count[1];
		}
		if (fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", d.l[i].stack, a, b) < 0)
			break;
		i = j;
	}
	status = fflush(out) == 0 || errno == EPIPE ? 0 : 1;
cleanup:
	for (size_t i = 0; i < d.n; i++)
		free(d.l[i].stack);
	free(d.l);
	return status;
}
