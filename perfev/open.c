/* perfev: opening events and the ioctls ftstack uses on them. */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfev/perfev.h"

#if defined(__x86_64__)
#include <asm/perf_regs.h>
#define PERFEV_X86_REG(reg) (1ULL << PERF_REG_X86_##reg)
#endif

/* Sampling and record-selection bits, from the options. */
static void fill_sampling(struct perf_event_attr *a, const struct perfev_opts *o)
{
	a->sample_type = PERFEV_SAMPLE_TYPE;
	if (o->raw)
		a->sample_type |= PERF_SAMPLE_RAW;
	if (o->cgroup_id)
		a->sample_type |= PERF_SAMPLE_CGROUP;
	if (o->regs_user) {
		a->sample_type |= PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = o->regs_user;
		a->sample_stack_user = o->stack_dump;
	}
	if (o->freq) {
		a->freq = 1;
		a->sample_freq = o->sample_freq;
	} else {
		a->sample_period = o->sample_period;
	}
	a->exclude_callchain_user = o->exclude_user_chain;
	a->exclude_callchain_kernel = o->exclude_kernel_chain || o->exclude_kernel;
	a->exclude_kernel = o->exclude_kernel;
	a->exclude_hv = o->exclude_kernel;
	if (o->max_stack)
		a->sample_max_stack = o->max_stack;
}

/* Side-band records: who is who (comm, exec, fork, exit) and, for user
 * symbolization, what is mapped where. */
static void fill_tracking(struct perf_event_attr *a, const struct perfev_opts *o)
{
	if (!o->track)
		return;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	if (o->track_mmap) {
		/* the kernel sends MMAP2 only for events that ask for mmap too */
		a->mmap = 1;
		a->mmap2 = 1;
	}
}

int perfev_open(const struct perfev_opts *o, int pid, int cpu, int group_fd)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = o->type;
	a.config = o->config;
	a.config1 = o->config1;
	a.config2 = o->config2;
	fill_sampling(&a, o);
	fill_tracking(&a, o);
	/* every record carries pid/tid/time/cpu/id, so side-band records sort
	 * and attribute like samples */
	a.sample_id_all = 1;
	a.inherit = o->inherit;
	a.context_switch = o->context_switch;
	a.cgroup = o->cgroup_id && o->track; /* the side band names new cgroups */
	a.disabled = o->disabled;
	/* Times stay in perf's own clock (local_clock, what ftrace's "local"
	 * trace clock reads too). With use_clockid = CLOCK_MONOTONIC, this
	 * 6.18 VM intermittently recorded no sched_switch samples taken in the
	 * idle task's context for a whole run (perf record --clockid=monotonic
	 * shows it too: 1 run in ~10 without any switch-in of the traced task). */
	if (o->wakeup_bytes) {
		a.watermark = 1;
		a.wakeup_watermark = o->wakeup_bytes;
	} else {
		a.wakeup_events = 1;
	}
	/* the count of lost samples, for perfev_lost; kernels before 6.0
	 * refuse the bit (EINVAL): those open without it */
	a.read_format = PERF_FORMAT_LOST;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC | (o->pid_is_cgroup ? PERF_FLAG_PID_CGROUP : 0);
	long fd = syscall(__NR_perf_event_open, &a, pid, cpu, group_fd, flags);
	if (fd < 0 && errno == EINVAL) {
		a.read_format = 0;
		fd = syscall(__NR_perf_event_open, &a, pid, cpu, group_fd, flags);
	}
	return fd < 0 ? -errno : (int)fd;
}

int perfev_lost(int fd, uint64_t *lost)
{
	uint64_t v[2]; /* value, lost: the layout of read_format = PERF_FORMAT_LOST */
	ssize_t n = read(fd, v, sizeof(v));
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(v))
		return -EOPNOTSUPP;
	*lost = v[1];
	return 0;
}

int perfev_id(int fd, uint64_t *id)
{
	return ioctl(fd, PERF_EVENT_IOC_ID, id) < 0 ? -errno : 0;
}

int perfev_set_output(int fd, int output_fd)
{
	return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, output_fd) < 0 ? -errno : 0;
}

int perfev_enable(int fd)
{
	return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
}

int perfev_disable(int fd)
{
	return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? -errno : 0;
}

uint64_t perfev_user_regs_mask(void)
{
#if defined(__x86_64__)
	/* DWARF CFI (--call-graph dwarf) starts from all of them, callee-saved
	 * ones included */
	return PERFEV_X86_REG(AX) | PERFEV_X86_REG(BX) | PERFEV_X86_REG(CX) |
	       PERFEV_X86_REG(DX) | PERFEV_X86_REG(SI) | PERFEV_X86_REG(DI) |
	       PERFEV_X86_REG(BP) | PERFEV_X86_REG(SP) | PERFEV_X86_REG(IP) |
	       PERFEV_X86_REG(R8) | PERFEV_X86_REG(R9) | PERFEV_X86_REG(R10) |
	       PERFEV_X86_REG(R11) | PERFEV_X86_REG(R12) | PERFEV_X86_REG(R13) |
	       PERFEV_X86_REG(R14) | PERFEV_X86_REG(R15);
#else
	return 0;
#endif
}

uint64_t perfev_user_frame_regs_mask(void)
{
#if defined(__x86_64__)
	/* Each register asked for is a call in the kernel's sample path (and a
	 * return, which an SRSO-mitigated AMD host makes dear): 17 registers
	 * cost 14% more per sample than 3 on this project's VM
	 * (doc/PERFORMANCE.md). A frame walk needs ip, sp and bp, the CFA
	 * rules of nearly all code sp or bp; gcc's others are r10 (a
	 * stack-realigning prologue) and r11 (a stack-clash probe loop, where
	 * page faults, and so tracepoints, happen). */
	return PERFEV_X86_REG(BP) | PERFEV_X86_REG(SP) | PERFEV_X86_REG(IP) |
	       PERFEV_X86_REG(R10) | PERFEV_X86_REG(R11);
#else
	return 0;
#endif
}
