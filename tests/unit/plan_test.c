/* plan: EVENT specs, and plans built on the fixture tracefs tree, the
 * fixture kallsyms and empty /sys and /proc trees (no PMU, no limits):
 * tracepoints, globs, profile, offcpu, kernel functions, uprobes; the
 * kernel refusals that skip an event. No kernel needed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "plan/plan.h"
#include "plan/spec.h"
#include "tests/unit/check.h"

#define TRACEFS "tests/unit/fixtures/tracefs"

static char sys_root[64], proc_root[64];
static struct sym_kernel *ksyms;

/* A uprobe target: its own symbol in this test binary. */
__attribute__((noinline)) int plan_test_target(int x)
{
	return x * 3 + 1;
}

static void test_specs(void)
{
	struct ft_spec sp;
	CHECK(ft_spec_parse("t:sched:sched_switch", NULL, &sp) == 0 && sp.kind == FT_SPEC_TRACEPOINT &&
	      strcmp(sp.lib, "sched") == 0 && strcmp(sp.name, "sched_switch") == 0,
	      "spec t:sched:sched_switch is a tracepoint");
	CHECK(ft_spec_parse("tracepoint:kmem:k*", NULL, &sp) == 0 && sp.kind == FT_SPEC_TRACEPOINT &&
	      strcmp(sp.name, "k*") == 0, "spec tracepoint:kmem:k* (bpftrace's form)");
	CHECK(ft_spec_parse("__kmalloc", NULL, &sp) == 0 && sp.kind == FT_SPEC_KFUNC &&
	      strcmp(sp.name, "__kmalloc") == 0, "spec: a bare name is a kernel function");
	CHECK(ft_spec_parse("p::tcp_send*", NULL, &sp) == 0 && sp.kind == FT_SPEC_KFUNC &&
	      strcmp(sp.name, "tcp_send*") == 0, "spec p::func is a kernel function");
	CHECK(ft_spec_parse("kprobe:vfs_read", NULL, &sp) == 0 && sp.kind == FT_SPEC_KFUNC,
	      "spec kprobe:func");
	CHECK(ft_spec_parse("c:malloc", NULL, &sp) == 0 && sp.kind == FT_SPEC_UPROBE &&
	      strcmp(sp.lib, "c") == 0 && strcmp(sp.name, "malloc") == 0, "spec c:malloc is a uprobe");
	CHECK(ft_spec_parse("p:c:malloc", NULL, &sp) == 0 && sp.kind == FT_SPEC_UPROBE,
	      "spec p:LIB:func");
	CHECK(ft_spec_parse("uprobe:/bin/bash:readline", NULL, &sp) == 0 &&
	      sp.kind == FT_SPEC_UPROBE && strcmp(sp.lib, "/bin/bash") == 0, "spec uprobe:PATH:func");
	CHECK(ft_spec_parse("malloc", "c", &sp) == 0 && sp.kind == FT_SPEC_UPROBE &&
	      strcmp(sp.lib, "c") == 0, "spec: -l LIB makes a bare name a uprobe");
	CHECK(ft_spec_parse("u:pthread:pthread_create", NULL, &sp) == 0 && sp.kind == FT_SPEC_USDT &&
	      sp.provider[0] == '\0' && strcmp(sp.name, "pthread_create") == 0, "spec u:LIB:probe");
	CHECK(ft_spec_parse("usdt:/usr/bin/node:node:gc_start", NULL, &sp) == 0 &&
	      sp.kind == FT_SPEC_USDT && strcmp(sp.provider, "node") == 0 &&
	      strcmp(sp.name, "gc_start") == 0, "spec usdt:PATH:provider:probe");
	const char *bad[] = { "", "t:x", "t:sched:", "u:", "p:", "kprobe:", "uprobe::f", "a:b:c:d:e" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CHECK(ft_spec_parse(bad[i], NULL, &sp) == -EINVAL, "spec '%s' is malformed", bad[i]);
	char longname[400];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(ft_spec_parse(longname, NULL, &sp) == -ENAMETOOLONG, "spec: a 399-byte name is too long");
}

static void opts(struct ft_options *o, enum ft_cmd cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->state = -1;
	o->freq = 49;
}

/* Writes TEXT to the file PATH (made or emptied); false when it cannot. */
static bool put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

/* Builds a plan for O on the fixtures. Returns ft_plan_build's result. */
static int build(const struct ft_options *o, struct ft_plan *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->tracefs, sizeof(p->tracefs), "%s", TRACEFS);
	p->sys_root = sys_root;
	p->proc_root = proc_root;
	/* the fixture host's access, whoever runs the test: root's */
	p->tracefs_write = FT_TRACEFS_WRITE_YES;
	p->ksyms = ksyms;
	return ft_plan_build(o, p);
}

static void test_tracepoints(void)
{
	struct ft_options o;
	struct ft_plan p;
	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "t:kmem:kmalloc";
	CHECK(build(&o, &p) == 0 && p.nevents == 1 && p.events[0].kind == FT_EV_TRACEPOINT,
	      "t:kmem:kmalloc: one tracepoint");
	CHECK_STR(p.nevents ? p.events[0].name : NULL, "t:kmem:kmalloc", "its name");
	CHECK_STR(p.nevents ? p.events[0].label : NULL, "kmalloc", "its label for --format top");
	CHECK(p.nevents && p.events[0].perf_type == PERF_TYPE_TRACEPOINT, "opened as a perf tracepoint");
	CHECK(p.nevents && !p.events[0].in_stack, "a tracepoint is not a frame of its own stack");
	ft_plan_destroy(&p);

	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "t:sched:sched_w*";
	CHECK(build(&o, &p) == 0 && p.nevents == 2, "t:sched:sched_w*: sched_wakeup and sched_waking (%d)",
	      p.nevents);
	ft_plan_destroy(&p);

	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "t:kmem:no_such_event";
	CHECK(build(&o, &p) == -EINVAL && p.nevents == 0, "an unknown tracepoint is refused (-EINVAL)");
	ft_plan_destroy(&p);

	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "t:x";
	CHECK(build(&o, &p) == -EINVAL, "a malformed spec is refused before tracefs is touched");
	ft_plan_destroy(&p);
}

static void test_profile_offcpu(void)
{
	struct ft_options o;
	struct ft_plan p;
	opts(&o, FT_PROFILE);
	o.freq = 99;
	CHECK(build(&o, &p) == 0 && p.nevents == 1 && p.events[0].kind == FT_EV_CPU_CLOCK &&
	      p.events[0].sample_freq == 99, "profile -F 99: one cpu-clock event at 99 Hz");
	ft_plan_destroy(&p);

	char path[128];
	snprintf(path, sizeof(path), "%s/sys/kernel/perf_event_max_sample_rate", proc_root);
	put_file(path, "1000\n");
	opts(&o, FT_PROFILE);
	o.freq = 5000;
	CHECK(build(&o, &p) == -EINVAL, "profile -F 5000 above kernel.perf_event_max_sample_rate 1000: refused");
	ft_plan_destroy(&p);
	unlink(path);

	opts(&o, FT_OFFCPU);
	CHECK(build(&o, &p) == 0 && p.nevents == 1 && p.events[0].kind == FT_EV_SCHED_SWITCH,
	      "offcpu: one sched_switch event");
	ft_plan_destroy(&p);
}

static void test_kfunc(void)
{
	struct ft_options o;
	struct ft_plan p;
	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "no_such_function_xyz";
	CHECK(build(&o, &p) == -EINVAL, "a kernel function kallsyms does not have is refused");
	ft_plan_destroy(&p);

	/* no kprobe PMU in the empty /sys; the fixture tracefs has kprobe_events */
	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "__kmalloc";
	int ret = build(&o, &p);
	CHECK(ret == 0 && p.nevents == 1, "__kmalloc: one event (%d)", ret);
	if (ret == 0 && p.nevents == 1) {
		const struct ft_event *e = &p.events[0];
		CHECK_STR(e->dyn_file, "kprobe_events", "without a kprobe PMU: a kprobe event in tracefs");
		CHECK(strstr(e->dyn_def, "__kmalloc_noprof") != NULL,
		      "the kernel's name is probed (6.10+ renamed __kmalloc): %s", e->dyn_def);
		CHECK(strncmp(e->dyn_def, "p:", 2) == 0 && strstr(e->dyn_def, p.group) != NULL,
		      "in ftstack's own group %s", p.group);
		CHECK(e->kfunc && e->in_stack, "a kernel function is the leaf of its stack");
	}
	ft_plan_destroy(&p);

	/* patterns (plan/kfunc_match.c): the fixture tracefs has no
	 * available_filter_functions, so kallsyms' text symbols are matched;
	 * the empty /sys has no kprobe blacklist */
	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "ext4_*";
	ret = build(&o, &p);
	CHECK(ret == 0 && p.nevents == 2, "glob ext4_*: the 2 ext4 functions of kallsyms (%d, %d)",
	      ret, p.nevents);
	ft_plan_destroy(&p);
	opts(&o, FT_COUNT);
	o.regex = true;
	o.specs[o.nspecs++] = "ext4_(iget|mount)|xfs_.*";
	ret = build(&o, &p);
	CHECK(ret == 0 && p.nevents == 2, "regex, anchored: ext4_iget and xfs_mount (%d, %d)", ret,
	      p.nevents);
	ft_plan_destroy(&p);
	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "no_such_*";
	CHECK(build(&o, &p) == -EINVAL, "a glob that matches no function is refused");
	ft_plan_destroy(&p);
	/* a match on the kprobe blacklist is left out (the kernel would refuse it) */
	char path[160];
	const char *dirs[] = { "kernel", "kernel/debug", "kernel/debug/kprobes" };
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", sys_root, dirs[i]);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/kernel/debug/kprobes/blacklist", sys_root);
	bool written = put_file(path, "0xffffffffc0002000-0xffffffffc0002100\text4_iget [ext4]\n");
	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "ext4_*";
	ret = build(&o, &p);
	CHECK(written && ret == 0 && p.nevents == 1, "glob ext4_*, ext4_iget on the kprobe blacklist: 1 (%d, %d)",
	      ret, p.nevents);
	ft_plan_destroy(&p);
	unlink(path);
	for (int i = 2; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/%s", sys_root, dirs[i]);
		rmdir(path);
	}
}

static void test_uprobe(const char *self)
{
	struct ft_options o;
	struct ft_plan p;
	char spec[600];
	opts(&o, FT_COUNT);
	snprintf(spec, sizeof(spec), "uprobe:%s:plan_test_target", self);
	o.specs[o.nspecs++] = spec;
	int ret = build(&o, &p);
	CHECK(ret == 0 && p.nevents == 1, "uprobe on this test's own function: one event (%d)", ret);
	if (ret == 0 && p.nevents == 1) {
		const struct ft_event *e = &p.events[0];
		CHECK_STR(e->dyn_file, "uprobe_events", "without a uprobe PMU: a uprobe event in tracefs");
		CHECK(strstr(e->dyn_def, self) != NULL && e->offset != 0,
		      "at the function's file offset in this binary: %s", e->dyn_def);
		CHECK(e->entry_fix, "at a function's entry: the caller is put back from [sp]");
	}
	ft_plan_destroy(&p);
	opts(&o, FT_COUNT);
	snprintf(spec, sizeof(spec), "uprobe:%s:no_such_function_xyz", self);
	o.specs[o.nspecs++] = spec;
	CHECK(build(&o, &p) < 0, "uprobe on a function the file does not have: refused");
	ft_plan_destroy(&p);
	opts(&o, FT_COUNT);
	o.specs[o.nspecs++] = "uprobe:/no/such/file:main";
	CHECK(build(&o, &p) < 0, "uprobe on a file that does not exist: refused");
	ft_plan_destroy(&p);
}

static void test_refusals(void)
{
	CHECK(ft_plan_refusal(-EINVAL) && ft_plan_refusal(-ENOENT) && ft_plan_refusal(-EADDRNOTAVAIL) &&
	      ft_plan_refusal(-EILSEQ) && ft_plan_refusal(-524),
	      "blacklisted, missing, ambiguous, unaligned, ENOTSUPP: the function is skipped");
	CHECK(!ft_plan_refusal(-ENOMEM) && !ft_plan_refusal(-EMFILE) && !ft_plan_refusal(-EACCES),
	      "out of memory or fds, no permission: the run fails");
	struct ft_event ev[3] = { { .optional = true }, { .optional = true, .refused = -EINVAL },
				  { .optional = true, .refused = -ENOENT } };
	struct ft_plan p = { .events = ev, .nevents = 3, .noptional = 3 };
	CHECK(ft_plan_report_refused(&p) == 0, "one of three attached: the run goes on");
	ev[0].refused = -EINVAL;
	CHECK(ft_plan_report_refused(&p) == -ENOENT, "none attached: nothing left to trace");
}

int main(int argc, char **argv)
{
	char self[4096];
	(void)argc;
	snprintf(sys_root, sizeof(sys_root), "/tmp/ftstack-plan-sys.XXXXXX");
	snprintf(proc_root, sizeof(proc_root), "/tmp/ftstack-plan-proc.XXXXXX");
	char path[128];
	if (!mkdtemp(sys_root) || !mkdtemp(proc_root) || !realpath(argv[0], self))
		return 1;
	snprintf(path, sizeof(path), "%s/sys", proc_root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/kernel", proc_root);
	mkdir(path, 0755);
	CHECK(sym_kernel_load("tests/unit/fixtures/kallsyms.txt", &ksyms) == 0, "kallsyms fixture");
	test_specs();
	test_tracepoints();
	test_profile_offcpu();
	test_kfunc();
	test_uprobe(self);
	test_refusals();
	CHECK(plan_test_target(1) == 4, "the uprobe target runs");
	sym_kernel_free(ksyms);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/sys", proc_root);
	rmdir(path);
	rmdir(proc_root);
	rmdir(sys_root);
	CHECK_DONE();
}
