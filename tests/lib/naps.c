/* Test workload for offcpu: sleeps 4 x 100 ms in nap_x and 4 x 200 ms in
 * nap_y (one thread), so off-CPU time is 400 ms and 800 ms by stack.
 *   naps          sleep where the scheduler likes
 *   naps --hop    a second thread moves the sleeper between CPU 0 and 1
 *                 every 30 ms, so naps begin on one CPU and end on the
 *                 other: a switch-out and its switch-in in different rings
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int done;
static pid_t sleeper;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) void nap_x(void) { sleep_ms(100); }
__attribute__((noinline)) void nap_y(void) { sleep_ms(200); }

static void *hop(void *arg)
{
	(void)arg;
	for (int cpu = 0; !done; cpu ^= 1) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(sleeper, sizeof(set), &set);
		sleep_ms(30);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int hopping = argc > 1 && strcmp(argv[1], "--hop") == 0;
	sleeper = (pid_t)syscall(SYS_gettid);
	if (hopping && pthread_create(&t, NULL, hop, NULL) != 0)
		return 1;
	for (int i = 0; i < 4; i++) {
		nap_x();
		nap_y();
	}
	done = 1;
	if (hopping)
		pthread_join(t, NULL);
	return 0;
}
