/* The objects ftstack makes in tracefs (instances, dynamic events, enabled
 * events, filters, triggers), each made with libtracefs through the undo
 * log so it is removed again. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h> /* libtracefs (pkg-config puts its directory on the path) */
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

int tfs_instance_create(struct tfs_log *log, const char *name, struct tracefs_instance **out)
{
	*out = NULL;
	if (!name[0] || strchr(name, '/'))
		return -EINVAL;
	int ret = tfs_use_root(log->root);
	if (ret < 0)
		return ret;
	char path[512];
	snprintf(path, sizeof(path), "%s/instances/%s", log->root, name);
	tfs_debug("mkdir", path, NULL);
	errno = 0;
	struct tracefs_instance *inst = tracefs_instance_create(name);
	if (!inst)
		return tfs_errno(-ENOMEM);
	if (!tracefs_instance_is_new(inst)) {
		/* it was there before: not ours to change or remove */
		tracefs_instance_free(inst);
		return -EEXIST;
	}
	struct tfs_undo u = { .kind = TRACEFS_UNDO_INSTANCE, .inst = inst };
	if ((ret = tfs_log_add(log, &u)) < 0) {
		tracefs_instance_destroy(inst);
		tracefs_instance_free(inst);
		return ret;
	}
	*out = inst;
	return 0;
}

/* Splits a uprobe's "PATH:0xOFFSET" at its last colon. */
static int split_uprobe(char *addr, unsigned long long *off)
{
	char *colon = strrchr(addr, ':'), *end;
	if (!colon || colon == addr)
		return -EINVAL;
	*colon = '\0';
	*off = strtoull(colon + 1, &end, 0);
	return end != colon + 1 && *end == '\0' ? 0 : -EINVAL;
}

/* The libtracefs object of a definition line "p:GROUP/EVENT ADDR [ARGS]". */
static int dynevent_alloc(const char *file, const char *group, const char *event,
			  const char *definition, struct tracefs_dynevent **out)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "%s", definition);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	line[strcspn(line, "\n")] = '\0';
	char *save = NULL, *probe = strtok_r(line, " \t", &save);
	char *addr = strtok_r(NULL, " \t", &save);
	char *args = strtok_r(NULL, "", &save);
	if (!probe || !addr || strncmp(probe, "p:", 2) != 0)
		return -EINVAL;
	errno = 0;
	if (strcmp(file, "uprobe_events") == 0) {
		unsigned long long off;
		if (split_uprobe(addr, &off) < 0)
			return -EINVAL;
		*out = tracefs_uprobe_alloc(group, event, addr, off, args);
	} else if (strcmp(file, "kprobe_events") == 0) {
		*out = tracefs_kprobe_alloc(group, event, addr, args);
	} else {
		return -EINVAL;
	}
	return *out ? 0 : tfs_errno(-ENOMEM);
}

/* A uprobe with a reference counter ("PATH:0xOFFSET(0xREF)", a USDT
 * semaphore) has no libtracefs 1.6 call (tracefs_uprobe_alloc formats the
 * address itself): its line is written to uprobe_events with the library's
 * file call, and the library's object for it read back (tracefs_dynevent_get)
 * for the log to destroy. Returns 0 or -errno. */
static int uprobe_with_ref(const char *group, const char *event, const char *definition,
			   struct tracefs_dynevent **out)
{
	char line[1100];
	snprintf(line, sizeof(line), "%s\n", definition);
	errno = 0;
	if (tracefs_instance_file_append(NULL, "uprobe_events", line) < 0)
		return tfs_errno(-EIO);
	*out = tracefs_dynevent_get(TRACEFS_DYNEVENT_UPROBE, group, event);
	if (*out)
		return 0;
	/* made but not found again: removed here, not left behind */
	snprintf(line, sizeof(line), "-:%s/%s\n", group, event);
	tracefs_instance_file_append(NULL, "uprobe_events", line);
	return -ENOENT;
}

static bool has_ref_ctr(const char *file, const char *definition)
{
	const char *addr = strchr(definition, ' ');
	return strcmp(file, "uprobe_events") == 0 && addr &&
	       memchr(addr, '(', strcspn(addr + 1, " \t\n") + 1);
}

int tfs_dynevent_create(struct tfs_log *log, const char *file, const char *group,
			const char *event, const char *definition, char *err, size_t errlen)
{
	struct tracefs_dynevent *dyn = NULL;
	char before[256], after[256], msg[512], what[256];
	bool ref = has_ref_ctr(file, definition);
	if (err && errlen)
		err[0] = '\0';
	int ret = tfs_use_root(log->root);
	if (ret < 0 || (!ref && (ret = dynevent_alloc(file, group, event, definition, &dyn)) < 0))
		return ret;
	/* error_log keeps old entries: only one that appears now is ours */
	tfs_last_error(NULL, before, sizeof(before), msg, sizeof(msg));
	snprintf(what, sizeof(what), "%s/%s", log->root, file);
	tfs_debug("append", what, definition);
	errno = 0;
	if (ref)
		ret = uprobe_with_ref(group, event, definition, &dyn);
	else if (tracefs_dynevent_create(dyn) < 0)
		ret = tfs_errno(-EIO);
	if (ret < 0) {
		tfs_last_error(NULL, after, sizeof(after), msg, sizeof(msg));
		if (err && errlen && strcmp(before, after) != 0)
			snprintf(err, errlen, "%s", msg);
		tracefs_dynevent_free(dyn);
		return ret;
	}
	struct tfs_undo u = { .kind = TRACEFS_UNDO_DYNEVENT, .dyn = dyn };
	if ((ret = tfs_log_add(log, &u)) < 0) {
		tfs_dynevent_destroy(dyn);
		tracefs_dynevent_free(dyn);
	}
	return ret;
}

int tfs_event_enable(struct tfs_log *log, struct tracefs_instance *inst, const char *system,
		     const char *name)
{
	int ret = tfs_use_root(log->root);
	if (ret < 0)
		return ret;
	char *path = tracefs_event_get_file(inst, system, name, "enable");
	tfs_debug("write", path ? path : name, "1");
	tracefs_put_tracing_file(path);
	errno = 0;
	/* the library matches SYSTEM and NAME as anchored regexes over the
	 * listed events: -1 without errno when none matched */
	if (tracefs_event_enable(inst, system, name) < 0)
		return tfs_errno(-ENOENT);
	struct tfs_undo u = { .kind = TRACEFS_UNDO_DISABLE, .inst = inst, .file = (char *)system,
			      .undo = (char *)name };
	if ((ret = tfs_log_add(log, &u)) < 0)
		tracefs_event_disable(inst, system, name);
	return ret;
}

/* Writes VALUE to (appends it to) the event file FILE of SYSTEM/NAME with
 * tracefs_event_file_write (_append), recording UNDO. */
static int event_file_change(struct tfs_log *log, struct tracefs_instance *inst,
			     const char *system, const char *name, const char *file,
			     const char *value, bool append, enum tfs_undo_kind kind,
			     const char *undo, char *err, size_t errlen)
{
	char rel[400], before[256] = "", after[256], msg[512];
	int n = snprintf(rel, sizeof(rel), "events/%s/%s/%s", system, name, file);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	if (err && errlen)
		err[0] = '\0';
	int ret = tfs_use_root(log->root);
	if (ret < 0)
		return ret;
	char *path = tracefs_event_get_file(inst, system, name, file);
	tfs_debug(append ? "append" : "write", path ? path : rel, value);
	tracefs_put_tracing_file(path);
	if (err && errlen)
		tfs_last_error(inst, before, sizeof(before), msg, sizeof(msg));
	errno = 0;
	int w = append ? tracefs_event_file_append(inst, system, name, file, value) :
			 tracefs_event_file_write(inst, system, name, file, value);
	if (w < 0 || (size_t)w != strlen(value)) {
		ret = w < 0 ? tfs_errno(-EIO) : -EIO;
		if (err && errlen) {
			tfs_last_error(inst, after, sizeof(after), msg, sizeof(msg));
			if (strcmp(before, after) != 0)
				snprintf(err, errlen, "%s", msg);
		}
		return ret;
	}
	struct tfs_undo u = { .kind = kind, .inst = inst, .file = rel, .undo = (char *)undo };
	if ((ret = tfs_log_add(log, &u)) < 0)
		tracefs_instance_file_write(inst, rel, undo);
	return ret;
}

int tfs_event_filter(struct tfs_log *log, struct tracefs_instance *inst, const char *system,
		     const char *name, const char *filter, char *err, size_t errlen)
{
	return event_file_change(log, inst, system, name, "filter", filter, false,
				 TRACEFS_UNDO_WRITE, "0", err, errlen);
}

int tfs_trigger_add(struct tfs_log *log, struct tracefs_instance *inst, const char *system,
		    const char *name, const char *trigger, char *err, size_t errlen)
{
	char undo[300];
	/* a trigger is removed by its command with "!" before it (the part up to
	 * " if": the kernel matches the command, not the filter) */
	size_t cmd = strcspn(trigger, " \t");
	if (cmd + 2 > sizeof(undo))
		return -ENAMETOOLONG;
	snprintf(undo, sizeof(undo), "!%.*s", (int)cmd, trigger);
	/* appended: opening a trigger file with O_TRUNC drops its other triggers */
	return event_file_change(log, inst, system, name, "trigger", trigger, true,
				 TRACEFS_UNDO_APPEND, undo, err, errlen);
}
