/* Test workload: N getppid system calls through two call paths,
 * main -> caller_a -> do_getppid (N/4 times) and main -> caller_b ->
 * do_getppid (3N/4 times). The syscall instruction is issued inline in
 * do_getppid, a frame-pointer function, so a frame-pointer walk from the
 * syscall names every caller exactly.
 *   getppid_paths N            run now
 *   getppid_paths N --wait F   block until file F exists, then run (for -p tests)
 *   getppid_paths N --ns       also print the calls' elapsed ns and the
 *                              process's CPU ns on stderr (bench/run: the
 *                              workload's own time, without the tracer's
 *                              start-up and printing)
 *   getppid_paths N --pace K MS  sleep MS ms after every K calls, so a
 *                              test can make more events than one ring
 *                              holds and still give the reader time to
 *                              drain each K (bench/held_peer steps its rate so)
 * The options may be given together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long do_getppid(void)
{
	long ret;
	/* a real frame (push rbp), which gcc skips for trivial leaves */
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) long caller_a(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += do_getppid();
	return sum;
}

__attribute__((noinline)) long caller_b(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += do_getppid();
	return sum;
}

static long long tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* FN(n) in pieces of CHUNK calls with MS ms of sleep after each; inlined,
 * so the stacks stay main -> caller_a/caller_b as without pacing. */
static inline __attribute__((always_inline)) long paced(long (*fn)(long), long n, long chunk,
							 int ms)
{
	long sum = 0;
	if (chunk <= 0)
		return fn(n);
	for (long done = 0; done < n; done += chunk) {
		sum += fn(n - done < chunk ? n - done : chunk);
		usleep((useconds_t)ms * 1000);
	}
	return sum;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: getppid_paths N [--wait FILE] [--pace K MS] [--ns]\n");
		return 2;
	}
	long n = atol(argv[1]), chunk = 0;
	int ns = 0, ms = 0;
	const char *wait = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--ns") == 0) {
			ns = 1;
		} else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			wait = argv[++i];
		} else if (strcmp(argv[i], "--pace") == 0 && i + 2 < argc) {
			chunk = atol(argv[++i]);
			ms = atoi(argv[++i]);
		} else {
			fprintf(stderr, "getppid_paths: bad option %s\n", argv[i]);
			return 2;
		}
	}
	struct stat st;
	while (wait && stat(wait, &st) != 0)
		usleep(1000);
	long a = n / 4;
	long long t0 = now_ns();
	long sum = paced(caller_a, a, chunk, ms) + paced(caller_b, n - a, chunk, ms);
	if (ns) {
		long long t1 = now_ns();
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "getppid_paths: %lld ns, %lld ns cpu\n", t1 - t0,
			tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime));
	}
	return sum == 0 ? 3 : 0;
}
