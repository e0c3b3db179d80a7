/* The processes of -p and the threads of -L, each held by a pidfd for the
 * whole run. A pid number is only a name: once its process exits the number
 * can be given to another (pid_max is 32768 on many hosts, and busy ones go
 * round in minutes), so "is PID still running" asked by number can keep a
 * run going for a stranger. A pidfd stays bound to the process it was
 * opened for and becomes readable when that process has exited: the loop
 * watches it, and the run ends once every target's has fired. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "task/task.h"
#include "cli/cli.h"
#include "host/host.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd for one thread */
#endif

/* pidfd_open(ID). Returns the fd, -1 where the kernel has no pidfd for it
 * (before 5.3, or a thread before 6.9), or -ESRCH. */
static int open_pidfd(pid_t id, bool thread)
{
	int fd = (int)syscall(SYS_pidfd_open, id, thread ? PIDFD_THREAD : 0);
	if (fd >= 0)
		return fd;
	/* no pidfd here: existence by kill(), liveness by /proc */
	if (errno != ESRCH && (kill(id, 0) == 0 || errno != ESRCH))
		return -1;
	return -ESRCH;
}

static int add(struct ft_targets *t, pid_t id, bool thread)
{
	int fd = open_pidfd(id, thread);
	if (fd == -ESRCH) {
		ft_error("%s %d: no such %s (see ps -e%s)", thread ? "-L" : "-p", (int)id,
			 thread ? "thread" : "process", thread ? "L" : "");
		return -ESRCH;
	}
	struct host_stat st;
	bool kthread = host_stat("/proc", id, &st) == 0 && (st.flags & HOST_PF_KTHREAD);
	t->t[t->n++] = (struct ft_target){ .id = id, .fd = fd, .thread = thread, .kthread = kthread };
	return 0;
}

int ft_targets_open(struct ft_targets *t, const struct ft_options *o)
{
	int ret = 0;
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < o->npids && ret == 0; i++)
		ret = add(t, o->pids[i], false);
	for (int i = 0; i < o->ntids && ret == 0; i++)
		ret = add(t, o->tids[i], true);
	return ret;
}

int ft_targets_kernel_threads(const struct ft_targets *t)
{
	int n = 0;
	for (int i = 0; i < t->n; i++)
		n += t->t[i].kthread;
	return n;
}

/* True while target T has not exited (by its pidfd, else by /proc). */
static bool target_runs(const struct ft_target *t)
{
	if (t->gone)
		return false;
	if (t->fd < 0)
		return host_task_running("/proc", t->id);
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	return poll(&p, 1, 0) == 0;
}

bool ft_targets_alive(const struct ft_targets *t)
{
	for (int i = 0; i < t->n; i++)
		if (target_runs(&t->t[i]))
			return true;
	return false;
}

int ft_targets_watch(struct ft_targets *t, int epfd)
{
	for (int i = 0; i < t->n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &t->t[i] };
		if (t->t[i].fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, t->t[i].fd, &ev) < 0)
			return -errno;
	}
	return 0;
}

bool ft_targets_owns(const struct ft_targets *t, const void *cookie)
{
	return t->n && cookie >= (const void *)&t->t[0] && cookie < (const void *)&t->t[t->n];
}

bool ft_targets_exited(struct ft_targets *t, void *cookie, int epfd)
{
	struct ft_target *x = cookie;
	/* level-triggered and readable from now on: out of the loop's set */
	epoll_ctl(epfd, EPOLL_CTL_DEL, x->fd, NULL);
	x->gone = true;
	ft_debug("%s %d exited", x->thread ? "thread" : "process", (int)x->id);
	return !ft_targets_alive(t);
}

void ft_targets_close(struct ft_targets *t)
{
	for (int i = 0; i < t->n; i++)
		if (t->t[i].fd >= 0)
			close(t->t[i].fd);
	t->n = 0;
}
