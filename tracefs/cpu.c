/* Reading an instance's per-CPU ring buffer (trace_pipe_raw) in whole
 * sub-buffers with libtracefs's tracefs_cpu. The file is opened through
 * tracefs_instance_file_open so the caller has its descriptor to poll, and
 * the sub-buffer size is the caller's (buffer_subbuf_size_kb, which
 * tracefs_cpu_open of libtracefs 1.6 does not know: it takes the page). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <tracefs.h> /* libtracefs (pkg-config puts its directory on the path) */
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

int tfs_cpu_open(struct tracefs_instance *inst, int cpu, size_t subbuf, struct tracefs_cpu **out)
{
	char rel[64];
	*out = NULL;
	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	errno = 0;
	int fd = tracefs_instance_file_open(inst, rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return tfs_errno(-EIO);
	*out = tracefs_cpu_alloc_fd(fd, (int)subbuf, true);
	if (!*out) {
		int e = tfs_errno(-ENOMEM);
		close(fd);
		return e;
	}
	return fd;
}

ssize_t tfs_cpu_read(struct tracefs_cpu *c, void *buf)
{
	for (;;) {
		errno = 0;
		/* non-blocking: 0 when the buffer has no full page (EAGAIN) or at EOF */
		int n = tracefs_cpu_read(c, buf, true);
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return tfs_errno(-EIO);
	}
}

void tfs_cpu_close(struct tracefs_cpu *c)
{
	tracefs_cpu_close(c);
}
