/* perfev: many rings mapped at once. The kernel allocates and zeroes a
 * ring inside mmap, under the mapping process's mmap lock, so one process
 * maps its rings one after another (~14-19 ms each for 64 MB on this
 * project's VM), and threads would wait on the same lock. Helper
 * processes have locks of their own: each maps some of the rings, then
 * this process maps the same fds, which takes the ring the kernel already
 * has (perf_mmap's "mapped more than once" path), and lets them exit. Two
 * 64 MB rings: 34-39 ms one after another, 19-20 ms so (tests/unit's
 * perfev_ring_test times it). Once the helpers have mapped theirs, every
 * ring exists: the events may be enabled before this process maps the
 * helpers' rings (~3 ms each), their records wait there. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfev/perfev.h"

/* A helper: maps the rings I = K, K + STEP, ... of FDS, says how on DONE
 * (0, or the first errno), and keeps them until RELEASE reads end-of-file
 * (this process mapped them too). Never returns. */
static void helper(const int *fds, size_t n, size_t k, size_t step, size_t bytes, int done,
		   int release, int release_w)
{
	close(release_w); /* else this process's own copy holds the pipe open */
	unsigned char c = 0;
	for (size_t i = k; i < n; i += step)
		if (mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0) == MAP_FAILED &&
		    !c)
			c = (unsigned char)(errno > 0 && errno < 256 ? errno : EIO);
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

/* Forks up to STEP - 1 helpers for M; DONE[1] and RELEASE[0] go to them. */
static void fork_helpers(struct perfev_ring_maps *m, size_t step, const int done[2],
			 const int release[2])
{
	for (size_t k = 1; k < step; k++) {
		pid_t p = fork();
		if (p == 0)
			helper(m->fds, m->n, k, step, map_bytes(m->data_bytes), done[1], release[0],
			       release[1]);
		if (p < 0)
			break;
		m->pid[m->helpers++] = p;
	}
}

int perfev_ring_maps_start(struct perfev_ring_maps *m, struct perfev_ring *rings, const int *fds,
			   size_t n, size_t data_bytes, size_t procs)
{
	int done[2] = { -1, -1 }, release[2] = { -1, -1 };
	size_t step = procs < n ? procs : n;
	*m = (struct perfev_ring_maps){ .rings = rings, .fds = fds, .n = n,
					.data_bytes = data_bytes, .release_w = -1 };
	if (step > PERFEV_MAP_PROCS)
		step = PERFEV_MAP_PROCS;
	if (step > 1 && pipe2(done, O_CLOEXEC) == 0 && pipe2(release, O_CLOEXEC) == 0)
		fork_helpers(m, step, done, release);
	int ret = 0, err;
	/* this process's share, while the helpers map theirs */
	for (size_t i = 0; i < n; i += m->helpers + 1)
		if ((err = perfev_ring_map(&rings[i], fds[i], data_bytes)) < 0 && !ret)
			ret = err;
	unsigned char c;
	for (size_t h = 0; h < m->helpers; h++) {
		if (read(done[0], &c, 1) != 1)
			break; /* a helper died: its rings are mapped here by finish */
		if (c && !ret)
			ret = -(int)c; /* its rings do not exist: nothing to enable */
	}
	for (int k = 0; k < 2; k++)
		if (done[k] >= 0)
			close(done[k]);
	if (release[0] >= 0)
		close(release[0]);
	m->release_w = release[1];
	return ret;
}

int perfev_ring_maps_finish(struct perfev_ring_maps *m)
{
	int ret = 0, err;
	for (size_t i = 0; i < m->n; i++)
		if (i % (m->helpers + 1) && !m->rings[i].base &&
		    (err = perfev_ring_map(&m->rings[i], m->fds[i], m->data_bytes)) < 0 && !ret)
			ret = err;
	perfev_ring_maps_release(m);
	return ret;
}

void perfev_ring_maps_release(struct perfev_ring_maps *m)
{
	if (m->release_w >= 0)
		close(m->release_w);
	m->release_w = -1;
	for (size_t h = 0; h < m->helpers; h++)
		while (waitpid(m->pid[h], NULL, 0) < 0 && errno == EINTR)
			;
	m->helpers = 0;
}
