/* perfev: how long the kernel takes to allocate a ring for each CPU when
 * PROCS processes map them at once (ring_many.c). Whether helpers pay for
 * their forks depends on the host: where the kernel zeroes pages no
 * faster side by side (the EPYC VM of doc/PERFORMANCE.md), one process
 * mapping every ring is armed sooner; where it does (the Xeon VM), a
 * helper a CPU is. ftstack check times both (collector/ring_maps.c). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "perfev/perfev.h"

int perfev_ring_maps_time(int n, size_t bytes, size_t procs, double *ms)
{
	struct perfev_opts po = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				  .sample_period = 1, .disabled = true };
	struct perfev_ring rings[PERFEV_RING_TIME_MAX];
	int fds[PERFEV_RING_TIME_MAX], opened = 0, ret = 0;
	if (n < 1 || n > PERFEV_RING_TIME_MAX)
		return -EINVAL;
	memset(rings, 0, sizeof(rings));
	while (opened < n && (fds[opened] = perfev_open(&po, -1, opened, -1)) >= 0)
		opened++;
	if (opened < n)
		ret = fds[opened]; /* perfev_open's -errno */
	if (ret == 0) {
		struct perfev_ring_maps m;
		uint64_t t0 = perfev_mono_ns();
		ret = perfev_ring_maps_start(&m, rings, fds, (size_t)n, bytes, procs);
		*ms = (double)(perfev_mono_ns() - t0) / 1e6;
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
