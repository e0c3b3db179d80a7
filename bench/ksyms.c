/* bench: what a run pays for the kernel's names at its start, timed in
 * one process, ROUNDS times each, interleaved: /proc/kallsyms read and
 * parsed (sym_kernel_load), the copy saved once a boot read back
 * (sym_kernel_load_cached, from a folder of its own made by the first
 * round), and report_is_machinery asked about every text symbol (what
 * the kernel-stack filter does). Prints one line a round, then medians.
 *   ksyms [ROUNDS]   (root, or CAP_SYSLOG: the addresses must show) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "perfev/perfev.h"
#include "report/report.h"
#include "symbolize/symbolize.h"

static int ask(void *ctx, const char *name, uint64_t addr)
{
	(void)addr;
	*(long *)ctx += report_is_machinery(name);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	char dir[] = "/tmp/ftstack-ksyms.XXXXXX", file[64];
	if (rounds < 1 || rounds > 1000 || !mkdtemp(dir))
		return 2;
	snprintf(file, sizeof(file), "%s/kallsyms", dir);
	double *rd = calloc((size_t)rounds, sizeof(double)), *back = calloc((size_t)rounds, sizeof(double)),
	       *mach = calloc((size_t)rounds, sizeof(double));
	long found = 0;
	int ret = rd && back && mach ? 0 : 1;
	for (int r = 0; ret == 0 && r < rounds; r++) {
		struct sym_kernel *k = NULL, *c = NULL;
		enum sym_kernel_whence w;
		double t0 = (double)perfev_mono_ns() / 1e6;
		ret = sym_kernel_load("/proc/kallsyms", &k) < 0;
		double t1 = (double)perfev_mono_ns() / 1e6;
		ret |= sym_kernel_load_cached("/proc/kallsyms", file, "", &c, &w) < 0;
		double t2 = (double)perfev_mono_ns() / 1e6;
		found = 0;
		if (ret == 0)
			sym_kernel_foreach(c, ask, &found);
		double t3 = (double)perfev_mono_ns() / 1e6;
		rd[r] = t1 - t0, back[r] = t2 - t1, mach[r] = t3 - t2;
		printf("%d | read %.2f ms | %s %.2f ms | machinery %.2f ms (%ld found)\n", r + 1, rd[r],
		       w == SYM_KERNEL_SAVED ? "read back" : "read and saved", back[r], mach[r], found);
		sym_kernel_free(k);
		sym_kernel_free(c);
	}
	if (ret == 0 && rounds > 1) /* the first round saved the copy */
		printf("medians of rounds 2-%d: /proc/kallsyms read %.2f ms, the copy read back %.2f ms, "
		       "the machinery names %.2f ms\n", rounds, perfev_median(rd + 1, rounds - 1),
		       perfev_median(back + 1, rounds - 1), perfev_median(mach + 1, rounds - 1));
	unlink(file);
	rmdir(dir);
	free(rd);
	free(back);
	free(mach);
	return ret;
}
