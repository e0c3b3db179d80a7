/* bench/floor: the cheapest reader of the perf events ftstack opens for
 *   ftstack -e t:syscalls:sys_enter_getppid -f -c CMD
 * so `make bench` can tell ftstack's own cost from the kernel's. Same events
 * (raw_syscalls:sys_enter, filter "id == N", one per online CPU on the
 * command's pid, inherited, comm/task/mmap side band), same sample_type,
 * ring per CPU woken at a quarter full, and the command started the same
 * way (forked blocked, armed, released). Records are only skipped over and
 * samples counted: no decoding, no aggregation, no walks, no symbols.
 *   floor [--user-stacks fp|copy] 'CMD ARGS'
 * prints "N samples, L lost" on stderr. User stacks as ftstack takes them:
 * without the option, the kernel's callchain alone (what perf record -g
 * takes; 4 MB rings); fp: that plus the user registers and a
 * FT_FIX_SIZE_DEFAULT-byte stack copy; copy: no user callchain, the
 * registers and a FT_COPY_SIZE_DEFAULT-byte copy (both: 64 MB rings, as
 * ftstack's when samples carry a copy, on up to 4 CPUs).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cli/cli.h"
#include "collector/collector.h"
#include "task/task.h"
#include "perfev/perfev.h"
#include "bench/skim.h"

#define RING_BYTES (4096 * 1024) /* ftstack's default ring on up to 64 CPUs */
#define COPY_RING_BYTES (65536 * 1024) /* with a stack copy, on up to 4 CPUs */
#define MAX_CPUS 256

static unsigned read_uint(const char *path, unsigned dflt)
{
	FILE *f = fopen(path, "r");
	unsigned v = dflt;
	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

/* One event per online CPU on PID, each with its own ring, as ftstack does
 * for a single tracepoint; USTACK: NULL, "fp" or "copy" (above). Returns
 * the number of rings, or -errno. */
static int open_rings(pid_t pid, const char *ustack, struct perfev_ring *rings, int epfd)
{
	char filter[32];
	unsigned max_stack = read_uint("/proc/sys/kernel/perf_event_max_stack", 127);
	bool copy = ustack && strcmp(ustack, "copy") == 0;
	size_t ring_bytes = ustack ? COPY_RING_BYTES : RING_BYTES;
	struct perfev_opts o = {
		.type = PERF_TYPE_TRACEPOINT, .sample_period = 1, .track = true,
		.track_mmap = true, .inherit = true, .disabled = true,
		.max_stack = (uint16_t)(max_stack > 512 ? 512 : max_stack),
		.wakeup_bytes = (uint32_t)(ring_bytes / 4),
		.regs_user = ustack ? perfev_user_frame_regs_mask() : 0, .exclude_user_chain = copy,
		.stack_dump = !ustack ? 0 : copy ? FT_COPY_SIZE_DEFAULT : FT_FIX_SIZE_DEFAULT,
	};
	o.config = read_uint("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id", 0);
	snprintf(filter, sizeof(filter), "id == %d", SYS_getppid);
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (int cpu = 0; cpu < ncpus && cpu < MAX_CPUS; cpu++) {
		int fd = perfev_open(&o, pid, cpu, -1), ret;
		if (fd < 0)
			return fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0)
			return -errno;
		if ((ret = perfev_ring_map(&rings[cpu], fd, ring_bytes)) < 0)
			return ret;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &rings[cpu] };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 || (ret = perfev_enable(fd)) < 0)
			return ret < 0 ? ret : -errno;
	}
	return (int)ncpus;
}

/* Drains whichever ring wakes until the command exits (SIGCHLD). */
static void run(struct ft_child *child, struct perfev_ring *rings, int n, int epfd,
		int sfd, struct skim_counts *c)
{
	while (!ft_child_reap(child)) {
		struct epoll_event evs[MAX_CPUS + 1];
		int k = epoll_wait(epfd, evs, n + 1, -1);
		for (int i = 0; i < k; i++) {
			if (evs[i].data.ptr) {
				skim_ring(evs[i].data.ptr, c);
			} else {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					;
			}
		}
	}
	for (int cpu = 0; cpu < n; cpu++) {
		perfev_disable(rings[cpu].fd);
		skim_ring(&rings[cpu], c);
	}
}

int main(int argc, char **argv)
{
	static struct perfev_ring rings[MAX_CPUS];
	struct ft_child child;
	struct skim_counts c = { 0 };
	char **cmd;
	sigset_t mask;
	const char *ustack = NULL;
	if (argc == 4 && strcmp(argv[1], "--user-stacks") == 0 &&
	    (strcmp(argv[2], "fp") == 0 || strcmp(argv[2], "copy") == 0)) {
		ustack = argv[2];
		argv += 2, argc -= 2;
	}
	if (argc != 2 || ft_command_split(argv[1], &cmd) < 0) {
		fprintf(stderr, "usage: floor [--user-stacks fp|copy] 'CMD ARGS'\n");
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (epfd < 0 || sfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev) < 0 ||
	    ft_child_start(cmd, false, &child) < 0) /* as ftstack -c does: root stays root */
		return 1;
	int n = open_rings(child.pid, ustack, rings, epfd);
	if (n >= 0)
		n = ft_child_release(&child) < 0 ? -ECHILD : n;
	if (n < 0) {
		fprintf(stderr, "floor: %s\n", strerror(-n));
		ft_child_stop(&child);
		return 1;
	}
	run(&child, rings, n, epfd, sfd, &c);
	fprintf(stderr, "floor: %llu samples, %llu lost\n", c.samples, c.lost);
	return 0;
}
