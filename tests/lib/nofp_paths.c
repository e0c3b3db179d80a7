/* Test workload for --call-graph dwarf: N getppid system calls through
 * main -> nofp_a -> nofp_b, built without frame pointers (the Makefile's
 * one exception among the workloads): a frame-pointer walk from the
 * syscall finds no caller of nofp_b; the DWARF call-frame information
 * names nofp_a, main and libc's start-up code.
 *   nofp_paths N        run N calls
 *   nofp_paths N --ns   also print their elapsed ns and the process's CPU
 *                       ns on stderr (the unwinders' bench: the tracer's
 *                       own CPU is the command's total minus this)
 *   nofp_paths N --alternate   main -> nofp_alt -> via_x, via_x, via_y, ...
 *                       -> nofp_b (2N/3 and N/3 of them, N a multiple of
 *                       3) through one call site: their samples differ
 *                       only in one return address in the middle of the
 *                       stack (collector/repeat.c must see it)
 *   nofp_paths N --depths      main -> nofp_depths -> rec (8 or 9 deep by
 *                       turns) -> pad -> nofp_c: pad's CFA is rbp's
 *                       (alloca), which nofp_c saves and clears, so no
 *                       frame-pointer chain leads there. The top of the
 *                       stack is the same, moved up or down by a frame
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

/* one indirect call site, two callers of nofp_b */
NO_FP long via_x(long i)
{
	long r = nofp_b(i);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

NO_FP long via_y(long i)
{
	long r = nofp_b(i);
	__asm__ volatile("" ::: "memory");
	return r;
}

NO_FP long nofp_alt(long n)
{
	long (*volatile calls[3])(long) = { via_x, via_x, via_y };
	volatile long sum = 0;
	for (long i = 0; i < n; i++)
		sum += calls[i % 3](i);
	return sum;
}

/* nofp_b with rbp cleared: the sampled rbp leads nowhere, its caller's
 * is on the stack where the CFI says */
NO_FP long nofp_c(long i)
{
	long ret;
	volatile long pad[4] = { i, i, i, i };
	__asm__ volatile("xor %%ebp, %%ebp\n\tsyscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "rbp", "memory");
	return ret + pad[0];
}

/* BYTES an argument, not a constant: a constant alloca may become part of
 * a fixed frame, whose CFA is rsp's */
NO_FP long pad(long i, long bytes)
{
	volatile char *p = __builtin_alloca((size_t)bytes);
	p[0] = (char)i;
	long r = nofp_c(i) + p[0];
	__asm__ volatile("" ::: "memory");
	return r;
}

NO_FP long rec(int k, long i)
{
	if (k == 0)
		return pad(i, 64);
	long r = rec(k - 1, i);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

NO_FP long nofp_depths(long n)
{
	volatile long sum = 0;
	for (long i = 0; i < n; i++)
		sum += rec(i % 2 ? 8 : 9, i);
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
	const char *mode = argc > 2 ? argv[2] : "";
	long sum = strcmp(mode, "--alternate") == 0 ? nofp_alt(n) :
		   strcmp(mode, "--depths") == 0 ? nofp_depths(n) : nofp_a(n);
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
