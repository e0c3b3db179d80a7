/* What this user may do with perf on this host: euid, effective
 * capabilities, the seccomp mode, kernel.perf_event_paranoid,
 * kernel.kptr_restrict, the lockdown mode, and which PMUs exist (kprobe,
 * uprobe, a hardware one). Read under the /proc and /sys roots given, so
 * tests feed fixtures; host_access_probe asks the kernel the one thing no
 * file says (what a seccomp filter does with perf_event_open). */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "host/host.h"

/* The first integer in ROOT/REL, or DEF when it cannot be read. */
static int read_int(const char *root, const char *rel, int def)
{
	char line[64];
	int v;
	return host_read_line(root, rel, line, sizeof(line)) == 0 && sscanf(line, "%d", &v) == 1 ?
	       v : def;
}

/* The active mode of SYS_ROOT/kernel/security/lockdown ("none [integrity]
 * confidentiality" marks it with brackets), or "" when unknown. */
static void read_lockdown(const char *sys_root, char *out, size_t len)
{
	char line[128];
	out[0] = '\0';
	if (host_read_line(sys_root, "kernel/security/lockdown", line, sizeof(line)) < 0)
		return;
	char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
	if (close)
		snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
}

/* A hardware PMU: x86's "cpu" (hybrid: "cpu_core"/"cpu_atom") or an arm
 * "armv*" one among SYS_ROOT/bus/event_source/devices. */
static bool hardware_pmu(const char *sys_root)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", sys_root);
	DIR *d = opendir(path);
	bool found = false;
	for (struct dirent *de; d && !found && (de = readdir(d));)
		found = strcmp(de->d_name, "cpu") == 0 || strncmp(de->d_name, "cpu_", 4) == 0 ||
			strncmp(de->d_name, "armv", 4) == 0;
	if (d)
		closedir(d);
	return found;
}

/* Whether kallsyms shows this user real addresses, as the kernel's
 * kallsyms_show_value decides: kptr_restrict 0 with perf_event_paranoid
 * <= 1, or 0 or 1 with CAP_SYSLOG; 2 hides them from everyone. */
static bool kallsyms_visible(const struct host_access *h)
{
	if (h->kptr_restrict >= 2)
		return false;
	return (h->kptr_restrict == 0 && h->paranoid <= 1) || host_access_has(h, HOST_CAP_SYSLOG);
}

int host_access_read(const char *proc_root, const char *sys_root, struct host_access *h)
{
	memset(h, 0, sizeof(*h));
	h->root = geteuid() == 0;
	int ret = host_cap_eff(proc_root, "self", &h->cap_eff);
	if (ret < 0)
		h->cap_eff = 0;
	/* unreadable: 2, the upstream default and the safe guess */
	h->paranoid = read_int(proc_root, "sys/kernel/perf_event_paranoid", 2);
	h->kptr_restrict = read_int(proc_root, "sys/kernel/kptr_restrict", 1);
	h->kallsyms = kallsyms_visible(h);
	h->child_pidns = host_child_pidns(proc_root, "self") > 0;
	if (host_seccomp(proc_root, "self", &h->seccomp) < 0)
		h->seccomp = -1;
	int mlock = read_int(proc_root, "sys/kernel/perf_event_mlock_kb", 516);
	h->mlock_kb = mlock > 0 ? (unsigned)mlock : 0;
	read_lockdown(sys_root, h->lockdown, sizeof(h->lockdown));
	h->kprobe_pmu = host_pmu_type(sys_root, "kprobe");
	h->uprobe_pmu = host_pmu_type(sys_root, "uprobe");
	h->hw_pmu = hardware_pmu(sys_root);
	return ret;
}

void host_access_probe(struct host_access *h)
{
	h->perf_seccomp = 0;
	if (h->seccomp != 2)
		return;
	/* The kernel reads the attr's size before any permission check, and
	 * answers one below the first ABI's (64 bytes) E2BIG whoever asks;
	 * any other answer is the filter's (Docker's and podman's profiles:
	 * EPERM without the capability their rule names, ENOSYS for a call
	 * they do not list). Not a NULL attr: valgrind reads it and dies. */
	struct perf_event_attr attr = { .size = 1 };
	long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd >= 0)
		close((int)fd);
	else if (errno != E2BIG)
		h->perf_seccomp = -errno;
}

bool host_access_has(const struct host_access *h, int cap)
{
	return (h->cap_eff >> cap) & 1;
}

bool host_perf_kernel(const struct host_access *h)
{
	return host_access_has(h, HOST_CAP_PERFMON) || host_access_has(h, HOST_CAP_SYS_ADMIN) ||
	       h->paranoid <= 1;
}

bool host_perf_cpu(const struct host_access *h)
{
	return host_access_has(h, HOST_CAP_PERFMON) || host_access_has(h, HOST_CAP_SYS_ADMIN) ||
	       h->paranoid <= 0;
}

bool host_perf_any(const struct host_access *h)
{
	return host_access_has(h, HOST_CAP_PERFMON) || host_access_has(h, HOST_CAP_SYS_ADMIN) ||
	       h->paranoid <= 2;
}
