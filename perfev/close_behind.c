/* perfev: closing events after this process is gone. The last close of a
 * tracepoint's or probe's events unregisters it, and the kernel waits
 * out RCU grace periods first: 40-70 ms on this project's VM, after the
 * result is printed, a wait the user gets nothing for. A child holding
 * copies of the fds makes this process's own closes cheap; the child
 * lets go of everything else at once (stdio, so a pipe's reader sees
 * its end; sockets; files) and of the events when this process exits,
 * so the kernel's wait is the child's. The events are disabled by then:
 * nothing is recorded in the meantime. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "perfev/perfev.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The child: keeps the fds of KEEP[0..N) (ascending), closes the rest,
 * waits for end-of-file on WAIT_FD (this process's exit), then exits,
 * which closes the events. Only system calls: the parent may have had
 * threads. Never returns. */
static void closer(const int *keep, size_t n, int wait_fd)
{
	unsigned int next = 0;
	for (size_t i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > next)
			close_range(next, (unsigned int)keep[i] - 1, 0);
		next = (unsigned int)keep[i] + 1;
	}
	close_range(next, ~0U, 0);
	prctl(PR_SET_NAME, "ftstack-close");
	char c;
	ssize_t r;
	while ((r = read(wait_fd, &c, 1)) > 0 || (r < 0 && errno == EINTR))
		;
	_exit(0);
}

int perfev_close_behind(const int *fds, size_t n)
{
	int wait[2];
	int *keep = malloc((n + 1) * sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	if (pipe2(wait, O_CLOEXEC) < 0) {
		free(keep);
		return -errno;
	}
	for (size_t i = 0; i < n; i++)
		keep[i] = fds[i];
	keep[n] = wait[0];
	qsort(keep, n + 1, sizeof(*keep), cmp_int);
	pid_t pid = fork();
	if (pid == 0)
		closer(keep, n + 1, wait[0]);
	int ret = pid < 0 ? -errno : 0;
	free(keep);
	close(wait[0]);
	if (ret < 0)
		close(wait[1]);
	/* else wait[1] stays open until this process exits: the child's cue */
	return ret;
}
