/* collector/targets.c: -p processes held by pidfd. A child of this test is
 * the target; its exit must be seen through the pidfd (by epoll and by
 * ft_targets_alive) even after its pid number could name another process,
 * and a pid that does not exist is refused after the patience. */
#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "collector/session.h"

static pid_t start_child(int *release)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		(void)!read(p[0], &c, 1); /* until the test lets it go */
		_exit(0);
	}
	close(p[0]);
	*release = p[1];
	return pid;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	struct ft_options o = { 0 };
	struct ft_targets t;
	int release = -1;
	pid_t child = start_child(&release);
	CHECK(child > 0, "a child to trace");
	o.pids[o.npids++] = child;
	CHECK(ft_targets_open(&t, &o) == 0, "-p CHILD opens");
	CHECK(t.n == 1 && t.t[0].fd >= 0, "held by a pidfd");
	CHECK(ft_targets_alive(&t), "alive while it waits");
	uint64_t since = 0;
	CHECK(ft_targets_retry(&t, child, &since), "ESRCH for a running target: asked again");
	CHECK(!ft_targets_retry(&t, child + 100000, &since), "not for a pid that is no target");

	int epfd = epoll_create1(0);
	CHECK(ft_targets_watch(&t, epfd) == 0, "watched by epoll");
	struct epoll_event ev;
	CHECK(epoll_wait(epfd, &ev, 1, 0) == 0, "no event while it runs");
	close(release); /* it exits; not reaped yet: a zombie has exited too */
	int n = epoll_wait(epfd, &ev, 1, 10000);
	CHECK(n == 1 && ft_targets_owns(&t, ev.data.ptr), "its exit wakes the loop");
	CHECK(n == 1 && ft_targets_exited(&t, ev.data.ptr, epfd), "no target runs any more");
	CHECK(epoll_wait(epfd, &ev, 1, 0) == 0, "taken out of the set once fired");
	CHECK(!ft_targets_alive(&t), "not alive after its exit");
	waitpid(child, NULL, 0);
	since = 0;
	CHECK(!ft_targets_retry(&t, child, &since), "ESRCH for an exited target is believed");
	ft_targets_close(&t);
	close(epfd);

	/* a pid past any pid_max: refused, after the patience */
	struct ft_options none = { 0 };
	none.pids[none.npids++] = 0x3fffffff;
	double t0 = now_s();
	CHECK(ft_targets_open(&t, &none) == -ESRCH, "-p of no process: -ESRCH");
	double waited = now_s() - t0;
	CHECK(waited >= FT_TARGET_PATIENCE_MS / 1000.0 * 0.9, "asked again for the patience (%.2f s)",
	      waited);
	ft_targets_close(&t);
	CHECK_DONE();
}
