/* Which mechanism each mode uses on this host, and the one-line refusal
 * when none fits (DESIGN.md section 7). Pure: it reads nothing but the
 * host_access it is given and the state of tracefs, so the unit test
 * (tests/unit/mech_test.c) feeds it every kind of host. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "plan/plan.h"
#include "plan/spec.h"

enum ft_tracefs_state ft_tracefs_state(const char *sys_root, int find_err,
				       const struct host_access *h)
{
	if (find_err == 0)
		return FT_TRACEFS_OK;
	if (strcmp(h->lockdown, "confidentiality") == 0)
		return FT_TRACEFS_LOCKDOWN;
	char path[512];
	snprintf(path, sizeof(path), "%s/kernel/tracing", sys_root);
	DIR *d = opendir(path);
	if (d) {
		closedir(d);
		return FT_TRACEFS_UNMOUNTED; /* sysfs's empty mount point */
	}
	return errno == EACCES || errno == EPERM ? FT_TRACEFS_UNREADABLE : FT_TRACEFS_NONE;
}

const char *ft_tracefs_missing(enum ft_tracefs_state t)
{
	switch (t) {
	case FT_TRACEFS_OK:
		return "";
	case FT_TRACEFS_LOCKDOWN:
		return "tracefs is closed by the kernel's lockdown (confidentiality)";
	case FT_TRACEFS_UNMOUNTED:
		return "tracefs is not mounted here, and mounting it needs CAP_SYS_ADMIN "
		       "(mount -t tracefs nodev /sys/kernel/tracing)";
	case FT_TRACEFS_UNREADABLE:
		return "tracefs is not readable by this user (root's, mode 0700: run as root, "
		       "or let this user's group read it, as perf-security.rst says)";
	case FT_TRACEFS_NONE:
		break;
	}
	return "this kernel or namespace has no tracefs";
}

void ft_mech_ask_from(const struct ft_options *o, struct ft_mech_ask *a)
{
	memset(a, 0, sizeof(*a));
	a->cmd = o->cmd;
	a->system_wide = !o->command && !o->npids && !o->ntids;
	a->ftrace = o->backend == FT_BACKEND_FTRACE;
	a->state = o->cmd == FT_OFFCPU && o->state >= 0;
	a->kernel_only = o->kernel_only;
	for (int i = 0; o->cmd == FT_COUNT && i < o->nspecs; i++) {
		struct ft_spec sp;
		if (ft_spec_parse(o->specs[i], o->lib, &sp) < 0)
			continue; /* the plan says what is wrong with it */
		a->tracepoints |= sp.kind == FT_SPEC_TRACEPOINT;
		a->kfuncs |= sp.kind == FT_SPEC_KFUNC;
		a->ufuncs |= sp.kind == FT_SPEC_UPROBE || sp.kind == FT_SPEC_USDT;
		a->usdt |= sp.kind == FT_SPEC_USDT;
		a->hardware |= sp.kind == FT_SPEC_PERF && sp.perf_type == PERF_TYPE_HARDWARE;
		a->software |= sp.kind == FT_SPEC_PERF && sp.perf_type == PERF_TYPE_SOFTWARE;
	}
}

/* What perf_event_paranoid N (and no capability) would lift. */
static const char *lift(int paranoid, int need)
{
	(void)paranoid;
	return need <= 0 ? "sysctl kernel.perf_event_paranoid=0, or CAP_PERFMON" :
	       "sysctl kernel.perf_event_paranoid=1, or CAP_PERFMON";
}

bool ft_lockdown_blocks_kprobes(const struct host_access *h)
{
	/* LOCKDOWN_KPROBES sits below LOCKDOWN_INTEGRITY_MAX: both modes close
	 * kprobes, the PMU's as well as kprobe_events (seen: the kprobe PMU
	 * answers EPERM to root under confidentiality on 6.1) */
	return strcmp(h->lockdown, "integrity") == 0 || strcmp(h->lockdown, "confidentiality") == 0;
}

void ft_mech_still_work(const struct host_access *h, enum ft_tracefs_state t, char *buf,
			size_t len)
{
	bool tfs = t == FT_TRACEFS_OK, perf = host_perf_any(h), kern = host_perf_kernel(h);
	bool kpmu = (host_access_has(h, HOST_CAP_PERFMON) || host_access_has(h, HOST_CAP_SYS_ADMIN)) &&
		    !ft_lockdown_blocks_kprobes(h);
	bool upmu = host_access_has(h, HOST_CAP_SYS_ADMIN);
	snprintf(buf, len, "%s%s%s%s%s%s", perf ? "profile" : "",
		 kern ? ", offcpu" : "", perf ? ", software events" : "",
		 perf && h->hw_pmu ? ", hardware events" : "",
		 (tfs || kpmu) && h->kprobe_pmu >= 0 && !ft_lockdown_blocks_kprobes(h) ?
		 ", kernel functions" : "",
		 (tfs || upmu) && h->uprobe_pmu >= 0 ? ", user functions" : "");
	if (!buf[0])
		snprintf(buf, len, "nothing");
}

/* "EPERM" for -EPERM. Static. */
static const char *errno_name(int err)
{
	const char *name = strerrorname_np(-err);
	return name ? name : "an error";
}

void ft_mech_seccomp_why(const struct host_access *h, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!h->perf_seccomp)
		return;
	/* the filter answered, not the kernel: a lower paranoid lifts
	 * nothing, and of the capabilities only the one the profile's rule
	 * names does (Docker's: CAP_PERFMON; podman's: CAP_SYS_ADMIN) */
	bool perfmon = host_access_has(h, HOST_CAP_PERFMON);
	snprintf(buf, len, "perf_event_open is refused by this process's seccomp filter (Seccomp: "
		 "%d in /proc/self/status; it answers %s)%s: run the container with a seccomp "
		 "profile that allows perf_event_open%s (README's container recipe)", h->seccomp,
		 errno_name(h->perf_seccomp), perfmon ? ", though CAP_PERFMON is effective" : "",
		 perfmon ? "" : ", or add CAP_PERFMON where the profile allows it then (Docker's "
		 "default does)");
}

void ft_mech_open_why(const struct host_access *h, bool task, char *buf, size_t len)
{
	bool perfmon = host_access_has(h, HOST_CAP_PERFMON) || host_access_has(h, HOST_CAP_SYS_ADMIN);
	bool ptrace = host_access_has(h, HOST_CAP_SYS_PTRACE);
	ft_mech_seccomp_why(h, buf, len);
	if (buf[0])
		return;
	if (!host_perf_any(h))
		snprintf(buf, len, "perf_event_open is closed to users here (kernel.perf_event_paranoid "
			 "is %d): sysctl kernel.perf_event_paranoid=2, or CAP_PERFMON", h->paranoid);
	else if (!task && !host_perf_cpu(h))
		snprintf(buf, len, "tracing every process needs CAP_PERFMON or "
			 "kernel.perf_event_paranoid <= 0 (it is %d): %s", h->paranoid, lift(h->paranoid, 0));
	else if (task && !(perfmon && ptrace))
		snprintf(buf, len, "a process of another user needs CAP_PERFMON and CAP_SYS_PTRACE "
			 "(effective here: %s)", perfmon ? "CAP_PERFMON" : ptrace ? "CAP_SYS_PTRACE" : "neither");
	else
		snprintf(buf, len, "the kernel refused though CAP_PERFMON%s is effective and no seccomp "
			 "filter answers: a security module (SELinux, AppArmor) or lockdown may forbid it "
			 "(see dmesg)", task ? " and CAP_SYS_PTRACE" : "");
}

/* Sets M's refusal; returns -EACCES. */
__attribute__((format(printf, 2, 3)))
static int refuse(struct ft_mech *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
	return -EACCES;
}

/* Refusals of the whole run (perf closed, system-wide, offcpu without
 * kernel samples). */
static int refuse_perf(const struct host_access *h, const struct ft_mech_ask *a,
		       struct ft_mech *m)
{
	char filtered[320];
	ft_mech_seccomp_why(h, filtered, sizeof(filtered));
	if (filtered[0] && !a->ftrace)
		return refuse(m, "%s", filtered);
	if (!host_perf_any(h))
		return refuse(m, "perf_event_open is closed to users here "
			"(kernel.perf_event_paranoid is %d): sysctl kernel.perf_event_paranoid=2, "
			"or CAP_PERFMON", h->paranoid);
	if (a->system_wide && !host_perf_cpu(h))
		return refuse(m, "tracing every process needs CAP_PERFMON or "
			"kernel.perf_event_paranoid <= 0 (it is %d): %s; or trace your own "
			"processes with -c CMD or -p PID", h->paranoid, lift(h->paranoid, 0));
	if (a->other_user && !host_access_has(h, HOST_CAP_SYS_PTRACE))
		return refuse(m, "%d is another user's process: tracing it needs "
			"CAP_SYS_PTRACE (perf_event_open's ptrace check); your own processes "
			"(-c, -p) work", (int)a->other_user);
	if (a->cmd == FT_OFFCPU && !host_perf_kernel(h))
		return refuse(m, "offcpu samples each switch in kernel mode, which "
			"kernel.perf_event_paranoid %d forbids without CAP_PERFMON: %s; "
			"profile works here", h->paranoid, lift(h->paranoid, 1));
	if (a->kernel_only && !host_perf_kernel(h))
		return refuse(m, "-K: kernel stacks need CAP_PERFMON or "
			"kernel.perf_event_paranoid <= 1 (it is %d): %s", h->paranoid,
			lift(h->paranoid, 1));
	if (a->hardware && !h->hw_pmu)
		return refuse(m, "hardware events need a hardware PMU, and this "
			"machine shows none (a VM without a virtual PMU?); the software "
			"events (software:page-faults, ...) work");
	return 0;
}

/* Refusals of what needs tracefs, naming what is missing and what works. */
static int refuse_tracefs(const struct host_access *h, enum ft_tracefs_state t,
			  const struct ft_mech_ask *a, struct ft_mech *m)
{
	const char *what = a->ftrace ? "--backend ftrace needs" :
			   a->tracepoints ? "tracepoints need" :
			   a->usdt ? "USDT probes need" :
			   a->state ? "offcpu --state needs sched_switch's prev_state, so" : NULL;
	/* the kernel's rule (6.18): the kprobe PMU needs perfmon_capable(), the
	 * uprobe PMU capable(CAP_SYS_ADMIN) */
	bool kpmu = host_access_has(h, HOST_CAP_PERFMON) || host_access_has(h, HOST_CAP_SYS_ADMIN);
	bool upmu = host_access_has(h, HOST_CAP_SYS_ADMIN);
	if (!what && t != FT_TRACEFS_OK && a->kfuncs && (h->kprobe_pmu < 0 || !kpmu))
		what = h->kprobe_pmu < 0 ? "kernel functions need kprobes, and this kernel has no "
		       "kprobe PMU, so kprobe_events in" : "kernel functions need CAP_PERFMON "
		       "(the kprobe PMU) or kprobe_events in";
	if (!what && t != FT_TRACEFS_OK && a->ufuncs && (h->uprobe_pmu < 0 || !upmu))
		what = h->uprobe_pmu < 0 ? "user functions need uprobes, and this kernel has no "
		       "uprobe PMU, so uprobe_events in" : "user functions need CAP_SYS_ADMIN "
		       "(the uprobe PMU) or uprobe_events in";
	if (!what && a->kfuncs && ft_lockdown_blocks_kprobes(h)) {
		char works[160];
		ft_mech_still_work(h, t, works, sizeof(works));
		return refuse(m, "kernel functions need kprobes, which the kernel's lockdown (%s) "
			      "blocks; here %s work", h->lockdown, works);
	}
	if (t == FT_TRACEFS_OK || !what)
		return 0;
	char works[160];
	ft_mech_still_work(h, t, works, sizeof(works));
	return refuse(m, "%s tracefs: %s; here %s work", what, ft_tracefs_missing(t), works);
}

int ft_mech_choose(const struct host_access *h, enum ft_tracefs_state t,
		   const struct ft_mech_ask *a, struct ft_mech *m)
{
	memset(m, 0, sizeof(*m));
	m->kernel = host_perf_kernel(h);
	int ret = refuse_perf(h, a, m);
	if (ret == 0)
		ret = refuse_tracefs(h, t, a, m);
	if (ret < 0)
		return ret;
	if (a->cmd == FT_PROFILE) {
		snprintf(m->what, sizeof(m->what), "profile through perf's cpu-clock");
	} else if (a->cmd == FT_OFFCPU) {
		m->offcpu_ctxsw = t != FT_TRACEFS_OK;
		snprintf(m->what, sizeof(m->what), "offcpu through %s",
			 m->offcpu_ctxsw ? "perf's context-switch event and switch records "
			 "(no tracefs here)" : "the sched:sched_switch tracepoint and switch records");
	} else {
		snprintf(m->what, sizeof(m->what), "count through perf_event_open");
	}
	if (!m->kernel)
		snprintf(m->note, sizeof(m->note), "kernel stacks are left out: "
			 "kernel.perf_event_paranoid is %d (sysctl kernel.perf_event_paranoid=1, "
			 "or CAP_PERFMON, lets them in)", h->paranoid);
	return 0;
}
