/* A quick measure, at start-up, of what a sample's user stack costs on
 * this host: the kernel's frame-pointer walk against a copy of the stack.
 * On some VMs every read of user memory from the kernel costs ~0.6 us (two
 * a frame), on bare metal nanoseconds, so the cheaper way differs between
 * hosts. getppid calls, each sampled by raw_syscalls:sys_enter with no
 * user stack, with the walk of PROBE_FRAMES made-up frames (rbp points at
 * a chain laid out on the stack above the call, where the kernel's walk
 * accepts frames: it does not depend on how ftstack itself was compiled),
 * and with a copy; interleaved rounds, the median of each. A few
 * milliseconds in all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "perfev/perfev.h"

#define PROBE_CALLS 20
#define PROBE_ROUNDS 9
#define PROBE_FRAMES 15

#if defined(__x86_64__)
static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* getppid with rbp at FRAMES (below the red zone: no compiler data there) */
static void call_with_frames(const uint64_t *frames)
{
	long nr = SYS_getppid;
	__asm__ volatile("sub $128, %%rsp\n\tpush %%rbp\n\tmov %1, %%rbp\n\tsyscall\n\t"
			 "pop %%rbp\n\tadd $128, %%rsp"
			 : "+a"(nr) : "r"(frames) : "rcx", "r11", "memory");
}

enum { NONE, WALK, COPY };

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* ns per call with MODE's user stack, or -errno */
static long timed_calls(int tp, int mode, uint32_t copy_bytes, const uint64_t *frames)
{
	struct perfev_opts po = { .type = PERF_TYPE_TRACEPOINT, .config = (uint64_t)tp,
		.sample_period = 1, .disabled = true, .exclude_kernel_chain = true,
		.exclude_user_chain = mode != WALK, .user_stack = mode == COPY,
		.stack_dump = copy_bytes };
	struct perfev_ring r;
	/* no filter: the event follows this thread only, whose only system
	 * calls meanwhile are the getppid calls (and a filter's release waits
	 * for an RCU grace period at close: ~40 ms here, per timing) */
	int fd = perfev_open(&po, 0, -1, -1), ret = fd < 0 ? fd : 0;
	if (!ret)
		ret = perfev_ring_map(&r, fd, (size_t)PROBE_CALLS * (copy_bytes + 512));
	if (ret < 0) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	perfev_enable(fd);
	uint64_t t0 = now_ns();
	for (int i = 0; i < PROBE_CALLS; i++)
		call_with_frames(frames);
	uint64_t t1 = now_ns();
	perfev_disable(fd);
	perfev_ring_unmap(&r);
	close(fd);
	return (long)((t1 - t0) / PROBE_CALLS);
}

int perfev_ustack_probe(int tp, uint32_t copy_bytes, struct perfev_ustack_probe *out)
{
	/* [next frame, return address] pairs going up the stack, as real
	 * frames do; the last one's next is 0, where the walk ends */
	volatile uint64_t frames[PROBE_FRAMES][2];
	for (int i = 0; i < PROBE_FRAMES; i++) {
		frames[i][0] = i + 1 < PROBE_FRAMES ? (uint64_t)(uintptr_t)frames[i + 1] : 0;
		frames[i][1] = 0x1000 + (uint64_t)i;
	}
	long t[3][PROBE_ROUNDS], best[3];
	for (int round = 0; round < PROBE_ROUNDS; round++)
		for (int m = NONE; m <= COPY; m++) {
			long ns = timed_calls(tp, m, copy_bytes, (const uint64_t *)&frames[0][0]);
			if (ns < 0)
				return (int)ns;
			t[m][round] = ns;
		}
	for (int m = NONE; m <= COPY; m++) {
		qsort(t[m], PROBE_ROUNDS, sizeof(long), cmp_long);
		best[m] = t[m][PROBE_ROUNDS / 2];
	}
	/* never negative: a cost within the noise is 0 */
	out->walk_ns = best[WALK] > best[NONE] ? (uint64_t)(best[WALK] - best[NONE]) : 0;
	out->copy_ns = best[COPY] > best[NONE] ? (uint64_t)(best[COPY] - best[NONE]) : 0;
	out->frames = PROBE_FRAMES;
	out->copy_bytes = copy_bytes;
	return 0;
}
#else
int perfev_ustack_probe(int tp, uint32_t copy_bytes, struct perfev_ustack_probe *out)
{
	(void)tp, (void)copy_bytes, (void)out;
	return -ENOTSUP;
}
#endif
