/* perfev_close_behind (perfev/close_behind.c), with pipes for events: the
 * child it forks lets go of every other fd at once, keeps the given ones
 * while its parent lives, lets go of them when the parent exits, and is
 * named ftstack-close. This process is the subreaper, so the child comes
 * back here to be reaped. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfev/perfev.h"
#include "tests/unit/check.h"

/* true when FD (a pipe's read end) reads end-of-file within MS */
static bool eof_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;
	return poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 0;
}

/* The parent under test: hands EV_W to a closer, closes its own copies of
 * EV_W and OTHER_W, says so on READY_W and waits for GO_R before exiting. */
static void parent(int ev_w, int other_w, int ready_w, int go_r)
{
	char c = perfev_close_behind(&ev_w, 1) == 0 ? 'y' : 'n';
	close(ev_w);
	close(other_w);
	if (write(ready_w, &c, 1) != 1)
		_exit(2);
	while (read(go_r, &c, 1) > 0)
		;
	_exit(0);
}

/* the name of PID's one child (/proc's children list), or "" */
static void child_name(pid_t pid, char *name, size_t len)
{
	char path[96];
	int child = 0;
	name[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(path, "r");
	if (!f || fscanf(f, "%d", &child) != 1) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/comm", child);
	if ((f = fopen(path, "r"))) {
		if (fgets(name, (int)len, f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
	}
}

int main(void)
{
	int ev[2], other[2], ready[2], go[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(20); /* a closer that never exits fails the test, not the suite */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe(ev) || pipe(other) || pipe(ready) || pipe(go))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(ev[0]);
		close(other[0]);
		close(ready[0]);
		close(go[1]);
		parent(ev[1], other[1], ready[1], go[0]);
	}
	close(ev[1]);
	close(other[1]);
	close(ready[1]);
	close(go[0]);
	char c = 0;
	CHECK(read(ready[0], &c, 1) == 1 && c == 'y', "a child took the fds");
	CHECK(eof_within(other[0], 2000), "the child let go of another fd at once");
	CHECK(!eof_within(ev[0], 300), "the child keeps the given fd while its parent lives");
	char name[32], path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (access(path, R_OK) != 0) {
		SKIP("no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)", "the child's name");
	} else {
		child_name(pid, name, sizeof(name));
		CHECK_STR(name, "ftstack-close", "the child's name");
	}
	close(go[1]);
	waitpid(pid, NULL, 0);
	CHECK(eof_within(ev[0], 2000), "the given fd is let go of once the parent exited");
	int reaped = 0;
	while (waitpid(-1, NULL, 0) > 0)
		reaped++;
	CHECK(reaped == 1, "the child exited (reaped %d)", reaped);
	CHECK_DONE();
}
