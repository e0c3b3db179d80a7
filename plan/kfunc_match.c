/* Which kernel functions a pattern (glob or regex) names, and which of
 * them kprobes may trace: the names come from available_filter_functions
 * (read once per run) or else kallsyms' text symbols; the kprobe
 * blacklist and ftrace's placeholders are left out, and said. Apart from
 * plan_kfunc.c, which chooses how each function is traced, because this
 * only reads lists the kernel publishes. */
#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "plan/internal.h"
#include "host/host.h"

static int list_add(struct func_list *l, const char *name)
{
	if (MEM_GROW(l->names, l->cap, (size_t)l->n + 1, 16))
		return -ENOMEM;
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return 0; /* same-named statics: one probe by name */
	return (l->names[l->n] = strdup(name)) ? (l->n++, 0) : -ENOMEM;
}

void ft_kfunc_list_free(struct func_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	if (l->regex)
		regfree(&l->re);
}

static bool list_match(const struct func_list *l, const char *name)
{
	if (l->regex)
		return regexec(&l->re, name, 0, NULL, 0) == 0;
	return fnmatch(l->pattern, name, 0) == 0;
}

static int collect_ksym(void *ctx, const char *name, uint64_t addr)
{
	(void)addr;
	struct func_list *l = ctx;
	return list_match(l, name) ? list_add(l, name) : 0;
}

/* available_filter_functions, read once per run; NULL when unreadable. */
const char *ft_plan_avail_funcs(struct ft_plan *p)
{
	if (!p->avail_funcs_read) {
		p->avail_funcs_read = true;
		if (tfs_read_file(p->tracefs, "available_filter_functions", &p->avail_funcs) <= 0) {
			free(p->avail_funcs);
			p->avail_funcs = NULL;
		}
	}
	return p->avail_funcs;
}

/* Functions the kernel lets us probe: available_filter_functions when it can
 * be read, else kallsyms' text symbols. */
int ft_kfunc_find(struct ft_plan *p, struct func_list *l)
{
	const char *text = ft_plan_avail_funcs(p);
	if (!text)
		return p->ksyms ? sym_kernel_foreach(p->ksyms, collect_ksym, l) : -ENOENT;
	char name[256];
	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n"), n = strcspn(line, " \t\n"); /* "name [module]" */
		if (n < sizeof(name)) {
			memcpy(name, line, n);
			name[n] = '\0';
			if (list_match(l, name) && list_add(l, name) < 0)
				break;
		}
		line += len + (line[len] == '\n');
	}
	return 0;
}

/* The kprobe blacklist ("0xSTART-0xEND\tNAME[ [MODULE]]" lines, in debugfs),
 * or NULL when it cannot be read. */
static char *read_blacklist(const struct ft_plan *p)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/kernel/debug/kprobes/blacklist", p->sys_root);
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	if (!f)
		return NULL;
	ssize_t n = getdelim(&text, &len, '\0', f);
	fclose(f);
	if (n <= 0) {
		free(text);
		return NULL;
	}
	return text;
}

static bool blacklisted(const char *blacklist, const char *name)
{
	size_t n = strlen(name);
	for (const char *at = blacklist; (at = strstr(at, name)); at += n)
		if (at > blacklist && at[-1] == '\t' && (at[n] == '\n' || at[n] == ' ' || !at[n]))
			return true;
	return false;
}

/* Leaves out of L the matches kprobes cannot trace, and says which: the
 * kprobe blacklist (the kernel would refuse them) and ftrace's placeholders
 * for overridden weak functions (__ftrace_invalid_address___N, no function). */
void ft_kfunc_drop_untraceable(const struct ft_plan *p, struct func_list *l, const char *pattern)
{
	char *blacklist = read_blacklist(p);
	char names[200] = "";
	int kept = 0, dropped = 0;
	for (int i = 0; i < l->n; i++) {
		const char *name = l->names[i];
		if (strncmp(name, "__ftrace_invalid_address_", 25) != 0 &&
		    !(blacklist && blacklisted(blacklist, name))) {
			l->names[kept++] = l->names[i];
			continue;
		}
		size_t used = strlen(names);
		if (dropped++ < 5)
			snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "", name);
		free(l->names[i]);
	}
	free(blacklist);
	l->n = kept;
	if (dropped)
		ft_warn("'%s': skipping %d function%s kprobes cannot trace (kprobe "
			"blacklist, ftrace placeholders): %s%s", pattern, dropped,
			dropped == 1 ? "" : "s", names, dropped > 5 ? ", ..." : "");
}
