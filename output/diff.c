/* output: difffolded.pl's lines, "comm;root;...;leaf COUNT_A COUNT_B",
 * sorted by stack; stacks whose folded names are the same are one line. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "output/out_internal.h"

struct diff_line {
	char *stack;
	uint64_t a, b;
};

static int line_cmp(const void *x, const void *y)
{
	return strcmp(((const struct diff_line *)x)->stack, ((const struct diff_line *)y)->stack);
}

/* S's folded name, joined by ';' (malloc'd), or NULL. */
static char *folded_line(const struct out_options *o, const struct agg_named_stack *s)
{
	char **names;
	enum out_kind *kind;
	int nn = out_folded_names(o, s, &names, &kind);
	if (nn < 0)
		return NULL;
	size_t len = 1;
	for (int j = 0; j < nn; j++)
		len += strlen(names[j]) + 1;
	char *line = malloc(len), *w = line;
	for (int j = 0; line && j < nn; j++) {
		size_t l = strlen(names[j]);
		if (j)
			*w++ = ';';
		memcpy(w, names[j], l);
		w += l;
	}
	if (line)
		*w = '\0';
	out_names_free(names, (size_t)nn, kind);
	return line;
}

int out_write_diff(FILE *f, const struct out_options *o, const struct agg_named_stack *s, size_t n)
{
	struct diff_line *l = calloc(n + 1, sizeof(*l));
	int ret = l ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && ret == 0; i++) {
		l[i] = (struct diff_line){ folded_line(o, &s[i]), s[i].count, s[i].weight };
		if (!l[i].stack)
			ret = -ENOMEM;
	}
	if (ret == 0)
		qsort(l, n, sizeof(*l), line_cmp);
	for (size_t i = 0; i < n && ret == 0 && !ferror(f);) {
		size_t j = i + 1;
		uint64_t a = l[i].a, b = l[i].b;
		for (; j < n && strcmp(l[j].stack, l[i].stack) == 0; j++) {
			a += l[j].a;
			b += l[j].b;
		}
		fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", l[i].stack, a, b);
		i = j;
	}
	for (size_t i = 0; l && i < n; i++)
		free(l[i].stack);
	free(l);
	return ret < 0 ? ret : out_finish(f);
}
