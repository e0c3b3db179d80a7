/* Test workload: one process, two threads with their own comms. The main
 * thread (comm "thread_names") makes M getppid calls, a thread that names
 * itself "ftstack_worker" (before its first call) makes W; they take turns
 * so neither's calls overlap the rename.
 *   thread_names M W
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long calls(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += syscall(SYS_getppid);
	return sum;
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "ftstack_worker");
	calls(*(long *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: thread_names M W\n");
		return 2;
	}
	long m = atol(argv[1]), w = atol(argv[2]);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, &w) != 0)
		return 1;
	pthread_join(t, NULL);
	calls(m);
	return 0;
}
