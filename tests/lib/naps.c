/* Test workload for offcpu: sleeps 4 x 100 ms in nap_x and 4 x 200 ms in
 * nap_y (one thread), so off-CPU time is 400 ms and 800 ms by stack. */
#include <time.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) void nap_x(void) { sleep_ms(100); }
__attribute__((noinline)) void nap_y(void) { sleep_ms(200); }

int main(void)
{
	for (int i = 0; i < 4; i++) {
		nap_x();
		nap_y();
	}
	return 0;
}
