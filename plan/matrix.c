/* ftstack check's matrix: what this user can do in this namespace, one row
 * a kind of tracing, yes or no and, for no, what is missing. Built from the
 * host's access and real perf_event_open attempts (cmd/check.c makes
 * them), so the rows say what the kernel answered, not what ftstack
 * guesses; pure, so tests/unit/mech_test.c feeds it any answers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "plan/plan.h"

/* Why perf_event_open said ERR (-errno), for a person. */
static void why_perf(const struct host_access *h, int err, bool kernel_mode, char *buf,
		     size_t len)
{
	if (h->perf_seccomp && err == h->perf_seccomp)
		snprintf(buf, len, "this process's seccomp filter refuses perf_event_open "
			 "(Seccomp: %d)%s", h->seccomp, host_access_has(h, HOST_CAP_PERFMON) ?
			 ", though CAP_PERFMON is effective" : "");
	else if ((err == -EACCES || err == -EPERM) && kernel_mode)
		snprintf(buf, len, "kernel-mode samples: kernel.perf_event_paranoid is %d "
			 "(sysctl kernel.perf_event_paranoid=1, or CAP_PERFMON)", h->paranoid);
	else if (err == -EACCES || err == -EPERM)
		snprintf(buf, len, "perf_event_open refused (kernel.perf_event_paranoid is %d; "
			 "CAP_PERFMON)", h->paranoid);
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		snprintf(buf, len, "this kernel does not support it");
	else
		snprintf(buf, len, "perf_event_open: %s", strerror(-err));
}

static struct ft_matrix_row *row(struct ft_matrix_row *rows, int *n, int max, const char *what,
				 bool ok)
{
	static struct ft_matrix_row spare;
	struct ft_matrix_row *r = *n < max ? &rows[(*n)++] : &spare;
	memset(r, 0, sizeof(*r));
	r->what = what;
	r->ok = ok;
	return r;
}

/* kernel functions / user functions: the PMU (PMU_TYPE, opened: ERR) or
 * the tracefs file (EVENTS writable). */
static void probe_row(const struct host_access *h, enum ft_tracefs_state t, int pmu_type,
		      int err, int events, const char *kind, struct ft_matrix_row *r)
{
	r->ok = (pmu_type >= 0 && err == 0) || (t == FT_TRACEFS_OK && events == 0);
	char pmu[160];
	if (pmu_type < 0)
		snprintf(pmu, sizeof(pmu), "this kernel has no %s PMU", kind);
	else if ((err == -EACCES || err == -EPERM) && err != h->perf_seccomp)
		/* the kernel's rule (6.18): kprobe PMU perfmon_capable(), uprobe PMU
		 * capable(CAP_SYS_ADMIN) */
		snprintf(pmu, sizeof(pmu), "the %s PMU needs %s", kind,
			 strcmp(kind, "uprobe") == 0 ? "CAP_SYS_ADMIN" : "CAP_PERFMON");
	else if (err)
		why_perf(h, err, true, pmu, sizeof(pmu));
	if (pmu_type >= 0 && err == 0)
		snprintf(r->detail, sizeof(r->detail), "the %s PMU", kind);
	else if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "%s_events (%s)", kind, pmu);
	else
		snprintf(r->detail, sizeof(r->detail), "%s; %s_events: %s", pmu, kind,
			 t != FT_TRACEFS_OK ? ft_tracefs_missing(t) : events == -ENOENT ?
			 "this kernel has none" : "not writable by this user");
}

int ft_mech_matrix(const struct host_access *h, enum ft_tracefs_state t,
		   const struct ft_access_probe *p, struct ft_matrix_row *rows, int max)
{
	int n = 0;
	struct ft_matrix_row *r;
	r = row(rows, &n, max, "tracepoints", t == FT_TRACEFS_OK && p->tracepoint == 0);
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "perf_event_open by tracefs id");
	else if (t != FT_TRACEFS_OK)
		snprintf(r->detail, sizeof(r->detail), "%s", ft_tracefs_missing(t));
	else
		why_perf(h, p->tracepoint, true, r->detail, sizeof(r->detail));
	r = row(rows, &n, max, "kernel functions", false);
	probe_row(h, t, h->kprobe_pmu, p->kprobe_pmu, p->kprobe_events, "kprobe", r);
	if (!r->ok && ft_lockdown_blocks_kprobes(h))
		snprintf(r->detail, sizeof(r->detail), "kprobes are blocked by the kernel's "
			 "lockdown (%s)", h->lockdown);
	struct ft_matrix_row *uf = row(rows, &n, max, "user functions", false);
	probe_row(h, t, h->uprobe_pmu, p->uprobe_pmu, p->uprobe_events, "uprobe", uf);
	r = row(rows, &n, max, "USDT", uf->ok);
	snprintf(r->detail, sizeof(r->detail), "%s%s", r->ok ? "uprobes with semaphores: " : "",
		 uf->detail);
	r = row(rows, &n, max, "profile", p->cpu_clock_user == 0);
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "perf's cpu-clock%s",
			 p->cpu_clock_kernel == 0 ? "" : ", user stacks only");
	else
		why_perf(h, p->cpu_clock_user, false, r->detail, sizeof(r->detail));
	r = row(rows, &n, max, "offcpu", p->ctxsw_kernel == 0 && (t != FT_TRACEFS_OK ||
							      p->tracepoint == 0));
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "%s and switch records", t == FT_TRACEFS_OK ?
			 "the sched:sched_switch tracepoint" : "perf's context-switch event");
	else
		why_perf(h, p->ctxsw_kernel ? p->ctxsw_kernel : p->tracepoint, true, r->detail,
			 sizeof(r->detail));
	r = row(rows, &n, max, "software events", p->page_faults == 0);
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "software:page-faults, context-switches, ...");
	else
		why_perf(h, p->page_faults, false, r->detail, sizeof(r->detail));
	r = row(rows, &n, max, "hardware events", p->cycles == 0);
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "hardware:cycles, instructions, ...");
	else if (!h->hw_pmu || p->cycles == -ENOENT || p->cycles == -EOPNOTSUPP)
		snprintf(r->detail, sizeof(r->detail), "no hardware PMU on this machine");
	else
		why_perf(h, p->cycles, false, r->detail, sizeof(r->detail));
	r = row(rows, &n, max, "kernel stacks", p->cpu_clock_kernel == 0);
	if (r->ok && h->kallsyms)
		snprintf(r->detail, sizeof(r->detail), "named from /proc/kallsyms");
	else if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "addresses only: /proc/kallsyms is hidden "
			 "(kernel.kptr_restrict %d; CAP_SYSLOG)", h->kptr_restrict);
	else
		why_perf(h, p->cpu_clock_kernel, true, r->detail, sizeof(r->detail));
	r = row(rows, &n, max, "user stacks", p->cpu_clock_user == 0);
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "frame pointers, repaired from CFI");
	else
		why_perf(h, p->cpu_clock_user, false, r->detail, sizeof(r->detail));
	r = row(rows, &n, max, "other users' processes", host_access_has(h, HOST_CAP_SYS_PTRACE));
	snprintf(r->detail, sizeof(r->detail), "%s", r->ok ? "CAP_SYS_PTRACE" :
		 "needs CAP_SYS_PTRACE; your own processes (-c, -p) work");
	r = row(rows, &n, max, "system-wide", p->system_wide == 0);
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "one event per CPU");
	else if (h->perf_seccomp && p->system_wide == h->perf_seccomp)
		why_perf(h, p->system_wide, true, r->detail, sizeof(r->detail));
	else
		snprintf(r->detail, sizeof(r->detail), "needs CAP_PERFMON or "
			 "kernel.perf_event_paranoid <= 0 (it is %d)", h->paranoid);
	return n;
}
