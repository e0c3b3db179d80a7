/* perfev: how long the kernel takes to allocate a ring for each CPU when
 * PROCS processes map them at once (ring_many.c). Whether helpers pay for
 * their forks depends on the host: where the kernel zeroes pages no
 * faster side by side (the EPYC VM of doc/PERFORMANCE.md), one process
 * mapping every ring is armed sooner; where it does (the Xeon VM), a
 * helper a CPU is. ftstack check times both (collector/ring_maps.c). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "perfev/perfev.h"

#define MAX_RINGS 64

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int perfev_ring_maps_time(int n, size_t bytes, size_t procs, double *ms)
{
	struct perfev_opts po = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				  .sample_period = 1, .disabled = true };
	struct perfev_ring rings[MAX_RINGS];
	int fds[MAX_RINGS], opened = 0, ret = 0;
	if (n < 1 || n > MAX_RINGS)
		return -EINVAL;
	memset(rings, 0, sizeof(rings));
	while (opened < n && (fds[opened] = perfev_open(&po, -1, opened, -1)) >= 0)
		opened++;
	if (opened < n)
		ret = fds[opened]; /* perfev_open's -errno */
	if (ret == 0) {
		struct perfev_ring_maps m;
		double t0 = now_ms();
		ret = perfev_ring_maps_start(&m, rings, fds, (size_t)n, bytes, procs);
		*ms = now_ms() - t0;
		int fin = perfev_ring_maps_finish(&m);
		if (ret == 0)
			ret = fin;
	}
	for (int i = 0; i < opened; i++) {
		perfev_ring_unmap(&rings[i]);
		close(fds[i]);
	}
	return ret;
}
