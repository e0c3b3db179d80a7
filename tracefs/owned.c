/* Objects ftstack owns (instance and dynamic-event group ftstack_<pid>) and
 * removing those whose owner died (ftstack cleanup). Only names matching
 * exactly ftstack_<digits> are ever touched. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

void tracefs_owned_name(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "ftstack_%d", (int)pid);
}

/* The pid in "ftstack_<digits>", or 0 for any other name. */
static long owned_pid(const char *name)
{
	if (strncmp(name, "ftstack_", 8) != 0 || !name[8])
		return 0;
	char *end;
	long pid = strtol(name + 8, &end, 10);
	return *end == '\0' && pid > 0 && name[8] != '0' ? pid : 0;
}

/* Whether PID is a running ftstack (its owner is alive). */
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

/* Disables the events of an instance and removes their triggers. */
static void quiesce_instance(const char *dir)
{
	char path[768];
	snprintf(path, sizeof(path), "%s/tracing_on", dir);
	tracefs_write_path(path, "0", false);
	snprintf(path, sizeof(path), "%s/events/enable", dir);
	tracefs_write_path(path, "0", false);
	snprintf(path, sizeof(path), "%s/events", dir);
	DIR *d = opendir(path);
	for (struct dirent *s; d && (s = readdir(d));) {
		if (s->d_name[0] == '.' || s->d_type != DT_DIR)
			continue;
		char sdir[1024];
		snprintf(sdir, sizeof(sdir), "%s/events/%s", dir, s->d_name);
		DIR *sd = opendir(sdir);
		for (struct dirent *e; sd && (e = readdir(sd));) {
			char tpath[1400];
			if (e->d_name[0] == '.' || e->d_type != DT_DIR)
				continue;
			snprintf(tpath, sizeof(tpath), "%s/%s/trigger", sdir, e->d_name);
			FILE *f = fopen(tpath, "r");
			char line[512];
			while (f && fgets(line, sizeof(line), f)) {
				if (line[0] == '#' || line[0] == '\n')
					continue;
				line[strcspn(line, " [\n")] = '\0'; /* "stacktrace:unlimited [...]" */
				char *colon = strchr(line, ':');
				if (colon)
					*colon = '\0';
				char rm[520];
				snprintf(rm, sizeof(rm), "!%s", line);
				tracefs_write_path(tpath, rm, true);
			}
			if (f)
				fclose(f);
		}
		if (sd)
			closedir(sd);
	}
	if (d)
		closedir(d);
}

static int remove_instances(const char *root, const char *proc_root,
			    void (*report)(void *, const char *), void *ctx)
{
	char path[512];
	int removed = 0;
	snprintf(path, sizeof(path), "%s/instances", root);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	for (struct dirent *e; (e = readdir(d));) {
		long pid = owned_pid(e->d_name);
		if (!pid || owner_alive(proc_root, pid))
			continue;
		char dir[768];
		snprintf(dir, sizeof(dir), "%s/instances/%s", root, e->d_name);
		quiesce_instance(dir);
		tracefs_debug("rmdir", dir, NULL);
		if (rmdir(dir) == 0) {
			char what[300];
			snprintf(what, sizeof(what), "instance %s", e->d_name);
			report(ctx, what);
			removed++;
		}
	}
	closedir(d);
	return removed;
}

/* Dynamic events "p:GROUP/EVENT ..." of dead owners, from FILE. */
static int remove_dynevents(const char *root, const char *file, const char *proc_root,
			    void (*report)(void *, const char *), void *ctx)
{
	char *text = NULL;
	int removed = 0;
	if (tracefs_read_file(root, file, &text) < 0)
		return 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *slash, *sp;
		if (!colon || !(slash = strchr(colon, '/')) || !(sp = strchr(slash, ' ')))
			continue;
		*slash = '\0';
		*sp = '\0';
		const char *group = colon + 1, *event = slash + 1;
		long pid = owned_pid(group);
		if (!pid || owner_alive(proc_root, pid))
			continue;
		char path[768], cmd[512];
		snprintf(path, sizeof(path), "%s/events/%s/%s/enable", root, group, event);
		tracefs_write_path(path, "0", false);
		snprintf(path, sizeof(path), "%s/%s", root, file);
		snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, event);
		tracefs_debug("append", path, cmd);
		int ret = -EBUSY;
		/* a killed owner's perf events are released a moment after it dies */
		for (int i = 0; i < 50 && ret == -EBUSY; i++) {
			ret = tracefs_write_path(path, cmd, true);
			if (ret == -EBUSY)
				nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
		}
		if (ret == 0) {
			char what[300];
			snprintf(what, sizeof(what), "%s %s/%s", file, group, event);
			report(ctx, what);
			removed++;
		}
	}
	free(text);
	return removed;
}

int tracefs_cleanup_stale(const char *root, const char *proc_root,
			  void (*report)(void *ctx, const char *what), void *ctx)
{
	int a = remove_instances(root, proc_root, report, ctx);
	if (a < 0)
		return a;
	int b = remove_dynevents(root, "kprobe_events", proc_root, report, ctx);
	int c = remove_dynevents(root, "uprobe_events", proc_root, report, ctx);
	return a + b + c;
}
