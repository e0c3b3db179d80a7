/* The event loop: one epoll over every ring, a signalfd (INT, TERM, HUP,
 * CHLD), a timerfd for the duration and one for -i intervals. Signals are
 * blocked and read from the fd, so the result is printed from ordinary code,
 * never from a handler. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "collector/session.h"
#include "source/source.h"

enum { TAG_SIGNAL = 1, TAG_DURATION, TAG_INTERVAL, TAG_SETTLE };
#define HUNG_RING_POLL_MS 100
/* Python's interpreter frames (and the process's mappings, to know it is
 * one) are read from the process when its sample is (python/), and not
 * later than PY_MAX_AGE_NS after it, so a run that walks user stacks
 * drains the rings this often, not only when a quarter of a ring has
 * filled (at -F 99 with 64 KB copies, 2.6 s); once a Python process is
 * seen, every millisecond (profile also wakes at each sample) */
#define PYTHON_POLL_MS 5
#define PYTHON_ACTIVE_POLL_MS 1
#define SETTLE_SECS 0.2
/* how far a record's time may trail the newest one read from another CPU
 * and still be unread (the time is taken just before the record is written) */
#define SETTLE_MARGIN_NS 1000000ull
static int tags[5]; /* their addresses are the epoll cookies */

static int add_fd(int epfd, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tags[tag] };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int timer_open(double secs, bool repeat)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct itimerspec its = { 0 };
	its.it_value.tv_sec = (time_t)secs;
	its.it_value.tv_nsec = (long)((secs - (double)(time_t)secs) * 1e9);
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	if (repeat)
		its.it_interval = its.it_value;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/* Returns true when the run should end: a signal to end, or T's command
 * exited. */
static bool on_signal(struct ft_traced *t, int sfd)
{
	struct signalfd_siginfo si;
	bool end = false;
	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (t->have_child && ft_child_reap(&t->child)) {
				ft_debug("command exited");
				end = true;
			}
		} else {
			end = true; /* INT, TERM, HUP: the result is printed all the same */
		}
	}
	return end;
}

/* Reads every ring; offcpu then pairs the switches older than the newest
 * record read before: every CPU's records up to that time are in now. */
static int drain_and_settle(struct ft_session *s)
{
	uint64_t seen = s->last_time;
	int ret = ft_sources_drain_all(&s->src);
	if (ret == 0 && seen > SETTLE_MARGIN_NS) {
		ft_session_drained(s, seen - SETTLE_MARGIN_NS);
		if (s->offcpu)
			ft_offcpu_settle(s->offcpu, seen - SETTLE_MARGIN_NS);
	}
	return ret;
}

static int on_timer(struct ft_session *s, int tfd, bool print)
{
	uint64_t n;
	if (read(tfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -errno;
	int ret = drain_and_settle(s);
	if (ret == 0 && print) {
		ft_sink_interval(s); /* queued before the table is reset */
		ret = ft_print_interval(s);
		ft_session_forget(s); /* what the interval named */
	}
	return ret;
}

/* Enough tasks exited since the last sweep: every ring is read, so their
 * last records are in, and those no counted stack needs are forgotten. */
static int sweep(struct ft_session *s)
{
	int ret = drain_and_settle(s);
	if (ret == 0)
		ft_session_forget(s);
	return ret;
}

/* A perf ring hung up (its task and every inherited child exited): other
 * threads may still write into it, and the task may still be on its way
 * out, so every ring is drained and the targets looked for on each poll
 * timeout from now on. Returns 1 when none of the -p/-L tasks is left (the
 * run can end), 0 when some are, or -errno. */
static int ring_hangup(struct ft_session *s, void *cookie, int epfd)
{
	int ret = ft_perf_source_hangup(s->src.perf, cookie, epfd);
	if (ret < 0)
		return ret;
	s->poll_rings = true;
	return ft_session_targets_gone(s);
}

int ft_loop_run(struct ft_session *s, int epfd)
{
	sigset_t mask;
	int sfd = -1, dfd = -1, ifd = -1, tfd = -1, ret = 0;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0 || (ret = add_fd(epfd, sfd, TAG_SIGNAL)) < 0)
		goto cleanup;
	if (s->opt->duration > 0) {
		if ((dfd = timer_open(s->opt->duration, false)) < 0 ||
		    (ret = add_fd(epfd, dfd, TAG_DURATION)) < 0) {
			ret = dfd < 0 ? dfd : ret;
			goto cleanup;
		}
	}
	if (s->opt->interval > 0) {
		if ((ifd = timer_open(s->opt->interval, true)) < 0 ||
		    (ret = add_fd(epfd, ifd, TAG_INTERVAL)) < 0) {
			ret = ifd < 0 ? ifd : ret;
			goto cleanup;
		}
	}
	if (s->offcpu) {
		if ((tfd = timer_open(SETTLE_SECS, true)) < 0 ||
		    (ret = add_fd(epfd, tfd, TAG_SETTLE)) < 0) {
			ret = tfd < 0 ? tfd : ret;
			goto cleanup;
		}
	}
	/* the targets' pidfds say when they exit; where the kernel has none
	 * (threads before 6.9), and with no perf ring to hang up (--backend
	 * ftrace -K), look on a timeout too */
	if ((ret = ft_targets_watch(&s->traced.targets, epfd)) < 0)
		goto cleanup;
	for (int i = 0; i < s->traced.targets.n; i++)
		if (s->traced.targets.t[i].fd < 0 || !s->src.perf)
			s->poll_rings = true;
	/* the command may have exited before the signalfd existed */
	bool end = s->traced.have_child && ft_child_reap(&s->traced.child);
	while (!end) {
		struct epoll_event evs[64];
		int ended = 0;
		int n = epoll_wait(epfd, evs, 64, s->poll_rings ? HUNG_RING_POLL_MS :
					py_reader_active(s->ustacks.py) ? PYTHON_ACTIVE_POLL_MS :
					s->ustacks.py ? PYTHON_POLL_MS : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0 && (ret = ft_perf_source_drain_all(s->src.perf)) < 0)
			break;
		if (n == 0)
			ended = ft_session_targets_gone(s);
		for (int i = 0; i < n && ret == 0; i++) {
			void *c = evs[i].data.ptr;
			if (c == &tags[TAG_SIGNAL])
				end |= on_signal(&s->traced, sfd);
			else if (c == &tags[TAG_DURATION])
				end = true;
			else if (c == &tags[TAG_INTERVAL])
				ret = on_timer(s, ifd, true);
			else if (c == &tags[TAG_SETTLE])
				ret = on_timer(s, tfd, false);
			else if (ft_targets_owns(&s->traced.targets, c))
				ended = ft_targets_exited(&s->traced.targets, c, epfd) &&
					!s->traced.have_child;
			else if (ft_perf_source_owns(s->src.perf, c) && (evs[i].events & EPOLLHUP))
				ended = ret = ring_hangup(s, c, epfd);
			else if (ft_perf_source_owns(s->src.perf, c))
				ret = ft_perf_source_ready(s->src.perf, c);
			else if (ft_ftrace_source_owns(s->src.ftrace, c))
				ret = ft_ftrace_source_ready(s->src.ftrace, c);
			else if (ft_ksyms_owns(&s->kernel, c))
				ft_session_kernel_wait(s); /* done: counts what waited */
		}
		if (ret == 0 && !end && ft_session_forget_due(s))
			ret = sweep(s);
		if (ret < 0)
			break;
		if (ended) {
			ft_warn("the traced %s exited",
				s->opt->npids ? "processes" : "threads");
			end = true;
			ret = 0;
		}
	}
cleanup:
	if (sfd < 0 && ret == 0)
		ret = -errno;
	if (tfd >= 0)
		close(tfd);
	if (ifd >= 0)
		close(ifd);
	if (dfd >= 0)
		close(dfd);
	if (sfd >= 0)
		close(sfd);
	return ret;
}
