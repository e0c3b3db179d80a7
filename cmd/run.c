/* count, profile and offcpu: set up in order, loop, print, and release in
 * reverse order through one cleanup label. Bad input is refused before
 * anything exists in the kernel. Returns the exit status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "collector/session.h"
#include "source/source.h"
#include "host/host.h"
#include "perfev/perfev.h"

/* The first -p/-L task that belongs to another user (its /proc directory
 * is owned by its effective uid), or 0. */
static pid_t other_users_task(const struct ft_options *o)
{
	for (int i = 0; i < o->npids + o->ntids; i++) {
		pid_t id = i < o->npids ? o->pids[i] : o->tids[i - o->npids];
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%d", (int)id);
		if (stat(path, &st) == 0 && st.st_uid != geteuid())
			return id;
	}
	return 0;
}

/* The mechanism for this run on this host (plan/mech.c): refuses in one
 * line what the host does not allow (exit 2), else keeps what was chosen
 * in the session and the plan. */
static int choose_mechanism(struct ft_session *s)
{
	struct host_access *h = &s->host;
	struct ft_mech_ask a;
	host_access_read("/proc", "/sys", h);
	host_access_probe(h); /* the perf source sizes its rings by it too (what may be locked) */
	int err = tfs_find_root(s->plan.tracefs, sizeof(s->plan.tracefs));
	if (err < 0)
		s->plan.tracefs[0] = '\0';
	s->plan.tracefs_state = ft_tracefs_state("/sys", err, h);
	ft_mech_ask_from(s->opt, &a);
	a.other_user = other_users_task(s->opt);
	if (ft_mech_choose(h, s->plan.tracefs_state, &a, &s->mech) < 0) {
		ft_error("%s", s->mech.why);
		return 2;
	}
	s->plan.offcpu_ctxsw = s->mech.offcpu_ctxsw;
	s->keep.user_mode_only = !s->mech.kernel;
	s->keep.child_pidns = h->child_pidns;
	return 0;
}

/* A run on tasks opens per-task events (the side band's too): the
 * kernel's wait for the first of them (perfev/warm.c) starts now, beside
 * the set-up, where perf_event_open reaches the kernel at all. */
static void warm_task_events(const struct ft_session *s)
{
	const struct ft_options *o = s->opt;
	if ((o->command || o->npids || o->ntids) && host_perf_any(&s->host) &&
	    !s->host.perf_seccomp)
		perfev_warm_task_events();
}

/* KS's symbols read now, before the plan, which needs their names. */
static int load_kallsyms(struct ft_kernel_syms *ks)
{
	ks->path = FT_KALLSYMS;
	int ret = ft_ksyms_read(ks->path, &ks->syms);
	if (ft_kload_warn_hidden(ret)) {
		ks->syms = NULL;
		ret = 0;
	} else if (ret < 0) {
		ft_warn("cannot read %s: %s", ks->path, strerror(-ret));
	}
	if (ret == 0)
		ks->state = FT_KSYMS_READY;
	return ret;
}

/* --through's FUNC (THROUGH) added to KS's filters: one of the symbols
 * read before the plan. Returns 0 or -errno. */
static int add_through(struct ft_kernel_syms *ks, const char *through)
{
	int ret = ks->syms ? ft_kfilter_add_through(&ks->filter, ks->syms, through) : -ENOENT;
	if (ret == -ENOENT)
		ft_error("--through %s: no such kernel function in /proc/kallsyms", through);
	return ret;
}

void ft_cmd_announce(const struct ft_session *s)
{
	const struct ft_options *o = s->opt;
	const char *what = o->user_only || s->keep.user_mode_only ? "user" :
			   o->kernel_only ? "kernel" : "user + kernel";
	const char *who = s->traced.have_child ? "the command" : o->npids ? "the given processes" :
			  o->ntids ? "the given threads" : "all threads";
	char head[320], until[64];
	if (o->cmd == FT_PROFILE && o->period_ns)
		snprintf(head, sizeof(head), "Sampling every %llu ns of %s by %s stack",
			 (unsigned long long)o->period_ns, who, what);
	else if (o->cmd == FT_PROFILE)
		snprintf(head, sizeof(head), "Sampling at %llu Hertz of %s by %s stack",
			 (unsigned long long)o->freq, who, what);
	else if (o->cmd == FT_OFFCPU)
		snprintf(head, sizeof(head), "Tracing off-CPU time (us) of %s by %s stack", who, what);
	else if (s->plan.nevents == 1)
		snprintf(head, sizeof(head), "Tracing %s stacks of %s", what, s->plan.events[0].name);
	else
		snprintf(head, sizeof(head), "Tracing %s stacks of %d events", what, s->plan.nevents);
	if (o->duration > 0)
		snprintf(until, sizeof(until), " for %g secs.", o->duration);
	else
		snprintf(until, sizeof(until), "%s",
			 s->traced.have_child ? " while the command runs." : "... Hit Ctrl-C to end.");
	ft_note("%s%s", head, until);
}

static int name_cgroup(void *ctx, uint64_t id, const char *path)
{
	return host_cgroup_names_add(ctx, id, path);
}

/* --cgroup's folder opened (its fd is every event's pid, as perf -G does)
 * and, for --per-cgroup, the cgroups that exist named: the kernel's CGROUP
 * records name only those made later. Exit status. */
static int open_cgroups(struct ft_cgroup_scope *cg, const struct ft_options *o)
{
	char mnt[PATH_MAX], abs[PATH_MAX];
	int ret;
	if (!o->cgroup && !o->per_cgroup)
		return 0;
	if ((ret = host_cgroup2_mount("/proc", mnt, sizeof(mnt))) < 0) {
		ft_error("%s: no cgroup2 file system mounted here (/proc/self/mountinfo)",
			 o->cgroup ? "--cgroup" : "--per-cgroup");
		return 1;
	}
	if (o->cgroup) {
		ret = host_cgroup_resolve(mnt, o->cgroup, abs, sizeof(abs), cg->path,
					  sizeof(cg->path));
		if (ret < 0) {
			ft_error("--cgroup %s: no such cgroup under %s", o->cgroup, mnt);
			return 2;
		}
		if ((cg->fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			ft_error("--cgroup %s: cannot open %s: %s", o->cgroup, abs, strerror(errno));
			return 1;
		}
		cg->open = true;
		ft_debug("--cgroup %s: %s", o->cgroup, abs);
	}
	if (o->per_cgroup && (ret = host_cgroup_walk(mnt, name_cgroup, &cg->names)) < 0) {
		ft_error("--per-cgroup: cannot read the cgroups under %s: %s", mnt, strerror(-ret));
		return 1;
	}
	return 0;
}

static void close_cgroups(struct ft_cgroup_scope *cg)
{
	if (cg->open)
		close(cg->fd);
	cg->open = false;
}

/* The -p processes' (and -L threads' processes') maps, read once armed,
 * as for -c's command: a sample may be counted only after its process has
 * exited (samples wait while kallsyms loads), too late to read them then. */
static void know_targets(struct ft_session *s)
{
	for (int i = 0; i < s->traced.targets.n && s->keep.need_procs; i++) {
		pid_t pid = s->traced.targets.t[i].id;
		if (s->traced.targets.t[i].thread && host_tgid("/proc", pid, &pid) < 0)
			continue;
		ft_session_know_process(s, (uint32_t)pid, 0);
	}
}

/* Whether a user probe can fire in the targets: a kernel thread runs no
 * user code, so -p 2 -e c:malloc would wait in silence until Ctrl-C.
 * Says so, and returns false (bad input) when no target can; warns of
 * each kernel thread among others. True when an event is the kernel's. */
static bool user_probes_can_fire(const struct ft_session *s)
{
	const struct ft_targets *t = &s->traced.targets;
	int n = ft_targets_kernel_threads(t);
	for (int i = 0; i < s->plan.nevents && n; i++)
		if (!s->plan.events[i].path[0])
			return true; /* kernel threads reach kernel events too */
	for (int i = 0; i < t->n && n; i++) {
		char rel[32], comm[64] = "?";
		if (!t->t[i].kthread)
			continue;
		snprintf(rel, sizeof(rel), "%d/comm", (int)t->t[i].id);
		if (host_read_line("/proc", rel, comm, sizeof(comm)) == 0)
			comm[strcspn(comm, "\n")] = '\0';
		const char *opt = t->t[i].thread ? "-L" : "-p";
		if (n == t->n) { /* the first names them all */
			ft_error(n > 1 ? "%s %d (%s) and the other targets are kernel threads: they "
					 "run no user code, so %s never fires in them"
				       : "%s %d (%s) is a kernel thread: it runs no user code, so %s "
					 "never fires in it",
				 opt, (int)t->t[i].id, comm, s->plan.events[0].name);
			return false;
		}
		ft_warn("%s %d (%s) is a kernel thread: it runs no user code, so no user probe fires in it",
			opt, (int)t->t[i].id, comm);
	}
	return true;
}

/* Everything before the kernel is touched: the -p/-L targets, kernel
 * symbols when the plan needs their names, the plan, offcpu's pairing, the
 * tables. Returns 0, or the exit status after saying why (2: bad input). */
static int prepare(struct ft_session *s)
{
	if (ft_targets_open(&s->traced.targets, s->opt) < 0)
		return 2;
	int ret = open_cgroups(&s->cgroup, s->opt);
	if (ret != 0)
		return ret;
	/* first when the plan needs kernel names (kernel functions, --through);
	 * else they load when a kernel stack is first counted (count.c) */
	bool kallsyms_first = ft_plan_wants_kallsyms(s->opt);
	if (kallsyms_first && load_kallsyms(&s->kernel) < 0)
		return 1;
	s->plan.ksyms = s->kernel.syms;
	ret = ft_plan_build(s->opt, &s->plan);
	if (ret < 0)
		return ret == -EINVAL ? 2 : 1;
	if (!user_probes_can_fire(s))
		return 2;
	ft_session_configure(s, "/proc");
	if (s->keep.want_user && s->plan.backend != FT_BACKEND_FTRACE)
		ft_ustack_choose(&s->ustacks, s->opt);
	struct ft_offcpu_config oc = { .opt = s->opt, .self = s->self, .proc_root = "/proc",
		.any_task = s->opt->command != NULL, .count = ft_session_count_cb, .ctx = s }; /* weight: us */
	if (s->opt->cmd == FT_OFFCPU &&
	    (ret = ft_offcpu_alloc(s->plan.tracefs, &oc, &s->offcpu)) < 0) {
		ft_error("cannot read sched:sched_switch's format: %s",
			strerror(-ret));
		return 1;
	}
	if (s->opt->through && !s->plan.through_name)
		s->plan.through_name = s->opt->through;
	if (ft_session_alloc(s, "/proc", s->opt->debug_dir ? s->opt->debug_dir : "/usr/lib/debug") < 0) {
		ft_error("out of memory");
		return 1;
	}
	if (kallsyms_first && s->plan.through_name &&
	    add_through(&s->kernel, s->plan.through_name) < 0)
		return 2;
	return 0;
}

/* ftstack's CPU, all its threads and none of the command's (perf stat
 * --no-inherit would leave out the threads: bench/python reads this), and
 * its page faults: a fault costs ~14 us on this project's VM */
static void say_own_cpu(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		ft_debug("ftstack's own CPU: %.1f ms (user %.1f, system %.1f), %ld page faults",
			 (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
			 ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
			 ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3,
			 ru.ru_minflt + ru.ru_majflt);
}

int ft_cmd_run(const struct ft_options *o)
{
	/* on the heap: the command's child is forked below, and its stack
	 * before its exec, this frame and main's, is walked like any other:
	 * within the smallest copy (8 KB) it is whole */
	struct ft_session *s = calloc(1, sizeof(*s));
	int epfd = -1, status = 1, ret;
	struct ft_dest res = { 0 };
	struct ft_names names = { 0 };
	FILE *out = NULL;
	sigset_t mask;

	if (!s) {
		ft_error("out of memory");
		return 1;
	}
	ft_loop_signals(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	ft_session_init(s, o);
	if ((status = ft_names_open(o, &names)) != 0 || (status = choose_mechanism(s)) != 0)
		goto cleanup;
	warm_task_events(s);
	if ((status = prepare(s)) != 0)
		goto cleanup;
	sym_procs_set_debuginfod(s->procs, names.client); /* names are made at the end, -i's too */
	if (ft_sink_open(&s->sink, o) < 0) {
		status = 2;
		goto cleanup;
	}
	if ((status = ft_dest_open(o, &res)) != 0)
		goto cleanup;

	status = 1;
	out = s->output.file = res.f; /* -i prints there before the end */
	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto cleanup;
	s->kernel.epfd = epfd;
	if (ft_plan_create(&s->plan) < 0)
		goto cleanup;
	if (o->command) {
		if ((ret = ft_child_start(o->command, o->keep_root, &s->traced.child)) < 0) {
			status = ret == -EINVAL ? 2 : 1;
			goto cleanup;
		}
		s->traced.have_child = true;
	}
	/* the run's first line once bad input is ruled out: the mechanism,
	 * and what this host leaves out */
	ft_note("%s%s%s", s->mech.what, s->mech.note[0] ? "; " : "", s->mech.note);
	if (s->plan.mechanism)
		ft_warn("probes through: %s", s->plan.mechanism);
	if (ft_session_open_sources(s, epfd) < 0 || ft_plan_report_refused(&s->plan) < 0 ||
	    ft_sources_enable(&s->src) < 0)
		goto cleanup;
	/* armed; the command still waits, so its maps are read now, after: valid
	 * from the start (its exec comes later, in the records) */
	if (s->traced.have_child)
		sym_procs_snapshot(s->procs, (uint32_t)s->traced.child.pid, 0);
	know_targets(s);
	ft_cmd_announce(s);
	if (s->traced.have_child && (ret = ft_child_release(&s->traced.child)) < 0) {
		ft_error("cannot run %s: %s", o->command[0], strerror(-ret));
		goto cleanup;
	}
	ret = ft_loop_run(s, epfd);
	ft_sources_disable(&s->src);
	if (ret == 0)
		ret = ft_sources_drain_all(&s->src);
	if (ret == 0)
		ft_sources_count_lost(&s->src);
	if (ret == 0 && s->offcpu)
		ft_offcpu_finish(s->offcpu, s->last_time);
	if (ret < 0) {
		ft_error("reading the ring buffers failed: %s", strerror(-ret));
		goto cleanup;
	}
	ft_sink_interval(s);
	ret = ft_print_result(s, out);
	if (ret == 0)
		fflush(out); /* the result is out before probes are detached, which takes a while */
	if (ret < 0 && ret != -EPIPE) {
		ft_error("writing the result failed: %s", strerror(-ret));
		goto cleanup;
	}
	status = 0;
cleanup:
	/* -o FILE is in place before probes are detached, which takes a while */
	if (ft_dest_close(o, &res, status == 0) != 0)
		status = 1;
	if (s->traced.have_child)
		ft_child_stop(&s->traced.child);
	/* the events' unregistration waits (~50 ms) go to a child unless
	 * tracefs objects made for them are removed after them */
	ft_sources_close(&s->src, s->plan.log.n == 0);
	ft_targets_close(&s->traced.targets);
	ft_sink_close(&s->sink, o);
	if (epfd >= 0)
		close(epfd);
	ft_plan_destroy(&s->plan);
	close_cgroups(&s->cgroup);
	ft_session_free(s);
	free(s);
	ft_names_close(&names);
	say_own_cpu();
	return status;
}
