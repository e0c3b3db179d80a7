/* Test workload for profile: burns SECS seconds of its own CPU time, twice
 * as much in func_b as in func_a (alternating slices of 1 ms and 2 ms), so a
 * sampling profiler sees func_b:func_a = 2:1.   cpu_ab SECS
 * CPU time, not wall time: on a loaded host a slice preempted half-way
 * would end early and the ratio and the sample count would be the host's. */
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

__attribute__((noinline)) void func_a(void) { spin(0.001); }
__attribute__((noinline)) void func_b(void) { spin(0.002); }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	double end = now() + secs;
	while (now() < end) {
		func_a();
		func_b();
	}
	return 0;
}
