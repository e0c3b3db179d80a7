/* Objects ftstack owns (instance and dynamic-event group ftstack_<pid>) and
 * removing those whose owner died (ftstack cleanup), found and removed with
 * libtracefs (tracefs_instances, tracefs_dynevent_get_all). Only names
 * matching exactly ftstack_<digits> are ever touched, and only triggers
 * inside such objects: the user's own probes, triggers and instances stay
 * as they are. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tracefs.h> /* libtracefs (pkg-config puts its directory on the path) */
#include "mem/mem.h"
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
	if (!name || strncmp(name, "ftstack_", 8) != 0)
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

static bool stale(const char *proc_root, const char *name)
{
	long pid = owned_pid(name);
	return pid && !owner_alive(proc_root, pid);
}

/* Removes every trigger of event SYS/EV in INST: each line of its trigger
 * file, without the " [active]"-style suffix, appended back with "!". */
static void clear_triggers(struct tracefs_instance *inst, const char *sys, const char *ev)
{
	char *text = tracefs_event_file_read(inst, sys, ev, "trigger", NULL);
	for (char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL; line;
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
		char *path = tracefs_event_get_file(inst, sys, ev, "trigger");
		tfs_debug("append", path ? path : ev, cmd);
		tracefs_put_tracing_file(path);
		tracefs_event_file_append(inst, sys, ev, "trigger", cmd);
	}
	free(text);
}

/* Clears the triggers of SYS/EV in INST, then disables it if enabled. */
static void quiesce_event(struct tracefs_instance *inst, const char *sys, const char *ev)
{
	clear_triggers(inst, sys, ev);
	char *val = tracefs_event_file_read(inst, sys, ev, "enable", NULL);
	if (val && val[0] && val[0] != '0') {
		char *path = tracefs_event_get_file(inst, sys, ev, "enable");
		tfs_debug("write", path ? path : ev, "0");
		tracefs_put_tracing_file(path);
		tracefs_event_file_write(inst, sys, ev, "enable", "0");
	}
	free(val);
}

/* Quiesces every event of instance INST's events directory DIR. */
static void quiesce_events(struct tracefs_instance *inst, const char *dir)
{
	DIR *d = opendir(dir);
	for (struct dirent *s; d && (s = readdir(d));) {
		char sdir[768];
		if (s->d_name[0] == '.' || tfs_join(sdir, sizeof(sdir), dir, s->d_name) < 0 ||
		    !tfs_is_dir(sdir))
			continue;
		DIR *sd = opendir(sdir);
		for (struct dirent *e; sd && (e = readdir(sd));) {
			char edir[1024];
			if (e->d_name[0] != '.' && tfs_join(edir, sizeof(edir), sdir, e->d_name) == 0 &&
			    tfs_is_dir(edir))
				quiesce_event(inst, s->d_name, e->d_name);
		}
		if (sd)
			closedir(sd);
	}
	if (d)
		closedir(d);
}

/* Stops instance NAME's buffer and events (a busy instance cannot go),
 * then destroys it. Returns 0 or -errno. */
static int remove_instance(const char *root, const char *name)
{
	errno = 0;
	struct tracefs_instance *inst = tracefs_instance_alloc(root, name);
	if (!inst)
		return tfs_errno(-ENOMEM);
	tracefs_trace_off(inst);
	tracefs_instance_file_write(inst, "events/enable", "0");
	char *events = tracefs_instance_get_file(inst, "events");
	if (events)
		quiesce_events(inst, events);
	tracefs_put_tracing_file(events);
	char *dir = tracefs_instance_get_dir(inst);
	tfs_debug("rmdir", dir ? dir : name, NULL);
	tracefs_put_tracing_file(dir);
	errno = 0;
	int ret = tracefs_instance_destroy(inst) == 0 ? 0 : tfs_errno(-EIO);
	tracefs_instance_free(inst);
	return ret;
}

static int remove_instances(const char *root, const char *proc_root, report_fn report,
			    void *ctx, int *first_err)
{
	int removed = 0;
	/* all of them, filtered here: tracefs_instances of libtracefs 1.6 does
	 * not free the regex it is given */
	char **names = tracefs_instances(NULL);
	for (int i = 0; names && names[i]; i++) {
		if (!stale(proc_root, names[i]))
			continue;
		int ret = remove_instance(root, names[i]);
		if (ret == 0) {
			char what[300];
			snprintf(what, sizeof(what), "instance %s", names[i]);
			report(ctx, what);
			removed++;
		} else if (!*first_err) {
			*first_err = ret;
		}
	}
	tracefs_list_free(names);
	return removed;
}

/* The dynamic events found so far ("group/event"), so each is removed and
 * reported once although several lists name it. */
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
	if (MEM_GROW(s->names, s->cap, s->n + 1, 16))
		return;
	snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", name);
}

static void removed_one(const char *file, const char *name, report_fn report, void *ctx)
{
	char what[300];
	snprintf(what, sizeof(what), "%s %s", file, name);
	report(ctx, what);
}

/* The file libtracefs (1.6) defines a dynamic event of TYPE through:
 * dynamic_events when the kernel has it, else the probe's own file. The
 * library decides once, from the mounted tracefs (tracefs_file_exists of the
 * top level looks there even when another directory was set), so this asks
 * the same question. */
static const char *dynevent_file(bool dyn, enum tracefs_dynevent_type type)
{
	if (dyn)
		return "dynamic_events";
	return type & (TRACEFS_DYNEVENT_UPROBE | TRACEFS_DYNEVENT_URETPROBE) ?
	       "uprobe_events" : "kprobe_events";
}

/* Stale probes tracefs_dynevent_get_all lists. */
static int remove_listed(const char *proc_root, bool dyn, struct seen *seen,
			 report_fn report, void *ctx, int *first_err)
{
	int removed = 0;
	struct tracefs_dynevent **all = tracefs_dynevent_get_all(
		TRACEFS_DYNEVENT_KPROBE | TRACEFS_DYNEVENT_KRETPROBE | TRACEFS_DYNEVENT_UPROBE |
		TRACEFS_DYNEVENT_URETPROBE, NULL);
	for (int i = 0; all && all[i]; i++) {
		char *sys = NULL, *ev = NULL, name[200];
		enum tracefs_dynevent_type type = tracefs_dynevent_info(all[i], &sys, &ev, NULL,
									 NULL, NULL);
		int n = snprintf(name, sizeof(name), "%s/%s", sys ? sys : "", ev ? ev : "");
		if (sys && ev && n > 0 && (size_t)n < sizeof(name) && !seen_has(seen, name) &&
		    stale(proc_root, sys) && !strchr(ev, '/')) {
			seen_add(seen, name);
			quiesce_event(NULL, sys, ev);
			int ret = tfs_dynevent_destroy(all[i]);
			if (ret == 0) {
				removed_one(dynevent_file(dyn, type), name, report, ctx);
				removed++;
			} else if (!*first_err) {
				*first_err = ret;
			}
		}
		free(sys);
		free(ev);
	}
	tracefs_dynevent_list_free(all);
	return removed;
}

/* Removes GROUP/EVENT, which no list names, through each of FILES until
 * one takes it. Returns the file that did, or NULL (*err set). */
static const char *remove_unlisted_one(const char **files, int nfiles, const char *group,
				       const char *event, int *err)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, event);
	quiesce_event(NULL, group, event);
	*err = -ENOENT;
	for (int i = 0; i < nfiles; i++) {
		tfs_debug("append", files[i], cmd);
		errno = 0;
		if (tracefs_instance_file_append(NULL, files[i], cmd) > 0)
			return files[i];
		*err = tfs_errno(-EIO);
	}
	return NULL;
}

/* Events left in ROOT/events/ftstack_<pid>/ that no file listed. */
static int remove_unlisted(const char *root, const char *proc_root, struct seen *seen,
			   report_fn report, void *ctx, int *first_err)
{
	static const char *const all[] = { "dynamic_events", "kprobe_events", "uprobe_events" };
	const char *files[3];
	int nfiles = 0, removed = 0;
	char top[512], gdir[768], edir[1024], name[200];
	for (int i = 0; i < 3; i++)
		if (tfs_join(top, sizeof(top), root, all[i]) == 0 && access(top, F_OK) == 0)
			files[nfiles++] = all[i];
	if (tfs_join(top, sizeof(top), root, "events") < 0 || !nfiles)
		return 0;
	DIR *d = opendir(top);
	for (struct dirent *g; d && (g = readdir(d));) {
		if (!stale(proc_root, g->d_name) || tfs_join(gdir, sizeof(gdir), top, g->d_name) < 0)
			continue;
		DIR *gd = opendir(gdir);
		for (struct dirent *e; gd && (e = readdir(gd));) {
			int n = snprintf(name, sizeof(name), "%s/%s", g->d_name, e->d_name);
			if (e->d_name[0] == '.' || n < 0 || (size_t)n >= sizeof(name) ||
			    seen_has(seen, name) || tfs_join(edir, sizeof(edir), gdir, e->d_name) < 0 ||
			    !tfs_is_dir(edir))
				continue;
			seen_add(seen, name);
			int err = 0;
			const char *file = remove_unlisted_one(files, nfiles, g->d_name, e->d_name, &err);
			if (file) {
				removed_one(file, name, report, ctx);
				removed++;
			} else if (!*first_err) {
				*first_err = err;
			}
		}
		if (gd)
			closedir(gd);
	}
	if (d)
		closedir(d);
	return removed;
}

/* Whether the places stale objects are listed from can be read: a user who
 * may not list them must hear "not allowed", not "nothing left behind".
 * Returns 0 or -EACCES. */
static int listable(const char *root)
{
	static const char *const dirs[] = { "instances", "events" };
	char path[512];
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (tfs_join(path, sizeof(path), root, dirs[i]) == 0 && access(path, F_OK) == 0 &&
		    access(path, R_OK | X_OK) != 0)
			return -EACCES;
	return 0;
}

int tfs_cleanup_stale(const char *root, const char *proc_root,
		      void (*report)(void *ctx, const char *what), void *ctx)
{
	int first_err = 0;
	int ret = tfs_use_root(root);
	if (ret < 0)
		return ret;
	ret = listable(root);
	if (ret < 0)
		return ret;
	/* instances first: one may still have the stale events enabled */
	int removed = remove_instances(root, proc_root, report, ctx, &first_err);
	struct seen seen = { 0 };
	bool dyn = tracefs_file_exists(NULL, "dynamic_events");
	removed += remove_listed(proc_root, dyn, &seen, report, ctx, &first_err);
	removed += remove_unlisted(root, proc_root, &seen, report, ctx, &first_err);
	free(seen.names);
	return first_err ? first_err : removed;
}
