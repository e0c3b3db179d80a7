/* The function tracer's lists: available_filter_functions (what it can
 * trace, one name per traced address) and an instance's set_ftrace_filter
 * (what it will trace; empty means every function). Text only, but for
 * tfs_ftrace_filter_read. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tracefs/tracefs.h"

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
