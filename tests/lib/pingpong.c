/* Workload for offcpu's cost: two processes pass one byte back and forth
 * over a pipe each way, N round trips, so each blocks in read() once per
 * round trip (two context switches per trip on each side's CPU). Prints
 * nothing, unless --ns: then the round trips' elapsed ns and both sides'
 * CPU ns on stderr (the workload's own time, without a tracer's start-up
 * and printing).
 * --threads: pong runs in a second thread of the one process instead (its
 * stack starts in clone3 and start_thread, not in _start).
 *   pingpong N [--ns] [--threads]
 */
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long cpu_ns(const struct timeval *tv)
{
	return tv->tv_sec * 1000000000LL + tv->tv_usec * 1000LL;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Reads one byte from IN and writes it to OUT, N times (the child). */
__attribute__((noinline)) static int pong(int in, int out, long n)
{
	char b;
	for (long i = 0; i < n; i++)
		if (read(in, &b, 1) != 1 || write(out, &b, 1) != 1)
			return 1;
	return 0;
}

/* Writes one byte to OUT and waits for it on IN, N times (the parent). */
__attribute__((noinline)) static int ping(int in, int out, long n)
{
	char b = 'x';
	for (long i = 0; i < n; i++)
		if (write(out, &b, 1) != 1 || read(in, &b, 1) != 1)
			return 1;
	return 0;
}

static int there[2], back[2];
static long trips;

/* The second thread's body: pong's side */
static void *pong_thread(void *arg)
{
	(void)arg;
	return (void *)(long)pong(there[0], back[1], trips);
}

static bool has_arg(int argc, char **argv, const char *arg)
{
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], arg) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	int st;
	if (argc < 2 || pipe(there) < 0 || pipe(back) < 0) {
		fprintf(stderr, "usage: pingpong N [--ns] [--threads]\n");
		return 2;
	}
	trips = atol(argv[1]);
	bool threads = has_arg(argc, argv, "--threads");
	pthread_t th;
	pid_t pid = threads ? 0 : fork();
	if (pid < 0 || (threads && pthread_create(&th, NULL, pong_thread, NULL) != 0))
		return 1;
	if (pid == 0 && !threads)
		_exit(pong(there[0], back[1], trips));
	long long t0 = now_ns();
	int ret = ping(back[0], there[1], trips);
	long long t1 = now_ns();
	void *res = NULL;
	if (threads ? pthread_join(th, &res) != 0 || res != NULL :
	    waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		ret = 1;
	if (has_arg(argc, argv, "--ns")) {
		/* both sides' CPU (the child is reaped; a thread is the
		 * process's own): a tracer's is the whole command's less this */
		struct rusage self, child;
		getrusage(RUSAGE_SELF, &self);
		getrusage(RUSAGE_CHILDREN, &child);
		fprintf(stderr, "pingpong: %lld ns, %lld ns cpu\n", t1 - t0,
			cpu_ns(&self.ru_utime) + cpu_ns(&self.ru_stime) +
			cpu_ns(&child.ru_utime) + cpu_ns(&child.ru_stime));
	}
	return ret;
}
