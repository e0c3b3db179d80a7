/* Test workload for uprobes at a function's first instruction: N calls of
 * probed() through two paths, main -> caller_a -> probed (N/4 times) and
 * main -> caller_b -> probed (3N/4 times). probed() starts with a nop
 * (patchable_function_entry), not with push %rbp or endbr64, the two first
 * instructions after which kernels with "perf,x86: avoid missing caller
 * address in stack traces captured in uprobe" (6.13, and stable backports
 * such as Debian's 6.1) add the caller themselves. So a stack through
 * probed() has its caller only if the tracer reads it from [sp].
 *   entry_paths N
 */
#include <stdio.h>
#include <stdlib.h>

/* compilers that default to -fcf-protection would put endbr64 first */
#ifdef __CET__
#define NO_ENDBR __attribute__((nocf_check))
#else
#define NO_ENDBR
#endif

__attribute__((noinline, patchable_function_entry(1, 0))) NO_ENDBR long probed(long i)
{
	/* a real frame (push rbp after the nop), which gcc skips for trivial leaves */
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	return i & 1;
}

__attribute__((noinline)) long caller_a(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += probed(i);
	return sum;
}

__attribute__((noinline)) long caller_b(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += probed(i);
	return sum;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: entry_paths N\n");
		return 2;
	}
	long n = atol(argv[1]);
	long a = n / 4;
	return caller_a(a) + caller_b(n - a) >= 0 ? 0 : 3;
}
