/* collector/: -i intervals over synthetic records. Each interval names and
 * prints its stacks, then a process that exited before it printed is
 * forgotten once the rings were read past its exit and the grace (a late
 * sample of it read before still names); the name cache starts afresh; the
 * summary at the end tells the run's totals. Without -i the stacks counted
 * keep their processes. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collector/session.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

#define KALLSYMS "tests/unit/fixtures/kallsyms_kfilter.txt"
#define G SYM_EXIT_GRACE_NS

static struct sym_kernel *k;
static struct ft_options opt;
static const uint64_t a[] = { 0xffffffff81021020ull, 0xffffffff81022008ull };
static const uint64_t b[] = { 0xffffffff81021830ull, 0xffffffff81022010ull };
static const uint64_t c[] = { 0xffffffff81022008ull };

/* PID forked by 4242 at T, exec'ing COMM just after. */
static void spawn(struct ft_session *s, uint32_t pid, const char *comm, uint64_t t)
{
	struct perfev_record r = { .kind = PERFEV_FORK, .pid = pid, .tid = pid, .time = t };
	r.task.ppid = r.task.ptid = 4242;
	ft_session_record(s, &r, 0);
	r = (struct perfev_record){ .kind = PERFEV_COMM, .pid = pid, .tid = pid, .time = t + 10 };
	r.comm.comm = comm;
	r.comm.exec = true;
	ft_session_record(s, &r, 0);
}

static void exit_rec(struct ft_session *s, uint32_t pid, uint64_t t)
{
	struct perfev_record r = { .kind = PERFEV_EXIT, .pid = pid, .tid = pid, .time = t };
	r.task.ppid = r.task.ptid = 4242;
	ft_session_record(s, &r, 0);
}

/* The loop's interval: the rings read up to HORIZON, printed, forgotten. */
static const char *interval(struct ft_session *s, uint64_t horizon)
{
	ft_session_drained(s, horizon);
	int ret = ft_print_interval(s);
	ft_session_forget(s);
	return ret == 0 ? test_slurp(s->output.file, true) : NULL;
}

static void test_intervals(const char *proc)
{
	struct ft_session s;
	if (test_session(&s, &opt, k, proc, 1, 2) < 0) {
		CHECK(0, "a session on fixtures");
		return;
	}
	test_sample(&s, 4242, a, 2, 1000);
	spawn(&s, 5000, "child", 2000);
	test_sample(&s, 5000, a, 2, 3000);
	exit_rec(&s, 5000, 4000);
	test_sample(&s, 5000, a, 2, 3500); /* stamped before the exit, read after it */
	test_sample(&s, 5000, c, 1, 3600); /* a third distinct stack: over --max-stacks 2 */
	CHECK_STR(interval(&s, 4000 + 10),
		  "worker;do_syscall_64;__kmalloc_noprof 1\nchild;do_syscall_64;__kmalloc_noprof 2\n",
		  "interval 1: the exited process's stacks named, the late sample's too");
	uint64_t resolved = sym_cache_resolved(s.output.symcache);
	CHECK_STR(sym_procs_comm_at(s.procs, 5000, 3000), "child",
		  "exited within the grace before the horizon: kept");
	test_sample(&s, 4242, a, 2, 4000 + G + 100);
	CHECK_STR(interval(&s, 4000 + G + 200), "worker;do_syscall_64;__kmalloc_noprof 1\n",
		  "interval 2");
	CHECK(!sym_procs_comm_at(s.procs, 5000, 3000) && sym_procs_exited(s.procs) == 0,
	      "after it, the process that exited is forgotten");
	CHECK_EQ_U64(sym_cache_resolved(s.output.symcache), resolved + 2,
		     "the name cache started afresh: the same 2 addresses named again");
	test_sample(&s, 4242, b, 2, 4000 + G + 300);
	test_sample(&s, 4242, b, 2, 4000 + G + 400);
	const char *sum = test_summary(&s);
	CHECK(strstr(sum, "ftstack: 6 events counted in 3 intervals (at most 2 distinct stacks in "
			  "one), 0 lost\n") != NULL, "the summary: the run's totals (%s)", sum);
	CHECK(strstr(sum, "ftstack: 1 events not counted: --max-stacks 2") != NULL,
	      "--max-stacks drops of every interval");
	test_session_free(&s);

	/* the run ends right after an interval: no empty last one counted */
	if (test_session(&s, &opt, k, proc, 1, 0) < 0)
		return;
	test_sample(&s, 4242, a, 2, 1000);
	struct perfev_record lost = { .kind = PERFEV_LOST, .time = 1500 };
	lost.lost.lost = 2;
	ft_session_record(&s, &lost, 0);
	interval(&s, 2000);
	sum = test_summary(&s);
	CHECK(strstr(sum, "ftstack: 1 events counted in 1 interval (at most 1 distinct stacks in "
			  "one), 2 lost (ring buffer full: raise --buffer-size)\n") != NULL,
	      "one interval, the lost events and what to do (%s)", sum);
	test_session_free(&s);
}

/* Without -i: the table keeps what it counts; other exited tasks go. */
static void test_no_interval(const char *proc)
{
	struct ft_session s;
	if (test_session(&s, &opt, k, proc, 0, 0) < 0)
		return;
	test_sample(&s, 4242, a, 2, 1000);
	spawn(&s, 5000, "child", 2000);
	test_sample(&s, 5000, a, 2, 3000);
	exit_rec(&s, 5000, 4000);
	spawn(&s, 6000, "quiet", 2000); /* counted nothing */
	exit_rec(&s, 6000, 4000);
	CHECK(!ft_session_forget_due(&s), "two exits: no sweep due yet");
	for (uint32_t pid = 7000; pid < 9100; pid++) {
		spawn(&s, pid, "short", 3000);
		exit_rec(&s, pid, 4000);
	}
	CHECK(ft_session_forget_due(&s), "2100 more: a sweep is due");
	ft_session_drained(&s, 4000 + G + 1);
	ft_session_forget(&s);
	CHECK(!sym_procs_comm_at(s.procs, 6000, 3000) && !sym_procs_comm_at(s.procs, 8000, 3000),
	      "processes that counted nothing are forgotten");
	CHECK_EQ_U64(sym_procs_exited(s.procs), 1, "the one a counted stack needs is kept");
	CHECK(!ft_session_forget_due(&s), "and no sweep is due until more exit");
	test_summary(&s);
	CHECK_STR(test_slurp(s.output.file, true),
		  "child;do_syscall_64;__kmalloc_noprof 1\nworker;do_syscall_64;__kmalloc_noprof 1\n",
		  "the end names it");
	test_session_free(&s);
}

int main(void)
{
	char proc[] = "/tmp/ftstack-interval-proc.XXXXXX";
	if (!mkdtemp(proc))
		return 1;
	test_fake_proc(proc, 4242, "worker");
	CHECK(sym_kernel_load(KALLSYMS, &k) == 0, "kallsyms fixture");
	test_intervals(proc);
	test_no_interval(proc);
	sym_kernel_free(k);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", proc);
	CHECK(system(cmd) == 0, "fixture removed");
	CHECK_DONE();
}
