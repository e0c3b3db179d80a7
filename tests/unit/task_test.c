/* task/command.c: the -c child started, released, reaped and stopped, its
 * exit status kept, a command that does not exist refused. Needs no
 * kernel state. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "task/task.h"
#include "tests/unit/check.h"

static void test_child(void)
{
	struct ft_child c = { 0 };
	char *t[] = { "true", NULL }, *f[] = { "sh", "-c", "exit 3", NULL };
	char *missing[] = { "/nonexistent/ftstack-no-such-command", NULL };
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	CHECK(ft_child_start(t, true, &c) == 0 && ft_child_release(&c) == 0, "-c true: started and released");
	for (int i = 0; i < 500 && !ft_child_reap(&c); i++)
		usleep(10000);
	CHECK(!c.running && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0, "true exits 0");
	ft_child_stop(&c);
	c = (struct ft_child){ 0 };
	CHECK(ft_child_start(f, true, &c) == 0 && ft_child_release(&c) == 0, "-c 'sh -c \"exit 3\"'");
	for (int i = 0; i < 500 && !ft_child_reap(&c); i++)
		usleep(10000);
	CHECK(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 3, "its exit status is kept (3)");
	ft_child_stop(&c);
	c = (struct ft_child){ 0 };
	CHECK(ft_child_start(missing, true, &c) == -EINVAL, "a command that does not exist: -EINVAL");
}

int main(void)
{
	test_child();
	CHECK_DONE();
}
