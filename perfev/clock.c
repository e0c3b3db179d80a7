/* perfev: how far perf's clock (local_clock) is from CLOCK_MONOTONIC, to
 * tell how long ago a sample was taken.
 *
 * The two clocks tick alike but start apart, and the mmap page's
 * time_zero, which would convert the TSC, is not offered on every host
 * (kvm-clock guests). So the offset is measured: a page-fault event on the
 * calling thread, one page touched between two clock_gettime() reads, and
 * the fault's record time, which lies between them. The tightest of a few
 * tries is kept: its error is at most half its window (a microsecond or
 * two), where the least lag of the samples themselves, the estimate this
 * replaces, is off by however late the first samples were read (7 ms seen
 * at a Python program's start, while its binaries were loaded). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perfev/perfev.h"

#define CLOCK_TRIES 5

uint64_t perfev_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct fault_times {
	uint64_t time[4];
	int n;
};

static int note_fault(void *ctx, const struct perfev_record *rec)
{
	struct fault_times *f = ctx;
	if (rec->kind == PERFEV_SAMPLE && f->n < 4)
		f->time[f->n] = rec->time;
	f->n += rec->kind == PERFEV_SAMPLE;
	return 0;
}

int perfev_clock_open(struct perfev_clock *c)
{
	struct perfev_opts o = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period = 1, .exclude_kernel = true, .exclude_user_chain = true,
	};
	memset(c, 0, sizeof(*c));
	c->ring.fd = -1;
	c->page = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->page == MAP_FAILED)
		return -errno;
	int fd = perfev_open(&o, 0, -1, -1);
	int err = fd < 0 ? fd : perfev_ring_map(&c->ring, fd, (size_t)sysconf(_SC_PAGESIZE));
	if (err < 0) {
		if (fd >= 0)
			close(fd);
		munmap(c->page, (size_t)sysconf(_SC_PAGESIZE));
		c->page = NULL;
		return err;
	}
	c->fd = fd;
	/* the ring's own pages fault in on first reads: before any try */
	struct fault_times f = { .n = 0 };
	perfev_ring_drain(&c->ring, PERFEV_SAMPLE_TYPE, 0, note_fault, &f);
	perfev_ring_drain(&c->ring, PERFEV_SAMPLE_TYPE, 0, note_fault, &f);
	return 0;
}

int perfev_clock_offset(struct perfev_clock *c, int64_t *offset_ns)
{
	if (!c->page)
		return -EBADF;
	uint64_t best = UINT64_MAX;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < CLOCK_TRIES; i++) {
		struct fault_times f = { .n = 0 };
		perfev_ring_drain(&c->ring, PERFEV_SAMPLE_TYPE, 0, note_fault, &f);
		if (madvise(c->page, page, MADV_DONTNEED) < 0)
			return -errno;
		f.n = 0;
		uint64_t t0 = perfev_mono_ns();
		*(volatile uint8_t *)c->page = 1; /* faults in a zeroed page */
		uint64_t t1 = perfev_mono_ns();
		if (perfev_ring_drain(&c->ring, PERFEV_SAMPLE_TYPE, 0, note_fault, &f) < 0)
			return -EINVAL;
		if (f.n != 1 || t1 - t0 >= best)
			continue; /* another fault, or a wider window than one had */
		best = t1 - t0;
		*offset_ns = (int64_t)(t0 + (t1 - t0) / 2 - f.time[0]);
	}
	return best == UINT64_MAX ? -EAGAIN : 0;
}

void perfev_clock_close(struct perfev_clock *c)
{
	if (!c->page)
		return;
	perfev_ring_unmap(&c->ring);
	close(c->fd);
	munmap(c->page, (size_t)sysconf(_SC_PAGESIZE));
	c->page = NULL;
}
