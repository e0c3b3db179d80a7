/* Live perf events for the perfev tests that need the kernel (root):
 * raw_syscalls:sys_enter on this process, filtered to getppid, so a test
 * knows exactly how many samples its own calls make. Used by
 * perfev_ring_test, perfev_ustack_test and perfev_cost_test. */
#ifndef FTSTACK_TEST_PERF_LIVE_H
#define FTSTACK_TEST_PERF_LIVE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfev/perfev.h"

/* raw_syscalls:sys_enter's tracepoint id (mounting tracefs if it is not);
 * -errno when it cannot be read */
static inline int sys_enter_id(void)
{
	struct stat st;
	if (stat("/sys/kernel/tracing/events", &st) < 0)
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	int fd = open("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id", O_RDONLY);
	char buf[32] = "";
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -EIO;
}

/* raw_syscalls:sys_enter (id TP) on this process, filtered to getppid; with
 * STACK_DUMP, each sample copies that many bytes of the user stack and takes
 * the registers the fp and copy methods take. Returns the event's fd, disabled,
 * with R mapped (RING_BYTES of data), or -errno. */
static inline int open_getppid(int tp, size_t ring_bytes, bool raw, uint32_t stack_dump,
			       struct perfev_ring *r)
{
	struct perfev_opts o = { .type = PERF_TYPE_TRACEPOINT, .config = (uint64_t)tp,
				 .sample_period = 1, .disabled = true, .raw = raw,
				 .regs_user = stack_dump ? perfev_user_frame_regs_mask() : 0,
				 .stack_dump = stack_dump };
	int fd = perfev_open(&o, 0, -1, -1);
	if (fd < 0)
		return fd;
	char filter[32];
	snprintf(filter, sizeof(filter), "id == %d", SYS_getppid);
	int ret = ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0 ? -errno : 0;
	if (!ret)
		ret = perfev_ring_map(r, fd, ring_bytes);
	if (ret < 0)
		close(fd);
	return ret < 0 ? ret : fd;
}

/* CLOCK_MONOTONIC in ns: for the live tests' give-up times and bounds */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
