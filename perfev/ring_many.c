/* perfev: many rings mapped at once. The kernel allocates and zeroes a
 * ring inside mmap, under the mapping process's mmap lock, so one process
 * maps its rings one after another (~14-19 ms each for 64 MB on this
 * project's VM), and threads would wait on the same lock. Helper
 * processes have locks of their own: each maps some of the rings, then
 * this process maps the same fds, which takes the ring the kernel already
 * has (perf_mmap's "mapped more than once" path), and lets them exit. Two
 * 64 MB rings: 34-39 ms one after another, 19-20 ms so on the Xeon host
 * (tests/unit's perfev_ring_test times it), no faster on the EPYC one
 * (bench/ring_alloc), where a helper's fork costs more than it saves:
 * start-up has this process map a share too. Once the helpers have
 * mapped theirs, every ring exists: the events may be enabled before
 * this process maps the helpers' rings (~3 ms each), their records wait
 * there. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfev/perfev.h"

/* Who maps ring I of M first: 0 this process, K helper K. With this
 * process's share (m->self) every (helpers + 1)th ring is its own. */
static size_t share_of(const struct perfev_ring_maps *m, size_t i)
{
	return m->self ? i % (m->helpers + 1) : i % m->helpers + 1;
}

/* Helper K: maps its share of M's rings, says how on DONE (0, or the
 * first errno), and keeps them until RELEASE reads end-of-file (this
 * process mapped them too). Never returns. */
static void helper(const struct perfev_ring_maps *m, size_t k, size_t bytes, int done, int release,
		   int release_w)
{
	close(release_w); /* else this process's own copy holds the pipe open */
	unsigned char c = 0;
	for (size_t i = 0; i < m->n; i++)
		if (share_of(m, i) == k &&
		    mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m->fds[i], 0) == MAP_FAILED &&
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

/* Forks m->helpers helpers; m->running says how many fork made (the
 * shares of the others are mapped here). DONE[1] and RELEASE[0] go to
 * them. */
static void fork_helpers(struct perfev_ring_maps *m, const int done[2], const int release[2])
{
	for (size_t k = 1; k <= m->helpers; k++) {
		pid_t p = fork();
		if (p == 0)
			helper(m, k, map_bytes(m->data_bytes), done[1], release[0], release[1]);
		if (p < 0)
			break;
		m->pid[m->running++] = p;
	}
}

int perfev_ring_maps_begin(struct perfev_ring_maps *m, struct perfev_ring *rings, const int *fds,
			   size_t n, size_t data_bytes, size_t procs)
{
	int done[2] = { -1, -1 }, release[2] = { -1, -1 };
	/* PROCS over N: a helper for each ring, none mapped here first */
	bool self = procs <= n;
	size_t helpers = self ? procs - (procs > 0) : n;
	*m = (struct perfev_ring_maps){ .rings = rings, .fds = fds, .n = n, .self = true,
					.data_bytes = data_bytes, .release_w = -1, .done_r = -1 };
	size_t most = PERFEV_MAP_PROCS - (self ? 1 : 0);
	if (helpers > most)
		helpers = most;
	if (helpers > 0 && pipe2(done, O_CLOEXEC) == 0 && pipe2(release, O_CLOEXEC) == 0) {
		m->self = self;
		m->helpers = helpers;
		fork_helpers(m, done, release);
	}
	/* the helpers' ends: a helper that dies is an end-of-file to wait */
	if (done[1] >= 0)
		close(done[1]);
	if (release[0] >= 0)
		close(release[0]);
	m->done_r = done[0];
	m->release_w = release[1];
	int ret = 0, err;
	/* this process's share (and a helper's that fork did not make),
	 * while the helpers map theirs */
	for (size_t i = 0; i < n; i++)
		if ((share_of(m, i) == 0 || share_of(m, i) > m->running) &&
		    (err = perfev_ring_map(&rings[i], fds[i], data_bytes)) < 0 && !ret)
			ret = err;
	return ret;
}

int perfev_ring_maps_wait(struct perfev_ring_maps *m)
{
	int ret = 0;
	unsigned char c;
	for (size_t h = 0; h < m->running && m->done_r >= 0; h++) {
		if (read(m->done_r, &c, 1) != 1) {
			ret = -ECHILD; /* a helper died: its rings may not exist */
			break;
		}
		if (c && !ret)
			ret = -(int)c; /* its rings do not exist: nothing to enable */
	}
	if (m->done_r >= 0)
		close(m->done_r);
	m->done_r = -1;
	return ret;
}

int perfev_ring_maps_start(struct perfev_ring_maps *m, struct perfev_ring *rings, const int *fds,
			   size_t n, size_t data_bytes, size_t procs)
{
	int ret = perfev_ring_maps_begin(m, rings, fds, n, data_bytes, procs);
	int err = perfev_ring_maps_wait(m);
	return ret < 0 ? ret : err;
}

int perfev_ring_maps_finish(struct perfev_ring_maps *m)
{
	int ret = 0, err;
	for (size_t i = 0; i < m->n; i++)
		if (share_of(m, i) != 0 && !m->rings[i].base &&
		    (err = perfev_ring_map(&m->rings[i], m->fds[i], m->data_bytes)) < 0 && !ret)
			ret = err;
	perfev_ring_maps_release(m);
	return ret;
}

void perfev_ring_maps_release(struct perfev_ring_maps *m)
{
	if (m->done_r >= 0)
		close(m->done_r);
	m->done_r = -1;
	if (m->release_w >= 0)
		close(m->release_w);
	m->release_w = -1;
	for (size_t h = 0; h < m->running; h++)
		while (waitpid(m->pid[h], NULL, 0) < 0 && errno == EINTR)
			;
	m->running = 0;
}
