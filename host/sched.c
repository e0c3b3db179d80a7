/* host: where and how eagerly the calling thread runs: the readers of
 * Python frames, one pinned on each CPU (collector/cpu_readers.c). */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/host.h"

int host_sched_run_on(uint32_t cpu)
{
	cpu_set_t set;
	if (cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

int host_sched_realtime(void)
{
	struct sched_param p = { .sched_priority = 1 };
	int policy = sched_getscheduler(0);
	if (policy != SCHED_OTHER)
		return policy < 0 ? -errno : -EPERM; /* a policy the user chose (chrt) is kept */
	return sched_setscheduler(0, SCHED_FIFO, &p) < 0 ? -errno : 0;
}

bool host_sched_realtime_allowed(const struct host_access *h)
{
	struct rlimit rt;
	return host_access_has(h, HOST_CAP_SYS_NICE) ||
	       (getrlimit(RLIMIT_RTPRIO, &rt) == 0 && rt.rlim_cur >= 1);
}

/* The kernel's struct sched_attr as Linux 3.14 laid it out (its first 48
 * bytes, SCHED_ATTR_SIZE_VER0): glibc before 2.41 declares neither it nor
 * sched_setattr, and <linux/sched/types.h> clashes with <sched.h> */
struct sched_attr_v0 {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

int host_sched_short_slice(uint64_t ns)
{
	struct sched_attr_v0 a = { .size = sizeof(a), .policy = SCHED_OTHER, .runtime = ns };
	int policy = sched_getscheduler(0);
	if (policy != SCHED_OTHER)
		return policy < 0 ? -errno : -EPERM; /* a policy the user chose (chrt) is kept */
	errno = 0;
	a.nice = (int32_t)getpriority(PRIO_PROCESS, 0); /* kept: setattr sets it too */
	if (errno)
		return -errno;
	return syscall(SYS_sched_setattr, 0, &a, 0) < 0 ? -errno : 0;
}
