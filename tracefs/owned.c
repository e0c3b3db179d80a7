/* Objects ftstack owns (instance and dynamic-event group ftstack_<pid>) and
 * removing those whose owner died (ftstack cleanup). Only names matching
 * exactly ftstack_<digits> are ever touched, and only triggers inside such
 * objects: the user's own probes, triggers and instances stay as they are. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

typedef void (*report_fn)(void *ctx, const char *what);

void tfs_owned_name(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "ftstack_%d", (int)pid);
}

/* The pid in "ftstack_<digits>", or 0 for any other name (and for leading
 * zeros, which tfs_owned_name never writes). */
static long owned_pid(const char *name)
{
	if (strncmp(name, "ftstack_", 8) != 0)
		return 0;
	const char *d = name + 8;
	size_t n = strspn(d, "0123456789");
	if (n == 0 || n > 9 || d[n] != '\0' || d[0] == '0')
		return 0;
	return strtol(d, NULL, 10);
}

/* Whether PID is a running ftstack (then its objects are in use). */
static bool owner_alive(const char *proc_root, long pid)
{
	char path[320], comm[64] = "";
	snprintf(path, sizeof(path), "%s/%ld/comm", proc_root, pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	return strcmp(comm, "ftstack") == 0;
}

/* Removes every trigger of the event directory DIR: each line of its trigger
 * file, without the " [active]"-style suffix, written back with "!". */
static void clear_triggers(const char *dir)
{
	char *text = NULL, path[1024];
	if (tfs_read_file(dir, "trigger", &text) <= 0 ||
	    tfs_join(path, sizeof(path), dir, "trigger") < 0) {
		free(text);
		return;
	}
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || line[0] == '\0')
			continue;
		char *end = line + strlen(line);
		while (end > line && end[-1] == ' ')
			*--end = '\0';
		char *br = strrchr(line, '[');
		if (end > line && end[-1] == ']' && br && br > line && br[-1] == ' ')
			br[-1] = '\0';
		char cmd[1100];
		snprintf(cmd, sizeof(cmd), "!%s", line);
		tfs_debug("append", path, cmd);
		tfs_write_path(path, cmd, true);
	}
	free(text);
}

/* Clears the triggers of event directory EDIR, then disables it if enabled. */
static void quiesce_event(const char *edir)
{
	char path[1100], *val = NULL;
	clear_triggers(edir);
	if (tfs_read_file(edir, "enable", &val) > 0 && val[0] != '0' &&
	    tfs_join(path, sizeof(path), edir, "enable") == 0) {
		tfs_debug("write", path, "0");
		tfs_write_path(path, "0", false);
	}
	free(val);
}

/* Quiesces every event EVENTS_DIR/<sys>/<event> (an instance's events). */
static void quiesce_events(const char *events_dir)
{
	DIR *d = opendir(events_dir);
	for (struct dirent *s; d && (s = readdir(d));) {
		char sdir[768], edir[1024];
		if (s->d_name[0] == '.' ||
		    tfs_join(sdir, sizeof(sdir), events_dir, s->d_name) < 0 ||
		    !tfs_is_dir(sdir))
			continue;
		DIR *sd = opendir(sdir);
		for (struct dirent *e; sd && (e = readdir(sd));) {
			if (e->d_name[0] == '.' || tfs_join(edir, sizeof(edir), sdir, e->d_name) < 0 ||
			    !tfs_is_dir(edir))
				continue;
			quiesce_event(edir);
		}
		if (sd)
			closedir(sd);
	}
	if (d)
		closedir(d);
}

static int remove_instances(const char *root, const char *proc_root, report_fn report,
			    void *ctx, int *first_err)
{
	char path[512], dir[768], sub[1024];
	int removed = 0;
	if (tfs_join(path, sizeof(path), root, "instances") < 0)
		return 0;
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	for (struct dirent *e; (e = readdir(d));) {
		long pid = owned_pid(e->d_name);
		if (!pid || owner_alive(proc_root, pid) ||
		    tfs_join(dir, sizeof(dir), path, e->d_name) < 0)
			continue;
		/* stop the buffer and the events first: a busy instance cannot go */
		static const char *const off[] = { "tracing_on", "events/enable" };
		for (int i = 0; i < 2; i++) {
			if (tfs_join(sub, sizeof(sub), dir, off[i]) == 0) {
				tfs_debug("write", sub, "0");
				tfs_write_path(sub, "0", false);
			}
		}
		if (tfs_join(sub, sizeof(sub), dir, "events") == 0)
			quiesce_events(sub);
		tfs_debug("rmdir", dir, NULL);
		if (rmdir(dir) == 0) {
			char what[300];
			snprintf(what, sizeof(what), "instance %s", e->d_name);
			report(ctx, what);
			removed++;
		} else if (!*first_err) {
			*first_err = -errno;
		}
	}
	closedir(d);
	return removed;
}

/* The stale dynamic events found so far ("group/event"), so each is removed
 * and reported once although several files list it. */
struct seen {
	char (*names)[200];
	size_t n, cap;
};

static bool seen_has(const struct seen *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return true;
	return false;
}

static void seen_add(struct seen *s, const char *name)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char (*n)[200] = realloc(s->names, cap * sizeof(*n));
		if (!n)
			return;
		s->names = n;
		s->cap = cap;
	}
	snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", name);
}

/* Removes dynamic event GROUP/EVENT through ROOT/FILE after disabling it and
 * clearing its triggers at the top level. Returns 0 or -errno. */
static int remove_dynevent(const char *root, const char *file, const char *group,
			   const char *event)
{
	char path[768], cmd[300];
	snprintf(path, sizeof(path), "%s/events/%s/%s", root, group, event);
	quiesce_event(path);
	if (tfs_join(path, sizeof(path), root, file) < 0)
		return -ENAMETOOLONG;
	snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, event);
	tfs_debug("append", path, cmd);
	int ret = -EBUSY;
	/* a killed owner's perf events are released a moment after it dies */
	for (int i = 0; i < 50 && ret == -EBUSY; i++) {
		ret = tfs_write_path(path, cmd, true);
		if (ret == -EBUSY)
			nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	}
	return ret;
}

static void removed_one(const char *file, const char *name, report_fn report, void *ctx)
{
	char what[300];
	snprintf(what, sizeof(what), "%s %s", file, name);
	report(ctx, what);
}

/* Stale lines "p:GROUP/EVENT ...", "r128:GROUP/EVENT ...", from ROOT/FILE. */
static int remove_listed(const char *root, const char *file, const char *proc_root,
			 struct seen *seen, report_fn report, void *ctx, int *first_err)
{
	char *text = NULL;
	int removed = 0;
	if (tfs_read_file(root, file, &text) < 0)
		return 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " \t")] = '\0';
		char *colon = strchr(line, ':'), *slash = colon ? strchr(colon, '/') : NULL;
		if (!slash || strlen(colon + 1) >= sizeof(seen->names[0]) || seen_has(seen, colon + 1))
			continue;
		*slash = '\0';
		long pid = owned_pid(colon + 1);
		if (!pid || owner_alive(proc_root, pid) || !slash[1] || strchr(slash + 1, '/'))
			continue;
		int ret = remove_dynevent(root, file, colon + 1, slash + 1);
		*slash = '/';
		seen_add(seen, colon + 1);
		if (ret < 0) {
			if (!*first_err)
				*first_err = ret;
			continue;
		}
		removed_one(file, colon + 1, report, ctx);
		removed++;
	}
	free(text);
	return removed;
}

/* Which files define dynamic events here: dynamic_events lists (and removes)
 * them all; older kernels have only kprobe_events and uprobe_events. */
static int dynevent_files(const char *root, const char *files[3])
{
	static const char *const all[] = { "dynamic_events", "kprobe_events", "uprobe_events" };
	char path[512];
	int n = 0;
	for (int i = 0; i < 3; i++)
		if (tfs_join(path, sizeof(path), root, all[i]) == 0 && access(path, F_OK) == 0)
			files[n++] = all[i];
	return n;
}

/* Events left in ROOT/events/ftstack_<pid>/ that no file listed. */
static int remove_unlisted(const char *root, const char *proc_root, const char **files,
			   int nfiles, struct seen *seen, report_fn report, void *ctx,
			   int *first_err)
{
	char top[512], gdir[768], name[200];
	int removed = 0;
	if (tfs_join(top, sizeof(top), root, "events") < 0 || !nfiles)
		return 0;
	DIR *d = opendir(top);
	for (struct dirent *g; d && (g = readdir(d));) {
		long pid = owned_pid(g->d_name);
		if (!pid || owner_alive(proc_root, pid) ||
		    tfs_join(gdir, sizeof(gdir), top, g->d_name) < 0)
			continue;
		DIR *gd = opendir(gdir);
		for (struct dirent *e; gd && (e = readdir(gd));) {
			int n = snprintf(name, sizeof(name), "%s/%s", g->d_name, e->d_name);
			if (e->d_name[0] == '.' || n < 0 || (size_t)n >= sizeof(name) ||
			    seen_has(seen, name))
				continue;
			char edir[1024];
			if (tfs_join(edir, sizeof(edir), gdir, e->d_name) < 0 || !tfs_is_dir(edir))
				continue;
			seen_add(seen, name);
			int ret = -ENOENT;
			for (int i = 0; i < nfiles && ret < 0; i++)
				if ((ret = remove_dynevent(root, files[i], g->d_name, e->d_name)) == 0)
					removed_one(files[i], name, report, ctx);
			if (ret == 0)
				removed++;
			else if (!*first_err)
				*first_err = ret;
		}
		if (gd)
			closedir(gd);
	}
	if (d)
		closedir(d);
	return removed;
}

int tfs_cleanup_stale(const char *root, const char *proc_root,
			  void (*report)(void *ctx, const char *what), void *ctx)
{
	int first_err = 0;
	/* instances first: one may still have the stale events enabled */
	int removed = remove_instances(root, proc_root, report, ctx, &first_err);
	if (removed < 0)
		return removed;
	const char *files[3];
	int nfiles = dynevent_files(root, files);
	struct seen seen = { 0 };
	/* dynamic_events, when present, lists what the other two do */
	bool dyn = nfiles > 0 && strcmp(files[0], "dynamic_events") == 0;
	for (int i = 0; i < (dyn ? 1 : nfiles); i++)
		removed += remove_listed(root, files[i], proc_root, &seen, report, ctx, &first_err);
	removed += remove_unlisted(root, proc_root, files, nfiles, &seen, report, ctx, &first_err);
	free(seen.names);
	return first_err ? first_err : removed;
}
