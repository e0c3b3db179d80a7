/* collector/cpu_readers.c: a thread on each CPU reads, on that CPU, when
 * its fd wakes it; it takes its fd from the loop and gives it back when
 * its fd hangs up; a failed read ends it and is said through ended_fd.
 * Pipes stand for the rings. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "collector/cpu_readers.h"
#include "tests/unit/check.h"

#define MAXC 2

struct world {
	int n, cpus[MAXC], rd[MAXC], wr[MAXC];
	int reads, fail_next;
	int read_cpu[MAXC];      /* the CPU the read that took pipe i's byte ran on */
	int taken[MAXC], given[MAXC];
};

/* what a drain of every ring does: every pipe emptied, noting where */
static int on_read(void *ctx)
{
	struct world *w = ctx;
	char b[64];
	w->reads++;
	for (int i = 0; i < w->n; i++)
		if (read(w->rd[i], b, sizeof(b)) > 0)
			w->read_cpu[i] = sched_getcpu();
	if (w->fail_next) {
		w->fail_next = 0;
		return -EIO;
	}
	return 0;
}

static int on_watch(void *ctx, int cpu, bool watch)
{
	struct world *w = ctx;
	for (int i = 0; i < w->n; i++)
		if (w->cpus[i] == cpu)
			(watch ? w->given : w->taken)[i]++;
	return 0;
}

/* Waits (at most 10 s) until *V, read under C's lock, is at least WANT. */
static bool wait_for(struct ft_cpu_readers *c, const int *v, int want)
{
	for (int ms = 0; ms < 10000; ms++) {
		ft_cpu_readers_lock(c);
		int now = *v;
		ft_cpu_readers_unlock(c);
		if (now >= want)
			return true;
		usleep(1000);
	}
	return false;
}

int main(void)
{
	struct world w = { 0 };
	cpu_set_t all;
	sched_getaffinity(0, sizeof(all), &all);
	for (int c = 0; c < CPU_SETSIZE && w.n < MAXC; c++)
		if (CPU_ISSET(c, &all)) {
			int p[2];
			if (pipe2(p, O_NONBLOCK) < 0)
				return 1;
			w.cpus[w.n] = c, w.rd[w.n] = p[0], w.wr[w.n++] = p[1];
		}
	struct ft_cpu_readers c;
	CHECK(ft_cpu_readers_init(&c, on_read, on_watch, &w, 100000) == 0 &&
	      !ft_cpu_readers_started(&c), "set up, no thread yet");
	ft_cpu_readers_lock(&c);
	CHECK(ft_cpu_readers_start(&c, w.cpus, w.rd, w.n) == 0 && ft_cpu_readers_started(&c),
	      "%d threads started", w.n);
	ft_cpu_readers_unlock(&c);
	for (int i = 0; i < w.n; i++)
		CHECK(wait_for(&c, &w.taken[i], 1), "CPU %d's fd taken from the loop", w.cpus[i]);

	/* each byte is read on the CPU whose fd it woke */
	for (int i = 0; i < w.n; i++) {
		int before = w.reads;
		w.read_cpu[i] = -1;
		CHECK(write(w.wr[i], "x", 1) == 1 && wait_for(&c, &w.reads, before + 1) &&
		      w.read_cpu[i] == w.cpus[i],
		      "a wake-up on CPU %d's fd read there (on %d)", w.cpus[i], w.read_cpu[i]);
	}

	/* the last fd hangs up: its thread reads once more and gives it back */
	int last = w.n - 1;
	close(w.wr[last]);
	CHECK(wait_for(&c, &w.given[last], 1) && ft_cpu_readers_error(&c) == 0,
	      "CPU %d's fd hung up: given back to the loop, no error", w.cpus[last]);

	/* a read that fails ends its thread and is said */
	if (w.n > 1) {
		struct pollfd p = { .fd = ft_cpu_readers_ended_fd(&c), .events = POLLIN };
		CHECK(poll(&p, 1, 0) == 0, "ended_fd quiet while no read failed");
		ft_cpu_readers_lock(&c);
		w.fail_next = 1;
		ft_cpu_readers_unlock(&c);
		CHECK(write(w.wr[0], "x", 1) == 1 && poll(&p, 1, 10000) == 1 &&
		      ft_cpu_readers_error(&c) == -EIO && wait_for(&c, &w.given[0], 1),
		      "a failed read: ended_fd readable, -EIO kept, the fd given back");
	} else {
		SKIP("one CPU here", "a failed read on a second CPU's thread");
	}
	uint64_t wakes = ft_cpu_readers_stop(&c);
	CHECK(wakes == (uint64_t)w.reads, "stopped: %" PRIu64 " wakes, the %d reads", wakes,
	      w.reads);
	ft_cpu_readers_destroy(&c);
	CHECK_DONE();
}
