/* Test workload for whole user stacks in count mode: N getppid calls made
 * through libc's syscall(), which keeps no frame pointer, from
 * call_getppid, which does: a frame-pointer walk from the system call
 * skips call_getppid.
 *   syscall_paths N        run N calls
 *   syscall_paths N --ns   also print their elapsed ns and the process's
 *                          CPU ns on stderr (bench/ustacks)
 *   syscall_paths N --alternate   call_a, call_a, call_b, ... (2N/3 and
 *                          N/3 of them, N a multiple of 3) through one
 *                          call site in main: their samples share the
 *                          kernel's stack and the frame-pointer chain, and
 *                          differ only in the return address at the top
 *                          of the stack (collector/repeat.c must see it) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long call_getppid(void)
{
	long r = syscall(SYS_getppid);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

__attribute__((noinline)) long call_a(void)
{
	long r = syscall(SYS_getppid);
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) long call_b(void)
{
	long r = syscall(SYS_getppid);
	__asm__ volatile("" ::: "memory");
	return r;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
	bool alternate = argc > 2 && strcmp(argv[2], "--alternate") == 0;
	/* volatile: one indirect call site, not two direct ones */
	long (*volatile calls[3])(void) = { call_a, call_a, call_b };
	long long t0 = now_ns();
	for (long i = 0; i < n; i++)
		sum += alternate ? calls[i % 3]() : call_getppid();
	if (argc > 2 && strcmp(argv[2], "--ns") == 0) {
		long long t1 = now_ns();
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "syscall_paths: %lld ns, %lld ns cpu\n", t1 - t0,
			(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
	}
	return sum == 0;
}
