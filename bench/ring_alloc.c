/* bench/ring_alloc: how long the kernel takes to allocate a ring for each
 * online CPU, the way ftstack's start-up does (perfev_ring_maps_start on
 * per-CPU dummy events), with the rings mapped by PROCS processes at once:
 *   1      this process maps every ring, one after another
 *   N      this process one, a forked helper each other one (since dda4c51)
 *   N + 1  a helper each, this process none (before dda4c51)
 * for N online CPUs, interleaved, ROUNDS times:
 *   ring_alloc [MB a ring, default 32] [ROUNDS, default 15]
 * Prints each round's milliseconds to every ring existing (what arming
 * waits for; the helpers' rings mapped here afterwards are not counted),
 * then each way's median and its median ratio to the first way's, per
 * round. Root (per-CPU events, rings beyond RLIMIT_MEMLOCK).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "perfev/perfev.h"

#define MAX_ROUNDS 101

/* Milliseconds until N rings of BYTES exist, mapped by PROCS processes;
 * -1 when one could not be opened or mapped. */
static double one_way(int n, size_t bytes, size_t procs)
{
	double ms;
	return perfev_ring_maps_time(n, bytes, procs, &ms) == 0 ? ms : -1;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 32;
	int rounds = argc > 2 ? atoi(argv[2]) : 15;
	int n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n > PERFEV_RING_TIME_MAX)
		n = PERFEV_RING_TIME_MAX;
	if (rounds < 1 || rounds > MAX_ROUNDS || mb < 1) {
		fprintf(stderr, "usage: ring_alloc [MB] [ROUNDS, 1-%d]\n", MAX_ROUNDS);
		return 2;
	}
	size_t ways[3] = { 1, (size_t)n, (size_t)n + 1 };
	double ms[3][MAX_ROUNDS], ratio[3][MAX_ROUNDS];
	for (int r = 0; r < rounds; r++) {
		printf("round %d:", r + 1);
		for (int k = 0; k < 3; k++) {
			int w = (k + r) % 3; /* the order rotated each round */
			ms[w][r] = one_way(n, mb << 20, ways[w]);
			if (ms[w][r] < 0) {
				fprintf(stderr, "ring_alloc: cannot open or map %d rings of %zu MB\n", n, mb);
				return 1;
			}
			usleep(200 * 1000);
		}
		for (int w = 0; w < 3; w++) {
			ratio[w][r] = ms[w][r] / ms[0][r];
			printf(" %zu procs %.2f ms", ways[w], ms[w][r]);
		}
		printf("\n");
	}
	printf("%d rings of %zu MB, medians of %d rounds:\n", n, mb, rounds);
	for (int w = 0; w < 3; w++)
		printf("  %zu procs: %.2f ms, %.3f of 1 proc's per round\n", ways[w],
		       perfev_median(ms[w], rounds), perfev_median(ratio[w], rounds));
	return 0;
}
