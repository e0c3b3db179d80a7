/* bench/timing.h: the clock of the bench programs that time rounds
 * themselves (bench/ksyms, bench/ring_alloc; header-only, as skim.h); their
 * median is perfev_median. */
#ifndef FTSTACK_BENCH_TIMING_H
#define FTSTACK_BENCH_TIMING_H

#include <time.h>

/* CLOCK_MONOTONIC in milliseconds */
static inline double bench_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#endif
