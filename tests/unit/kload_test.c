/* collector/kload.c: kallsyms and the kernel-stack filters loaded in a
 * thread give what loading them in place gives, and its fd says when. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collector/kfilter.h"
#include "host/host.h"
#include "tests/unit/check.h"

#define FIXTURE "tests/unit/fixtures/kallsyms_machinery.txt"

static bool same_ranges(const struct ft_ranges *a, const struct ft_ranges *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].start != b->r[i].start || a->r[i].end != b->r[i].end)
			return false;
	return true;
}

/* The nice value of this process's other thread (the load's), or 99 */
static int load_nice(void)
{
	pid_t tids[8];
	int n = host_tasks("/proc", getpid(), tids, 8);
	for (int i = 0; i < n; i++)
		if (tids[i] != getpid()) {
			errno = 0;
			int nice = getpriority(PRIO_PROCESS, (id_t)tids[i]);
			return errno ? 99 : nice;
		}
	return 99;
}

/* A load that yields (nice 19) is hurried when FT_PENDING_HURRY bytes of
 * samples come to wait, not before, and once: the file is a FIFO, so the thread waits in
 * its open until this test writes it. */
static void test_hurry(void)
{
	char dir[] = "/tmp/ftstack-kload-XXXXXX", fifo[64], cmd[128];
	CHECK(mkdtemp(dir) != NULL, "a folder for the FIFO");
	snprintf(fifo, sizeof(fifo), "%s/kallsyms", dir);
	CHECK(mkfifo(fifo, 0600) == 0, "a FIFO for kallsyms");
	struct ft_kernel_syms ks = { .epfd = -1 };
	ft_ksyms_start(&ks, fifo, true, NULL);
	CHECK(ks.state == FT_KSYMS_LOADING, "loading in a thread");
	int nice = 99;
	for (int i = 0; i < 500 && (nice = load_nice()) != 19; i++)
		usleep(10000);
	CHECK_EQ_U64((uint64_t)nice, 19, "the load yields: nice 19");
	ks.pending.len = FT_PENDING_HURRY - 1;
	ft_ksyms_queued(&ks, FT_PENDING_HURRY - 2);
	CHECK_EQ_U64((uint64_t)load_nice(), 19, "a byte short of the mark: still yields");
	ks.pending.len = FT_PENDING_HURRY + 1;
	ft_ksyms_queued(&ks, FT_PENDING_HURRY);
	CHECK_EQ_U64((uint64_t)load_nice(), 19, "a queue past the mark before: not hurried (once)");
	uint64_t eff = 0;
	ks.pending.len = FT_PENDING_HURRY;
	ft_ksyms_queued(&ks, FT_PENDING_HURRY - 1);
	/* at once, or (the hurry came between the thread's yielding and its
	 * telling its tid: a thread at nice 19 on busy CPUs may wait there
	 * for long) as soon as the thread runs on; a hurry lost there kept the
	 * load yielding to the end */
	if (host_cap_eff("/proc", "self", &eff) == 0 && (eff & (1ull << HOST_CAP_SYS_NICE))) {
		int want = getpriority(PRIO_PROCESS, 0);
		for (int i = 0; i < 500 && (nice = load_nice()) != want; i++)
			usleep(10000);
		CHECK_EQ_U64((uint64_t)nice, (uint64_t)want,
			     "reaching the mark: its priority is the process's again");
	} else
		SKIP("no CAP_SYS_NICE: a thread's priority cannot be raised back",
		     "reaching the mark: its priority is the process's again");
	snprintf(cmd, sizeof(cmd), "cat %s > %s", FIXTURE, fifo);
	CHECK(system(cmd) == 0, "the FIFO written: the load goes on");
	ks.pending.len = 0;
	ft_ksyms_abandon(&ks);
	CHECK(ks.state == FT_KSYMS_NONE, "ended");
	unlink(fifo);
	rmdir(dir);
}

int main(void)
{
	test_hurry();
	struct sym_kernel *k0 = NULL, *k = NULL;
	struct ft_kfilter f0, f;
	CHECK(ft_kload_now(FIXTURE, true, &k0, &f0) == 0 && k0, "loaded in place");
	CHECK_EQ_U64(f0.machinery.n, 2, "machinery: perf_tp_event, perf_trace_sys_enter");
	CHECK_EQ_U64(f0.self.n, 2, "self: perf_event_mmap, perf_event_mmap_output");

	struct ft_kload *kl = NULL;
	CHECK(ft_kload_start(FIXTURE, true, &kl) == 0 && kl, "thread started");
	struct pollfd pfd = { .fd = kl ? ft_kload_fd(kl) : -1, .events = POLLIN };
	CHECK(kl && poll(&pfd, 1, 10000) == 1 && (pfd.revents & POLLIN), "its fd says done");
	CHECK(kl && ft_kload_finish(kl, &k, &f) == 0 && k, "loaded in the thread");
	CHECK(same_ranges(&f.machinery, &f0.machinery) && same_ranges(&f.self, &f0.self) &&
	      f.through.n == 0, "the same ranges either way");
	const char *mod = NULL;
	uint64_t off = 0;
	CHECK_STR(k ? sym_kernel_lookup(k, 0xffffffff81001805, &off, &mod) : NULL, "do_syscall_64",
		  "the thread's symbols name addresses");

	/* perf_tp_event <- perf_trace_sys_enter <- do_syscall_64: the stack
	 * starts at do_syscall_64; through perf_event_mmap_output: ftstack's own */
	const uint64_t tp[] = { 0xffffffff81001010, 0xffffffff81001220, 0xffffffff81001830 };
	const uint64_t self[] = { 0xffffffff81001610, 0xffffffff81001830 };
	uint32_t start = 99;
	CHECK(ft_kfilter_apply(&f, tp, 3, &start) == FT_KEEP && start == 2,
	      "machinery frames cut (start %u)", start);
	CHECK(ft_kfilter_apply(&f, self, 2, &start) == FT_DROP_SELF, "side band dropped");
	ft_kfilter_free(&f);
	sym_kernel_free(k);

	struct ft_kfilter untracked;
	CHECK(ft_kload_start(FIXTURE, false, &kl) == 0 && ft_kload_finish(kl, &k, &untracked) == 0 &&
	      untracked.self.n == 0 && untracked.machinery.n == 2,
	      "without mmap tracking: no self ranges, finish waits by itself");
	ft_kfilter_free(&untracked);
	sym_kernel_free(k);

	struct ft_kfilter none;
	k = (struct sym_kernel *)1;
	CHECK(ft_kload_start("/nonexistent/kallsyms", true, &kl) == 0 &&
	      ft_kload_finish(kl, &k, &none) == -ENOENT && !k && !none.machinery.n && !none.self.n,
	      "a missing file: -ENOENT, nothing loaded");
	ft_kfilter_free(&f0);
	sym_kernel_free(k0);
	CHECK(ft_kload_warn_hidden(-EPERM), "-EPERM: the kptr_restrict warning");
	CHECK(!ft_kload_warn_hidden(0) && !ft_kload_warn_hidden(-ENOENT),
	      "0 and other errors: not that warning");
	CHECK_DONE();
}
