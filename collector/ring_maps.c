/* Who maps the perf rings at start-up on this host: this process alone,
 * or it and a helper a CPU. The kernel allocates and zeroes a ring under
 * the mapping process's mmap lock, so only processes map rings side by
 * side, and a helper costs a fork and its copy-on-write faults: where the
 * kernel zeroes pages no faster side by side, arming waits less for one
 * process (perfev/ring_maps_time.c). ftstack check times both ways and
 * saves which was sooner; until it has, a helper a CPU, the way that is
 * never far behind (a fork's worth) where the other way is much (a ring's
 * worth where rings are made side by side twice as fast). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector/session.h"
#include "tracefs/tracefs.h"

#define SAVED_NAME "ring-maps"
#define ROUNDS 9
#define PAUSE_US (50 * 1000) /* a ring's pages back to the kernel between tries */
#define MAX_ROUNDS 32 /* the most the rule takes */

bool ft_ring_maps_rule(const double *alone, const double *helped, int rounds, char *why,
		       size_t len)
{
	double a[MAX_ROUNDS] = { 0 }, h[MAX_ROUNDS] = { 0 }, ratio[MAX_ROUNDS] = { 0 };
	int n = rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
	if (n < 1) {
		snprintf(why, len, "not timed");
		return false;
	}
	for (int i = 0; i < n; i++) {
		a[i] = alone[i];
		h[i] = helped[i];
		ratio[i] = helped[i] > 0 ? alone[i] / helped[i] : 1;
	}
	double r = perfev_median(ratio, n);
	bool one = r < 1;
	snprintf(why, len, "one process %.1f ms, a helper a CPU %.1f ms (medians of %d rounds; "
		 "one / helped per round %.2f): %s", perfev_median(a, n), perfev_median(h, n), n, r,
		 one ? "one process sooner" : "helpers sooner or even");
	return one;
}

int ft_ring_maps_check(struct tfs_check_item *it)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus > PERFEV_RING_TIME_MAX ? PERFEV_RING_TIME_MAX : (int)cpus;
	size_t bytes = (size_t)FT_COPY_RING_KB / 2 * 1024; /* the rings a count starts with */
	double ms[2][ROUNDS]; /* [0]: this process alone, [1]: a helper a CPU */
	char why[200];
	int ret = 0;
	it->what = "ring mapping";
	for (int r = 0; r < ROUNDS && ret == 0 && n > 1; r++)
		for (int k = 0; k < 2 && ret == 0; k++) {
			int way = (k + r) % 2; /* the order swapped each round: the host drifts */
			ret = perfev_ring_maps_time(n, bytes, way ? (size_t)n : 1, &ms[way][r]);
			usleep(PAUSE_US);
		}
	if (n <= 1 || ret < 0) {
		it->ok = n <= 1;
		if (n <= 1)
			snprintf(it->detail, sizeof(it->detail), "one CPU: one ring, no helper");
		else
			snprintf(it->detail, sizeof(it->detail),
				 "not timed: %s (root's per-CPU rings, beyond RLIMIT_MEMLOCK); runs "
				 "keep their default, a helper a CPU where they may lock the memory",
				 strerror(-ret));
		return 0;
	}
	bool one = ft_ring_maps_rule(ms[0], ms[1], ROUNDS, why, sizeof(why));
	char line[256];
	snprintf(line, sizeof(line), "%s %s", one ? "alone" : "helpers", why);
	it->ok = true;
	snprintf(it->detail, sizeof(it->detail), "%d rings of %zu MB: %s%s", n, bytes >> 20, why,
		 ft_saved_write(SAVED_NAME, line) == 0 ? "; saved for this boot" : "");
	return 0;
}

bool ft_ring_maps_alone(void)
{
	char line[256];
	return ft_saved_read(SAVED_NAME, line, sizeof(line)) == 0 &&
	       strncmp(line, "alone ", 6) == 0;
}
