/* Where ftstack runs (issue 25): perf's generic event specs (plan/spec.c),
 * the mechanism chosen for each mode from a host's access (plan/mech.c),
 * ftstack check's matrix from perf_event_open's answers (plan/matrix.c),
 * host_access_read on a fixture /proc and /sys (host/access.c), and
 * ftstack check's host lines built from it (cmd/check.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "host/host.h"
#include "plan/plan.h"
#include "plan/spec.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"
#include "tracefs/tracefs.h"

static void test_specs(void)
{
	struct ft_spec sp;
	CHECK(ft_spec_parse("software:page-faults:1", NULL, &sp) == 0 && sp.kind == FT_SPEC_PERF &&
	      sp.perf_type == PERF_TYPE_SOFTWARE && sp.perf_config == PERF_COUNT_SW_PAGE_FAULTS &&
	      sp.period == 1 && sp.freq == 0, "software:page-faults:1: every page fault");
	CHECK(ft_spec_parse("hardware:cycles:100000", NULL, &sp) == 0 && sp.kind == FT_SPEC_PERF &&
	      sp.perf_type == PERF_TYPE_HARDWARE && sp.perf_config == PERF_COUNT_HW_CPU_CYCLES &&
	      sp.period == 100000, "hardware:cycles:100000: a sample every 100000 cycles");
	CHECK(ft_spec_parse("h:instructions:99hz", NULL, &sp) == 0 && sp.freq == 99 && !sp.period &&
	      sp.perf_config == PERF_COUNT_HW_INSTRUCTIONS, "h:instructions:99hz: 99 samples a second");
	CHECK(ft_spec_parse("s:cs", NULL, &sp) == 0 && sp.perf_config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
	      sp.period == 1 && strcmp(sp.name, "context-switches") == 0,
	      "s:cs: perf's alias, counted, named context-switches");
	CHECK(ft_spec_parse("cpu-clock", NULL, &sp) == 0 && sp.kind == FT_SPEC_PERF && sp.freq == 4000,
	      "cpu-clock: a clock is sampled at 4000 Hz by default");
	CHECK(ft_spec_parse("page-faults", NULL, &sp) == 0 && sp.kind == FT_SPEC_PERF && sp.period == 1,
	      "perf's bare name page-faults is the software event");
	CHECK(ft_spec_parse("cycles", NULL, &sp) == 0 && sp.kind == FT_SPEC_PERF &&
	      sp.perf_type == PERF_TYPE_HARDWARE, "bare cycles: the hardware event, as in perf");
	CHECK(ft_spec_parse("kprobe:cycles", NULL, &sp) == 0 && sp.kind == FT_SPEC_KFUNC &&
	      strcmp(sp.name, "cycles") == 0, "kprobe:cycles: the kernel function of that name");
	CHECK(ft_spec_parse("p::cs", NULL, &sp) == 0 && sp.kind == FT_SPEC_KFUNC,
	      "p::cs: the kernel function");
	CHECK(ft_spec_parse("vfs_read", NULL, &sp) == 0 && sp.kind == FT_SPEC_KFUNC,
	      "a bare name that is no perf event stays a kernel function");
	CHECK(ft_spec_parse("page_faults", NULL, &sp) == 0 && sp.kind == FT_SPEC_KFUNC,
	      "page_faults (underscore) is a kernel function, not the event");
	CHECK(ft_spec_parse("cycles", "c", &sp) == 0 && sp.kind == FT_SPEC_UPROBE,
	      "-l c cycles: a user function");
	CHECK(ft_spec_parse("software:cycles", NULL, &sp) == -EINVAL, "software:cycles is refused");
	CHECK(ft_spec_parse("software:nosuch:1", NULL, &sp) == -EINVAL, "software:nosuch is refused");
	CHECK(ft_spec_parse("software:page-faults:0", NULL, &sp) == -EINVAL, "a period of 0 is refused");
	CHECK(ft_spec_parse("software:page-faults:12x", NULL, &sp) == -EINVAL, "12x is refused");
	CHECK(ft_spec_parse("s:page-faults:1:2", NULL, &sp) == -EINVAL, "a fourth part is refused");
	uint32_t type;
	uint64_t config;
	const char *canon;
	CHECK(ft_spec_perf_name("faults", &type, &config, &canon) && config == PERF_COUNT_SW_PAGE_FAULTS &&
	      strcmp(canon, "page-faults") == 0, "faults is page-faults");
}

/* A host: no capabilities, paranoid P, the VM's PMUs. */
static struct host_access host(int paranoid, uint64_t caps)
{
	struct host_access h = { .paranoid = paranoid, .cap_eff = caps, .kptr_restrict = 0,
				 .kprobe_pmu = -1, .uprobe_pmu = 8, .hw_pmu = false, .mlock_kb = 516 };
	return h;
}

static struct ft_mech_ask ask(enum ft_cmd cmd, bool system_wide)
{
	struct ft_mech_ask a = { .cmd = cmd, .system_wide = system_wide };
	return a;
}

#define PERFMON (1ull << HOST_CAP_PERFMON)

static void test_choice(void)
{
	struct host_access h = host(2, 0);
	struct ft_mech m;
	struct ft_mech_ask a = ask(FT_PROFILE, false);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == 0 && !m.kernel &&
	      strstr(m.note, "perf_event_paranoid is 2"), "paranoid 2, -c: profile, user stacks only, said");
	a = ask(FT_OFFCPU, false);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == -EACCES &&
	      strstr(m.why, "kernel.perf_event_paranoid 2") && strstr(m.why, "CAP_PERFMON") &&
	      !strchr(m.why, '\n'), "paranoid 2: offcpu refused, naming the value and CAP_PERFMON: %s", m.why);
	a = ask(FT_PROFILE, true);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == -EACCES && strstr(m.why, "(it is 2)") &&
	      strstr(m.why, "-c CMD"), "paranoid 2: system-wide refused: %s", m.why);
	h = host(1, 0);
	a = ask(FT_OFFCPU, false);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == 0 && m.kernel && m.offcpu_ctxsw &&
	      strstr(m.what, "context-switch"), "paranoid 1, no tracefs: offcpu through the context-switch event");
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == 0 && !m.offcpu_ctxsw &&
	      strstr(m.what, "sched_switch"), "tracefs readable: offcpu through sched_switch");
	a.state = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == -EACCES && strstr(m.why, "--state"),
	      "no tracefs: offcpu --state refused (prev_state is a tracepoint field)");
	h = host(2, PERFMON);
	a = ask(FT_OFFCPU, true);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == 0 && m.kernel && m.offcpu_ctxsw && !m.note[0],
	      "CAP_PERFMON: system-wide offcpu without tracefs, kernel stacks");
	a = ask(FT_COUNT, false);
	a.tracepoints = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == -EACCES &&
	      strstr(m.why, "tracefs is not mounted") && strstr(m.why, "here profile, offcpu, software events"),
	      "CAP_PERFMON, no tracefs: tracepoints refused, saying what is missing and what works: %s", m.why);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_LOCKDOWN, &a, &m) == -EACCES && strstr(m.why, "lockdown"),
	      "lockdown: the refusal names it");
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNREADABLE, &a, &m) == -EACCES && strstr(m.why, "not readable"),
	      "tracefs root's: the refusal says not readable");
	a = ask(FT_COUNT, false);
	a.kfuncs = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == -EACCES && strstr(m.why, "no kprobe PMU"),
	      "no kprobes, no tracefs: kernel functions refused");
	h.kprobe_pmu = 6;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == 0,
	      "a kprobe PMU and CAP_PERFMON: kernel functions without tracefs");
	/* lockdown closes kprobes in both its modes, the PMU's too (root included) */
	snprintf(h.lockdown, sizeof(h.lockdown), "integrity");
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == -EACCES &&
	      strstr(m.why, "lockdown (integrity)") && !strstr(m.why, "kernel functions,"),
	      "lockdown=integrity: kernel functions refused, naming it: %s", m.why);
	snprintf(h.lockdown, sizeof(h.lockdown), "confidentiality");
	CHECK(ft_mech_choose(&h, FT_TRACEFS_LOCKDOWN, &a, &m) == -EACCES &&
	      strstr(m.why, "lockdown (confidentiality)") && strstr(m.why, "here profile"),
	      "lockdown=confidentiality: kernel functions refused, what works said: %s", m.why);
	snprintf(h.lockdown, sizeof(h.lockdown), "none");
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == 0, "lockdown none: kprobes as before");
	a = ask(FT_COUNT, false);
	a.ufuncs = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == -EACCES && strstr(m.why, "CAP_SYS_ADMIN"),
	      "the uprobe PMU needs CAP_SYS_ADMIN: refused without it and without tracefs");
	a = ask(FT_COUNT, false);
	a.hardware = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == -EACCES && strstr(m.why, "hardware PMU"),
	      "no hardware PMU: hardware events refused");
	h.hw_pmu = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == 0, "a hardware PMU: hardware events");
	h = host(2, PERFMON);
	a = ask(FT_PROFILE, false);
	a.other_user = 1;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == -EACCES && strstr(m.why, "CAP_SYS_PTRACE") &&
	      strstr(m.why, "1 is another user's"), "-p of another user's process without CAP_SYS_PTRACE: refused");
	h.cap_eff |= 1ull << HOST_CAP_SYS_PTRACE;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == 0, "... and allowed with CAP_SYS_PTRACE");
	h = host(3, 0);
	a = ask(FT_PROFILE, false);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == -EACCES && strstr(m.why, "is 3"),
	      "paranoid 3 (closed to users): refused naming it");
}

static const struct ft_matrix_row *find(const struct ft_matrix_row *rows, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		if (strcmp(rows[i].what, what) == 0)
			return &rows[i];
	return NULL;
}

static void test_matrix(void)
{
	struct host_access h = host(2, 0);
	struct ft_access_probe p = { .cpu_clock_user = 0, .cpu_clock_kernel = -EACCES,
		.ctxsw_kernel = -EACCES, .page_faults = 0, .cycles = -ENOENT, .system_wide = -EACCES,
		.tracepoint = -ENOENT, .kprobe_pmu = -ENOENT, .uprobe_pmu = -EACCES,
		.kprobe_events = -ENOENT, .uprobe_events = -ENOENT };
	struct ft_matrix_row rows[16];
	int n = ft_mech_matrix(&h, FT_TRACEFS_UNMOUNTED, &p, rows, 16);
	CHECK_EQ_U64(n, 12, "twelve rows");
	const struct ft_matrix_row *r = find(rows, n, "profile");
	CHECK(r && r->ok && strstr(r->detail, "user stacks only"), "no caps: profile yes, user stacks only");
	r = find(rows, n, "offcpu");
	CHECK(r && !r->ok && strstr(r->detail, "perf_event_paranoid is 2"), "no caps: offcpu no, why");
	r = find(rows, n, "tracepoints");
	CHECK(r && !r->ok && strstr(r->detail, "not mounted"), "no tracefs: tracepoints no, why");
	r = find(rows, n, "user functions");
	CHECK(r && !r->ok && strstr(r->detail, "CAP_SYS_ADMIN"), "user functions: the uprobe PMU's capability");
	r = find(rows, n, "hardware events");
	CHECK(r && !r->ok && strstr(r->detail, "no hardware PMU"), "hardware events: no PMU");
	r = find(rows, n, "system-wide");
	CHECK(r && !r->ok && strstr(r->detail, "(it is 2)"), "system-wide: no, the value");
	r = find(rows, n, "other users' processes");
	CHECK(r && !r->ok && strstr(r->detail, "CAP_SYS_PTRACE"), "other users: CAP_SYS_PTRACE");
	h = host(2, PERFMON);
	p.cpu_clock_kernel = p.ctxsw_kernel = p.system_wide = 0;
	n = ft_mech_matrix(&h, FT_TRACEFS_UNMOUNTED, &p, rows, 16);
	r = find(rows, n, "offcpu");
	CHECK(r && r->ok && strstr(r->detail, "context-switch"), "CAP_PERFMON: offcpu yes, through the context-switch event");
	r = find(rows, n, "kernel stacks");
	CHECK(r && r->ok && strstr(r->detail, "addresses only"), "CAP_PERFMON without CAP_SYSLOG: kernel stacks unnamed");
	h.kprobe_pmu = 6;
	p.kprobe_pmu = -EPERM;
	snprintf(h.lockdown, sizeof(h.lockdown), "confidentiality");
	n = ft_mech_matrix(&h, FT_TRACEFS_LOCKDOWN, &p, rows, 16);
	r = find(rows, n, "kernel functions");
	CHECK(r && !r->ok && strstr(r->detail, "lockdown (confidentiality)"),
	      "lockdown: kernel functions no, because of it: %s", r ? r->detail : "");
}

/* A seccomp filter that answers perf_event_open itself (podman's default
 * profile without CAP_SYS_ADMIN, issue 33): every perf mode is refused in
 * one line that blames the filter, not the sysctl, and check's rows say so */
static void test_seccomp(void)
{
	struct host_access h = host(2, PERFMON);
	h.seccomp = 2;
	h.perf_seccomp = -EPERM;
	struct ft_mech m;
	struct ft_mech_ask a = ask(FT_PROFILE, false);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == -EACCES &&
	      strstr(m.why, "seccomp filter (Seccomp: 2") && strstr(m.why, "answers EPERM") &&
	      strstr(m.why, "though CAP_PERFMON is effective") &&
	      strstr(m.why, "seccomp profile that allows perf_event_open") &&
	      !strstr(m.why, "paranoid") && !strchr(m.why, '\n'),
	      "CAP_PERFMON under a filter: profile refused, blaming the filter: %s", m.why);
	a = ask(FT_COUNT, false);
	a.software = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == -EACCES && strstr(m.why, "seccomp"),
	      "... and software events");
	a.ftrace = true;
	a.software = false;
	a.tracepoints = true;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_OK, &a, &m) == 0,
	      "--backend ftrace with tracefs needs no perf_event_open: not refused");
	h = host(2, 0);
	h.seccomp = 2;
	h.perf_seccomp = -EPERM;
	a = ask(FT_PROFILE, false);
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == -EACCES &&
	      strstr(m.why, "add CAP_PERFMON where the profile allows it") &&
	      !strstr(m.why, "though"), "no capability under a filter: refused, CAP_PERFMON named: %s", m.why);
	h.perf_seccomp = 0;
	CHECK(ft_mech_choose(&h, FT_TRACEFS_UNMOUNTED, &a, &m) == 0,
	      "a filter that lets perf_event_open through: profile -c as without one");
	h = host(2, PERFMON);
	h.seccomp = 2;
	h.perf_seccomp = -EPERM;
	struct ft_access_probe p = { .cpu_clock_user = -EPERM, .cpu_clock_kernel = -EPERM,
		.ctxsw_kernel = -EPERM, .page_faults = -EPERM, .cycles = -ENOENT, .system_wide = -EPERM,
		.tracepoint = -ENOENT, .kprobe_pmu = -ENOENT, .uprobe_pmu = -EPERM,
		.kprobe_events = -ENOENT, .uprobe_events = -ENOENT };
	struct ft_matrix_row rows[16];
	int n = ft_mech_matrix(&h, FT_TRACEFS_UNMOUNTED, &p, rows, 16);
	static const char *const blamed[] = { "profile", "offcpu", "software events",
		"kernel stacks", "user stacks", "system-wide", "user functions" };
	for (size_t i = 0; i < sizeof(blamed) / sizeof(blamed[0]); i++) {
		const struct ft_matrix_row *r = find(rows, n, blamed[i]);
		CHECK(r && !r->ok && strstr(r->detail, "seccomp filter refuses perf_event_open") &&
		      strstr(r->detail, "though CAP_PERFMON is effective") && !strstr(r->detail, "paranoid"),
		      "check under a filter: %s no, the filter's doing: %s", blamed[i], r ? r->detail : "");
	}
}

static void test_read(void)
{
	char dir[] = "/tmp/ftstack-mech.XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char proc[600], sys[600];
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	test_put_file(dir, "proc/self/status", "Name:\tx\nCapEff:\t0000004000000000\n");
	test_put_file(dir, "proc/sys/kernel/perf_event_paranoid", "1\n");
	test_put_file(dir, "proc/sys/kernel/kptr_restrict", "0\n");
	test_put_file(dir, "proc/sys/kernel/perf_event_mlock_kb", "1032\n");
	test_put_file(dir, "sys/kernel/security/lockdown", "none integrity [confidentiality]\n");
	test_put_file(dir, "sys/bus/event_source/devices/uprobe/type", "8\n");
	test_put_file(dir, "sys/bus/event_source/devices/cpu/type", "4\n");
	struct host_access h;
	CHECK(host_access_read(proc, sys, &h) == 0, "host_access_read on a fixture");
	CHECK(host_access_has(&h, HOST_CAP_PERFMON) && !host_access_has(&h, HOST_CAP_SYSLOG) &&
	      h.paranoid == 1 && h.mlock_kb == 1032, "CapEff, paranoid, mlock_kb read");
	CHECK(h.kallsyms, "kptr_restrict 0 and paranoid 1: kallsyms shows addresses");
	CHECK_STR(h.lockdown, "confidentiality", "the bracketed lockdown mode");
	CHECK(h.uprobe_pmu == 8 && h.kprobe_pmu == -1 && h.hw_pmu, "PMUs: uprobe 8, no kprobe, a cpu PMU");
	struct tfs_check_item it[8];
	CHECK_EQ_U64(ft_check_host(&h, proc, it, 8), 5, "check: five host lines");
	CHECK(strcmp(it[0].what, "perf_event_max_stack") == 0 && !it[0].ok &&
	      strcmp(it[0].detail, "unreadable") == 0, "check: max_stack unreadable: %s", it[0].detail);
	CHECK(it[1].ok && strcmp(it[1].detail, "1") == 0, "check: paranoid 1: %s", it[1].detail);
	CHECK(it[2].ok && strcmp(it[2].detail, "0 (kallsyms addresses visible)") == 0,
	      "check: kptr_restrict: %s", it[2].detail);
	CHECK(!it[3].ok && strcmp(it[3].detail, "confidentiality") == 0, "check: lockdown: %s",
	      it[3].detail);
	CHECK(it[4].ok && strstr(it[4].detail, "CAP_SYS_ADMIN no, CAP_PERFMON yes"),
	      "check: privileges from CapEff: %s", it[4].detail);
	CHECK_EQ_U64(ft_check_host(&h, proc, it, 2), 2, "check: max respected");
	CHECK(ft_tracefs_state(sys, -ENOENT, &h) == FT_TRACEFS_LOCKDOWN, "lockdown closes tracefs");
	h.lockdown[0] = '\0';
	CHECK(ft_tracefs_state(sys, -ENOENT, &h) == FT_TRACEFS_NONE, "no mount point: none");
	test_put_file(dir, "sys/kernel/tracing/.keep", "");
	CHECK(ft_tracefs_state(sys, -ENOENT, &h) == FT_TRACEFS_UNMOUNTED, "an empty mount point: not mounted");
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "fixture removed");
}

/* An open refused at run time: the line says what the host's access says,
 * never "another user's process" for a system-wide event. */
static void test_open_why(void)
{
	char why[512];
	struct host_access h = host(2, PERFMON);
	h.seccomp = 2;
	h.perf_seccomp = -EPERM;
	ft_mech_open_why(&h, false, why, sizeof(why));
	CHECK(strstr(why, "seccomp filter") && strstr(why, "though CAP_PERFMON is effective"),
	      "a filter answering EPERM is blamed: %s", why);
	h = host(2, 0);
	ft_mech_open_why(&h, false, why, sizeof(why));
	CHECK(strstr(why, "tracing every process needs CAP_PERFMON") && strstr(why, "(it is 2)"),
	      "system-wide without CAP_PERFMON at paranoid 2: %s", why);
	h = host(3, 0);
	ft_mech_open_why(&h, true, why, sizeof(why));
	CHECK(strstr(why, "closed to users here") != NULL, "paranoid 3: %s", why);
	h = host(2, PERFMON);
	ft_mech_open_why(&h, true, why, sizeof(why));
	CHECK(strstr(why, "another user needs CAP_PERFMON and CAP_SYS_PTRACE (effective here: "
			  "CAP_PERFMON)") != NULL, "a task, without CAP_SYS_PTRACE: %s", why);
	h = host(2, PERFMON | (1ull << HOST_CAP_SYS_PTRACE));
	ft_mech_open_why(&h, true, why, sizeof(why));
	CHECK(strstr(why, "security module") && !strstr(why, "another user"),
	      "all that is known allows it: %s", why);
	ft_mech_open_why(&h, false, why, sizeof(why));
	CHECK(strstr(why, "security module") && !strstr(why, "another user"),
	      "system-wide, CAP_PERFMON: never another user's process: %s", why);
}

int main(void)
{
	test_specs();
	test_choice();
	test_matrix();
	test_seccomp();
	test_read();
	test_open_why();
	CHECK_DONE();
}
