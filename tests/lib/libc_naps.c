/* Test workload for whole user stacks by default: nap_x and nap_y keep
 * frame pointers and call libc's nanosleep directly, which (with the
 * clock_nanosleep under it) keeps none in Debian's libc: a frame-pointer
 * walk from the sleeping syscall skips nap_x and nap_y. 4 x 100 ms in
 * nap_x, 4 x 200 ms in nap_y, so off-CPU time is 400 and 800 ms by caller.
 *   libc_naps */
#include <time.h>

__attribute__((noinline)) void nap_x(void)
{
	struct timespec ts = { 0, 100 * 1000000L };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void nap_y(void)
{
	struct timespec ts = { 0, 200 * 1000000L };
	nanosleep(&ts, NULL);
}

int main(void)
{
	for (int i = 0; i < 4; i++) {
		nap_x();
		nap_y();
	}
	return 0;
}
