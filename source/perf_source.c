/* The perf backend: every plan event opened with perf_event_open, one ring
 * per CPU (other events on that CPU write into it through SET_OUTPUT), read in
 * place from the loop. System-wide: one event per CPU. With -p/-L/-c: one
 * event per (thread, CPU), inherited by children for -p and -c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "mem/mem.h"
#include "cli/progress.h"
#include "collector/session.h"
#include "source/source.h"
#include "host/host.h"

struct ft_perf_ring {
	struct perfev_ring ring;
	int cpu;
	bool tracked;  /* an fd on this CPU writes the side band (comm, mmap, ...) */
};

struct ft_id_map {
	uint64_t id;
	uint32_t event;
};

struct ft_perf_source {
	int *fds;
	uint32_t *fd_event; /* the event of each fd; an event's fds are adjacent */
	size_t nfds, capfds;
	struct ft_perf_ring *rings; /* indexed by CPU */
	int ncpus;
	size_t ring_kb;            /* per-CPU ring: --buffer-size or default_ring_kb */
	struct ft_id_map *ids;
	size_t nids, capids;
	uint64_t sample_type;
	uint64_t regs_mask;
	bool single_event;
	struct ft_event *events; /* the plan's, or the side-band dummy */
	int nevents;
};

/* --backend ftrace takes its samples from tracefs, and processes' comm,
 * mmaps, forks and exits from this event, which samples nothing. */
static struct ft_event sideband_event = {
	.kind = FT_EV_CPU_CLOCK, .name = "side band", .perf_type = PERF_TYPE_SOFTWARE,
	.perf_config = PERF_COUNT_SW_DUMMY,
};

/* Keeps FD, an opened perf event of plan event EVENT, to be closed with the
 * source. Returns 0 or -ENOMEM. */
static int push_fd(struct ft_perf_source *ps, int fd, uint32_t event)
{
	size_t cap = ps->capfds; /* one capacity for the two arrays */
	if (MEM_GROW(ps->fds, cap, ps->nfds + 1, 64))
		return -ENOMEM;
	cap = ps->capfds;
	if (MEM_GROW(ps->fd_event, cap, ps->nfds + 1, 64))
		return -ENOMEM;
	ps->capfds = cap;
	ps->fd_event[ps->nfds] = event;
	ps->fds[ps->nfds++] = fd;
	return 0;
}

static int push_id(struct ft_perf_source *ps, uint64_t id, uint32_t event)
{
	if (MEM_GROW(ps->ids, ps->capids, ps->nids + 1, 64))
		return -ENOMEM;
	ps->ids[ps->nids++] = (struct ft_id_map){ id, event };
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct ft_id_map *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

int ft_perf_source_event(const struct ft_session *s, uint64_t id)
{
	const struct ft_perf_source *ps = s->perf;
	if (ps->single_event)
		return 0;
	size_t lo = 0, hi = ps->nids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ps->ids[mid].id == id)
			return (int)ps->ids[mid].event;
		if (ps->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void attr_for(const struct ft_session *s, const struct ft_event *e, struct perfev_opts *po)
{
	const struct ft_options *o = s->opt;
	memset(po, 0, sizeof(*po));
	po->type = e->perf_type;
	po->config = e->perf_config;
	po->config1 = e->perf_config1;
	po->config2 = e->perf_config2;
	if (e->kind == FT_EV_KPROBE_PMU) {
		po->config1 = (uint64_t)(uintptr_t)e->event; /* kprobe_func */
		po->config2 = 0;                             /* probe_offset */
	} else if (e->kind == FT_EV_UPROBE_PMU) {
		po->config1 = (uint64_t)(uintptr_t)e->path;  /* uprobe_path */
		po->config2 = e->offset;
		po->config = e->ref_ctr << 32;              /* ref_ctr_offset: config:32-63 */
	}
	po->sample_period = e->sample_period ? e->sample_period : 1;
	po->sample_freq = e->sample_freq;
	po->freq = e->sample_freq != 0;
	po->raw = e->raw;
	/* copy and dwarf: the user frames come from the copy, not the kernel */
	po->exclude_user_chain = !s->keep.want_user || s->ustacks.method != FT_USTACK_FP;
	/* --through reads the kernel stack even when only user stacks are shown */
	po->exclude_kernel_chain = !s->keep.want_kernel && !s->kernel.filter.through.n;
	po->disabled = true;
	/* offcpu's switch-ins */
	po->context_switch = e->kind == FT_EV_SCHED_SWITCH || e->kind == FT_EV_CTXSW;
	/* perf_event_paranoid 2 without CAP_PERFMON: user mode only (ft_mech) */
	po->exclude_kernel = s->keep.user_mode_only;
	/* wake the loop when a quarter of the ring is full, not per record */
	po->wakeup_bytes = (uint32_t)(s->perf->ring_kb * 1024 / 4);
	po->inherit = s->traced.have_child || o->npids > 0;
	po->cgroup_id = o->per_cgroup;
	po->max_stack = s->keep.max_stack;
	/* uprobes at a function's entry need [sp], the caller the walk skips */
	po->regs_user = s->perf->regs_mask;
	po->stack_dump = s->ustacks.copy_size ? s->ustacks.copy_size : 8;
}

/* Opens event E for (pid, cpu); the first fd on a CPU owns its ring, the
 * first one for all tasks (pid -1 or -c's child) writes its side band. */
static int open_one(struct ft_session *s, int ev, int pid, int cpu, bool first_task)
{
	struct ft_perf_source *ps = s->perf;
	const struct ft_event *e = &ps->events[ev];
	struct ft_perf_ring *r = &ps->rings[cpu];
	struct perfev_opts po;
	attr_for(s, e, &po);
	po.track = s->keep.track && first_task && !r->tracked;
	po.track_mmap = po.track && s->keep.want_user;
	po.pid_is_cgroup = s->cgroup.open; /* --cgroup: PID is the folder's fd */
	int fd = perfev_open(&po, pid, cpu, -1);
	if (fd < 0)
		return fd;
	int ret = push_fd(ps, fd, (uint32_t)ev);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	r->tracked |= po.track;
	uint64_t id;
	if ((ret = perfev_id(fd, &id)) < 0 || (ret = push_id(ps, id, (uint32_t)ev)) < 0)
		return ret;
	if (e->filter[0] && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, e->filter) < 0)
		return -errno;
	/* offcpu: the idle task's switch-outs are dropped in user space anyway
	 * (it is never blocked), but their callchains were taken on the
	 * critical path of every wakeup from idle. Best effort: without the
	 * filter the same samples are dropped later. Per task (-c/-p/-L) the
	 * idle task is never sampled: no filter to evaluate on each switch. */
	if (e->kind == FT_EV_SCHED_SWITCH && !e->filter[0] && pid == -1)
		ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "prev_pid != 0");
	if (r->ring.base)
		return perfev_set_output(fd, r->ring.fd);
	size_t bytes = ps->ring_kb * 1024;
	if ((ret = perfev_ring_map(&r->ring, fd, bytes)) < 0) {
		/* the ring is locked memory: past kernel.perf_event_mlock_kb and
		 * RLIMIT_MEMLOCK only CAP_IPC_LOCK (or root) may map it */
		if (ret == -EPERM) {
			ft_error("a %zu KB ring a CPU is more than this user may lock (kernel.perf_event_mlock_kb, "
				 "ulimit -l): use a smaller --buffer-size, or give CAP_IPC_LOCK", ps->ring_kb);
			return -ENOLCK;
		}
		return ret;
	}
	r->cpu = cpu;
	ft_debug("perf ring for CPU %d: %zu KB", cpu, r->ring.data_size / 1024);
	return 0;
}


/* The tasks to open per CPU: -1 (all) system-wide, else thread ids. */
static int task_list(const struct ft_session *s, pid_t **out)
{
	const struct ft_options *o = s->opt;
	int max = 65536, n = 0;
	pid_t *t = calloc(max, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (s->traced.have_child) {
		t[n++] = s->traced.child.pid;
	} else if (o->npids) {
		for (int i = 0; i < o->npids; i++)
			n += host_tasks("/proc", o->pids[i], t + n, max - n);
	} else if (o->ntids) {
		for (int i = 0; i < o->ntids; i++)
			t[n++] = o->tids[i];
	} else {
		t[n++] = s->cgroup.open ? s->cgroup.fd : -1;
	}
	*out = t;
	return n;
}

static int explain_open(int err, const struct ft_event *e)
{
	switch (err) {
	case -EACCES:
	case -EPERM:
		ft_error("perf_event_open(%s) refused: %s", e->name,
			 e->kind == FT_EV_KPROBE_PMU ? "the kprobe PMU needs CAP_PERFMON" :
			 e->kind == FT_EV_UPROBE_PMU ? "the uprobe PMU needs CAP_SYS_ADMIN" :
			 "another user's process needs CAP_PERFMON and CAP_SYS_PTRACE");
		break;
	case -ENOENT:
	case -EOPNOTSUPP:
		if (e->perf_type == PERF_TYPE_HARDWARE) {
			ft_error("%s: this CPU's PMU does not count it here", e->name);
			break;
		}
		ft_error("cannot open %s: %s", e->name, strerror(-err));
		break;
	case -EMFILE:
		ft_error("out of file descriptors opening %s: raise ulimit -n", e->name);
		break;
	case -ESRCH:
		ft_error("the traced process exited before tracing started");
		break;
	case -ENOLCK:
		break; /* said where the ring was mapped */
	default:
		ft_error("cannot open %s: %s", e->name, strerror(-err));
	}
	return err;
}

/* The kernel's -EINVAL or -EBADF for an event that asked for cgroups: the
 * sample's cgroup id is Linux 5.7+, a cgroup-bound event needs the
 * perf_event controller on the cgroup2 hierarchy (CONFIG_CGROUP_PERF). */
static int explain_cgroup(const struct ft_session *s, int err, const struct ft_event *e)
{
	if (s->cgroup.open)
		ft_error("cannot open %s on --cgroup %s: %s (the kernel needs CONFIG_CGROUP_PERF, and "
			 "the perf_event controller on the cgroup2 hierarchy)", e->name,
			 s->cgroup.path, strerror(-err));
	else
		ft_error("cannot open %s with its samples' cgroup (--per-cgroup): %s (Linux 5.7 or "
			 "later with CONFIG_CGROUP_PERF)", e->name, strerror(-err));
	return err;
}

/* Hundreds of probes on a few CPUs need more fds than the usual soft
 * limit of 1024: raise it towards the hard limit, as perf does. */
static void raise_fd_limit(size_t fds)
{
	struct rlimit rl;
	size_t want = fds + 64; /* rings, epoll, timers, files being read */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rlim_t old = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	if (rl.rlim_cur > old && setrlimit(RLIMIT_NOFILE, &rl) == 0)
		ft_debug("open file limit raised from %llu to %llu", (unsigned long long)old,
			 (unsigned long long)rl.rlim_cur);
}

/* Kernel functions and uprobes are "probes"; anything else is "events". */
static const char *probes_noun(const struct ft_event *events, int nevents)
{
	for (int e = 0; e < nevents; e++)
		if (!events[e].kfunc && events[e].kind != FT_EV_UPROBE_PMU &&
		    !events[e].dyn_file[0])
			return "events";
	return "probes";
}

/* Opens event EV on every CPU for every task. An optional event (one of a
 * pattern's matches) that the kernel refuses at its first open is marked
 * refused and skipped; ft_plan_report_refused says so. */
static int open_event(struct ft_session *s, int ev, const bool *online, const pid_t *tasks,
		      int ntasks)
{
	struct ft_perf_source *ps = s->perf;
	struct ft_event *e = &ps->events[ev];
	bool first = true;
	if (e->refused)
		return 0; /* refused in tracefs already */
	for (int cpu = 0; cpu < ps->ncpus; cpu++) {
		if (!online[cpu])
			continue;
		for (int t = 0; t < ntasks; t++) {
			int ret = open_one(s, ev, tasks[t], cpu, t == 0);
			if (ret == -ESRCH && tasks[t] > 0 && ntasks > 1)
				continue; /* a thread of -p that exited meanwhile */
			if (ret < 0 && first && e->optional && ft_plan_refusal(ret)) {
				ft_debug("the kernel refused %s: %s", e->name, strerror(-ret));
				e->refused = ret;
				return 0;
			}
			if (ret < 0 && (ret == -EINVAL || ret == -EBADF) &&
			    (s->opt->per_cgroup || s->cgroup.open))
				return explain_cgroup(s, ret, e);
			if (ret < 0)
				return explain_open(ret, e);
			first = false;
		}
	}
	return 0;
}

static int open_events(struct ft_session *s, int epfd, struct ft_event *events, int nevents);

/* Without --buffer-size: 4 MB per CPU, about 20 ms of the busiest
 * workloads here (offcpu's pipe ping-pong), so a reader that loses its CPU
 * to busy neighbours for a while loses nothing; 64 MB when samples carry a
 * copy of the stack (ten to fifty times the bytes of a callchain, so they
 * fill faster: a getppid loop writes ~2 GB/s, and 8-16 MB rings lose
 * samples in some runs while the scheduler places a -c command next to
 * the reader, doc/PERFORMANCE.md); at most 256 MB in all on large
 * machines, and never under 512 KB. */
static size_t default_ring_kb(const bool *online, int top, uint32_t copy_bytes)
{
	int n = 0;
	for (int c = 0; c < top; c++)
		n += online[c];
	size_t kb = copy_bytes ? 65536 : 4096;
	while (n > 0 && kb > 512 && kb * (size_t)n > 256 * 1024)
		kb /= 2;
	return kb;
}

/* The ring KB a CPU this user may lock: a ring is locked memory, and
 * without CAP_IPC_LOCK (root has it) the kernel allows a user
 * kernel.perf_event_mlock_kb a CPU plus RLIMIT_MEMLOCK in all; a ring is
 * its data plus one page. SIZE_MAX when unlimited. */
static size_t lockable_kb(int ncpus)
{
	struct host_access h;
	struct rlimit rl;
	host_access_read("/proc", "/sys", &h);
	if (h.root || host_access_has(&h, HOST_CAP_IPC_LOCK) || ncpus <= 0)
		return SIZE_MAX;
	size_t mem = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
		     (size_t)(rl.rlim_cur / 1024) : 0;
	size_t per_cpu = (h.mlock_kb * (size_t)ncpus + mem) / (size_t)ncpus;
	return per_cpu > 4 ? per_cpu - 4 : 0;
}

/* DEF rounded down to a power of two that fits LIMIT, at least 8 KB (a
 * smaller ring the kernel refuses, and says so). */
static size_t fit_ring(size_t def, size_t limit)
{
	while (def > 8 && def > limit)
		def /= 2;
	return def;
}

int ft_perf_source_open(struct ft_session *s, int epfd)
{
	return open_events(s, epfd, s->plan.events, s->plan.nevents);
}

int ft_perf_source_open_sideband(struct ft_session *s, int epfd)
{
	return s->keep.track ? open_events(s, epfd, &sideband_event, 1) : 0;
}

static int open_events(struct ft_session *s, int epfd, struct ft_event *events, int nevents)
{
	bool online[FT_MAX_CPUS] = { false };
	struct ft_perf_source *ps = calloc(1, sizeof(*ps));
	pid_t *tasks = NULL;
	if (!ps)
		return -ENOMEM;
	s->perf = ps;
	ps->events = events;
	ps->nevents = nevents;
	ps->ncpus = ft_online_cpus(s->opt, online, FT_MAX_CPUS);
	int nonline = 0;
	for (int c = 0; c < ps->ncpus; c++)
		nonline += online[c];
	ps->ring_kb = s->opt->buffer_set ? s->opt->buffer_kb :
		      fit_ring(default_ring_kb(online, ps->ncpus, s->keep.want_user ? s->ustacks.copy_size : 0),
			       lockable_kb(nonline));
	if (events == &sideband_event)
		ps->ring_kb = 512; /* comm/mmap/fork/exit only; --buffer-size sizes the instance */
	ps->rings = calloc(ps->ncpus, sizeof(*ps->rings));
	ps->sample_type = PERFEV_SAMPLE_TYPE;
	ps->single_event = nevents == 1;
	bool entry_fix = false;
	for (int e = 0; e < nevents; e++)
		entry_fix |= events[e].entry_fix;
	if ((s->ustacks.copy_size || entry_fix) && s->keep.want_user) {
		ps->sample_type |= PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
		ps->regs_mask = s->ustacks.regs_mask; /* ft_ustack_choose's, for the method */
	}
	for (int e = 0; e < nevents; e++)
		if (events[e].raw)
			ps->sample_type |= PERF_SAMPLE_RAW;
	if (s->opt->per_cgroup)
		ps->sample_type |= PERF_SAMPLE_CGROUP;
	int ntasks = task_list(s, &tasks);
	if (!ps->rings || ntasks < 0) {
		free(tasks);
		return -ENOMEM;
	}
	raise_fd_limit((size_t)nevents * (size_t)ps->ncpus * (size_t)ntasks);
	struct ft_progress pg;
	ft_progress_start(&pg, "attaching", probes_noun(events, nevents), nevents);
	int ret = 0;
	for (int e = 0; e < nevents && ret == 0; e++) {
		ret = open_event(s, e, online, tasks, ntasks);
		ft_progress_step(&pg);
	}
	ft_progress_end(&pg);
	free(tasks);
	if (ret < 0)
		return ret;
	qsort(ps->ids, ps->nids, sizeof(*ps->ids), id_cmp);
	for (int cpu = 0; cpu < ps->ncpus; cpu++) {
		struct ft_perf_ring *r = &ps->rings[cpu];
		if (!r->ring.base)
			continue;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, r->ring.fd, &ev) < 0)
			return -errno;
	}
	ft_debug("perf: %zu events open on %d CPUs", ps->nfds, ps->ncpus);
	return 0;
}

bool ft_perf_source_owns(const struct ft_session *s, const void *cookie)
{
	const struct ft_perf_source *ps = s->perf;
	return ps && ps->rings && (const struct ft_perf_ring *)cookie >= ps->rings &&
	       (const struct ft_perf_ring *)cookie < ps->rings + ps->ncpus;
}

static int on_record(void *ctx, const struct perfev_record *rec)
{
	struct ft_session *s = ctx;
	int ev = rec->kind == PERFEV_SAMPLE ? ft_perf_source_event(s, rec->sample.id) : -1;
	return ft_session_record(s, rec, ev);
}

static int drain_ring(struct ft_session *s, struct ft_perf_ring *r)
{
	long n = perfev_ring_drain(&r->ring, s->perf->sample_type, s->perf->regs_mask, on_record, s);
	return n < 0 ? (int)n : 0;
}

/* The rings' records merged into time order: user stacks are walked as
 * samples are read, and a sample needs its process's exec and mmap records,
 * which sit in the ring of whichever CPU the process ran on then (a ring
 * that may not have filled enough to wake the loop). Draining ring after
 * ring, oldest first, was not enough: a process that ran on CPU 1, then
 * mapped a library on CPU 0 and ran on CPU 1 again had its later samples
 * walked (and left short, as if their code were unknown) before the mmap.
 * Each step drains the ring holding the oldest record up to the next ring's
 * oldest; first times are kept between steps (one decode a step). */
static int drain_merged(struct ft_session *s)
{
	struct ft_perf_source *ps = s->perf;
	uint64_t next[FT_MAX_CPUS];
	bool broken[FT_MAX_CPUS];
	int n = ps ? ps->ncpus : 0, ret;
	for (int c = 0; c < n; c++) {
		struct perfev_ring *r = &ps->rings[c].ring;
		ret = r->base ? perfev_ring_first_time(r, ps->sample_type, ps->regs_mask, &next[c]) :
				-ENOENT;
		broken[c] = ret < 0 && ret != -ENOENT;
		if (ret < 0)
			next[c] = UINT64_MAX;
	}
	for (;;) {
		int a = -1;
		uint64_t until = UINT64_MAX;
		for (int c = 0; c < n; c++) {
			if (next[c] == UINT64_MAX)
				continue;
			if (a < 0 || next[c] < next[a]) {
				if (a >= 0)
					until = next[a];
				a = c;
			} else if (next[c] < until) {
				until = next[c];
			}
		}
		if (a < 0)
			break;
		uint64_t was = next[a];
		long got = perfev_ring_drain_until(&ps->rings[a].ring, ps->sample_type, ps->regs_mask,
						   until, on_record, s, &next[a]);
		if (got < 0)
			return (int)got;
		if (got == 0 && next[a] == was)
			next[a] = UINT64_MAX; /* no progress: cannot happen; never spin */
	}
	/* a ring whose oldest record could not be decoded: as it comes (the
	 * drain skips what it cannot decode, and says when a header is broken) */
	for (int c = 0; c < n; c++)
		if (broken[c] && (ret = drain_ring(s, &ps->rings[c])) < 0)
			return ret;
	return 0;
}

int ft_perf_source_ready(struct ft_session *s, void *cookie)
{
	(void)cookie; /* every ring is drained, in time order */
	return drain_merged(s);
}

int ft_perf_source_hangup(struct ft_session *s, void *cookie, int epfd)
{
	struct ft_perf_ring *r = cookie;
	int ret = ft_perf_source_ready(s, cookie);
	if (ret < 0)
		return ret;
	if (epoll_ctl(epfd, EPOLL_CTL_DEL, r->ring.fd, NULL) < 0)
		return -errno;
	ft_debug("perf ring for CPU %d: its task exited", r->cpu);
	/* other threads may still write into it (SET_OUTPUT); the task may
	 * also be still on its way out: look again on each timeout */
	s->poll_rings = true;
	return ft_perf_source_targets_gone(s);
}

bool ft_perf_source_targets_gone(const struct ft_session *s)
{
	const struct ft_options *o = s->opt;
	return !s->traced.have_child && (o->npids || o->ntids) && !ft_targets_alive(&s->traced.targets);
}

int ft_perf_source_drain_all(struct ft_session *s)
{
	return drain_merged(s);
}

int ft_perf_source_enable(struct ft_session *s)
{
	struct ft_perf_source *ps = s->perf;
	for (size_t i = 0; i < ps->nfds; i++) {
		int ret = perfev_enable(ps->fds[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void ft_perf_source_disable(struct ft_session *s)
{
	struct ft_perf_source *ps = s->perf;
	for (size_t i = 0; ps && i < ps->nfds; i++)
		perfev_disable(ps->fds[i]);
}

size_t ft_perf_source_ring_kb(const struct ft_session *s)
{
	return s->perf ? s->perf->ring_kb : 0;
}

int ft_perf_source_fullest(const struct ft_session *s, unsigned *pct)
{
	int fullest = -1;
	*pct = 0;
	for (int cpu = 0; s->perf && cpu < s->perf->ncpus; cpu++) {
		const struct perfev_ring *r = &s->perf->rings[cpu].ring;
		if (!r->data_size)
			continue;
		unsigned p = (unsigned)(r->max_fill * 100 / r->data_size);
		if (fullest < 0 || p > *pct) {
			*pct = p;
			fullest = cpu;
		}
	}
	return fullest;
}

void ft_perf_source_count_lost(struct ft_session *s)
{
	uint64_t sum = 0, lost;
	for (size_t i = 0; s->perf && i < s->perf->nfds; i++)
		if (perfev_lost(s->perf->fds[i], &lost) == 0)
			sum += lost;
	if (sum > s->cnt.lost)
		s->cnt.lost = sum;
}

uint64_t ft_perf_source_bad_records(const struct ft_session *s)
{
	uint64_t n = 0;
	for (int cpu = 0; s->perf && cpu < s->perf->ncpus; cpu++)
		n += s->perf->rings[cpu].ring.bad_records;
	return n;
}

/* Closing a probe's fds unregisters it, an RCU grace period or two each:
 * hundreds of them take a while, so they get progress too. */
static void close_fds(struct ft_perf_source *ps)
{
	int attached = 0;
	for (size_t i = 0; i < ps->nfds; i++)
		attached += i == 0 || ps->fd_event[i] != ps->fd_event[i - 1];
	struct ft_progress pg;
	ft_progress_start(&pg, "detaching", probes_noun(ps->events, ps->nevents), attached);
	for (size_t i = 0; i < ps->nfds; i++) {
		close(ps->fds[i]);
		if (i + 1 == ps->nfds || ps->fd_event[i + 1] != ps->fd_event[i])
			ft_progress_step(&pg);
	}
	ft_progress_end(&pg);
}

void ft_perf_source_close(struct ft_session *s)
{
	struct ft_perf_source *ps = s->perf;
	if (!ps)
		return;
	for (int cpu = 0; ps->rings && cpu < ps->ncpus; cpu++)
		if (ps->rings[cpu].ring.base)
			perfev_ring_unmap(&ps->rings[cpu].ring);
	close_fds(ps);
	free(ps->fds);
	free(ps->fd_event);
	free(ps->rings);
	free(ps->ids);
	free(ps);
	s->perf = NULL;
}
