/* Test workload for --call-graph dwarf: N getppid system calls through
 * main -> nofp_a -> nofp_b, built without frame pointers (the Makefile's
 * one exception among the workloads): a frame-pointer walk from the
 * syscall finds no caller of nofp_b; the DWARF call-frame information
 * names nofp_a, main and libc's start-up code.
 *   nofp_paths N
 */
#include <stdlib.h>
#include <sys/syscall.h>

#define NO_FP __attribute__((noinline))

NO_FP long nofp_b(long i)
{
	long ret;
	volatile long pad[4] = { i, i, i, i }; /* a frame of its own */
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret + pad[0];
}

NO_FP long nofp_a(long n)
{
	volatile long sum = 0;
	for (long i = 0; i < n; i++)
		sum += nofp_b(i);
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	return nofp_a(n) == 0; /* used, so the calls stay */
}
