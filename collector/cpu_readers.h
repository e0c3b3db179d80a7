/* cpu_readers: a thread pinned on each CPU, waiting on that CPU's ring,
 * that reads when its ring wakes it, under one lock shared with the loop.
 *
 * Why: profile reads a Python sample's frames out of the process while the
 * sampled thread still runs them (python/, PY_MAX_AGE_NS). A sample wakes
 * its reader from the CPU it was taken on; one reader on another CPU,
 * idle, is woken by an interrupt that a VM's host may deliver tens of
 * milliseconds late (the target having moved to the other CPU: 8 samples
 * of 786 refused as late in one run). A reader on the sample's own CPU is
 * woken there at once and, under SCHED_FIFO (or short slices), runs before
 * the sampled thread does again. */
#ifndef FTSTACK_CPU_READERS_H
#define FTSTACK_CPU_READERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Called with the lock held, on the thread of the CPU whose ring woke:
 * reads every ring. Returns 0 or -errno (the threads then end). */
typedef int (*ft_cpu_read_fn)(void *ctx);
/* Called with the lock held: the loop stops (WATCH false) or starts again
 * (true) waiting on the ring of CPU, which a thread takes or gives back
 * (ended, or refused that CPU). Returns 0 or -errno. */
typedef int (*ft_cpu_watch_fn)(void *ctx, int cpu, bool watch);

struct ft_cpu_reader {
	pthread_t thread;
	struct ft_cpu_readers *set;
	int cpu, fd;
	bool started;
	uint64_t wakes;         /* reads it made (read after the join) */
};

struct ft_cpu_readers {
	pthread_mutex_t lock;   /* priority-inheriting: a SCHED_FIFO reader may wait on it */
	int stop_fd;            /* an eventfd: set, the threads end */
	int ended_fd;           /* an eventfd the loop waits on: a thread ended on its own */
	struct ft_cpu_reader *r;
	int n;
	ft_cpu_read_fn read;
	ft_cpu_watch_fn watch;
	void *ctx;
	uint64_t slice_ns;      /* asked for where SCHED_FIFO is refused */
	atomic_int err;         /* the first error a thread's read returned */
	atomic_int fifo;        /* threads that run under SCHED_FIFO */
};

/* C with its lock and eventfds, no thread: READ and WATCH(CTX) are what
 * the threads will call, SLICE_NS their slices without SCHED_FIFO.
 * Returns 0 or -errno (C then needs only ft_cpu_readers_destroy). */
int ft_cpu_readers_init(struct ft_cpu_readers *c, ft_cpu_read_fn read, ft_cpu_watch_fn watch,
			void *ctx, uint64_t slice_ns);
/* The eventfd that becomes readable when a thread ended on its own (its
 * read failed, its ring hung up, its CPU was refused): the loop then
 * looks at ft_cpu_readers_error. */
int ft_cpu_readers_ended_fd(const struct ft_cpu_readers *c);
/* The first error a thread's read returned (0: none). */
int ft_cpu_readers_error(struct ft_cpu_readers *c);

/* Starts a thread for each of the N CPUs (CPUS[i], waiting on FDS[i]),
 * once; called with the lock held. Returns 0 or -errno (the threads that
 * started run; ft_cpu_readers_stop ends them). */
int ft_cpu_readers_start(struct ft_cpu_readers *c, const int *cpus, const int *fds, int n);
/* Whether the threads were started. */
bool ft_cpu_readers_started(const struct ft_cpu_readers *c);

void ft_cpu_readers_lock(struct ft_cpu_readers *c);
void ft_cpu_readers_unlock(struct ft_cpu_readers *c);

/* Ends the threads and waits for them; called without the lock. Their
 * rings are given back to the loop (WATCH). Returns the reads they made. */
uint64_t ft_cpu_readers_stop(struct ft_cpu_readers *c);
/* Stops what runs and frees C's lock and fds. */
void ft_cpu_readers_destroy(struct ft_cpu_readers *c);

#endif
