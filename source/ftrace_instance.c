/* Writes into the ftrace backend's private instance, each recorded in the
 * plan's undo log: shared by ftrace_source.c (events, triggers, pids, CPUs)
 * and ftrace_function.c (the function tracer). */
#include <stdio.h>
#include <string.h>
#include "source/ftrace_source.h"

/* Writes VALUE to the instance file REL, recording UNDO. Prints the kernel's
 * complaint on failure. */
int ft_ftrace_write(struct ft_ftrace_source *fs, const char *rel, const char *value,
		    bool append, enum tfs_undo_kind kind, const char *undo)
{
	char path[512], err[256] = "";
	snprintf(path, sizeof(path), "%s/%s", fs->inst, rel);
	ft_debug("ftrace: %s %s %s", append ? "append" : "write", path, value);
	int ret = tfs_log_write(&fs->cfg.plan->log, fs->ti, rel, value, append, kind, undo, err,
				sizeof(err));
	if (ret < 0)
		ft_error("cannot write '%s' to %s/%s: %s%s%s", value,
			fs->cfg.plan->tracefs, path, strerror(-ret), err[0] ? ": " : "", err);
	return ret;
}
