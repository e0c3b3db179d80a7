/* collector/kload.c: kallsyms and the kernel-stack filters loaded in a
 * thread give what loading them in place gives, and its fd says when. */
#include <errno.h>
#include <poll.h>
#include "collector/kfilter.h"
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

int main(void)
{
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
