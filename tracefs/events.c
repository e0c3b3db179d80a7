/* Tracepoints: listing by glob or regex, "did you mean", formats and ids. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tracefs/tracefs.h"

struct matcher {
	bool regex;
	const char *glob;
	regex_t re;
};

static int matcher_init(struct matcher *m, const char *pat, bool regex)
{
	m->regex = regex;
	m->glob = pat;
	if (!regex)
		return 0;
	char anchored[512];
	snprintf(anchored, sizeof(anchored), "^(%s)$", pat);
	return regcomp(&m->re, anchored, REG_EXTENDED | REG_NOSUB) == 0 ? 0 : -EINVAL;
}

static bool matcher_match(const struct matcher *m, const char *s)
{
	return m->regex ? regexec(&m->re, s, 0, NULL, 0) == 0 : fnmatch(m->glob, s, 0) == 0;
}

static void matcher_free(struct matcher *m)
{
	if (m->regex)
		regfree(&m->re);
}

static int read_id(const char *root, const char *sys, const char *name, uint32_t *id)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sys, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int ret = fscanf(f, "%u", id) == 1 ? 0 : -EINVAL;
	fclose(f);
	return ret;
}

int tracefs_event_id(const char *root, const char *system, const char *name, uint32_t *id)
{
	return read_id(root, system, name, id);
}

static int ev_cmp(const void *a, const void *b)
{
	const struct tracefs_event *x = a, *y = b;
	int c = strcmp(x->system, y->system);
	return c ? c : strcmp(x->name, y->name);
}

/* Calls fn for every event directory SYSTEM/NAME under ROOT/events. */
static int foreach_event(const char *root, int (*fn)(void *, const char *, const char *),
			 void *ctx)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/events", root);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int ret = 0;
	for (struct dirent *s; ret == 0 && (s = readdir(d));) {
		if (s->d_name[0] == '.' || s->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", root, s->d_name);
		DIR *sd = opendir(path);
		for (struct dirent *e; sd && ret == 0 && (e = readdir(sd));)
			if (e->d_name[0] != '.' && e->d_type == DT_DIR)
				ret = fn(ctx, s->d_name, e->d_name);
		if (sd)
			closedir(sd);
	}
	closedir(d);
	return ret;
}

struct match_ctx {
	const char *root;
	struct matcher sys, name;
	struct tracefs_event *evs;
	int n, cap;
};

static int on_match(void *arg, const char *sys, const char *name)
{
	struct match_ctx *c = arg;
	if (!matcher_match(&c->sys, sys) || !matcher_match(&c->name, name))
		return 0;
	struct tracefs_event ev = { .id = 0 };
	if (strlen(sys) >= sizeof(ev.system) || strlen(name) >= sizeof(ev.name) ||
	    read_id(c->root, sys, name, &ev.id) < 0)
		return 0;
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 64;
		struct tracefs_event *n = realloc(c->evs, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->evs = n;
		c->cap = cap;
	}
	strcpy(ev.system, sys);
	strcpy(ev.name, name);
	c->evs[c->n++] = ev;
	return 0;
}

int tracefs_events_match(const char *root, const char *system_pat, const char *name_pat,
			 bool regex, struct tracefs_event **out)
{
	struct match_ctx c = { .root = root };
	*out = NULL;
	if (matcher_init(&c.sys, system_pat, regex) < 0)
		return -EINVAL;
	if (matcher_init(&c.name, name_pat, regex) < 0) {
		matcher_free(&c.sys);
		return -EINVAL;
	}
	int ret = foreach_event(root, on_match, &c);
	matcher_free(&c.sys);
	matcher_free(&c.name);
	if (ret < 0) {
		free(c.evs);
		return ret;
	}
	if (c.n)
		qsort(c.evs, (size_t)c.n, sizeof(*c.evs), ev_cmp);
	*out = c.evs;
	return c.n;
}

static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 200 || lb > 200)
		return 1000;
	int row[201];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int sub = diag + (a[i - 1] != b[j - 1]);
			int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
			row[j] = sub < best ? sub : best;
			diag = up;
		}
	}
	return row[lb];
}

#define SUGGEST_MAX 8

struct suggest_ctx {
	const char *system, *name;
	char best[SUGGEST_MAX][200];
	int dist[SUGGEST_MAX];
	int n, max;
};

static int on_suggest(void *arg, const char *sys, const char *name)
{
	struct suggest_ctx *c = arg;
	char full[200], want[200];
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	snprintf(want, sizeof(want), "%s:%s", c->system, c->name);
	int d1 = distance(want, full), d2 = distance(c->name, name) + 1;
	int d = d1 < d2 ? d1 : d2;
	int i = c->n;
	while (i > 0 && (c->dist[i - 1] > d || (c->dist[i - 1] == d &&
			 strcmp(c->best[i - 1], full) > 0)))
		i--;
	if (i >= c->max)
		return 0;
	int last = c->n < c->max ? c->n : c->max - 1;
	for (int j = last; j > i; j--) {
		c->dist[j] = c->dist[j - 1];
		memcpy(c->best[j], c->best[j - 1], sizeof(c->best[j]));
	}
	c->dist[i] = d;
	snprintf(c->best[i], sizeof(c->best[i]), "%s", full);
	if (c->n < c->max)
		c->n++;
	return 0;
}

int tracefs_events_suggest(const char *root, const char *system, const char *name, int max,
			   char *buf, size_t len)
{
	struct suggest_ctx c = { .system = system, .name = name,
				 .max = max < SUGGEST_MAX ? max : SUGGEST_MAX };
	if (len)
		buf[0] = '\0';
	if (c.max <= 0 || foreach_event(root, on_suggest, &c) < 0)
		return 0;
	int written = 0;
	for (int i = 0; i < c.n; i++) {
		/* only names that are plausibly what was meant */
		if (c.dist[i] > 1 + (int)strlen(name) / 2)
			break;
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, "%s%s", written ? ", " : "", c.best[i]);
		written++;
	}
	return written;
}

int tracefs_event_fields(const char *root, const char *system, const char *name,
			 struct tracefs_field **out)
{
	char rel[400], *text = NULL;
	snprintf(rel, sizeof(rel), "events/%s/%s/format", system, name);
	ssize_t len = tracefs_read_file(root, rel, &text);
	if (len < 0)
		return (int)len;
	int n = 0, cap = 16;
	struct tracefs_field *f = malloc((size_t)cap * sizeof(*f));
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); f && line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *decl = strstr(line, "field:"), *semi;
		unsigned off, size;
		int sign = 0;
		char *o = strstr(line, "offset:"), *s = strstr(line, "size:"), *g = strstr(line, "signed:");
		if (!decl || !o || !s || !(semi = strchr(decl, ';')) ||
		    sscanf(o, "offset:%u", &off) != 1 || sscanf(s, "size:%u", &size) != 1)
			continue;
		if (g)
			sscanf(g, "signed:%d", &sign);
		*semi = '\0';
		char *br = strchr(decl, '[');
		if (br)
			*br = '\0';
		char *end = decl + strlen(decl);
		while (end > decl && end[-1] == ' ')
			*--end = '\0';
		char *id = end;
		while (id > decl && (id[-1] == '_' || (id[-1] >= 'a' && id[-1] <= 'z') ||
		       (id[-1] >= 'A' && id[-1] <= 'Z') || (id[-1] >= '0' && id[-1] <= '9')))
			id--;
		if (!*id)
			continue;
		if (n == cap) {
			struct tracefs_field *nf = realloc(f, (size_t)(cap *= 2) * sizeof(*nf));
			if (!nf)
				break;
			f = nf;
		}
		memset(&f[n], 0, sizeof(f[n]));
		snprintf(f[n].name, sizeof(f[n].name), "%s", id);
		f[n].offset = off;
		f[n].size = size;
		f[n].is_signed = sign != 0;
		n++;
	}
	free(text);
	if (!f)
		return -ENOMEM;
	*out = f;
	return n;
}

const struct tracefs_field *tracefs_field_find(const struct tracefs_field *fields, int n,
					       const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}
