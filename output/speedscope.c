/* output: speedscope's file format: one "sampled" profile, or with
 * --per-cgroup one a cgroup, named by its path (speedscope's profile list
 * is how it shows several). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "output/out_internal.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static uint64_t ss_weight(const struct out_options *o, const struct agg_named_stack *s)
{
	if (o->mode == OUT_MODE_PROFILE)
		return o->period_ns ? s->count * o->period_ns : s->weight;
	return out_value(o, s);
}

static const char *ss_unit(const struct out_options *o)
{
	return o->mode == OUT_MODE_PROFILE ? "nanoseconds" :
	       o->mode == OUT_MODE_OFFCPU  ? "microseconds" : "none";
}

/* Per stack: frame indexes root first, as speedscope's samples are. */
struct ss_sample {
	long *idx;
	size_t n;
};

static int ss_collect(const struct out_options *o, const struct agg_named_stack *s, size_t n,
		      struct out_strtab *frames, struct ss_sample *out)
{
	for (size_t i = 0; i < n; i++) {
		char **names;
		enum out_kind *kernel;
		struct agg_named_stack one = s[i];
		one.cgroup = NULL; /* the profile's name, not a frame */
		int nn = out_folded_names(o, &one, &names, &kernel);
		if (nn < 0)
			return nn;
		int ret = 0;
		out[i].idx = calloc((size_t)nn + 1, sizeof(long));
		out[i].n = (size_t)nn;
		for (int j = 0; j < nn && out[i].idx; j++) {
			out[i].idx[j] = out_strtab_intern(frames, names[j]);
			if (out[i].idx[j] < 0)
				ret = -ENOMEM;
		}
		if (!out[i].idx)
			ret = -ENOMEM;
		out_names_free(names, (size_t)nn, kernel);
		if (ret)
			return ret;
	}
	return 0;
}

static bool same_cgroup(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The profile of the stacks of cgroup CG (all of them when none has one). */
static void ss_profile(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		       size_t n, const char *cg, const struct ss_sample *smp)
{
	uint64_t total = 0;
	bool first = true;
	for (size_t i = 0; i < n; i++)
		if (same_cgroup(s[i].cgroup, cg))
			total += ss_weight(o, &s[i]);
	fputs("{\"type\":\"sampled\",\"name\":", f);
	json_str(f, cg ? cg : o->title ? o->title : "ftstack");
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
		ss_unit(o), total);
	for (size_t i = 0; i < n; i++) {
		if (!same_cgroup(s[i].cgroup, cg))
			continue;
		fputs(first ? "[" : ",[", f);
		first = false;
		for (size_t j = 0; j < smp[i].n; j++)
			fprintf(f, j ? ",%ld" : "%ld", smp[i].idx[j]);
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	first = true;
	for (size_t i = 0; i < n; i++) {
		if (!same_cgroup(s[i].cgroup, cg))
			continue;
		fprintf(f, first ? "%" PRIu64 : ",%" PRIu64, ss_weight(o, &s[i]));
		first = false;
	}
	fputs("]}", f);
}

static void ss_emit(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		    size_t n, const struct out_strtab *frames, const struct ss_sample *smp)
{
	const char *title = o->title ? o->title : "ftstack";
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < frames->n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		json_str(f, frames->str[i]);
		fputc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	size_t profiles = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_cgroup(s[j].cgroup, s[i].cgroup);
		if (seen)
			continue;
		if (profiles++)
			fputc(',', f);
		ss_profile(f, o, s, n, s[i].cgroup, smp);
	}
	if (!profiles)
		ss_profile(f, o, s, n, NULL, smp);
	fputs("],\"name\":", f);
	json_str(f, title);
	fputs(",\"activeProfileIndex\":0,\"exporter\":\"ftstack\"}\n", f);
}

int out_write_speedscope(FILE *f, const struct out_options *o,
			 const struct agg_named_stack *s, size_t n)
{
	struct out_strtab frames = { 0 };
	struct ss_sample *smp = calloc(n + 1, sizeof(*smp));
	int ret = smp ? ss_collect(o, s, n, &frames, smp) : -ENOMEM;
	if (!ret)
		ss_emit(f, o, s, n, &frames, smp);
	for (size_t i = 0; smp && i < n; i++)
		free(smp[i].idx);
	free(smp);
	out_strtab_free(&frames);
	return ret ? ret : out_finish(f);
}
