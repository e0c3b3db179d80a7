/* The event loop: one epoll over every ring, a signalfd (INT, TERM, HUP,
 * CHLD), a timerfd for the duration and one for -i intervals; once profile
 * reads Python frames, the rings are waited on by a thread on each CPU
 * instead (cpu_readers.h), and the loop and they take turns by a lock.
 * Signals are blocked and read from the fd, so the result is printed from
 * ordinary code, never from a handler. A cookie that is none of the loop's own nor a
 * target's goes to the sources' dispatcher (source/source.c), which knows
 * the backends. */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "collector/cpu_readers.h"
#include "collector/session.h"
#include "source/source.h"

enum { TAG_SIGNAL = 1, TAG_DURATION, TAG_INTERVAL, TAG_SETTLE, TAG_READERS };
#define HUNG_RING_POLL_MS 100
/* Python's interpreter frames (and the process's mappings, to know it is
 * one) are read from the process when its sample is (python/), and not
 * later than PY_MAX_AGE_NS after it, so a run that walks user stacks
 * drains the rings this often, not only when a quarter of a ring has
 * filled (at -F 99 with 64 KB copies, 2.6 s); while a process whose
 * Python frames were read lives, every millisecond (a thousand wake-ups a
 * second, ~15 us each on this project's VM: not for the rest of a run
 * once its Python has exited). Not profile: each sample wakes it
 * (ustacks.follow), and a timeout would only cost wake-ups (a thousand a
 * second took half of ftstack's CPU at -F 99, bench/python_ab) */
#define PYTHON_POLL_MS 5
#define PYTHON_ACTIVE_POLL_MS 1
#define SETTLE_SECS 0.2
/* how far a record's time may trail the newest one read from another CPU
 * and still be unread (the time is taken just before the record is written) */
#define SETTLE_MARGIN_NS 1000000ull
static int tags[6]; /* their addresses are the epoll cookies */

/* How long the loop may wait with no ring waking it (-1: for ever) */
static int poll_ms(const struct ft_session *s)
{
	if (s->poll_rings)
		return HUNG_RING_POLL_MS;
	if (!s->ustacks.py || s->ustacks.follow)
		return -1; /* profile: each sample wakes it */
	return py_reader_active(s->ustacks.py) ? PYTHON_ACTIVE_POLL_MS : PYTHON_POLL_MS;
}

static int add_fd(int epfd, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tags[tag] };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* Opens a timerfd that fires after SECS (and every SECS when REPEAT) and
 * adds it to EPFD under TAG; its fd into *FD. Returns 0 or -errno (*FD
 * then -1 or the fd to close). */
static int timer_add(int epfd, double secs, bool repeat, int tag, int *fd)
{
	*fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (*fd < 0)
		return -errno;
	struct itimerspec its = { 0 };
	its.it_value.tv_sec = (time_t)secs;
	its.it_value.tv_nsec = (long)((secs - (double)(time_t)secs) * 1e9);
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	if (repeat)
		its.it_interval = its.it_value;
	if (timerfd_settime(*fd, 0, &its, NULL) < 0)
		return -errno;
	return add_fd(epfd, *fd, tag);
}

void ft_loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGHUP);
	sigaddset(mask, SIGCHLD);
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

/* Offcpu pairs the switches older than SEEN, the newest record read
 * before every ring was drained: every CPU's records up to that time are
 * in now. At most once a SETTLE_MARGIN_NS of trace time: a settle visits
 * every thread followed, and a ring may wake the loop at each record. */
static void settle(struct ft_session *s, uint64_t seen)
{
	if (!s->offcpu || seen < s->settled + 2 * SETTLE_MARGIN_NS)
		return;
	s->settled = seen - SETTLE_MARGIN_NS;
	ft_offcpu_settle(s->offcpu, s->settled);
}

/* Reads every ring, settles offcpu's switches and lets the session forget
 * what the drain has passed. */
static int drain_and_settle(struct ft_session *s)
{
	uint64_t seen = s->last_time;
	int ret = ft_sources_drain_all(&s->src);
	if (ret == 0 && seen > SETTLE_MARGIN_NS) {
		ft_session_drained(s, seen - SETTLE_MARGIN_NS);
		settle(s, seen);
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

/* The fds the loop waits on besides the sources' and the targets', and
 * profile's readers on each CPU (Python frames). */
struct loop {
	struct ft_session *s;
	int epfd;
	int sfd, dfd, ifd, tfd; /* signals, duration, interval, offcpu's settling; -1: none */
	struct ft_cpu_readers readers;
};

/* A reader's wake-up (cpu_readers.h): what a ring's is to the loop, a
 * sweep when one is due (it drains the rings too). */
static int read_rings(void *ctx)
{
	struct ft_session *s = ((struct loop *)ctx)->s;
	return ft_session_forget_due(s) ? sweep(s) : ft_sources_drain_all(&s->src);
}

static int watch_ring(void *ctx, int cpu, bool watch)
{
	struct loop *l = ctx;
	return ft_perf_source_watch(l->s->src.perf, cpu, l->epfd, watch);
}

/* When profile may read Python frames, the rings are read by a thread on
 * each CPU (cpu_readers.h), woken on the CPU of each sample, from the
 * run's start: started at the first Python sample, they came too late
 * where the traced processes keep every CPU busy, the loop (not
 * SCHED_FIFO, as they are) having fallen behind before it. Called with
 * the readers' lock held; without threads the loop reads them. */
static void start_readers(struct ft_session *s, struct loop *l)
{
	int cpus[CPU_SETSIZE], fds[CPU_SETSIZE];
	if (!s->ustacks.follow || !s->ustacks.py || !s->src.perf)
		return;
	int n = ft_perf_source_rings(s->src.perf, cpus, fds, CPU_SETSIZE);
	int ret = ft_cpu_readers_start(&l->readers, cpus, fds, n);
	if (ret < 0)
		ft_debug("python: no reader thread on each CPU (%s): the rings read from any CPU",
			 strerror(-ret));
	else
		ft_debug("python: the rings read by a thread on each of %d CPUs", n);
}

/* Opens the signalfd and the timers the options ask for into L. Returns 0
 * or -errno (what was opened is in L, for close_fds). */
static int open_fds(struct ft_session *s, struct loop *l)
{
	sigset_t mask;
	int ret = ft_cpu_readers_init(&l->readers, read_rings, watch_ring, l, FT_PYTHON_SLICE_NS);
	if (ret < 0 || (ret = add_fd(l->epfd, ft_cpu_readers_ended_fd(&l->readers), TAG_READERS)) < 0)
		return ret;
	ft_loop_signals(&mask);
	l->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	ret = l->sfd < 0 ? -errno : add_fd(l->epfd, l->sfd, TAG_SIGNAL);
	if (ret == 0 && s->opt->duration > 0)
		ret = timer_add(l->epfd, s->opt->duration, false, TAG_DURATION, &l->dfd);
	if (ret == 0 && s->opt->interval > 0)
		ret = timer_add(l->epfd, s->opt->interval, true, TAG_INTERVAL, &l->ifd);
	if (ret == 0 && s->offcpu)
		ret = timer_add(l->epfd, SETTLE_SECS, true, TAG_SETTLE, &l->tfd);
	return ret;
}

static void close_fds(struct loop *l)
{
	int fifo = atomic_load(&l->readers.fifo);
	uint64_t wakes = ft_cpu_readers_stop(&l->readers);
	if (wakes)
		ft_debug("python: the readers on each CPU woke %" PRIu64 " times (%d under SCHED_FIFO)",
			 wakes, fifo);
	ft_cpu_readers_destroy(&l->readers);
	int *fds[] = { &l->tfd, &l->ifd, &l->dfd, &l->sfd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
}

/* One epoll event EV. Sets *END when the run should end (a signal, the
 * duration, the command exited) and *ENDED when the traced tasks are gone.
 * Returns 0, 1 when a ring hung up and no target is left (the rest of the
 * batch is not read: the run ends), or -errno. */
static int on_event(struct ft_session *s, struct loop *l, const struct epoll_event *ev,
		    bool *end, int *ended)
{
	void *c = ev->data.ptr;
	if (c == &tags[TAG_SIGNAL]) {
		*end |= on_signal(&s->traced, l->sfd);
		return 0;
	}
	if (c == &tags[TAG_DURATION]) {
		*end = true;
		return 0;
	}
	if (c == &tags[TAG_READERS])
		return ft_cpu_readers_error(&l->readers); /* a thread's read failed */
	if (c == &tags[TAG_INTERVAL] || c == &tags[TAG_SETTLE])
		return on_timer(s, c == &tags[TAG_INTERVAL] ? l->ifd : l->tfd,
				c == &tags[TAG_INTERVAL]);
	if (ft_targets_owns(&s->traced.targets, c)) {
		*ended = ft_targets_exited(&s->traced.targets, c, l->epfd) && !s->traced.have_child;
		return 0;
	}
	uint64_t seen = s->last_time;
	int ret = ft_sources_ready(&s->src, c, ev->events, l->epfd);
	/* a ring woke the loop and every ring was read (offcpu is perf's
	 * alone): offcpu pairs now, not at its next timer, so what waits for
	 * a switch-in is a few ms of switch-outs, whose buffers stay in the
	 * cache, not 0.2 s of them */
	if (ret == FT_SOURCE_READ)
		settle(s, seen);
	if (ret == FT_SOURCE_HUNGUP) {
		/* the task may still be on its way out and other threads may
		 * still write: the rings are drained and the targets looked for
		 * on each poll timeout from now on */
		s->poll_rings = true;
		return *ended = ft_session_targets_gone(s);
	}
	if (ret == FT_SOURCE_NOT_OURS && ft_ksyms_owns(&s->kernel, c))
		ft_session_kernel_wait(s); /* done: counts what waited */
	return ret < 0 ? ret : 0;
}

/* One wait of the loop and what it found, under the readers' lock. Sets
 * *END when the run should end. Returns 0 or -errno. */
static int step(struct ft_session *s, struct loop *l, bool *end)
{
	struct epoll_event evs[64];
	int ended = 0, ret = 0;
	int n = epoll_wait(l->epfd, evs, 64, poll_ms(s));
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	ft_cpu_readers_lock(&l->readers);
	if (n == 0 && (ret = ft_sources_poll(&s->src)) == 0)
		ended = ft_session_targets_gone(s);
	for (int i = 0; i < n && ret == 0; i++)
		ret = on_event(s, l, &evs[i], end, &ended);
	if (ret > 0)
		ret = 0; /* a ring hung up and no target is left: ended is set */
	if (ret == 0 && !*end && ft_session_forget_due(s))
		ret = sweep(s);
	ft_cpu_readers_unlock(&l->readers);
	if (ret == 0 && ended) {
		ft_warn("the traced %s exited", s->opt->npids ? "processes" : "threads");
		*end = true;
	}
	return ret;
}

int ft_loop_run(struct ft_session *s, int epfd)
{
	struct loop l = { .s = s, .epfd = epfd, .sfd = -1, .dfd = -1, .ifd = -1, .tfd = -1 };
	int ret = open_fds(s, &l);
	/* the targets' pidfds say when they exit; where the kernel has none
	 * (threads before 6.9), and with no perf ring to hang up (--backend
	 * ftrace -K), look on a timeout too */
	if (ret < 0 || (ret = ft_targets_watch(&s->traced.targets, epfd)) < 0)
		goto cleanup;
	for (int i = 0; i < s->traced.targets.n; i++)
		if (s->traced.targets.t[i].fd < 0 || !s->src.perf)
			s->poll_rings = true;
	ft_cpu_readers_lock(&l.readers);
	start_readers(s, &l);
	ft_cpu_readers_unlock(&l.readers);
	/* the command may have exited before the signalfd existed */
	bool end = s->traced.have_child && ft_child_reap(&s->traced.child);
	while (!end && ret == 0)
		ret = step(s, &l, &end);
cleanup:
	close_fds(&l);
	return ret;
}
