/* Test workload for --call-graph dwarf: N getppid system calls through
 * main -> nofp_a -> nofp_b, built without frame pointers (the Makefile's
 * one exception among the workloads): a frame-pointer walk from the
 * syscall finds no caller of nofp_b; the DWARF call-frame information
 * names nofp_a, main and libc's start-up code.
 *   nofp_paths N        run N calls
 *   nofp_paths N --ns   also print their elapsed ns and the process's CPU
 *                       ns on stderr (the unwinders' bench: the tracer's
 *                       own CPU is the command's total minus this)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

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

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long long t0 = now_ns();
	long sum = nofp_a(n);
	if (argc > 2 && strcmp(argv[2], "--ns") == 0) {
		long long t1 = now_ns();
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "nofp_paths: %lld ns, %lld ns cpu\n", t1 - t0,
			(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
	}
	return sum == 0; /* used, so the calls stay */
}
