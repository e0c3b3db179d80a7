/* Test workload for whole user stacks in profile: func_a and func_b keep
 * frame pointers and burn CPU in leaf(), which this file is built to leave
 * frameless (-O2 -fno-omit-frame-pointer -momit-leaf-frame-pointer, see the
 * Makefile), so a frame-pointer walk from a sample in leaf() skips its
 * caller. func_b asks for twice func_a's work each round: 1:2. Each
 * round's work is drawn anew: a round as long as the timer's period, or a
 * simple multiple of it, would have every sample land at the same point of
 * it, and the split be the phase's.
 *   leaf_ab SECS
 * SECS of its own CPU time, not wall time: a profile of it takes about SECS
 * x the frequency samples however busy the host is (tests/live/lib.sh's
 * ratio_ok wants enough of them). */
#include <stdlib.h>
#include <time.h>

#define WORK 1000000L

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) void func_a(long n) { leaf(n); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void func_b(long n) { leaf(2 * n); __asm__ volatile("" ::: "memory"); }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		long n = WORK / 4 + rand() % (3 * WORK / 2); /* WORK on average */
		func_a(n);
		func_b(n);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
