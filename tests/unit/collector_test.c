/* collector/: the run's parts that need no kernel, on fixtures and
 * synthetic records: kernel-stack filters (kfilter) on a kallsyms fixture,
 * the name cache, records through the session and counting into the
 * aggregator, the result written by print.c, the loop's duration timer, and
 * -p targets that are gone. (The -c child is task_test.c's, the messages
 * cli_test.c's.) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "collector/offcpu.h"
#include "collector/result.h"
#include "collector/session.h"
#include "source/source.h"
#include "cmd/cmd.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

#define KALLSYMS "tests/unit/fixtures/kallsyms_kfilter.txt"

static struct sym_kernel *k;

static void test_kfilter(void)
{
	struct ft_kfilter f;
	uint32_t start = 99;
	const uint64_t kmalloc[] = { 0xffffffff81010010ull /* perf_trace_kmalloc */,
				     0xffffffff81010410ull /* perf_trace_buf_alloc */,
				     0xffffffff81021020ull /* __kmalloc_noprof */,
				     0xffffffff81022008ull /* do_syscall_64 */ };
	const uint64_t mmap[] = { 0xffffffff81021020ull, 0xffffffff81020810ull /* perf_event_mmap_output */,
				  0xffffffff81022008ull };
	CHECK(ft_kfilter_init(&f, k, false) == 0 && f.machinery.n == 2 && f.self.n == 0,
	      "machinery ranges from kallsyms: perf_trace_* (%zu), no self ranges without mmap tracking",
	      f.machinery.n);
	CHECK(ft_kfilter_apply(&f, kmalloc, 4, &start) == FT_KEEP && start == 2,
	      "the tracing machinery at the leaf is cut: the stack starts at __kmalloc_noprof (%u)", start);
	CHECK(ft_kfilter_apply(&f, mmap, 3, &start) == FT_KEEP && start == 0,
	      "without mmap tracking, perf_event_mmap frames are kept");
	/* seen before --through names it: what an ip was found to be is kept,
	 * and must be asked again once the ranges change */
	CHECK(ft_kfilter_apply(&f, kmalloc + 3, 1, &start) == FT_KEEP && start == 0,
	      "do_syscall_64 alone: kept whole");
	CHECK(ft_kfilter_add_through(&f, k, "do_syscall_64") == 0, "--through do_syscall_64");
	CHECK(ft_kfilter_apply(&f, kmalloc, 4, &start) == FT_KEEP && start == 3,
	      "--through cuts the stack at the function (%u)", start);
	const uint64_t other[] = { 0xffffffff81021820ull /* kmalloc_trace */ };
	CHECK(ft_kfilter_apply(&f, other, 1, &start) == FT_DROP_THROUGH,
	      "a stack not through it is dropped");
	CHECK(ft_kfilter_add_through(&f, k, "no_such_function") == -ENOENT,
	      "--through of a name kallsyms lacks: -ENOENT");
	ft_kfilter_free(&f);
	CHECK(ft_kfilter_init(&f, k, true) == 0 && f.self.n == 2,
	      "with mmap tracking: perf_event_mmap and its helpers are ftstack's own (%zu)", f.self.n);
	CHECK(ft_kfilter_apply(&f, mmap, 3, &start) == FT_DROP_SELF, "a stack through them is left out");
	ft_kfilter_free(&f);
	CHECK(ft_kfilter_add_through(&f, k, "helper_static") == 0 && f.through.n == 2,
	      "two statics of one name: two --through ranges");
	ft_kfilter_free(&f);
}

static void test_symcache(void)
{
	struct sym_cache *c;
	struct sym_cache_style plain = { .demangle = true }, offs = { .offsets = true };
	CHECK(sym_cache_alloc(k, NULL, &plain, &c) == 0, "name cache");
	CHECK_STR(sym_cache_name(c, 0, 0, 0xffffffff81021020ull, true), "__kmalloc_noprof",
		  "a kernel address is named by kallsyms");
	CHECK_STR(sym_cache_name(c, 0, 0, 0xffffffff81021030ull, true), "__kmalloc_noprof",
		  "another address in it");
	const char *a = sym_cache_name(c, 0, 0, 0xffffffff81021020ull, true);
	CHECK_EQ_U64(sym_cache_resolved(c), 2, "each distinct address is resolved once");
	CHECK(a == sym_cache_name(c, 0, 0, 0xffffffff81021020ull, false), "the same name, not a copy");
	CHECK_STR(sym_cache_name(c, 4242, 0, 0x401000, true), "[unknown]",
		  "a user address without process history");
	for (uint64_t i = 0; i < 20000; i++) /* grows past the first allocation */
		sym_cache_name(c, 0, 0, 0xffffffff81000000ull + i, true);
	CHECK_EQ_U64(sym_cache_resolved(c), 3 + 20000, "20000 more addresses, each resolved once");
	CHECK_STR(sym_cache_name(c, 0, 0, 0xffffffff81021020ull, true), "__kmalloc_noprof",
		  "still found after growing");
	sym_cache_free(c);
	CHECK(sym_cache_alloc(k, NULL, &offs, &c) == 0, "name cache with -s");
	CHECK_STR(sym_cache_name(c, 0, 0, 0xffffffff81021020ull, true), "__kmalloc_noprof+0x20",
		  "-s: the offset");
	sym_cache_free(c);
}

static struct ft_options opt;

static void test_session_print(const char *proc_root)
{
	struct ft_session s;
	CHECK(test_session(&s, &opt, k, proc_root, 0, 0) == 0, "a session on fixtures");
	const uint64_t a[] = { 0xffffffff81010010ull, 0xffffffff81021020ull, 0xffffffff81022008ull,
			       0xffffffff81022410ull };
	const uint64_t b[] = { 0xffffffff81021830ull, 0xffffffff81022010ull };
	for (int i = 0; i < 3; i++)
		test_sample(&s, 4242, a, 4, 1000 + i);
	test_sample(&s, 4242, b, 2, 2000);
	test_sample(&s, 777, a, 4, 2100); /* ftstack itself */
	/* processes ftstack forks (its ring mappers) are its own until they
	 * exec (778 from 2200 to its exit at 2400, 779 to its exec at 2500);
	 * 4343, forked by another, is not */
	const uint32_t forks[][2] = { { 778, 777 }, { 779, 777 }, { 4343, 4242 } };
	for (int i = 0; i < 3; i++) {
		struct perfev_record f = { .kind = PERFEV_FORK, .time = 2200, .pid = forks[i][0],
					   .tid = forks[i][0] };
		f.task.ppid = forks[i][1], f.task.ptid = forks[i][1];
		ft_session_record(&s, &f, 0);
	}
	test_sample(&s, 778, a, 4, 2300);
	test_sample(&s, 779, a, 4, 2300);
	test_sample(&s, 4343, b, 2, 2300);
	struct perfev_record ex = { .kind = PERFEV_EXIT, .time = 2400, .pid = 778, .tid = 778 };
	ft_session_record(&s, &ex, 0);
	struct perfev_record cm = { .kind = PERFEV_COMM, .time = 2500, .pid = 779, .tid = 779 };
	cm.comm.exec = true;
	cm.comm.comm = "worker";
	ft_session_record(&s, &cm, 0);
	test_sample(&s, 779, a, 4, 2600); /* exec'd: a program like any other */
	test_sample(&s, 0, b, 2, 2600);   /* the idle task, with 778's slot empty */
	struct perfev_record lost = { .kind = PERFEV_LOST, .time = 3000 };
	lost.lost.lost = 5;
	ft_session_record(&s, &lost, 0);
	struct perfev_record thr = { .kind = PERFEV_THROTTLE, .time = 3100 };
	ft_session_record(&s, &thr, 0);
	struct perfev_record none = { .kind = PERFEV_SAMPLE, .pid = 4242, .tid = 4242 };
	none.sample = (struct perfev_sample){ .pid = 4242, .tid = 4242, .kips = a, .nkips = 4 };
	ft_session_record(&s, &none, -1); /* not an event of the plan */
	CHECK_EQ_U64(s.cnt.counted, 7, "seven samples counted: 4242's four, 4343's, 779's after its "
		     "exec, the idle task's");
	CHECK_EQ_U64(s.cnt.self_events, 3, "ftstack's own sample left out, and its helpers' before exec");
	CHECK_EQ_U64(s.cnt.lost, 5, "lost records added up");
	CHECK_EQ_U64(s.cnt.throttled, 1, "a throttle record");
	CHECK_EQ_U64(s.last_time, 3100, "the newest record time is the end");
	const char *sum = test_summary(&s);
	CHECK(strstr(sum, ", 5 lost (ring buffer full: raise --buffer-size)\n") != NULL,
	      "the summary: the lost events and what to do (%s)", sum);
	CHECK_STR(test_slurp(s.output.file, true),
		  "swapper;do_syscall_64;kmalloc_trace 1\n"
		  "worker;do_syscall_64;kmalloc_trace 2\n"
		  "worker;entry_SYSCALL_64;do_syscall_64;__kmalloc_noprof 4\n",
		  "folded: machinery cut, comm from the process, least frequent first");

	/* --through: only stacks through do_syscall_64's caller, cut there */
	agg_table_reset(s.agg);
	s.cnt = (struct ft_counters){ 0 };
	ft_kfilter_add_through(&s.kernel.filter, k, "entry_SYSCALL_64");
	s.plan.through_name = "entry_SYSCALL_64";
	for (int i = 0; i < 3; i++)
		test_sample(&s, 4242, a, 4, 4000 + i);
	test_sample(&s, 4242, b, 2, 5000);
	CHECK(s.cnt.counted == 3 && s.cnt.through_miss == 1, "--through: 3 kept, 1 left out");
	opt.top = 1;
	CHECK(ft_print_result(&s, s.output.file) == 0, "written again");
	CHECK_STR(test_slurp(s.output.file, true), "worker;entry_SYSCALL_64 3\n", "cut at the --through function");
	test_session_free(&s);
}

/* Samples counted while the kernel's symbols load wait in a queue, alike
 * ones in one entry, and are counted whole once they are in */
static void test_pending(const char *proc_root)
{
	struct ft_session s;
	static struct ft_options o;
	CHECK(test_session(&s, &o, k, proc_root, 0, 0) == 0, "a session on fixtures, loading");
	ft_kfilter_free(&s.kernel.filter); /* made from k: the load makes its own */
	s.kernel.syms = NULL;
	s.kernel.state = FT_KSYMS_NONE;
	s.kernel.source = KALLSYMS;
	const uint64_t a[] = { 0xffffffff81010010ull, 0xffffffff81021020ull, 0xffffffff81022008ull,
			       0xffffffff81022410ull };
	const uint64_t b[] = { 0xffffffff81021830ull, 0xffffffff81022010ull };
	test_sample(&s, 4242, a, 4, 1000);
	size_t one = s.kernel.pending.len;
	CHECK(s.kernel.state == FT_KSYMS_LOADING && one > 0, "the first kernel stack starts the load; "
	      "its sample waits");
	test_sample(&s, 4242, a, 4, 1001);
	test_sample(&s, 4242, a, 4, 1002);
	CHECK_EQ_U64(s.kernel.pending.len, one, "two alike wait in its entry");
	test_sample(&s, 4242, b, 2, 1003);
	size_t two = s.kernel.pending.len;
	CHECK(two > one, "another stack: an entry of its own");
	test_sample(&s, 4242, a, 4, 1004);
	test_sample(&s, 4242, a, 4, 1005);
	/* an entry of stack a is ONE bytes long whoever's it is */
	CHECK_EQ_U64(s.kernel.pending.len, two + one, "the first stack again after it: a third entry");
	test_sample(&s, 4243, a, 4, 1006);
	CHECK_EQ_U64(s.kernel.pending.len, two + 2 * one, "another process: a fourth");
	ft_session_kernel_wait(&s);
	CHECK(s.kernel.state == FT_KSYMS_READY && s.kernel.pending.len == 0, "loaded; none waits");
	CHECK_EQ_U64(s.cnt.counted, 7, "every sample counted");
	CHECK(ft_print_result(&s, s.output.file) == 0, "written");
	CHECK_STR(test_slurp(s.output.file, true),
		  "[unknown];entry_SYSCALL_64;do_syscall_64;__kmalloc_noprof 1\n"
		  "worker;do_syscall_64;kmalloc_trace 1\n"
		  "worker;entry_SYSCALL_64;do_syscall_64;__kmalloc_noprof 5\n",
		  "as counted one by one: 4242's two stacks 5 and 1, 4243's 1");
	sym_kernel_free(s.kernel.syms);
	test_session_free(&s);
}

static uint32_t offcpu_tids[8];
static int offcpu_n;

static void offcpu_count(void *ctx, const struct perfev_sample *smp, uint32_t event, uint64_t us)
{
	(void)ctx, (void)event, (void)us;
	if (offcpu_n < 8)
		offcpu_tids[offcpu_n++] = smp->tid;
}

/* offcpu through the session: a helper ftstack forked (778) is its own,
 * its switch-outs never paired; another process's (4242) are */
static void test_offcpu_helpers(const char *proc_root)
{
	struct ft_session s;
	static struct ft_options o;
	CHECK(test_session(&s, &o, k, proc_root, 0, 0) == 0, "a session on fixtures, for offcpu");
	struct ft_offcpu_config c = { .opt = &o, .self = 777, .proc_root = "/nonexistent",
				      .count = offcpu_count };
	CHECK(ft_offcpu_alloc("tests/unit/fixtures/tracefs", &c, &s.offcpu) == 0, "its offcpu");
	struct perfev_record f = { .kind = PERFEV_FORK, .time = 500, .pid = 778, .tid = 778 };
	f.task.ppid = f.task.ptid = 777;
	ft_session_record(&s, &f, 0);
	const uint64_t ks[] = { 0xffffffff81010010ull, 0xffffffff81021020ull };
	const uint32_t tids[] = { 778, 4242 };
	for (int i = 0; i < 2; i++)
		test_sample(&s, tids[i], ks, 2, 1000 + (uint64_t)i);
	for (int i = 0; i < 2; i++) {
		struct perfev_record in = { .kind = PERFEV_SWITCH, .time = 3000, .pid = tids[i],
					    .tid = tids[i] };
		ft_session_record(&s, &in, -1);
	}
	offcpu_n = 0;
	ft_offcpu_finish(s.offcpu, 10000);
	CHECK(offcpu_n == 1 && offcpu_tids[0] == 4242,
	      "one interval, 4242's: none of the helper's (%d)", offcpu_n);
	test_session_free(&s);
}

static void test_loop(void)
{
	struct ft_session s;
	struct ft_options o = { .duration = 0.2, .state = -1 };
	ft_session_init(&s, &o);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int ret = ft_loop_run(&s, epfd);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double secs = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	CHECK(ret == 0 && secs >= 0.19 && secs < 10, "the loop ends when the duration does (%.2f s)", secs);
	close(epfd);

	/* -p: the loop ends when the target exits, seen by its pidfd */
	int go[2];
	CHECK(pipe(go) == 0, "a pipe");
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(go[0]);
	struct ft_options p = { .npids = 1, .state = -1 };
	p.pids[0] = child;
	ft_session_init(&s, &p);
	CHECK(ft_targets_open(&s.traced.targets, &p) == 0, "-p of a child: opened");
	CHECK(!ft_session_targets_gone(&s), "-p of a running child: still there");
	close(go[1]);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ft_loop_run(&s, epfd) == 0, "the loop ends when the -p process exits");
	CHECK(ft_session_targets_gone(&s), "-p of an exited child: the targets are gone");
	close(epfd);
	ft_targets_close(&s.traced.targets);
	waitpid(child, NULL, 0);

	/* no pidfd (a thread before Linux 6.9): found by /proc on a poll timeout */
	ft_session_init(&s, &p);
	s.traced.targets.n = 1;
	s.traced.targets.t[0] = (struct ft_target){ .id = child, .fd = -1 };
	CHECK(ft_session_targets_gone(&s), "-p of a reaped process, no pidfd: gone");
	s.traced.targets.t[0].id = getpid();
	CHECK(!ft_session_targets_gone(&s), "-p of this process, no pidfd: still there");
	s.traced.targets.t[0].id = child;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ft_loop_run(&s, epfd) == 0, "the loop ends when the -p process is gone (no pidfd)");
	close(epfd);
}

static void test_configure(const char *proc_root)
{
	struct ft_session s;
	struct ft_options o = { .cmd = FT_COUNT, .format = OUT_TEXT, .kernel_only = true, .state = -1 };
	char path[160];
	ft_session_init(&s, &o);
	ft_session_configure(&s, "/nonexistent");
	CHECK(!s.keep.want_user && s.keep.want_kernel && !s.keep.need_procs && !s.keep.track && !s.keep.key_tid &&
	      !s.plan.track_mmaps, "-K, text: kernel stacks only, no processes followed");
	CHECK_EQ_U64(s.keep.max_stack, 127, "kernel.perf_event_max_stack unreadable: the default 127");
	o.format = OUT_FOLDED;
	ft_session_configure(&s, "/nonexistent");
	CHECK(s.keep.need_procs && s.keep.track && s.keep.key_pid && s.keep.key_tid && !s.plan.track_mmaps,
	      "-K -f: comm shown, so processes (not their mmaps) are followed");
	o.kernel_only = false;
	o.format = OUT_TEXT;
	ft_session_configure(&s, "/nonexistent");
	CHECK(s.keep.want_user && s.keep.need_procs && s.keep.track && !s.keep.key_pid && s.plan.track_mmaps,
	      "user stacks, text: mmaps followed, processes merged by name");
	o.cmd = FT_OFFCPU;
	o.kernel_only = true;
	ft_session_configure(&s, "/nonexistent");
	CHECK(s.keep.track && !s.keep.need_procs, "offcpu -K: the side band for exits only");
	snprintf(path, sizeof(path), "%s/sys", proc_root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/kernel", proc_root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/kernel/perf_event_max_stack", proc_root);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("64\n", f);
		fclose(f);
	}
	ft_session_configure(&s, proc_root);
	CHECK_EQ_U64(s.keep.max_stack, 64, "kernel.perf_event_max_stack read under the proc root");
	unlink(path);
	snprintf(path, sizeof(path), "%s/sys/kernel", proc_root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/sys", proc_root);
	rmdir(path);
}

/* ftstack cleanup on a tracefs tree: a dead run's instance goes, a live
 * run's (its pid is an ftstack process in the proc root) stays. */
static void test_cleanup(const char *proc_root)
{
	char tfs[] = "/tmp/ftstack-collector-tfs.XXXXXX", path[160];
	if (!mkdtemp(tfs))
		return;
	snprintf(path, sizeof(path), "%s/instances", tfs);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/instances/ftstack_999999", tfs);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/instances/ftstack_4243", tfs);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4243", proc_root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4243/comm", proc_root);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("ftstack\n", f);
		fclose(f);
	}
	FILE *out = tmpfile();
	CHECK(out && ft_cleanup_run(tfs, proc_root, out) == 0, "cleanup on a fixture tree: exit 0");
	const char *text = out ? test_slurp(out, false) : "";
	CHECK(strstr(text, "ftstack_999999") && !strstr(text, "ftstack_4243") &&
	      strstr(text, "1 object left by dead ftstack runs removed\n"),
	      "the dead run's instance removed, the live one's kept: %s", text);
	snprintf(path, sizeof(path), "%s/instances/ftstack_999999", tfs);
	struct stat st;
	CHECK(stat(path, &st) != 0, "its directory is gone");
	if (out)
		fclose(out);
	snprintf(path, sizeof(path), "%s/4243/comm", proc_root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/4243", proc_root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/instances/ftstack_4243", tfs);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/instances", tfs);
	rmdir(path);
	rmdir(tfs);
}

/* The lost events' advice: --buffer-size, and a smaller copy when each
 * sample reserves a large one (offcpu's 16 KB, profile's 64 KB) */
static void test_lost_advice(void)
{
	struct agg_named_stats ns = { .stacks_before = 2, .stacks_after = 2 };
	struct ft_summary sm = { .live = true, .counted = 4, .lost = 5, .sample_copy = 16384 };
	struct test_stderr c;
	if (!test_stderr_begin(&c))
		return;
	ft_result_summary(&sm, &ns);
	sm.sample_copy = 2048; /* count's copy: not worth naming */
	ft_result_summary(&sm, &ns);
	sm.sample_copy = 0;    /* -K, or the ftrace backend */
	ft_result_summary(&sm, &ns);
	CHECK_STR(test_stderr_end(&c),
		  "ftstack: 4 events counted in 2 distinct stacks (2 printed), 5 lost (ring buffer "
		  "full: raise --buffer-size, or copy less stack: each sample reserves its 16384 "
		  "bytes, --call-graph dwarf,4096)\n"
		  "ftstack: 4 events counted in 2 distinct stacks (2 printed), 5 lost (ring buffer "
		  "full: raise --buffer-size)\n"
		  "ftstack: 4 events counted in 2 distinct stacks (2 printed), 5 lost (ring buffer "
		  "full: raise --buffer-size)\n",
		  "lost: a 16 KB copy a sample names a smaller one; 2 KB or none, --buffer-size alone");
}

/* The opening line, as run.c says it once armed. */
static void test_announce(void)
{
	struct ft_event ev = { .kind = FT_EV_TRACEPOINT, .name = "t:kmem:kmalloc" };
	struct ft_options o = { .cmd = FT_COUNT, .kernel_only = true, .state = -1 };
	struct ft_session s;
	struct test_stderr c;
	if (!test_stderr_begin(&c))
		return;
	ft_session_init(&s, &o);
	s.plan.events = &ev;
	s.plan.nevents = 1;
	s.traced.have_child = true;
	ft_cmd_announce(&s);
	o = (struct ft_options){ .cmd = FT_PROFILE, .freq = 49, .duration = 5, .state = -1 };
	ft_session_init(&s, &o);
	ft_cmd_announce(&s);
	CHECK_STR(test_stderr_end(&c), "Tracing kernel stacks of t:kmem:kmalloc while the command "
		  "runs.\nSampling at 49 Hertz of all threads by user + kernel stack for 5 secs.\n",
		  "the opening line: count -K -c, profile -F 49 5");
}

int main(void)
{
	char proc[] = "/tmp/ftstack-collector-proc.XXXXXX";
	if (!mkdtemp(proc))
		return 1;
	test_fake_proc(proc, 4242, "worker");
	CHECK(sym_kernel_load(KALLSYMS, &k) == 0, "kallsyms fixture");
	test_kfilter();
	test_symcache();
	test_session_print(proc);
	test_offcpu_helpers(proc);
	test_pending(proc);
	test_loop();
	test_lost_advice();
	test_announce();
	test_configure(proc);
	test_cleanup(proc);
	sym_kernel_free(k);
	test_fake_proc_remove(proc, 4242);
	CHECK_DONE();
}
