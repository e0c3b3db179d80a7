/* ftstack check and ftstack cleanup. Both return the exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "python/python.h"
#include "collector/session.h"
#include "host/host.h"
#include "perfev/perfev.h"
#include "plan/plan.h"
#include "tracefs/tracefs.h"

/* What a sample's user stack costs here, each way as the runs take it: fp
 * (the kernel's frame-pointer walk plus a FT_FIX_SIZE_DEFAULT-byte copy)
 * against copy (a FT_COPY_SIZE_DEFAULT-byte copy alone): where the kernel's
 * reads of user memory are slow (some VMs) copy is much the cheaper.
 * perfev_ustack_cost times them into C (the same measurement chooses the
 * user-stack method: ft_ustack_check says which and why). Returns 0, or
 * -errno when it can't. */
static int check_user_stacks(const char *root, struct perfev_ustack_cost *cost,
			     struct tfs_check_item *it)
{
	uint32_t tp;
	int ret = tfs_event_id(root, "raw_syscalls", "sys_enter", &tp);
	if (ret == 0)
		ret = perfev_ustack_cost((int)tp, FT_FIX_SIZE_DEFAULT, FT_COPY_SIZE_DEFAULT, cost);
	if (ret < 0)
		return ret;
	const struct perfev_ustack_cost c = *cost;
	char fp[32], copy[32];
	it->what = "user stacks";
	it->ok = true;
	/* the verdict is the next line's (ft_ustack_check: the one rule) */
	snprintf(it->detail, sizeof(it->detail),
		 "the kernel's walk + a %d-byte copy (fp) %s%s, a %d-byte copy (copy) %s",
		 FT_FIX_SIZE_DEFAULT, perfev_cost_text(fp, sizeof(fp), c.fp_measured, c.fp_ns),
		 c.fp_measured ? " a sample" : "", FT_COPY_SIZE_DEFAULT,
		 perfev_cost_text(copy, sizeof(copy), c.copy_measured, c.copy_ns));
	return 0;
}

/* Opens one event as this user would, closes it: 0 or -errno. */
static int try_open(uint32_t type, uint64_t config, bool kernel, int pid, int cpu,
		    uint64_t config1)
{
	struct perfev_opts po = { .type = type, .config = config, .config1 = config1,
				  .sample_period = 1000000, .disabled = true,
				  .exclude_kernel = !kernel };
	int fd = perfev_open(&po, pid, cpu, -1);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

/* 0 when ROOT/FILE may be written by this user, else -errno. */
static int writable(const char *root, const char *file)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, file);
	if (!root[0] || access(path, F_OK) < 0)
		return -ENOENT;
	return access(path, W_OK) == 0 ? 0 : -EACCES;
}

/* Real perf_event_open attempts for the matrix: what the kernel says to
 * this user in this namespace. Nothing stays open; the uprobe is on a file
 * this process has not mapped, so nothing is inserted anywhere. */
static void probe_access(const struct host_access *h, const char *root,
			 struct ft_access_probe *p)
{
	bool kernel = host_perf_kernel(h);
	uint32_t tp = 0;
	p->cpu_clock_user = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false, 0, -1, 0);
	p->cpu_clock_kernel = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true, 0, -1, 0);
	p->ctxsw_kernel = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true, 0, -1,
				   0);
	p->page_faults = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false, 0, -1, 0);
	p->cycles = try_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false, 0, -1, 0);
	p->system_wide = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, kernel, -1, 0, 0);
	p->tracepoint = root[0] ? tfs_event_id(root, "sched", "sched_switch", &tp) : -ENOENT;
	if (p->tracepoint == 0)
		p->tracepoint = try_open(PERF_TYPE_TRACEPOINT, tp, true, 0, -1, 0);
	static const char kfunc[] = "vfs_read", ufile[] = "/bin/true";
	p->kprobe_pmu = h->kprobe_pmu < 0 ? -ENOENT :
			try_open((uint32_t)h->kprobe_pmu, 0, true, 0, -1, (uint64_t)(uintptr_t)kfunc);
	p->uprobe_pmu = h->uprobe_pmu < 0 ? -ENOENT :
			try_open((uint32_t)h->uprobe_pmu, 0, false, 0, -1, (uint64_t)(uintptr_t)ufile);
	p->kprobe_events = writable(root, "kprobe_events");
	p->uprobe_events = writable(root, "uprobe_events");
}

/* The seccomp line: the mode, and whether a filter lets perf_event_open
 * through (a container runtime's profile may refuse it whatever the
 * capabilities; the matrix's rows then say so too). */
static void check_seccomp(const struct host_access *h, struct tfs_check_item *it)
{
	it->what = "seccomp";
	it->ok = !h->perf_seccomp;
	if (h->perf_seccomp)
		ft_mech_seccomp_why(h, it->detail, sizeof(it->detail));
	else
		snprintf(it->detail, sizeof(it->detail), "%s", h->seccomp == 2 ?
			 "a filter (Seccomp: 2), which lets perf_event_open through" :
			 h->seccomp == 0 ? "no filter" : "mode unknown (no Seccomp in /proc/self/status)");
}

/* The matrix: what this user can do here, one row a kind of tracing. */
static void print_matrix(const char *root, int find_err)
{
	struct host_access h;
	struct ft_access_probe p;
	struct ft_matrix_row rows[16];
	host_access_read("/proc", "/sys", &h);
	host_access_probe(&h);
	enum ft_tracefs_state t = ft_tracefs_state("/sys", find_err, &h);
	probe_access(&h, root, &p);
	int n = ft_mech_matrix(&h, t, &p, rows, 16);
	printf("What uid %u can do here (CapEff %016llx, kernel.perf_event_paranoid %d):\n",
	       (unsigned)geteuid(), (unsigned long long)h.cap_eff, h.paranoid);
	for (int i = 0; i < n; i++)
		printf("  %-24s %-3s  %s\n", rows[i].what, rows[i].ok ? "yes" : "no",
		       rows[i].detail);
	printf("\n");
}

#define DETAIL(it, ...) snprintf((it)->detail, sizeof((it)->detail), __VA_ARGS__)

/* Whether this user may sample a cpu-clock with kernel callchains here. */
static void check_perf(struct tfs_check_item *it)
{
	int ret = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true, 0, -1, 0);
	it->what = "perf_event_open callchains";
	it->ok = ret == 0;
	DETAIL(it, "%s", ret == 0 ? "cpu-clock with callchains" : strerror(-ret));
}

/* A sysctl's value as PROC_ROOT/REL says it, with UNIT after. */
static void check_sysctl(const char *proc_root, const char *what, const char *rel,
			 const char *unit, struct tfs_check_item *it)
{
	char buf[64] = "";
	it->what = what;
	it->ok = host_read_line(proc_root, rel, buf, sizeof(buf)) == 0;
	buf[strcspn(buf, "\n")] = '\0';
	DETAIL(it, "%s%s", it->ok ? buf : "unreadable", it->ok ? unit : "");
}

int ft_check_host(const struct host_access *h, const char *proc_root,
		  struct tfs_check_item *items, int max)
{
	struct tfs_check_item it[5];
	check_sysctl(proc_root, "perf_event_max_stack", "sys/kernel/perf_event_max_stack",
		     " frames", &it[0]);
	check_sysctl(proc_root, "perf_event_paranoid", "sys/kernel/perf_event_paranoid", "",
		     &it[1]);
	it[2] = (struct tfs_check_item){ .what = "kptr_restrict", .ok = h->kallsyms };
	DETAIL(&it[2], "%d (kallsyms addresses %s)", h->kptr_restrict,
	       h->kallsyms ? "visible" : "hidden");
	it[3] = (struct tfs_check_item){ .what = "lockdown",
					 .ok = !h->lockdown[0] || strcmp(h->lockdown, "none") == 0 };
	DETAIL(&it[3], "%s", h->lockdown[0] ? h->lockdown : "no lockdown LSM");
	bool admin = host_access_has(h, HOST_CAP_SYS_ADMIN);
	bool perfmon = host_access_has(h, HOST_CAP_PERFMON);
	it[4] = (struct tfs_check_item){ .what = "privileges", .ok = h->root || admin || perfmon };
	DETAIL(&it[4], "euid %u, CAP_SYS_ADMIN %s, CAP_PERFMON %s", (unsigned)geteuid(),
	       admin ? "yes" : "no", perfmon ? "yes" : "no");
	int n = max < 5 ? (max > 0 ? max : 0) : 5;
	memcpy(items, it, (size_t)n * sizeof(*it));
	return n;
}

int ft_cmd_check(const struct ft_options *o)
{
	(void)o;
	char root[256] = "";
	struct tfs_check_item items[48];
	struct host_access h;
	int find_err = tfs_find_root(root, sizeof(root));
	if (find_err < 0)
		root[0] = '\0';
	print_matrix(root, find_err);
	int n = tfs_check(root[0] ? root : NULL, items, 20);
	check_perf(&items[n++]);
	host_access_read("/proc", "/sys", &h);
	host_access_probe(&h);
	n += ft_check_host(&h, "/proc", &items[n], 30 - n);
	check_seccomp(&h, &items[n++]);
	struct perfev_ustack_cost cost;
	if (root[0] && check_user_stacks(root, &cost, &items[n]) == 0 &&
	    ft_ustack_check(&cost, &items[++n]) == 0)
		n++;
	ft_ring_maps_check(&items[n++]); /* who maps the perf rings at start-up */
	{ /* what profile, offcpu and count put in user stacks (python/); profile's
	   * readers on each CPU (collector/cpu_readers.c) take SCHED_FIFO if they may */
		items[n].what = "python frames";
		items[n].ok = true;
		snprintf(items[n].detail, sizeof(items[n].detail),
			 "CPython %s, read from the process (the run's own user's, or "
			 "CAP_SYS_PTRACE) by a reader on each CPU %s; other versions keep their "
			 "native frames", py_versions(),
			 host_sched_realtime_allowed(&h) ? "under SCHED_FIFO" :
			 "with short slices (no CAP_SYS_NICE or RLIMIT_RTPRIO: a read may wait out "
			 "the target's slice)");
		n++;
	}
	{ /* names for stripped binaries (names.c) */
		items[n].what = "debuginfod";
		ft_names_check(items[n].detail, sizeof(items[n].detail), &items[n].ok);
		n++;
	}
	n += ft_runtimes_check(&items[n], 48 - n); /* the runtimes whose frames ftstack walks and names */
	int width = 0;
	for (int i = 0; i < n; i++)
		if ((int)strlen(items[i].what) > width)
			width = (int)strlen(items[i].what);
	for (int i = 0; i < n; i++)
		printf("%-*s  %-3s  %s\n", width, items[i].what, items[i].ok ? "yes" : "no",
		       items[i].detail);
	return 0;
}

static void report_removed(void *ctx, const char *what)
{
	fprintf(ctx, "removed %s\n", what);
}

int ft_cleanup_run(const char *tracefs, const char *proc_root, FILE *out)
{
	int ret = tfs_cleanup_stale(tracefs, proc_root, report_removed, out);
	if (ret < 0) {
		ft_error("cleanup failed: %s (are you root?)", strerror(-ret));
		return 1;
	}
	fprintf(out, "%d object%s left by dead ftstack runs removed\n", ret, ret == 1 ? "" : "s");
	return 0;
}

int ft_cmd_cleanup(const struct ft_options *o)
{
	(void)o;
	char root[256];
	int ret = tfs_find_root(root, sizeof(root));
	if (ret < 0) {
		ft_error("no tracefs: %s", strerror(-ret));
		return 1;
	}
	return ft_cleanup_run(root, "/proc", stdout);
}
