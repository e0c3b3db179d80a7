/* perfev: what a sample's user stack costs on this host, timed as the runs
 * open it: fp (the kernel's frame-pointer walk plus a small stack copy for
 * the CFI's repair of frameless top frames) against copy (a larger copy
 * alone, walked in user space) (perfev.h, "user stack cost").
 *
 * A difference of two timings is only as good as their noise: a baseline
 * timed once and subtracted from a walk timed once gave negative costs on a
 * host whose timings wandered by more than the walk costs. So the three
 * kinds of sample are timed in rounds, interleaved (the order rotates, so
 * drift and warm-up fall on each kind alike); each round gives paired
 * differences, and their medians are the costs. A median counts as
 * measured only when its 95% confidence interval (from order statistics:
 * no assumption about the noise's shape) lies above zero; otherwise it is
 * "too small to measure here", never a negative number. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfev/perfev.h"

/* A timing is about COST_TIMING_NS of sampled getppid calls, between
 * COST_MIN_CALLS (slow hosts) and COST_MAX_CALLS (fast ones), so that a
 * timer tick or a preemption is a small part of it */
#define COST_TIMING_NS 1000000.0
#define COST_MIN_CALLS 100
#define COST_MAX_CALLS 1000
#define COST_FRAMES 16          /* frame-pointer frames above the calls */
#define COST_BUDGET_NS 150000000ull /* rounds stop after this much time ... */
#define COST_MIN_ROUNDS 9       /* ... but not before this many */
#define COST_MAX_ROUNDS 31

enum { K_NONE, K_FP, K_COPY, K_KINDS };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The order statistics bounding the median's 95% interval: the largest k
 * with P(Binomial(n, 1/2) < k) <= 2.5%; the interval is the k-th smallest
 * to the k-th largest. 0 when n is too small for any. */
static int median_ci_rank(int n)
{
	double p = 1.0 / (double)(1ull << (n < 62 ? n : 62)), cdf = 0, c = 1;
	int k = 0;
	for (int i = 0; i < n; i++) {
		cdf += c * p; /* P(X <= i) */
		if (cdf > 0.025)
			break;
		k = i + 1;
		c = c * (double)(n - i) / (double)(i + 1);
	}
	return k;
}

double perfev_median(double *d, int n)
{
	qsort(d, (size_t)n, sizeof(*d), cmp_double);
	return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

/* Sorts D[0..n) and returns its median; *LO and *HI get the 95% interval
 * (unbounded when n, under 6, is too small for one: nothing is measured). */
static double median_ci(double *d, int n, double *lo, double *hi)
{
	double m = perfev_median(d, n);
	int k = median_ci_rank(n);
	*lo = k > 0 ? d[k - 1] : -HUGE_VAL;
	*hi = k > 0 ? d[n - k] : HUGE_VAL;
	return m;
}

void perfev_ustack_judge(const double *none, const double *fp, const double *copy, int n,
			 struct perfev_ustack_cost *out)
{
	memset(out, 0, sizeof(*out));
	out->rounds = n;
	out->verdict = PERFEV_USTACK_TOO_SMALL;
	if (n < 1)
		return;
	double *d = malloc(sizeof(*d) * (size_t)n), lo, hi;
	if (!d)
		return;
	for (int i = 0; i < n; i++)
		d[i] = fp[i] - none[i];
	double m = median_ci(d, n, &lo, &hi);
	out->fp_measured = lo > 0;
	out->fp_ns = out->fp_measured ? m : 0;
	for (int i = 0; i < n; i++)
		d[i] = copy[i] - none[i];
	m = median_ci(d, n, &lo, &hi);
	out->copy_measured = lo > 0;
	out->copy_ns = out->copy_measured ? m : 0;
	/* the two against each other, paired the same way. fp carries perf
	 * record -g's walk plus a copy, so it only wins where the walk is so
	 * cheap that it costs measurably less than copy's larger copy (bare
	 * metal, maybe); a difference within the noise goes to copy, the
	 * cheaper-or-equal one whose cut stacks the summary counts */
	for (int i = 0; i < n; i++)
		d[i] = copy[i] - fp[i];
	median_ci(d, n, &lo, &hi);
	free(d);
	out->verdict = lo > 0 ? PERFEV_USTACK_FP : hi < 0 ? PERFEV_USTACK_COPY :
		       PERFEV_USTACK_TOO_SMALL;
}

/* COST_FRAMES frames that keep their frame pointers (as a program built
 * with them has), so the kernel's walk has a stack of some depth to follow;
 * the innermost makes the calls. Returns the calls' ns. */
#if defined(__clang__)
#define COST_FP_FRAME __attribute__((noinline))
#else
#define COST_FP_FRAME __attribute__((noinline, optimize("no-omit-frame-pointer")))
#endif
COST_FP_FRAME static uint64_t timed_calls(int depth, int calls)
{
	uint64_t ns;
	if (depth > 1) {
		ns = timed_calls(depth - 1, calls);
	} else {
		uint64_t t0 = perfev_mono_ns();
		for (int i = 0; i < calls; i++)
			syscall(SYS_getppid);
		ns = perfev_mono_ns() - t0;
	}
	__asm__ volatile("" ::: "memory"); /* no tail call: the frame stays */
	return ns;
}

/* Empties R without reading it: the next timing starts with room for all
 * its samples (a full ring would skip the writes being timed). */
static void ring_discard(struct perfev_ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
}

/* ns per call of one timing of CALLS calls (sampled by FD only while
 * they run) */
static double timing(int fd, struct perfev_ring *r, int calls)
{
	perfev_enable(fd);
	uint64_t ns = timed_calls(COST_FRAMES, calls);
	perfev_disable(fd);
	ring_discard(r);
	return (double)ns / calls;
}

int perfev_ustack_cost(int tp, uint32_t fp_bytes, uint32_t copy_bytes,
		       struct perfev_ustack_cost *out)
{
	int fd[K_KINDS] = { -1, -1, -1 }, mapped = 0, ret = 0, calls = COST_MIN_CALLS;
	struct perfev_ring ring[K_KINDS];
	double t[K_KINDS][COST_MAX_ROUNDS];
	char filter[32];
	/* each kind as a run opens it: no user stack; fp = the kernel's walk +
	 * registers + FP_BYTES of stack; copy = registers + COPY_BYTES, no walk */
	const uint32_t bytes[K_KINDS] = { 0, fp_bytes, copy_bytes };
	snprintf(filter, sizeof(filter), "id == %d", SYS_getppid);
	for (int k = 0; k < K_KINDS && !ret; k++) {
		struct perfev_opts po = { .type = PERF_TYPE_TRACEPOINT, .config = (uint64_t)tp,
			.sample_period = 1, .disabled = true, .exclude_user_chain = k != K_FP,
			.regs_user = bytes[k] ? perfev_user_frame_regs_mask() : 0,
			.stack_dump = bytes[k] };
		fd[k] = perfev_open(&po, 0, -1, -1);
		if (fd[k] < 0)
			ret = fd[k];
		else if (ioctl(fd[k], PERF_EVENT_IOC_SET_FILTER, filter) < 0)
			ret = -errno;
		else if ((ret = perfev_ring_map(&ring[k], fd[k], (size_t)COST_MAX_CALLS *
						(bytes[k] + 1024))) == 0)
			mapped = k + 1;
	}
	int n = 0;
	if (!ret) {
		/* warm-up, not counted; the first says how many calls make a timing */
		double per_call = timing(fd[K_NONE], &ring[K_NONE], calls);
		if (per_call > 0 && COST_TIMING_NS / per_call > calls)
			calls = COST_TIMING_NS / per_call < COST_MAX_CALLS ?
				(int)(COST_TIMING_NS / per_call) : COST_MAX_CALLS;
		for (int k = 0; k < K_KINDS; k++)
			timing(fd[k], &ring[k], calls);
		uint64_t end = perfev_mono_ns() + COST_BUDGET_NS;
		while (n < COST_MAX_ROUNDS && (n < COST_MIN_ROUNDS || perfev_mono_ns() < end)) {
			for (int i = 0; i < K_KINDS; i++) {
				int k = (n + i) % K_KINDS;
				t[k][n] = timing(fd[k], &ring[k], calls);
			}
			n++;
		}
	}
	for (int k = 0; k < mapped; k++)
		perfev_ring_unmap(&ring[k]);
	for (int k = 0; k < K_KINDS; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	if (ret < 0)
		return ret;
	perfev_ustack_judge(t[K_NONE], t[K_FP], t[K_COPY], n, out);
	out->calls = calls;
	out->frames = COST_FRAMES;
	out->fp_bytes = fp_bytes;
	out->copy_bytes = copy_bytes;
	return 0;
}

const char *perfev_cost_text(char *buf, size_t size, bool measured, double ns)
{
	if (!measured)
		return "too small to measure here";
	snprintf(buf, size, "%.2f us", ns / 1000.0);
	return buf;
}
