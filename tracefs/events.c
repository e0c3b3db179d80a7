/* Tracepoints: listing by glob or regex, "did you mean", ids.
 * Every directory ROOT/events/SYSTEM/NAME holding an id file is an event; the
 * "enable"/"filter" files beside them are skipped. The "ftrace" system (the
 * tracer's own record formats, e.g. ftrace:kernel_stack) is listed too: it has
 * ids, and the raw decoder needs them, even though perf cannot open it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mem/mem.h"
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

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
	/* anchored: "sched_.*" must not match "xsched_foo" */
	char anchored[512];
	int n = snprintf(anchored, sizeof(anchored), "^(%s)$", pat);
	if (n < 0 || (size_t)n >= sizeof(anchored))
		return -EINVAL;
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

int tfs_event_id(const char *root, const char *system, const char *name, uint32_t *id)
{
	char path[512], text[32];
	int n = snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, system, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = read(fd, text, sizeof(text) - 1);
	int e = errno;
	close(fd);
	if (r < 0)
		return -e;
	text[r] = '\0';
	char *end;
	unsigned long v = strtoul(text, &end, 10);
	if (end == text || (*end && *end != '\n') || v > UINT32_MAX)
		return -EINVAL;
	*id = (uint32_t)v;
	return 0;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct tfs_event *x = a, *y = b;
	int c = strcmp(x->system, y->system);
	return c ? c : strcmp(x->name, y->name);
}

/* Whether the entry E of directory DIR is a subdirectory. */
static bool entry_is_dir(const char *dir, const struct dirent *e)
{
	if (e->d_name[0] == '.')
		return false;
	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_DIR;
	char path[768];
	return tfs_join(path, sizeof(path), dir, e->d_name) == 0 && tfs_is_dir(path);
}

/* Calls fn for every event directory SYSTEM/NAME under ROOT/events, stopping
 * at the first non-zero return. */
static int foreach_event(const char *root, int (*fn)(void *, const char *, const char *),
			 void *ctx)
{
	char top[512], sdir[768];
	if (tfs_join(top, sizeof(top), root, "events") < 0)
		return -ENAMETOOLONG;
	DIR *d = opendir(top);
	if (!d)
		return -errno;
	int ret = 0;
	for (struct dirent *s; ret == 0 && (s = readdir(d));) {
		if (!entry_is_dir(top, s) || tfs_join(sdir, sizeof(sdir), top, s->d_name) < 0)
			continue;
		DIR *sd = opendir(sdir);
		for (struct dirent *e; sd && ret == 0 && (e = readdir(sd));)
			if (entry_is_dir(sdir, e))
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
	struct tfs_event *evs;
	int n;
	size_t cap;
};

static int on_match(void *arg, const char *sys, const char *name)
{
	struct match_ctx *c = arg;
	struct tfs_event ev = { .id = 0 };
	if (strlen(sys) >= sizeof(ev.system) || strlen(name) >= sizeof(ev.name) ||
	    !matcher_match(&c->sys, sys) || !matcher_match(&c->name, name) ||
	    tfs_event_id(c->root, sys, name, &ev.id) < 0)
		return 0;
	if (MEM_GROW(c->evs, c->cap, (size_t)c->n + 1, 64))
		return -ENOMEM;
	strcpy(ev.system, sys);
	strcpy(ev.name, name);
	c->evs[c->n++] = ev;
	return 0;
}

int tfs_events_match(const char *root, const char *system_pat, const char *name_pat,
			 bool regex, struct tfs_event **out)
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

int tfs_name_distance(const char *a, const char *b)
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
	char want[200];
	const char *name;
	char best[SUGGEST_MAX][200];
	int dist[SUGGEST_MAX];
	int n, max;
};

/* Keeps the MAX nearest names, sorted by distance then alphabetically. */
static int on_suggest(void *arg, const char *sys, const char *name)
{
	struct suggest_ctx *c = arg;
	char full[200];
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	/* the name alone counts too (a wrong system), one edit dearer */
	int d1 = tfs_name_distance(c->want, full), d2 = tfs_name_distance(c->name, name) + 1;
	int d = d1 < d2 ? d1 : d2;
	int i = c->n;
	while (i > 0 && (c->dist[i - 1] > d ||
			 (c->dist[i - 1] == d && strcmp(c->best[i - 1], full) > 0)))
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

int tfs_events_suggest(const char *root, const char *system, const char *name, int max,
			   char *buf, size_t len)
{
	struct suggest_ctx c = { .name = name, .max = max < SUGGEST_MAX ? max : SUGGEST_MAX };
	snprintf(c.want, sizeof(c.want), "%s:%s", system, name);
	if (!len)
		return 0;
	buf[0] = '\0';
	if (c.max <= 0 || foreach_event(root, on_suggest, &c) < 0)
		return 0;
	int written = 0;
	size_t used = 0;
	for (int i = 0; i < c.n; i++) {
		/* only names that are plausibly what was meant */
		if (c.dist[i] > 1 + (int)strlen(name) / 2)
			break;
		/* whole names only: stop when the next one does not fit */
		int n = snprintf(buf + used, len - used, "%s%s", written ? ", " : "", c.best[i]);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0';
			break;
		}
		used += (size_t)n;
		written++;
	}
	return written;
}
