/* The objects ftstack makes in tracefs (instances, dynamic events, enabled
 * events, triggers), each made through the undo log so it is removed again. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "tracefs/tracefs.h"

/* Writes the relative path of an event's file: [INSTANCE/]events/SYS/NAME/FILE. */
static int event_file(char *buf, size_t len, const char *instance, const char *system,
		      const char *name, const char *file)
{
	int n = snprintf(buf, len, "%s%sevents/%s/%s/%s", instance ? instance : "",
			 instance ? "/" : "", system, name, file);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int tfs_instance_create(struct tfs_log *log, const char *name, char *path, size_t len)
{
	char rel[256];
	if (!name[0] || strchr(name, '/'))
		return -EINVAL;
	int n = snprintf(rel, sizeof(rel), "instances/%s", name);
	if (n < 0 || (size_t)n >= sizeof(rel) || (size_t)n >= len)
		return -ENAMETOOLONG;
	int ret = tfs_log_mkdir(log, rel);
	if (ret == 0)
		snprintf(path, len, "%s", rel);
	return ret;
}

int tfs_dynevent_add(struct tfs_log *log, const char *file, const char *group,
			 const char *event, const char *definition, char *err, size_t errlen)
{
	char undo[256];
	int n = snprintf(undo, sizeof(undo), "-:%s/%s\n", group, event);
	if (n < 0 || (size_t)n >= sizeof(undo))
		return -ENAMETOOLONG;
	return tfs_log_write(log, file, definition, true, TRACEFS_UNDO_APPEND, undo, err,
				 errlen);
}

int tfs_event_enable(struct tfs_log *log, const char *instance, const char *system,
			 const char *name)
{
	char rel[400];
	int ret = event_file(rel, sizeof(rel), instance, system, name, "enable");
	if (ret < 0)
		return ret;
	return tfs_log_write(log, rel, "1", false, TRACEFS_UNDO_WRITE, "0", NULL, 0);
}

int tfs_trigger_add(struct tfs_log *log, const char *instance, const char *system,
			const char *name, const char *trigger)
{
	char rel[400], undo[300];
	int ret = event_file(rel, sizeof(rel), instance, system, name, "trigger");
	if (ret < 0)
		return ret;
	/* a trigger is removed by its command with "!" before it (the part up to
	 * " if": the kernel matches the command, not the filter) */
	size_t cmd = strcspn(trigger, " \t");
	if (cmd + 2 > sizeof(undo))
		return -ENAMETOOLONG;
	snprintf(undo, sizeof(undo), "!%.*s", (int)cmd, trigger);
	/* appended: opening a trigger file with O_TRUNC drops its other triggers */
	return tfs_log_write(log, rel, trigger, true, TRACEFS_UNDO_APPEND, undo, NULL, 0);
}
