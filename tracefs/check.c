/* ftstack check: what this kernel's tracefs offers, probed without leaving
 * anything behind. One small probe per line of output; what the host lets
 * this user do (perf, sysctls, lockdown, capabilities) is the check
 * command's, from host/ (cmd/check.c). */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

struct ctx {
	const char *root;      /* NULL when there is no tracefs */
};

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static bool root_has(const struct ctx *c, const char *rel)
{
	char path[512];
	return c->root && tfs_join(path, sizeof(path), c->root, rel) == 0 && exists(path);
}

static bool file_has(const struct ctx *c, const char *rel, const char *word)
{
	char *text = NULL;
	bool ok = c->root && tfs_read_file(c->root, rel, &text) > 0 && strstr(text, word);
	free(text);
	return ok;
}

#define DETAIL(it, ...) snprintf((it)->detail, sizeof((it)->detail), __VA_ARGS__)

static void p_tracefs(const struct ctx *c, struct tfs_check_item *it)
{
	it->ok = c->root != NULL;
	DETAIL(it, "%.150s", c->root ? c->root : "not mounted and cannot mount");
}

static void p_tracepoints(const struct ctx *c, struct tfs_check_item *it)
{
	struct tfs_event *evs = NULL;
	int n = c->root ? tfs_events_match(c->root, "*", "*", false, &evs) : -ENOENT;
	free(evs);
	it->ok = n > 0;
	if (n >= 0)
		DETAIL(it, "%d events", n);
	else
		DETAIL(it, "none: %s", strerror(-n));
}

static void p_stacktrace(const struct ctx *c, struct tfs_check_item *it)
{
	char pat[512];
	glob_t g;
	bool files = false;
	if (c->root && tfs_join(pat, sizeof(pat), c->root, "events/*/*/trigger") == 0 &&
	    glob(pat, GLOB_NOSORT, NULL, &g) == 0) {
		files = g.gl_pathc > 0;
		globfree(&g);
	}
	bool readme = file_has(c, "README", "stacktrace");
	it->ok = files && readme;
	DETAIL(it, "%s", it->ok ? "events/*/*/trigger" : files ? "no stacktrace in README" :
	       "no events/*/*/trigger files");
}

static void p_userstack(const struct ctx *c, struct tfs_check_item *it)
{
	it->ok = file_has(c, "trace_options", "userstacktrace") ||
		 file_has(c, "README", "userstacktrace");
	DETAIL(it, "%s", it->ok ? "options/userstacktrace" : "no userstacktrace option");
}

static void p_exists(const char *path, struct tfs_check_item *it)
{
	it->ok = exists(path);
	DETAIL(it, "%.140s%s", path, it->ok ? "" : " missing");
}

static void p_rootfile(const struct ctx *c, const char *rel, struct tfs_check_item *it)
{
	it->ok = root_has(c, rel);
	DETAIL(it, "%.140s%s", rel, it->ok ? "" : " missing");
}

/* A function list AVAIL (or, when NULL, available_filter_functions) names,
 * into FUNC: vfs_read when listed, else the first.
 * Returns 0, the read's -errno (EPERM where the tracer is locked down), or
 * -ENODATA when none is listed. */
static int try_function(const char *root, const char *avail, char *func, size_t len)
{
	char *text = NULL;
	int ret = avail ? 0 : tfs_read_file(root, "available_filter_functions", &text);
	if (!avail)
		avail = text;
	if (ret >= 0) {
		size_t n = avail ? strcspn(avail, " \t\n") : 0;
		ret = -ENODATA;
		if (tfs_functions_listed(avail, "vfs_read"))
			ret = 0, snprintf(func, len, "vfs_read");
		else if (n > 0 && n + 1 <= len)
			ret = 0, snprintf(func, len, "%.*s", (int)n, avail);
	}
	free(text);
	return ret;
}

int tfs_function_tracer_try(const char *root, const char *avail)
{
	char name[64], *tracers = NULL;
	if (tfs_read_file(root, "available_tracers", &tracers) < 0 || !tracers ||
	    !strstr(tracers, "function")) {
		free(tracers);
		return -ENOENT;
	}
	free(tracers);
	/* one function, never all of them: patching every function's entry
	 * takes minutes on an emulated CPU (and wedged one) */
	char func[130];
	int ret = try_function(root, avail, func, sizeof(func));
	if (ret < 0)
		return ret;
	struct tfs_log log;
	struct tracefs_instance *inst = NULL;
	tfs_owned_name(getpid(), name, sizeof(name));
	tfs_log_init(&log, root);
	ret = tfs_instance_create(&log, name, &inst);
	if (ret == 0)
		ret = tfs_function_filter(&log, inst, func, false, NULL, 0);
	int got = 0;
	char inst_rel[128];
	snprintf(inst_rel, sizeof(inst_rel), "instances/%s", name);
	if (ret == 0 && (tfs_ftrace_filter_read(root, inst_rel, &got) < 0 || got != 1))
		ret = -EINVAL;
	if (ret == 0)
		ret = tfs_log_write(&log, inst, "current_tracer", "function", false,
				    TRACEFS_UNDO_WRITE, "nop", NULL, 0);
	int undo = tfs_log_undo(&log);
	tfs_log_free(&log);
	return ret < 0 ? ret : undo < 0 ? undo : 0;
}

/* Lists of the function tracer are not enough (it can be refused): try it. */
static void p_function(const struct ctx *c, struct tfs_check_item *it)
{
	int ret = tfs_function_tracer_try(c->root, NULL);
	it->ok = ret == 0;
	DETAIL(it, "%s", ret == 0 ? "usable in a private instance" :
	       ret == -ENOENT ? "not in available_tracers" :
	       ret == -EPERM ? "listed, but the kernel refuses it (EPERM)" :
	       ret == -ENODATA ? "available_filter_functions lists no function" : strerror(-ret));
}

static void p_hist(const struct ctx *c, struct tfs_check_item *it)
{
	it->ok = file_has(c, "README", "hist:");
	DETAIL(it, "%s", it->ok ? "events/*/*/trigger hist:" : "no hist: in README");
}

static void p_kprobe_pmu(const struct ctx *c, struct tfs_check_item *it)
{
	(void)c;
	p_exists("/sys/bus/event_source/devices/kprobe/type", it);
}

static void p_uprobe_pmu(const struct ctx *c, struct tfs_check_item *it)
{
	(void)c;
	p_exists("/sys/bus/event_source/devices/uprobe/type", it);
}

static void p_kprobe_events(const struct ctx *c, struct tfs_check_item *it)
{
	p_rootfile(c, "kprobe_events", it);
}

static void p_uprobe_events(const struct ctx *c, struct tfs_check_item *it)
{
	p_rootfile(c, "uprobe_events", it);
}

static const struct {
	const char *what;
	void (*probe)(const struct ctx *, struct tfs_check_item *);
} probes[] = {
	{ "tracefs", p_tracefs },
	{ "tracepoints", p_tracepoints },
	{ "stacktrace trigger", p_stacktrace },
	{ "user stack traces", p_userstack },
	{ "kprobes (PMU)", p_kprobe_pmu },
	{ "kprobes (kprobe_events)", p_kprobe_events },
	{ "uprobes (PMU)", p_uprobe_pmu },
	{ "uprobes (uprobe_events)", p_uprobe_events },
	{ "function tracer", p_function },
	{ "hist triggers", p_hist },
};

int tfs_check(const char *root, struct tfs_check_item *items, int max)
{
	struct ctx c = { root && root[0] ? root : NULL };
	int n = 0;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]) && n < max; i++, n++) {
		memset(&items[n], 0, sizeof(items[n]));
		items[n].what = probes[i].what;
		probes[i].probe(&c, &items[n]);
	}
	return n;
}
