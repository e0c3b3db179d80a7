/* output: the helpers every format shares (write.c dispatches). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "output/out_internal.h"

static const char *const format_names[] = {
	[OUT_TEXT] = "text",   [OUT_FOLDED] = "folded",         [OUT_TOP] = "top",
	[OUT_PPROF] = "pprof", [OUT_SPEEDSCOPE] = "speedscope", [OUT_SVG] = "svg",
};

int out_format_parse(const char *name, enum out_format *out)
{
	if (!name || !out)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(name, format_names[i]) == 0) {
			*out = (enum out_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool out_format_shows_comm(enum out_format f)
{
	return f != OUT_TEXT && f != OUT_TOP;
}

bool out_needs_comm(enum out_format f, bool per_process)
{
	return per_process || out_format_shows_comm(f);
}

char *out_folded_frame(const char *name, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	if (!name)
		name = OUT_UNKNOWN;
	size_t i = 0;
	for (; name[i] && i + 1 < len; i++) {
		char c = name[i];
		/* FlameGraph splits frames on ';' and lines on newlines. */
		buf[i] = (c == ';' || c == '\n' || c == '\r') ? '_' : c;
	}
	buf[i] = '\0';
	return buf;
}

uint64_t out_value(const struct out_options *o, const struct agg_named_stack *s)
{
	bool weighted = o->event_weighted && s->event < o->nevents && o->event_weighted[s->event];
	return o->mode == OUT_MODE_OFFCPU || weighted ? s->weight : s->count;
}

bool out_any_weighted(const struct out_options *o)
{
	for (uint32_t i = 0; o->event_weighted && i < o->nevents; i++)
		if (o->event_weighted[i])
			return true;
	return false;
}

bool out_annotated(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && name[n - 4] == '_' && name[n - 3] == '[' && name[n - 1] == ']' &&
	       strchr("kij", name[n - 2]);
}

/* NAME cleaned: itself, or a copy P owns. NULL on -ENOMEM. */
static const char *path_clean(struct out_path *p, const char *name)
{
	int err = 0;
	char *c = out_clean_name(name, &err);
	if (!c)
		return err ? NULL : name;
	if (MEM_GROW(p->own, p->capown, p->nown + 1, 8)) {
		free(c);
		return NULL;
	}
	p->own[p->nown++] = c;
	return c;
}

static bool shows_event(const struct out_options *o, uint32_t ev)
{
	if (!o->event_frame || !o->event_names || ev >= o->nevents || !o->event_names[ev] ||
	    !o->event_names[ev][0]) /* saved text without an event name */
		return false;
	return !(o->event_in_stack && o->event_in_stack[ev]);
}

int out_path_build(const struct out_options *o, const struct agg_named_stack *s,
		   const char *delim, struct out_path *p)
{
	size_t nk = s->nkframes, nu = s->nuframes;
	*p = (struct out_path){ 0 };
	p->v = calloc(nk + nu + 2, sizeof(*p->v));
	if (!p->v)
		return -ENOMEM;
	if (shows_event(o, s->event)) {
		const char *ev = path_clean(p, o->event_names[s->event]);
		if (!ev || asprintf(&p->event, "[%s]", ev) < 0) {
			p->event = NULL;
			out_path_free(p);
			return -ENOMEM;
		}
		p->v[p->n++] = (struct out_frame){ p->event, false, true };
	}
	for (size_t i = 0; i < nk + nu; i++) {
		if (i == nk && nk && nu && delim && o->delimiter)
			p->v[p->n++] = (struct out_frame){ delim, false, true };
		const char *name = s->frames && s->frames[i] ? s->frames[i] : OUT_UNKNOWN;
		/* folded input's frames keep their _[k] where it cannot be split off */
		bool kernel = i < nk || (out_annotated(name) && name[strlen(name) - 2] == 'k');
		if (!(name = path_clean(p, name))) {
			out_path_free(p);
			return -ENOMEM;
		}
		p->v[p->n++] = (struct out_frame){ name, kernel, false };
	}
	if ((s->comm && !(p->comm = path_clean(p, s->comm))) ||
	    (s->cgroup && !(p->cgroup = path_clean(p, s->cgroup)))) {
		out_path_free(p);
		return -ENOMEM;
	}
	return 0;
}

void out_path_free(struct out_path *p)
{
	free(p->v);
	free(p->event);
	for (size_t i = 0; i < p->nown; i++)
		free(p->own[i]);
	free(p->own);
	*p = (struct out_path){ 0 };
}

static char *folded_dup(const char *name, bool kernel_suffix)
{
	size_t len = strlen(name) + 1;
	kernel_suffix &= !out_annotated(name); /* inlined (_[i]) or already _[k] */
	char *buf = malloc(len + (kernel_suffix ? 4 : 0));
	if (!buf)
		return NULL;
	out_folded_frame(name, buf, len);
	if (kernel_suffix)
		memcpy(buf + len - 1, "_[k]", 5);
	return buf;
}

/* The root frame: the comm, "comm-PID" with -P (stackcollapse-perf.pl
 * --pid), blanks as '_' as stackcollapse-perf writes them. */
static char *comm_frame(const struct out_options *o, const struct agg_named_stack *s,
			const char *comm)
{
	char *c = NULL;
	if (!comm)
		comm = OUT_UNKNOWN;
	if (!(o->comm_pid && s->pid))
		c = strdup(comm);
	else if (asprintf(&c, "%s-%" PRIu32, comm, s->pid) < 0)
		c = NULL;
	for (char *q = c; q && *q; q++)
		if (*q == ' ' || *q == ';' || *q == '\n' || *q == '\r')
			*q = '_';
	return c;
}

int out_folded_names(const struct out_options *o, const struct agg_named_stack *s,
		     char ***names, enum out_kind **kind)
{
	struct out_path p;
	int ret = out_path_build(o, s, "-", &p);
	if (ret)
		return ret;
	size_t cap = p.n + 2, n = 0;
	char **v = calloc(cap, sizeof(*v));
	enum out_kind *k = calloc(cap, sizeof(*k));
	if (!v || !k)
		goto nomem;
	/* --per-cgroup: the cgroup is the root, each container a tower */
	if (p.cgroup) {
		k[n] = OUT_K_OTHER;
		if (!(v[n++] = folded_dup(p.cgroup, false)))
			goto nomem;
	}
	if (o->show_comm) {
		k[n] = OUT_K_OTHER;
		if (!(v[n++] = comm_frame(o, s, p.comm)))
			goto nomem;
	}
	/* The path is leaf first; folded is root first. */
	for (size_t i = p.n; i-- > 0;) {
		const struct out_frame *fr = &p.v[i];
		k[n] = fr->synthetic ? OUT_K_OTHER : fr->kernel ? OUT_K_KERNEL : OUT_K_USER;
		if (!(v[n++] = folded_dup(fr->name, fr->kernel && o->annotate)))
			goto nomem;
	}
	out_path_free(&p);
	*names = v;
	*kind = k;
	return (int)n;
nomem:
	out_names_free(v, n, k);
	out_path_free(&p);
	return -ENOMEM;
}

void out_names_free(char **names, size_t n, enum out_kind *kind)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(kind);
}

long out_strtab_intern(struct out_strtab *t, const char *s)
{
	struct agg_probe p;
	if (agg_index_reserve(&t->index) < 0)
		return -1;
	for (uint32_t i = agg_index_first(&t->index, agg_hash_str(s), &p); i;
	     i = agg_index_next(&t->index, &p))
		if (strcmp(t->str[i - 1], s) == 0)
			return (long)(i - 1);
	if (t->n + 1 >= UINT32_MAX || MEM_GROW(t->str, t->cap, t->n + 1, 32))
		return -1;
	char *copy = strdup(s);
	if (!copy)
		return -1;
	t->str[t->n++] = copy;
	agg_index_put(&t->index, &p, (uint32_t)t->n);
	return (long)(t->n - 1);
}

void out_strtab_free(struct out_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	agg_index_clear(&t->index);
	*t = (struct out_strtab){ 0 };
}

int out_finish(FILE *f)
{
	/* A write that already failed left errno saying why (EPIPE or not). */
	if (ferror(f))
		return errno == EPIPE ? -EPIPE : -EIO;
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		return errno == EPIPE ? -EPIPE : -EIO;
	return 0;
}
