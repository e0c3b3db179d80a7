/* ftstack check: what this kernel and these privileges allow, probed
 * without leaving anything behind. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "tracefs/tracefs.h"

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok = f && fgets(buf, (int)len, f);
	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static struct tracefs_check_item *item(struct tracefs_check_item *items, int *n, int max,
				       const char *what)
{
	static struct tracefs_check_item spare;
	struct tracefs_check_item *it = *n < max ? &items[(*n)++] : &spare;
	memset(it, 0, sizeof(*it));
	it->what = what;
	return it;
}

static bool readme_has(const char *root, const char *word)
{
	char *text = NULL;
	bool ok = root && tracefs_read_file(root, "README", &text) > 0 && strstr(text, word);
	free(text);
	return ok;
}

/* Tries the function tracer in a private instance, then removes it. */
static void probe_function_tracer(const char *root, struct tracefs_check_item *it)
{
	char avail[4096] = "";
	char *text = NULL;
	if (!root || tracefs_read_file(root, "available_tracers", &text) < 0) {
		snprintf(it->detail, sizeof(it->detail), "available_tracers unreadable");
		return;
	}
	snprintf(avail, sizeof(avail), "%s", text);
	free(text);
	if (!strstr(avail, "function")) {
		snprintf(it->detail, sizeof(it->detail), "not in available_tracers");
		return;
	}
	char name[64], rel[128];
	tracefs_owned_name(getpid(), name, sizeof(name));
	snprintf(rel, sizeof(rel), "instances/%s", name);
	struct tracefs_log log;
	tracefs_log_init(&log, root);
	char rel2[160];
	snprintf(rel2, sizeof(rel2), "%s/current_tracer", rel);
	int ret = tracefs_log_mkdir(&log, rel);
	if (ret == 0)
		ret = tracefs_log_write(&log, rel2, "function", false, TRACEFS_UNDO_WRITE, "nop",
					NULL, 0);
	tracefs_log_undo(&log);
	tracefs_log_free(&log);
	it->ok = ret == 0;
	snprintf(it->detail, sizeof(it->detail), "%s", ret == 0 ? "usable in a private instance" :
		 ret == -EPERM ? "listed, but the kernel refuses it (EPERM)" : strerror(-ret));
}

static void probe_perf(struct tracefs_check_item *it)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
				     .sample_type = PERF_SAMPLE_CALLCHAIN, .disabled = 1 };
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	it->ok = fd >= 0;
	snprintf(it->detail, sizeof(it->detail), "%s", fd >= 0 ? "cpu-clock with callchains" :
		 strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void caps(const char *proc_root, struct tracefs_check_item *it)
{
	char path[300], line[256];
	unsigned long long eff = 0;
	snprintf(path, sizeof(path), "%s/self/status", proc_root);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	bool admin = eff & (1ull << 21), perfmon = eff & (1ull << 38);
	it->ok = geteuid() == 0 || admin || perfmon;
	snprintf(it->detail, sizeof(it->detail), "euid %u, CAP_SYS_ADMIN %s, CAP_PERFMON %s",
		 (unsigned)geteuid(), admin ? "yes" : "no", perfmon ? "yes" : "no");
}

int tracefs_check(const char *root, const char *proc_root, struct tracefs_check_item *items,
		  int max)
{
	int n = 0;
	char buf[256], path[512];
	struct tracefs_check_item *it = item(items, &n, max, "tracefs");
	it->ok = root && root[0];
	snprintf(it->detail, sizeof(it->detail), "%s", it->ok ? root : "not mounted and cannot mount");
	if (!it->ok)
		root = NULL;
	it = item(items, &n, max, "tracepoints");
	struct tracefs_event *evs = NULL;
	int nev = root ? tracefs_events_match(root, "*", "*", false, &evs) : -ENOENT;
	free(evs);
	it->ok = nev > 0;
	snprintf(it->detail, sizeof(it->detail), nev >= 0 ? "%d events" : "none", nev);
	it = item(items, &n, max, "stacktrace trigger");
	it->ok = readme_has(root, "stacktrace");
	snprintf(it->detail, sizeof(it->detail), "events/*/*/trigger");
	it = item(items, &n, max, "user stack traces");
	it->ok = readme_has(root, "userstacktrace") ||
		 (root && (snprintf(path, sizeof(path), "%s/options/userstacktrace", root), exists(path)));
	snprintf(it->detail, sizeof(it->detail), "options/userstacktrace (8 frames)");
	it = item(items, &n, max, "kprobes (PMU)");
	it->ok = exists("/sys/bus/event_source/devices/kprobe/type");
	snprintf(it->detail, sizeof(it->detail), "/sys/bus/event_source/devices/kprobe");
	it = item(items, &n, max, "kprobes (kprobe_events)");
	it->ok = root && (snprintf(path, sizeof(path), "%s/kprobe_events", root), exists(path));
	snprintf(it->detail, sizeof(it->detail), "kprobe_events");
	it = item(items, &n, max, "uprobes (PMU)");
	it->ok = exists("/sys/bus/event_source/devices/uprobe/type");
	snprintf(it->detail, sizeof(it->detail), "/sys/bus/event_source/devices/uprobe");
	it = item(items, &n, max, "uprobes (uprobe_events)");
	it->ok = root && (snprintf(path, sizeof(path), "%s/uprobe_events", root), exists(path));
	snprintf(it->detail, sizeof(it->detail), "uprobe_events");
	probe_function_tracer(root, item(items, &n, max, "function tracer"));
	it = item(items, &n, max, "hist triggers");
	it->ok = readme_has(root, "hist:");
	snprintf(it->detail, sizeof(it->detail), "events/*/*/trigger hist:");
	probe_perf(item(items, &n, max, "perf_event_open callchains"));
	it = item(items, &n, max, "perf_event_max_stack");
	it->ok = read_line("/proc/sys/kernel/perf_event_max_stack", buf, sizeof(buf));
	snprintf(it->detail, sizeof(it->detail), "%s frames", it->ok ? buf : "?");
	it = item(items, &n, max, "perf_event_paranoid");
	it->ok = read_line("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf));
	snprintf(it->detail, sizeof(it->detail), "%s", it->ok ? buf : "?");
	it = item(items, &n, max, "kptr_restrict");
	it->ok = read_line("/proc/sys/kernel/kptr_restrict", buf, sizeof(buf));
	/* per-CPU symbols sit at 0 even when addresses show: look at text */
	bool shown = false;
	FILE *kf = fopen("/proc/kallsyms", "r");
	char ks[256];
	while (kf && fgets(ks, sizeof(ks), kf)) {
		if (strstr(ks, " T ") || strstr(ks, " t ")) {
			shown = strncmp(ks, "0000000000000000", 16) != 0;
			break;
		}
	}
	if (kf)
		fclose(kf);
	snprintf(it->detail, sizeof(it->detail), "%s (kallsyms addresses %s)", it->ok ? buf : "?",
		 shown ? "visible" : "hidden");
	it->ok = shown;
	it = item(items, &n, max, "lockdown");
	it->ok = true;
	if (read_line("/sys/kernel/security/lockdown", buf, sizeof(buf))) {
		char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
		if (l && r) {
			*r = '\0';
			it->ok = strcmp(l + 1, "none") == 0;
			snprintf(it->detail, sizeof(it->detail), "%s", l + 1);
		}
	} else {
		snprintf(it->detail, sizeof(it->detail), "no lockdown LSM");
	}
	caps(proc_root, item(items, &n, max, "privileges"));
	return n < max ? n : max;
}
