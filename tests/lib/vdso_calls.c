/* Test workload for frames in the vDSO ("[vdso]", the kernel's ELF image
 * in every process; symbolize/vdso.c).
 *   vdso_calls N        calls clock_gettime(CLOCK_PROCESS_CPUTIME_ID) N
 *                       times from clock_calls: the vDSO has no fast path
 *                       for it, so each call enters the kernel from the
 *                       vDSO's code (N sys_enter_clock_gettime events, the
 *                       user leaf __vdso_clock_gettime)
 *   vdso_calls --mono SECS  reads CLOCK_MONOTONIC in a loop for SECS
 *                       seconds from mono_loop, in the vDSO alone (no
 *                       syscall): a profile's samples land in its code
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) void clock_calls(long n)
{
	struct timespec ts;
	for (long i = 0; i < n; i++)
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
}

__attribute__((noinline)) void mono_loop(double secs)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--mono") == 0)
		mono_loop(atof(argv[2]));
	else if (argc == 2)
		clock_calls(atol(argv[1]));
	else
		return 2;
	return 0;
}
