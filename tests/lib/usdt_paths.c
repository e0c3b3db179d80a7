/* Test workload for USDT: N firings of probe ftstack_test:tick through two
 * call paths (N/4 from path_a, 3N/4 from path_b), and probe ftstack_test:gated
 * guarded by its semaphore: it fires only while a tracer holds the semaphore,
 * so it counts N only when ftstack raised it.
 *   usdt_paths N [--wait FILE] */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((section(".probes"))) volatile unsigned short ftstack_test_gated_semaphore;
__attribute__((section(".probes"))) volatile unsigned short ftstack_test_tick_semaphore;

static long gated_hits;

__attribute__((noinline)) void fire(long i)
{
	/* a real frame (push rbp), which gcc skips for trivial leaves */
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	DTRACE_PROBE1(ftstack_test, tick, i);
	if (ftstack_test_gated_semaphore) {
		gated_hits++;
		DTRACE_PROBE1(ftstack_test, gated, i);
	}
}

__attribute__((noinline)) void path_a(long n)
{
	for (long i = 0; i < n; i++)
		fire(i);
}

__attribute__((noinline)) void path_b(long n)
{
	for (long i = 0; i < n; i++)
		fire(i);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: usdt_paths N [--wait FILE]\n");
		return 2;
	}
	long n = atol(argv[1]);
	if (argc == 4 && strcmp(argv[2], "--wait") == 0) {
		struct stat st;
		while (stat(argv[3], &st) != 0)
			usleep(1000);
	}
	path_a(n / 4);
	path_b(n - n / 4);
	printf("gated %ld\n", gated_hits);
	return 0;
}
