/* bench/switchin: the kernel's side of offcpu's records, alone (issue 32).
 * Opens sched:sched_switch on a command as ftstack's offcpu does (one
 * inherited event per CPU, its own ring, enabled at exec), with what MODE
 * asks beside each switch-out's callchain and SIZE-byte stack copy, and
 * only skips over what the rings hold:
 *   none  no switch-in at all (perf record -g's data, with a copy)
 *   sw    perf's switch records (context_switch: what offcpu takes)
 *   rd    the switch-in's time from the task's own on-CPU time instead:
 *         PERF_SAMPLE_READ of the event's time_running, which stops while
 *         the task is switched out, so two switch-outs' times less their
 *         time_running tell when it came back (kernels 6.12+ take READ on
 *         inherited events; the kernel then stops swapping the contexts
 *         of a parent and child at a switch, whose events would trade
 *         counts)
 *   switchin MODE SIZE [PAGES] CMD ARGS   (SIZE 0: no copy; PAGES: ring
 *   pages a CPU, 16384) prints "MODE SIZE: S samples, W switch records,
 *   L lost" on stderr. Root. bench/offcpu_switchin times it. */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "task/task.h"
#include "perfev/perfev.h"
#include "bench/skim.h"
#include "tracefs/tracefs.h"

#define MAX_CPUS 64

/* perfev_open's attr but for PERF_SAMPLE_READ, which ftstack never takes */
static void attr_of(struct perf_event_attr *a, uint32_t id, const char *mode, unsigned size,
		    size_t ring)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = id;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
	if (size) { /* offcpu's default: registers and a copy, no user callchain */
		a->sample_type |= PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = perfev_user_regs_mask();
		a->sample_stack_user = size;
		a->exclude_callchain_user = 1;
	}
	a->context_switch = strcmp(mode, "sw") == 0;
	if (strcmp(mode, "rd") == 0) {
		a->sample_type |= PERF_SAMPLE_READ;
		a->read_format = PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	a->inherit = 1;
	a->enable_on_exec = 1;
	a->disabled = 1;
	a->sample_id_all = 1;
	a->task = 1;
	a->comm = 1;
	a->watermark = 1;
	a->wakeup_watermark = (unsigned)(ring / 4);
}

int main(int argc, char **argv)
{
	static struct perfev_ring rings[MAX_CPUS];
	struct ft_child child;
	uint32_t id;
	if (argc < 4) {
		fprintf(stderr, "usage: switchin none|sw|rd SIZE [PAGES] CMD ARGS\n");
		return 2;
	}
	const char *mode = argv[1];
	unsigned size = (unsigned)atoi(argv[2]);
	int cmd = 3;
	size_t pages = 16384;
	if (argv[3][0] >= '0' && argv[3][0] <= '9')
		pages = (size_t)atol(argv[cmd++]);
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (tfs_event_id("/sys/kernel/tracing", "sched", "sched_switch", &id) < 0 || ncpus < 1 ||
	    ncpus > MAX_CPUS || ft_child_start(argv + cmd, false, &child) < 0) {
		fprintf(stderr, "switchin: no sched_switch id, or too many CPUs, or no child\n");
		return 1;
	}
	struct pollfd pf[MAX_CPUS];
	for (int c = 0; c < ncpus; c++) {
		struct perf_event_attr a;
		attr_of(&a, id, mode, size, pages * 4096);
		int fd = (int)syscall(__NR_perf_event_open, &a, child.pid, c, -1, PERF_FLAG_FD_CLOEXEC);
		int ret = fd < 0 ? -errno : perfev_ring_map(&rings[c], fd, pages * 4096);
		if (ret < 0) {
			fprintf(stderr, "switchin: %s %u on CPU %d: %s\n", mode, size, c, strerror(-ret));
			ft_child_stop(&child);
			return 1;
		}
		pf[c] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	if (ft_child_release(&child) < 0)
		return 1;
	struct skim_counts n = { 0 };
	for (bool done = false; !done;) {
		poll(pf, (nfds_t)ncpus, 5);
		done = ft_child_reap(&child);
		for (int c = 0; c < ncpus; c++)
			skim_ring(&rings[c], &n);
	}
	fprintf(stderr, "%s %u: %llu samples, %llu switch records, %llu lost\n", mode, size,
		n.samples, n.switches, n.lost);
	return 0;
}
