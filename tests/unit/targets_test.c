/* task/targets.c: -p processes held by pidfd. A child of this test is
 * the target; its exit must be seen through the pidfd (by epoll and by
 * ft_targets_alive) even after its pid number could name another process,
 * and a pid that does not exist is refused. */
#include <stdlib.h>
#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/cli.h"
#include "task/task.h"
#include "tests/unit/check.h"

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

int main(void)
{
	struct ft_options o = { 0 };
	struct ft_targets t;
	int release = -1;
	if (getenv("FTSTACK_UNDER_VALGRIND")) { /* set by tests/valgrind/run */
		SKIP("valgrind does not emulate pidfd_open", "-p targets held by pidfds");
		return 0;
	}
	pid_t child = start_child(&release);
	CHECK(child > 0, "a child to trace");
	o.pids[o.npids++] = child;
	CHECK(ft_targets_open(&t, &o) == 0, "-p CHILD opens");
	CHECK(t.n == 1 && t.t[0].fd >= 0, "held by a pidfd");
	CHECK(ft_targets_alive(&t), "alive while it waits");

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
	CHECK(!ft_targets_alive(&t), "nor once reaped");
	ft_targets_close(&t);
	close(epfd);

	/* a pid past any pid_max, and the child just reaped: refused */
	struct ft_options none = { 0 };
	none.pids[none.npids++] = 0x3fffffff;
	CHECK(ft_targets_open(&t, &none) == -ESRCH, "-p of no process: -ESRCH");
	ft_targets_close(&t);
	none.pids[0] = child;
	CHECK(ft_targets_open(&t, &none) == -ESRCH, "-p of a reaped child: -ESRCH");
	ft_targets_close(&t);
	CHECK_DONE();
}
