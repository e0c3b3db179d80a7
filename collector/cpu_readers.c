/* The readers pinned on each CPU: see cpu_readers.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "collector/cpu_readers.h"
#include "host/host.h"

int ft_cpu_readers_init(struct ft_cpu_readers *c, ft_cpu_read_fn read, ft_cpu_watch_fn watch,
			void *ctx, uint64_t slice_ns)
{
	pthread_mutexattr_t a;
	*c = (struct ft_cpu_readers){ .stop_fd = -1, .ended_fd = -1, .read = read,
				      .watch = watch, .ctx = ctx, .slice_ns = slice_ns };
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	if (pthread_mutex_init(&c->lock, &a) != 0)
		pthread_mutex_init(&c->lock, NULL); /* no PI futexes: a plain one */
	pthread_mutexattr_destroy(&a);
	c->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->ended_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return c->stop_fd < 0 || c->ended_fd < 0 ? -errno : 0;
}

int ft_cpu_readers_ended_fd(const struct ft_cpu_readers *c)
{
	return c->ended_fd;
}

int ft_cpu_readers_error(struct ft_cpu_readers *c)
{
	return atomic_load(&c->err);
}

void ft_cpu_readers_lock(struct ft_cpu_readers *c)
{
	pthread_mutex_lock(&c->lock);
}

void ft_cpu_readers_unlock(struct ft_cpu_readers *c)
{
	pthread_mutex_unlock(&c->lock);
}

static void signal_fd(int fd)
{
	uint64_t one = 1;
	ssize_t w = write(fd, &one, sizeof(one));
	(void)w; /* an eventfd takes it unless it is at its maximum: set already */
}

/* Waits on R's ring and reads each time it wakes, until stopped, the
 * ring hangs up or a read fails. Returns 0 or the read's -errno. */
static int read_loop(struct ft_cpu_reader *r)
{
	struct ft_cpu_readers *c = r->set;
	struct pollfd p[2] = { { .fd = r->fd, .events = POLLIN },
			       { .fd = c->stop_fd, .events = POLLIN } };
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents)
			return 0;
		ft_cpu_readers_lock(c);
		int ret = c->read(c->ctx);
		ft_cpu_readers_unlock(c);
		r->wakes++;
		if (ret < 0)
			return ret;
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			return 0; /* given back: the loop sees the hang-up and acts on it */
	}
}

static void *reader_main(void *arg)
{
	struct ft_cpu_reader *r = arg;
	struct ft_cpu_readers *c = r->set;
	/* a CPU outside this thread's cpuset: the loop keeps reading its ring */
	if (host_sched_run_on((uint32_t)r->cpu) < 0)
		return NULL;
	if (host_sched_realtime() == 0)
		atomic_fetch_add(&c->fifo, 1);
	else
		host_sched_short_slice(c->slice_ns); /* best effort: a read may wait a slice */
	ft_cpu_readers_lock(c);
	int ret = c->watch(c->ctx, r->cpu, false);
	ft_cpu_readers_unlock(c);
	if (ret < 0)
		return NULL;
	ret = read_loop(r);
	ft_cpu_readers_lock(c);
	c->watch(c->ctx, r->cpu, true);
	ft_cpu_readers_unlock(c);
	if (ret < 0) {
		int none = 0;
		atomic_compare_exchange_strong(&c->err, &none, ret);
		signal_fd(c->ended_fd);
	}
	return NULL;
}

int ft_cpu_readers_start(struct ft_cpu_readers *c, const int *cpus, const int *fds, int n)
{
	if (c->r)
		return 0;
	c->r = calloc((size_t)n, sizeof(*c->r));
	if (!c->r)
		return -ENOMEM;
	c->n = n;
	/* signals are the loop's (its signalfd): none is delivered to these */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int ret = 0;
	for (int i = 0; i < n && ret == 0; i++) {
		struct ft_cpu_reader *r = &c->r[i];
		*r = (struct ft_cpu_reader){ .set = c, .cpu = cpus[i], .fd = fds[i] };
		ret = -pthread_create(&r->thread, NULL, reader_main, r);
		r->started = ret == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

bool ft_cpu_readers_started(const struct ft_cpu_readers *c)
{
	return c->r != NULL;
}

uint64_t ft_cpu_readers_stop(struct ft_cpu_readers *c)
{
	uint64_t wakes = 0;
	if (!c->r)
		return 0;
	signal_fd(c->stop_fd);
	for (int i = 0; i < c->n; i++)
		if (c->r[i].started) {
			pthread_join(c->r[i].thread, NULL);
			c->r[i].started = false;
			wakes += c->r[i].wakes;
		}
	return wakes;
}

void ft_cpu_readers_destroy(struct ft_cpu_readers *c)
{
	ft_cpu_readers_stop(c);
	free(c->r);
	c->r = NULL;
	if (c->stop_fd >= 0)
		close(c->stop_fd);
	if (c->ended_fd >= 0)
		close(c->ended_fd);
	c->stop_fd = c->ended_fd = -1;
	pthread_mutex_destroy(&c->lock);
}
