/* Test workload: N getppid system calls issued inline by a function whose
 * symbol is the C++ name of ns::worker(long), "_ZN2ns6workerEl" (an asm
 * label: the tests stay in C), called by main.
 *   mangled_names N
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

long ns_worker(long n) __asm__("_ZN2ns6workerEl");

__attribute__((noinline)) long ns_worker(long n)
{
	long ret;
	/* a real frame (push rbp), which gcc skips for trivial leaves */
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret + n;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mangled_names N\n");
		return 2;
	}
	long n = atol(argv[1]), sum = 0;
	for (long i = 0; i < n; i++)
		sum += ns_worker(i);
	return sum == 42; /* keeps the calls */
}
