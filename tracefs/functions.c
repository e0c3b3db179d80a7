/* The function tracer's lists: available_filter_functions (what it can
 * trace, one name per traced address) and an instance's set_ftrace_filter
 * (what it will trace; empty means every function), read as text and
 * written with libtracefs's tracefs_function_filter. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h> /* libtracefs (pkg-config puts its directory on the path) */
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

bool tfs_functions_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	if (!list || !n)
		return false;
	for (const char *at = list; (at = strstr(at, name)); at += n) {
		bool starts = at == list || at[-1] == '\n';
		/* "name", "name [module]" */
		bool ends = at[n] == '\n' || at[n] == '\0' || at[n] == ' ' || at[n] == '\t';
		if (starts && ends)
			return true;
	}
	return false;
}

int tfs_functions_count(const char *filter)
{
	int n = 0;
	for (const char *line = filter; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		/* the kernel's "#### all functions enabled ####" when empty */
		if (len >= 4 && strncmp(line, "####", 4) == 0 &&
		    memmem(line, len, "all functions", 13))
			return -1;
		if (len && line[0] != '#')
			n++;
		line = nl ? nl + 1 : line + len;
	}
	return n;
}

int tfs_ftrace_filter_read(const char *root, const char *inst, int *count)
{
	char rel[512], *text = NULL;
	snprintf(rel, sizeof(rel), "%s/set_ftrace_filter", inst);
	int ret = tfs_read_file(root, rel, &text);
	if (ret >= 0)
		*count = tfs_functions_count(text ? text : "");
	free(text);
	return ret < 0 ? ret : 0;
}

int tfs_function_filter(struct tfs_log *log, struct tracefs_instance *inst, const char *func,
			bool append, char *err, size_t errlen)
{
	char before[256] = "", after[256], msg[512];
	if (err && errlen)
		err[0] = '\0';
	int ret = tfs_use_root(log->root);
	if (ret < 0)
		return ret;
	char *path = tracefs_instance_get_file(inst, "set_ftrace_filter");
	tfs_debug(append ? "append" : "write", path ? path : "set_ftrace_filter", func);
	tracefs_put_tracing_file(path);
	if (err && errlen)
		tfs_last_error(inst, before, sizeof(before), msg, sizeof(msg));
	/* the library writes the indexes of the functions available_filter_functions
	 * lists under that name (the name itself on kernels without indexes),
	 * each followed by a blank: the kernel parses, and refuses, it in write() */
	errno = 0;
	int r = tracefs_function_filter(inst, func, NULL, append ? 0 : TRACEFS_FL_RESET);
	if (r != 0) {
		/* 1: nothing written (EINVAL: no such function listed) */
		ret = tfs_errno(r > 0 ? -EINVAL : -EIO);
		if (err && errlen) {
			tfs_last_error(inst, after, sizeof(after), msg, sizeof(msg));
			if (strcmp(before, after) != 0)
				snprintf(err, errlen, "%s", msg);
		}
		return ret;
	}
	/* undone by emptying it before the instance goes */
	struct tfs_undo u = { .kind = TRACEFS_UNDO_WRITE, .inst = inst,
			      .file = "set_ftrace_filter", .undo = " " };
	if ((ret = tfs_log_add(log, &u)) < 0)
		tracefs_instance_file_write(inst, "set_ftrace_filter", " ");
	return ret;
}
