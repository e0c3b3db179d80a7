/* Test workload for profile: burns SECS seconds of its own CPU time, twice
 * as much in func_b as in func_a (alternating slices of 1 ms and 2 ms on
 * average), so a sampling profiler sees func_b:func_a = 2:1.   cpu_ab SECS
 * CPU time, not wall time: on a loaded host a slice preempted half-way
 * would end early and the ratio and the sample count would be the host's.
 * Each round's slices are drawn anew (func_b's twice func_a's): a round as
 * long as the timer's period, or a simple multiple of it, would have every
 * sample land at the same point of it, and the split be the phase's. */
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(double secs)
{
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) void func_a(double ms) { spin(ms / 1000); }
__attribute__((noinline)) void func_b(double ms) { spin(2 * ms / 1000); }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	double end = now() + secs;
	while (now() < end) {
		double ms = 0.25 + (rand() % 1500) / 1000.0; /* 1 on average */
		func_a(ms);
		func_b(ms);
	}
	return 0;
}
