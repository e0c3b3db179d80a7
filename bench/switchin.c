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
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CPUS 64

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	char *data;
	size_t size;
};

struct counts {
	unsigned long long samples, switches, lost;
};

static int tracepoint_id(const char *path)
{
	FILE *f = fopen(path, "r");
	int id = -1;
	if (f && fscanf(f, "%d", &id) != 1)
		id = -1;
	if (f)
		fclose(f);
	return id;
}

static void attr_of(struct perf_event_attr *a, int id, const char *mode, unsigned size,
		    size_t ring)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = (unsigned)id;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
	if (size) { /* offcpu's default: registers and a copy, no user callchain */
		a->sample_type |= PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = 0xff0fff; /* the 17 general registers */
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

static void drain(struct ring *r, struct counts *c)
{
	unsigned long long head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	unsigned long long tail = r->meta->data_tail;
	while (tail < head) {
		const struct perf_event_header *h = (const void *)(r->data + (tail & (r->size - 1)));
		if (h->type == PERF_RECORD_SAMPLE)
			c->samples++;
		else if (h->type == PERF_RECORD_SWITCH)
			c->switches++;
		else if (h->type == PERF_RECORD_LOST) /* id, lost: both within the ring's order */
			c->lost += ((const unsigned long long *)h)[2];
		tail += h->size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
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
	int id = tracepoint_id("/sys/kernel/tracing/events/sched/sched_switch/id");
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int go[2];
	if (id < 0 || ncpus < 1 || ncpus > MAX_CPUS || pipe(go) < 0) {
		fprintf(stderr, "switchin: no sched_switch id, or CPUs or a pipe\n");
		return 1;
	}
	pid_t child = fork();
	if (child == 0) { /* blocked until armed: its exec enables the events */
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[cmd], argv + cmd);
		_exit(127);
	}
	static struct ring rings[MAX_CPUS];
	for (int c = 0; c < ncpus; c++) {
		struct perf_event_attr a;
		struct ring *r = &rings[c];
		r->size = pages * 4096;
		attr_of(&a, id, mode, size, r->size);
		r->fd = (int)syscall(__NR_perf_event_open, &a, child, c, -1, PERF_FLAG_FD_CLOEXEC);
		void *m = r->fd < 0 ? MAP_FAILED :
			  mmap(NULL, r->size + 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "switchin: %s %u on CPU %d: %s\n", mode, size, c, strerror(errno));
			kill(child, SIGKILL);
			return 1;
		}
		r->meta = m;
		r->data = (char *)m + 4096;
	}
	close(go[0]);
	if (write(go[1], "x", 1) != 1)
		return 1;
	close(go[1]);
	struct counts n = { 0 };
	struct pollfd pf[MAX_CPUS];
	for (int c = 0; c < ncpus; c++)
		pf[c] = (struct pollfd){ .fd = rings[c].fd, .events = POLLIN };
	int status;
	for (bool done = false; !done;) {
		poll(pf, (nfds_t)ncpus, 5);
		done = waitpid(child, &status, WNOHANG) == child;
		for (int c = 0; c < ncpus; c++)
			drain(&rings[c], &n);
	}
	fprintf(stderr, "%s %u: %llu samples, %llu switch records, %llu lost\n", mode, size,
		n.samples, n.switches, n.lost);
	return 0;
}
