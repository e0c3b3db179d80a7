/* ftstack check and ftstack cleanup. Both return the exit status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "collector/collector.h"
#include "perfev/perfev.h"
#include "tracefs/tracefs.h"

#define CALLS 1000 /* sampled getppid calls per timing */

enum ustack_mode { USTACK_NONE, USTACK_FP, USTACK_COPY };

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ns per getppid call while raw_syscalls:sys_enter (id TP) samples each one
 * with a kernel callchain and the user stack as MODE takes it; -errno when
 * the event cannot be had. The ring holds every sample: a full ring would
 * make the kernel skip the writes being timed. */
static long sampled_call_ns(int tp, enum ustack_mode mode)
{
	struct perfev_opts po = { .type = PERF_TYPE_TRACEPOINT, .config = (uint64_t)tp,
		.sample_period = 1, .disabled = true, .exclude_user_chain = mode != USTACK_FP,
		.user_stack = mode == USTACK_COPY, .stack_dump = FT_COPY_SIZE_DEFAULT };
	struct perfev_ring r;
	char filter[32];
	int fd = perfev_open(&po, 0, -1, -1), ret = fd < 0 ? fd : 0;
	snprintf(filter, sizeof(filter), "id == %d", SYS_getppid);
	if (!ret && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0)
		ret = -errno;
	if (!ret)
		ret = perfev_ring_map(&r, fd, (size_t)CALLS * (FT_COPY_SIZE_DEFAULT + 1024));
	if (ret < 0) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	perfev_enable(fd);
	uint64_t t0 = now_ns();
	for (int i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	uint64_t t1 = now_ns();
	perfev_disable(fd);
	perfev_ring_unmap(&r);
	close(fd);
	return (long)((t1 - t0) / CALLS);
}

/* What a sample's user stack costs here, the kernel's frame-pointer walk
 * against a copy of the stack (--call-graph copy): where the kernel's reads
 * of user memory are slow (some VMs) the copy is much the cheaper. Best of
 * three interleaved timings. Returns 0, or -errno when it can't be timed. */
static int check_user_stacks(const char *root, struct tfs_check_item *it)
{
	uint32_t tp;
	int ret = tfs_event_id(root, "raw_syscalls", "sys_enter", &tp);
	if (ret < 0)
		return ret;
	long best[3] = { -1, -1, -1 };
	for (int round = 0; round < 3; round++) {
		for (int m = USTACK_NONE; m <= USTACK_COPY; m++) {
			long ns = sampled_call_ns((int)tp, (enum ustack_mode)m);
			if (ns < 0)
				return (int)ns;
			if (best[m] < 0 || ns < best[m])
				best[m] = ns;
		}
	}
	long fp = best[USTACK_FP] - best[USTACK_NONE], copy = best[USTACK_COPY] - best[USTACK_NONE];
	it->what = "user stacks";
	it->ok = true;
	snprintf(it->detail, sizeof(it->detail), "the kernel's walk (fp) %.1f us a sample, a %d-byte "
		 "copy %.1f us: %s", fp / 1000.0, FT_COPY_SIZE_DEFAULT, copy / 1000.0,
		 copy * 2 < fp ? "--call-graph copy is the cheaper here" :
		 "fp, the default, costs about the same or less here");
	return 0;
}

int ft_cmd_check(const struct ft_options *o)
{
	(void)o;
	char root[256] = "";
	struct tfs_check_item items[32];
	if (tfs_find_root(root, sizeof(root)) < 0)
		root[0] = '\0';
	int n = tfs_check(root[0] ? root : NULL, "/proc", items, 31);
	if (n >= 0 && root[0] && check_user_stacks(root, &items[n]) == 0)
		n++;
	int width = 0;
	for (int i = 0; i < n; i++)
		if ((int)strlen(items[i].what) > width)
			width = (int)strlen(items[i].what);
	for (int i = 0; i < n; i++)
		printf("%-*s  %-3s  %s\n", width, items[i].what, items[i].ok ? "yes" : "no",
		       items[i].detail);
	return 0;
}

static void report_removed(void *ctx, const char *what)
{
	(void)ctx;
	printf("removed %s\n", what);
}

int ft_cmd_cleanup(const struct ft_options *o)
{
	(void)o;
	char root[256];
	int ret = tfs_find_root(root, sizeof(root));
	if (ret < 0) {
		ft_error("no tracefs: %s", strerror(-ret));
		return 1;
	}
	ret = tfs_cleanup_stale(root, "/proc", report_removed, NULL);
	if (ret < 0) {
		ft_error("cleanup failed: %s (are you root?)", strerror(-ret));
		return 1;
	}
	printf("%d object%s left by dead ftstack runs removed\n", ret, ret == 1 ? "" : "s");
	return 0;
}
