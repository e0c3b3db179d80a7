/* Test workload for whole user stacks in profile: func_a and func_b keep
 * frame pointers and burn CPU in leaf(), which this file is built to leave
 * frameless (-O2 -fno-omit-frame-pointer -momit-leaf-frame-pointer, see the
 * Makefile), so a frame-pointer walk from a sample in leaf() skips its
 * caller. func_b asks for twice func_a's work each round: 1:2.
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

__attribute__((noinline)) void func_a(void) { leaf(WORK); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void func_b(void) { leaf(2 * WORK); __asm__ volatile("" ::: "memory"); }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		func_a();
		func_b();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
