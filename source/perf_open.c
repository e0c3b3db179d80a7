/* Opening the perf source: every plan event with perf_event_open, one ring
 * per CPU (other events on that CPU write into it through SET_OUTPUT).
 * System-wide: one event per CPU. With -p/-L/-c: one event per (thread,
 * CPU), inherited by children for -p and -c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include "cli/progress.h"
#include "host/host.h"
#include "source/perf_source_int.h"
#include "source/source.h"

/* --backend ftrace takes its samples from tracefs, and processes' comm,
 * mmaps, forks and exits from this event, which samples nothing. */
static struct ft_event sideband_event = {
	.kind = FT_EV_CPU_CLOCK, .name = "side band", .perf_type = PERF_TYPE_SOFTWARE,
	.perf_config = PERF_COUNT_SW_DUMMY,
};

static void attr_for(const struct ft_perf_source *ps, const struct ft_event *e,
		     struct perfev_opts *po)
{
	const struct ft_perf_config *c = &ps->cfg;
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
	po->exclude_user_chain = !c->user_chain;
	po->exclude_kernel_chain = !c->kernel_chain;
	po->disabled = true;
	/* offcpu's switch-ins */
	po->context_switch = e->kind == FT_EV_SCHED_SWITCH || e->kind == FT_EV_CTXSW;
	/* perf_event_paranoid 2 without CAP_PERFMON: user mode only (ft_mech) */
	po->exclude_kernel = c->user_mode_only;
	/* wake the loop when a quarter of the ring is full, not per record
	 * (unless asked: profile reading Python's frames) */
	po->wakeup_bytes = c->wake_each ? 0 : (uint32_t)(ps->ring_kb * 1024 / 4);
	po->inherit = c->child > 0 || c->opt->npids > 0;
	po->cgroup_id = c->opt->per_cgroup;
	po->max_stack = c->max_stack;
	/* uprobes at a function's entry need [sp], the caller the walk skips */
	po->regs_user = ps->regs_mask;
	po->stack_dump = c->ucopy_size ? c->ucopy_size : 8;
}

/* Begins mapping every CPU's ring, on the CPU's owner: the first fd
 * opened on it, or a dummy (ft_perf_source_open_owner). A user free of
 * RLIMIT_MEMLOCK has large rings mapped in up to PROCS processes at once,
 * this one and helpers (perfev_ring_maps_begin: two 64 MB rings in ~20
 * ms, not ~35, on the Xeon host). Returns 0 or -errno; map_rings_end in
 * any case (maps_pending: begun). */
static int map_rings_begin(struct ft_perf_source *ps, size_t procs)
{
	ps->map_rings = calloc((size_t)ps->ncpus, sizeof(*ps->map_rings));
	ps->map_fds = calloc((size_t)ps->ncpus, sizeof(*ps->map_fds));
	ps->map_cpu = calloc((size_t)ps->ncpus, sizeof(*ps->map_cpu));
	if (!ps->map_rings || !ps->map_fds || !ps->map_cpu)
		return -ENOMEM; /* freed with the source */
	size_t n = 0;
	for (int c = 0; c < ps->ncpus; c++) {
		if (ps->rings[c].owner_fd < 0)
			continue;
		ps->map_cpu[n] = c;
		ps->map_fds[n++] = ps->rings[c].owner_fd;
	}
	ps->maps_pending = true;
	return perfev_ring_maps_begin(&ps->maps, ps->map_rings, ps->map_fds, n, ps->ring_kb * 1024,
				      ps->ring_kb >= 8192 ? procs : 1);
}

/* Once every ring exists (the helpers' are mapped here once the events
 * are enabled, ft_perf_source_maps_finish: ~3 ms a ring off the time to
 * armed), points each CPU's fds at its ring. BEGUN: map_rings_begin's
 * return. Returns 0, or -errno (-ENOLCK after saying what to do). */
static int map_rings_end(struct ft_perf_source *ps, int begun)
{
	/* not begun (no memory for the arrays): no helper's pipe to wait on */
	int ret = ps->maps_pending ? perfev_ring_maps_wait(&ps->maps) : 0;
	if (begun < 0)
		ret = begun;
	ft_perf_source_adopt_rings(ps);
	if (ret < 0)
		return ft_perf_source_map_failed(ps, ret);
	for (size_t i = 0; ret == 0 && i < ps->nfds; i++) {
		const struct ft_perf_ring *r = &ps->rings[ps->fd_cpu[i]];
		if (ps->fds[i] != r->owner_fd && (ret = perfev_set_output(ps->fds[i], r->owner_fd)) < 0)
			ft_error("cannot send an event's records to CPU %d's ring: %s", ps->fd_cpu[i],
				 strerror(-ret));
	}
	return ret;
}

/* Rings that grow, where this user may open per-CPU events: their owners
 * are per-CPU dummies opened before the events, and the rings are
 * allocated before the events open (a helper for each CPU but one, whose
 * ring this process maps itself). The first per-task event after a
 * second without one waits out a grace period in the kernel (~12 ms
 * here); the rings no longer wait behind it, and that wait is spent
 * mapping. Returns 0 when begun (map_rings_end then), 1 when not
 * (per-task owners, opened with the events). */
static int owners_first(struct ft_perf_source *ps, const bool *online, size_t procs, int *begun)
{
	if (!ps->dummy_owners || ps->cfg.cgroup_fd >= 0 || !ps->cfg.host ||
	    !host_perf_cpu(ps->cfg.host))
		return 1;
	for (int c = 0; c < ps->ncpus; c++) {
		struct ft_perf_ring *r = &ps->rings[c];
		if (!online[c])
			continue;
		r->owner_fd = ft_perf_source_open_owner(ps, -1, c,
							(uint32_t)(ps->ring_kb * 1024 / FT_GROW_AT));
		r->owner_pid = -1;
		if (r->owner_fd >= 0)
			continue;
		for (int k = 0; k <= c; k++) { /* refused (lockdown?): per-task ones */
			if (ps->rings[k].owner_fd >= 0)
				close(ps->rings[k].owner_fd);
			ps->rings[k].owner_fd = -1;
		}
		return 1;
	}
	*begun = map_rings_begin(ps, procs);
	return 0;
}

/* Opens event EV for (pid, cpu); the first fd on a CPU will own its ring
 * (or, for rings that grow, a dummy opened first), the first one for all
 * tasks (pid -1 or -c's child) writes its side band. */
static int open_one(struct ft_perf_source *ps, int ev, int pid, int cpu, bool first_task)
{
	const struct ft_event *e = &ps->events[ev];
	struct ft_perf_ring *r = &ps->rings[cpu];
	struct perfev_opts po;
	if (r->owner_fd < 0 && ps->dummy_owners) {
		/* a ring that will grow wakes the loop early: perf_grow.c */
		int owner = ft_perf_source_open_owner(ps, pid, cpu,
						      (uint32_t)(ps->ring_kb * 1024 / FT_GROW_AT));
		if (owner < 0)
			return owner;
		r->owner_fd = owner;
		r->owner_pid = pid;
	}
	attr_for(ps, e, &po);
	po.track = ps->cfg.track && first_task && !r->tracked;
	po.track_mmap = po.track && ps->cfg.want_user;
	po.pid_is_cgroup = ps->cfg.cgroup_fd >= 0; /* --cgroup: PID is the folder's fd */
	int fd = perfev_open(&po, pid, cpu, -1);
	if (fd < 0)
		return fd;
	int ret = ft_perf_source_add_fd(ps, fd, (uint32_t)ev, cpu);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	r->tracked |= po.track;
	uint64_t id;
	if ((ret = perfev_id(fd, &id)) < 0 || (ret = ft_perf_source_add_id(ps, id, (uint32_t)ev)) < 0)
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
	if (r->owner_fd < 0) {
		r->owner_fd = fd; /* its ring is mapped once every fd is open: map_rings */
		r->owner_pid = pid;
	}
	return 0;
}

/* The tasks to open per CPU: -1 (all) system-wide, else thread ids. */
static int task_list(const struct ft_perf_config *c, pid_t **out)
{
	const struct ft_options *o = c->opt;
	int max = 65536, n = 0;
	pid_t *t = calloc(max, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (c->child > 0) {
		t[n++] = c->child;
	} else if (o->npids) {
		for (int i = 0; i < o->npids; i++)
			n += host_tasks("/proc", o->pids[i], t + n, max - n);
	} else if (o->ntids) {
		for (int i = 0; i < o->ntids; i++)
			t[n++] = o->tids[i];
	} else {
		t[n++] = c->cgroup_fd >= 0 ? c->cgroup_fd : -1;
	}
	*out = t;
	return n;
}

/* Says why E could not be opened on TASK (a process, else every task of
 * a CPU or a cgroup's) and what to do, once; returns ERR. */
static int explain_open(int err, const struct ft_event *e, bool task)
{
	struct host_access h;
	char why[512];
	switch (err) {
	case -EACCES:
	case -EPERM:
		host_access_read("/proc", "/sys", &h);
		host_access_probe(&h);
		ft_mech_open_why(&h, task, why, sizeof(why));
		ft_error("perf_event_open(%s) refused: %s", e->name,
			 e->kind == FT_EV_KPROBE_PMU ? "the kprobe PMU needs CAP_PERFMON" :
			 e->kind == FT_EV_UPROBE_PMU ? "the uprobe PMU needs CAP_SYS_ADMIN" : why);
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
static int explain_cgroup(const struct ft_perf_config *c, int err, const struct ft_event *e)
{
	if (c->cgroup_fd >= 0)
		ft_error("cannot open %s on --cgroup %s: %s (the kernel needs CONFIG_CGROUP_PERF, and "
			 "the perf_event controller on the cgroup2 hierarchy)", e->name,
			 c->cgroup_path, strerror(-err));
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

/* Opens event EV on every CPU for every task. An optional event (one of a
 * pattern's matches) that the kernel refuses at its first open is marked
 * refused and skipped; ft_plan_report_refused says so. */
static int open_event(struct ft_perf_source *ps, int ev, const bool *online, const pid_t *tasks,
		      int ntasks)
{
	struct ft_event *e = &ps->events[ev];
	bool first = true;
	if (e->refused)
		return 0; /* refused in tracefs already */
	for (int cpu = 0; cpu < ps->ncpus; cpu++) {
		if (!online[cpu])
			continue;
		for (int t = 0; t < ntasks; t++) {
			int ret = open_one(ps, ev, tasks[t], cpu, t == 0);
			if (ret == -ESRCH && tasks[t] > 0 && ntasks > 1)
				continue; /* a thread of -p that exited meanwhile */
			if (ret < 0 && first && e->optional && ft_plan_refusal(ret)) {
				ft_debug("the kernel refused %s: %s", e->name, strerror(-ret));
				e->refused = ret;
				return 0;
			}
			if (ret < 0 && (ret == -EINVAL || ret == -EBADF) &&
			    (ps->cfg.opt->per_cgroup || ps->cfg.cgroup_fd >= 0))
				return explain_cgroup(&ps->cfg, ret, e);
			if (ret < 0)
				return explain_open(ret, e, tasks[t] > 0 &&
								    ps->cfg.cgroup_fd < 0);
			first = false;
		}
	}
	return 0;
}

/* The samples a second each CPU's event of E takes when the event says
 * (a cpu-clock or -F event: profile's -F, or its period in ns), else 0
 * (tracepoints and probes fire as often as their code runs). */
static uint64_t event_rate(const struct ft_event *e)
{
	if (e->sample_freq)
		return e->sample_freq;
	if (e->kind == FT_EV_CPU_CLOCK && e->sample_period)
		return 1000000000ull / e->sample_period;
	return 0;
}

/* Without --buffer-size: 4 MB per CPU, about 20 ms of the busiest
 * workloads here (offcpu's pipe ping-pong), so a reader that loses its CPU
 * to busy neighbours for a while loses nothing; 64 MB when samples carry a
 * copy of the stack (ten to fifty times the bytes of a callchain, so they
 * fill faster: a getppid loop writes ~2 GB/s, and 8-16 MB rings lose
 * samples in some runs while the scheduler places a -c command next to
 * the reader, doc/PERFORMANCE.md); at most 256 MB in all on large
 * machines, and never under 512 KB. Events of a known rate (profile) need
 * no more than a second of their samples: -F 49 with 64 KB copies fills
 * 4 MB, not 64 (the kernel allocates and zeroes a ring when it is mapped:
 * ~16 ms for 64 MB here, at start-up). */
static size_t default_ring_kb(const struct ft_perf_source *ps, const bool *online, int top,
			      uint32_t copy_bytes)
{
	int n = 0;
	for (int c = 0; c < top; c++)
		n += online[c];
	size_t kb = copy_bytes ? FT_COPY_RING_KB : 4096;
	uint64_t rate = 0;
	for (int e = 0; e < ps->nevents; e++) {
		uint64_t r = event_rate(&ps->events[e]);
		rate = r && rate != UINT64_MAX ? rate + r : UINT64_MAX; /* one of no rate: all */
	}
	/* a sample: its copy, registers and callchain (PERF_MAX_STACK_DEPTH
	 * entries at most), and the header */
	uint64_t need = rate && rate != UINT64_MAX ?
			rate * ((uint64_t)copy_bytes + 17 * 8 + 128 * 8 + 64) / 1024 : kb;
	while (kb > 512 && kb / 2 >= need)
		kb /= 2;
	while (n > 0 && kb > 512 && kb * (size_t)n > 256 * 1024)
		kb /= 2;
	return kb;
}

/* The ring KB a CPU this user may lock: a ring is locked memory, and
 * without CAP_IPC_LOCK (root has it) the kernel allows a user
 * kernel.perf_event_mlock_kb a CPU plus RLIMIT_MEMLOCK in all; a ring is
 * its data plus one page. From H, the run's reading of this host.
 * SIZE_MAX when unlimited. */
static size_t lockable_kb(const struct host_access *h, int ncpus)
{
	struct rlimit rl;
	if (h->root || host_access_has(h, HOST_CAP_IPC_LOCK) || ncpus <= 0)
		return SIZE_MAX;
	size_t mem = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
		     (size_t)(rl.rlim_cur / 1024) : 0;
	size_t per_cpu = (h->mlock_kb * (size_t)ncpus + mem) / (size_t)ncpus;
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

/* The ring KB a CPU of a source of EVENTS: --buffer-size, else the default
 * for what the samples carry, within LOCKABLE (lockable_kb). */
static size_t ring_kb_for(const struct ft_perf_source *ps, const bool *online, int ncpus,
			  size_t lockable)
{
	const struct ft_perf_config *c = &ps->cfg;
	if (ps->events == &sideband_event)
		return 512; /* comm/mmap/fork/exit only; --buffer-size sizes the instance */
	if (c->opt->buffer_set)
		return c->opt->buffer_kb;
	return fit_ring(default_ring_kb(ps, online, ncpus, c->want_user ? c->ucopy_size : 0),
			lockable);
}

/* What each sample carries beyond PERFEV_SAMPLE_TYPE: the user stack's
 * copy and registers, the tracepoint's raw fields, the cgroup. */
static void sample_layout(struct ft_perf_source *ps)
{
	const struct ft_perf_config *c = &ps->cfg;
	bool entry_fix = false;
	for (int e = 0; e < ps->nevents; e++)
		entry_fix |= ps->events[e].entry_fix;
	if ((c->ucopy_size || entry_fix) && c->want_user) {
		ps->sample_type |= PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
		ps->regs_mask = c->uregs_mask; /* ft_ustack_choose's, for the method */
	}
	for (int e = 0; e < ps->nevents; e++)
		if (ps->events[e].raw)
			ps->sample_type |= PERF_SAMPLE_RAW;
	if (c->opt->per_cgroup)
		ps->sample_type |= PERF_SAMPLE_CGROUP;
}

/* Opens every event on every CPU for every task, with progress. */
static int open_all(struct ft_perf_source *ps, const bool *online)
{
	pid_t *tasks = NULL;
	int ntasks = task_list(&ps->cfg, &tasks);
	if (ntasks < 0)
		return ntasks;
	raise_fd_limit((size_t)ps->nevents * (size_t)ps->ncpus * (size_t)ntasks);
	struct ft_progress pg;
	ft_progress_start(&pg, "attaching", ft_perf_source_noun(ps->events, ps->nevents), ps->nevents);
	int ret = 0;
	for (int e = 0; e < ps->nevents && ret == 0; e++) {
		ret = open_event(ps, e, online, tasks, ntasks);
		ft_progress_step(&pg);
	}
	ft_progress_end(&pg);
	free(tasks);
	return ret;
}

static int open_events(const struct ft_perf_config *cfg, int epfd, struct ft_event *events,
		       int nevents, struct ft_perf_source **out)
{
	bool online[FT_MAX_CPUS] = { false };
	int ncpus = ft_online_cpus(cfg->opt, online, FT_MAX_CPUS);
	struct ft_perf_source *ps = ft_perf_source_alloc(cfg, events, nevents, ncpus);
	*out = ps;
	if (!ps)
		return -ENOMEM;
	int nonline = 0;
	for (int cpu = 0; cpu < ncpus; cpu++)
		nonline += online[cpu];
	size_t lockable = lockable_kb(cfg->host, nonline);
	ps->ring_kb = ring_kb_for(ps, online, ncpus, lockable);
	ps->epfd = epfd;
	ft_perf_source_grow_plan(ps, lockable, ps->events == &sideband_event);
	sample_layout(ps);
	/* rings mapped by several processes are charged to each one's own
	 * memory: only for a user RLIMIT_MEMLOCK does not bind; and only where
	 * the kernel allocates rings faster side by side than a helper's fork
	 * and copy-on-write faults cost (cfg->maps_alone: ftstack check) */
	size_t procs = lockable == SIZE_MAX && !cfg->maps_alone ? (size_t)nonline : 1;
	int begun = 0, ret;
	/* this process maps a share too: a fork and its copy-on-write faults
	 * cost more than they save where the kernel allocates rings no faster
	 * side by side (doc/PERFORMANCE.md, start-up) */
	bool later = owners_first(ps, online, procs, &begun) != 0;
	if ((ret = open_all(ps, online)) < 0)
		return ret;
	if (later)
		begun = map_rings_begin(ps, procs);
	if ((ret = map_rings_end(ps, begun)) < 0)
		return ret;
	ft_perf_source_ids_done(ps);
	for (int cpu = 0; cpu < ps->ncpus; cpu++) {
		struct ft_perf_ring *r = &ps->rings[cpu];
		if (r->owner_fd < 0) /* the ring's fd, mapped here or by a helper */
			continue;
		if ((ret = ft_perf_ring_watch(epfd, r, r->owner_fd, true)) < 0)
			return ret;
	}
	ft_debug("perf: %zu events open on %d CPUs, their rings made by %zu process%s%s", ps->nfds,
		 ps->ncpus, procs, procs == 1 ? "" : "es",
		 cfg->maps_alone ? " (ftstack check's answer for this host)" : "");
	return 0;
}

int ft_perf_source_open(const struct ft_perf_config *cfg, int epfd, struct ft_perf_source **out)
{
	return open_events(cfg, epfd, cfg->plan->events, cfg->plan->nevents, out);
}

int ft_perf_source_open_sideband(const struct ft_perf_config *cfg, int epfd,
				 struct ft_perf_source **out)
{
	return open_events(cfg, epfd, &sideband_event, 1, out);
}
