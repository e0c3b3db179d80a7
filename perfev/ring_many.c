/* perfev: many rings mapped at once. The kernel allocates and zeroes a
 * ring inside mmap, under the mapping process's mmap lock, so one process
 * maps its rings one after another (~14-19 ms each for 64 MB on this
 * project's VM), and threads would wait on the same lock. Helper
 * processes have locks of their own: each maps some of the rings, then
 * this process maps the same fds, which takes the ring the kernel already
 * has (perf_mmap's "mapped more than once" path), and lets them exit. Two
 * 64 MB rings: 34-39 ms one after another, 19-20 ms so (tests/unit's
 * perfev_ring_test times it). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfev/perfev.h"

/* A helper: maps the rings I = K, K + STEP, ... of FDS, says so on DONE,
 * and keeps them until RELEASE reads end-of-file (this process mapped
 * them too). Never returns. */
static void helper(const int *fds, size_t n, size_t k, size_t step, size_t bytes, int done,
		   int release, int release_w)
{
	close(release_w); /* else this process's own copy holds the pipe open */
	for (size_t i = k; i < n; i += step)
		mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
	char c = 1;
	if (write(done, &c, 1) == 1)
		while (read(release, &c, 1) > 0)
			;
	_exit(0);
}

/* The bytes perfev_ring_map maps for DATA_BYTES: a page and the data. */
static size_t map_bytes(size_t data_bytes)
{
	return (size_t)sysconf(_SC_PAGESIZE) + perfev_ring_data_size(data_bytes);
}

int perfev_ring_map_many(struct perfev_ring *rings, const int *fds, size_t n, size_t data_bytes,
			 size_t procs)
{
	int done[2] = { -1, -1 }, release[2] = { -1, -1 };
	pid_t pid[PERFEV_MAP_PROCS];
	size_t helpers = 0, step = procs < n ? procs : n;
	if (step > PERFEV_MAP_PROCS)
		step = PERFEV_MAP_PROCS;
	if (step > 1 && pipe2(done, O_CLOEXEC) == 0 && pipe2(release, O_CLOEXEC) == 0) {
		for (size_t k = 1; k < step; k++) {
			pid_t p = fork();
			if (p == 0)
				helper(fds, n, k, step, map_bytes(data_bytes), done[1], release[0],
				       release[1]);
			if (p < 0)
				break;
			pid[helpers++] = p;
		}
	}
	int ret = 0, err;
	/* this process's share first, then the helpers' once mapped there */
	for (size_t i = 0; i < n; i += helpers + 1)
		if ((err = perfev_ring_map(&rings[i], fds[i], data_bytes)) < 0 && !ret)
			ret = err;
	char c;
	for (size_t h = 0; h < helpers; h++)
		if (read(done[0], &c, 1) != 1)
			break; /* a helper died: its rings are mapped here anyway */
	for (size_t i = 0; i < n; i++)
		if (i % (helpers + 1) && (err = perfev_ring_map(&rings[i], fds[i], data_bytes)) < 0 &&
		    !ret)
			ret = err;
	for (int k = 0; k < 2; k++) {
		if (done[k] >= 0)
			close(done[k]);
		if (release[k] >= 0)
			close(release[k]);
	}
	for (size_t h = 0; h < helpers; h++)
		while (waitpid(pid[h], NULL, 0) < 0 && errno == EINTR)
			;
	return ret;
}
