/* The ftrace backend: a private tracefs instance (instances/ftstack_<pid>),
 * each plan event enabled there with a stacktrace trigger (kernel stacks) and
 * the userstacktrace option (user stacks, at most 8 frames: the kernel's
 * fixed ftrace:user_stack record), per-CPU trace_pipe_raw read in whole
 * sub-buffers and decoded and paired by tracefs/raw.c. Every change is
 * recorded in the plan's undo log right after the mkdir, so undoing it
 * (newest first) ends with the rmdir of the instance. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "source/ftrace_source.h"
#include "aggregate/aggregate.h"
#include "host/host.h"

#define MAX_PAGES_PER_READY 256 /* then let other CPUs' buffers have a turn */
#define FT_FTRACE_WAKE_PERCENT "10"

/* The instance file REL's current first word (for undo values). */
static void inst_read_word(struct ft_ftrace_source *fs, const char *rel, char *buf, size_t len)
{
	char path[512], *text = NULL;
	snprintf(path, sizeof(path), "%s/%s", fs->inst, rel);
	buf[0] = '\0';
	if (tfs_read_file(fs->cfg.plan->tracefs, path, &text) > 0) {
		size_t n = strcspn(text, " \t\n");
		if (n < len) {
			memcpy(buf, text, n);
			buf[n] = '\0';
		}
	}
	free(text);
}

/* The offset of a function-entry uprobe's return-address field, or -1. */
static int entry_ra_offset(const char *root, const struct ft_event *e)
{
	int off = e->entry_fix ? tfs_event_u64_offset(root, e->system, e->event, FT_ENTRY_RA) : -1;
	return off < 0 ? -1 : off;
}

/* Each plan event's trigger, filter and enable; the type ids (and argument
 * offsets) for decoding. */
static int setup_events(struct ft_ftrace_source *fs, uint16_t *ids, int *args, uint8_t *stacks)
{
	const struct ft_ftrace_config *c = &fs->cfg;
	struct ft_plan *plan = c->plan;
	for (int i = 0; i < plan->nevents; i++) {
		const struct ft_event *e = &plan->events[i];
		args[i] = -1;
		if (e->kind == FT_EV_FUNCTION)
			continue; /* setup_function; recognised by ip, not by type */
		/* a uprobe's kernel stack is only the breakpoint's handling, and
		 * the perf backend records none: neither does this one */
		bool user = e->path[0] != '\0';
		stacks[i] = user ? TRACEFS_RAW_WANT_USTACK :
			    TRACEFS_RAW_WANT_KSTACK | TRACEFS_RAW_WANT_USTACK;
		bool kstack = (c->want_kernel || plan->through_name) && !user;
		char rel[512], trig[400], *text = NULL;
		if (e->refused)
			continue; /* a pattern's match kprobe_events refused */
		if (e->kind != FT_EV_TRACEPOINT) {
			ft_error("--backend ftrace traces tracefs events only; %s "
				"needs --backend perf", e->name);
			return -EOPNOTSUPP;
		}
		snprintf(rel, sizeof(rel), "%s/events/%s/%s/id", fs->inst, e->system, e->event);
		int ret = tfs_read_file(plan->tracefs, rel, &text);
		long id = ret > 0 ? strtol(text, NULL, 10) : -1;
		free(text);
		if (id < 0 || id > 65535) {
			ft_error("%s has no id in %s/%s", e->name,
				plan->tracefs, rel);
			return ret < 0 ? ret : -EINVAL;
		}
		ids[i] = (uint16_t)id;
		args[i] = entry_ra_offset(plan->tracefs, e);
		/* the trigger carries the filter too: unconditional triggers fire on
		 * hits the event filter throws away */
		char err[256] = "";
		const char *what = "filter", *value = e->filter;
		if (e->filter[0] && (
		    ret = tfs_event_filter(&plan->log, fs->ti, e->system, e->event, e->filter, err,
					   sizeof(err))) < 0)
			goto refused;
		snprintf(trig, sizeof(trig), "stacktrace%s%s", e->filter[0] ? " if " : "", e->filter);
		if (kstack && (what = "trigger", value = trig,
		    ret = tfs_trigger_add(&plan->log, fs->ti, e->system, e->event, trig, err,
					  sizeof(err))) < 0)
			goto refused;
		what = "enable", value = "1";
		if ((ret = tfs_event_enable(&plan->log, fs->ti, e->system, e->event)) < 0)
			goto refused;
		continue;
refused:
		ft_error("cannot write '%s' to %s/%s/events/%s/%s/%s: %s%s%s",
			value, plan->tracefs, fs->inst, e->system, e->event, what, strerror(-ret),
			err[0] ? ": " : "", err);
		return ret;
	}
	return 0;
}

/* Appends every thread of process PID to set_event_pid (it filters by
 * thread); event-fork adds the threads and children made later. */
static int follow_tid(struct ft_ftrace_source *fs, const char *tid)
{
	int ret = ft_ftrace_write(fs, "set_event_pid", tid, true, TRACEFS_UNDO_WRITE, " ");
	/* the function tracer has a pid list of its own */
	if (ret == 0 && fs->cfg.plan->function_tracer)
		ret = ft_ftrace_write(fs, "set_ftrace_pid", tid, true, TRACEFS_UNDO_WRITE, " ");
	return ret;
}

static int follow_process(struct ft_ftrace_source *fs, pid_t pid)
{
	char val[16];
	pid_t tids[4096];
	int n = host_tasks("/proc", pid, tids, 4096), ret = 0;
	if (n == 0) /* not started yet (-c) or gone: the pid itself */
		tids[n++] = pid;
	for (int i = 0; i < n && ret == 0; i++) {
		snprintf(val, sizeof(val), "%d", (int)tids[i]);
		ret = follow_tid(fs, val);
	}
	return ret;
}

/* -c, -p, -L: only those tasks (and, through event-fork and function-fork,
 * their children). */
static int setup_pids(struct ft_ftrace_source *fs)
{
	const struct ft_ftrace_config *c = &fs->cfg;
	const struct ft_options *o = c->opt;
	char val[16];
	int ret = 0;
	if (!c->child && !o->npids && !o->ntids)
		return 0;
	if (c->child)
		ret = follow_process(fs, c->child);
	for (int i = 0; i < o->npids && ret == 0; i++)
		ret = follow_process(fs, o->pids[i]);
	for (int i = 0; i < o->ntids && ret == 0; i++) {
		snprintf(val, sizeof(val), "%d", (int)o->tids[i]);
		ret = follow_tid(fs, val);
	}
	if (ret == 0 && (c->child || o->npids))
		ret = ft_ftrace_write(fs, "options/event-fork", "1", false, TRACEFS_UNDO_WRITE, "0");
	if (ret == 0 && (c->child || o->npids) && c->plan->function_tracer)
		ret = ft_ftrace_write(fs, "options/function-fork", "1", false, TRACEFS_UNDO_WRITE,
				      "0");
	return ret;
}

static int setup_cpumask(struct ft_ftrace_source *fs, const bool *online, int top)
{
	char mask[FT_MAX_CPUS / 4 + FT_MAX_CPUS / 32 + 2], old[64];
	size_t m = 0;
	if (!fs->cfg.opt->cpus_set)
		return 0;
	/* comma-separated 32-bit hex groups, most significant first */
	for (int g = (top - 1) / 32; g >= 0; g--) {
		uint32_t w = 0;
		for (int b = 0; b < 32 && g * 32 + b < top; b++)
			w |= online[g * 32 + b] ? 1u << b : 0;
		m += (size_t)snprintf(mask + m, sizeof(mask) - m, g ? "%08x," : "%08x", w);
	}
	inst_read_word(fs, "tracing_cpumask", old, sizeof(old));
	return ft_ftrace_write(fs, "tracing_cpumask", mask, false, TRACEFS_UNDO_WRITE,
			  old[0] ? old : "ffffffff");
}

/* The instance's settings that are not per event. */
static int setup_instance(struct ft_ftrace_source *fs)
{
	const struct ft_ftrace_config *c = &fs->cfg;
	char val[32], old[32];
	int ret;
	/* nothing is recorded until enable */
	inst_read_word(fs, "buffer_percent", old, sizeof(old));
	if ((ret = ft_ftrace_write(fs, "tracing_on", "0", false, TRACEFS_UNDO_WRITE, "0")) < 0 ||
	    /* wake the reader early (the default is half full): a reader that
	     * loses its CPU for a while still has most of the buffer left */
	    (old[0] && (ret = ft_ftrace_write(fs, "buffer_percent", FT_FTRACE_WAKE_PERCENT, false,
					 TRACEFS_UNDO_WRITE, old)) < 0) ||
	    /* a full buffer drops new events (counted) instead of overwriting
	     * unread pages under the reader */
	    (ret = ft_ftrace_write(fs, "options/overwrite", "0", false, TRACEFS_UNDO_WRITE, "1")) < 0)
		return ret;
	/* unless told, the instance keeps the kernel's size (trace_buf_size,
	 * 1410 KB per CPU by default), larger than the perf rings' default */
	if (c->opt->buffer_set) {
		inst_read_word(fs, "buffer_size_kb", old, sizeof(old));
		snprintf(val, sizeof(val), "%zu", c->opt->buffer_kb);
		if ((ret = ft_ftrace_write(fs, "buffer_size_kb", val, false, TRACEFS_UNDO_WRITE,
				      old[0] ? old : "1410")) < 0)
			return ret;
	}
	if (c->want_user &&
	    (ret = ft_ftrace_write(fs, "options/userstacktrace", "1", false, TRACEFS_UNDO_WRITE,
			      "0")) < 0)
		return ret;
	return setup_pids(fs);
}

static size_t subbuf_size(struct ft_ftrace_source *fs)
{
	char word[32];
	inst_read_word(fs, "buffer_subbuf_size_kb", word, sizeof(word));
	long kb = atol(word);
	/* older kernels have no such file: one page */
	return kb > 0 && kb <= 1024 ? (size_t)kb * 1024 : (size_t)getpagesize();
}

static int open_cpus(struct ft_ftrace_source *fs, int epfd, struct tfs_raw_types *t)
{
	const struct ft_ftrace_config *c = &fs->cfg;
	static bool online[FT_MAX_CPUS];
	memset(online, 0, sizeof(online));
	int top = ft_online_cpus(c->opt, online, FT_MAX_CPUS), ret;
	if ((ret = setup_cpumask(fs, online, top)) < 0)
		return ret;
	fs->cpus = calloc((size_t)top + 1, sizeof(*fs->cpus));
	fs->buf = malloc(fs->subbuf);
	if (!fs->cpus || !fs->buf)
		return -ENOMEM;
	int k = tfs_event_type_id(c->plan->tracefs, "ftrace", "kernel_stack");
	int u = tfs_event_type_id(c->plan->tracefs, "ftrace", "user_stack");
	if (k < 0 || u < 0) {
		ft_error("no ftrace/kernel_stack or user_stack format in %s",
			c->plan->tracefs);
		return k < 0 ? k : u;
	}
	t->kernel_stack = (uint16_t)k;
	t->user_stack = (uint16_t)u;
	for (int cpu = 0; cpu < top; cpu++) {
		if (!online[cpu])
			continue;
		struct ft_ftrace_cpu *pc = &fs->cpus[fs->ncpus];
		pc->src = fs;
		pc->cpu = cpu;
		pc->fd = tfs_cpu_open(fs->ti, cpu, fs->subbuf, &pc->tcpu);
		if (pc->fd < 0) {
			ft_error("cannot open %s/%s/per_cpu/cpu%d/trace_pipe_raw: %s",
				c->plan->tracefs, fs->inst, cpu, strerror(-pc->fd));
			return pc->fd;
		}
		fs->ncpus++;
		if ((ret = tfs_raw_alloc(t, fs->subbuf, c->want_kernel || c->plan->through_name,
					      c->want_user, &pc->raw)) < 0)
			return ret;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = pc };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, pc->fd, &ev) < 0)
			return -errno;
	}
	return 0;
}

int ft_ftrace_source_open(const struct ft_ftrace_config *cfg, int epfd,
			  struct ft_ftrace_source **out)
{
	struct ft_ftrace_source *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	*out = fs; /* closed by the caller, also when the set-up fails half way */
	fs->cfg = *cfg;
	const struct ft_ftrace_config *c = &fs->cfg;
	snprintf(fs->inst, sizeof(fs->inst), "instances/%s", c->plan->group);
	size_t n = (size_t)c->plan->nevents + 1;
	uint16_t *ids = calloc(n, sizeof(*ids));
	int *args = calloc(n, sizeof(*args));
	uint8_t *stacks = calloc(n, sizeof(*stacks));
	struct tfs_raw_func *funcs = calloc(n, sizeof(*funcs));
	struct tfs_raw_types t = { .events = ids, .nevents = c->plan->nevents,
				       .arg_offsets = args, .stacks = stacks, .funcs = funcs };
	int ret = ids && args && stacks && funcs ?
		  tfs_instance_create(&c->plan->log, c->plan->group, &fs->ti) : -ENOMEM;
	if (ret < 0 && ret != -ENOMEM)
		ft_warn("cannot make the instance %s/%s: %s", c->plan->tracefs,
			fs->inst, strerror(-ret));
	if (ret == 0)
		ret = setup_instance(fs);
	if (ret == 0)
		ret = setup_events(fs, ids, args, stacks);
	if (ret == 0 && c->plan->function_tracer)
		ret = ft_ftrace_function_setup(fs, &t);
	if (ret == 0) {
		fs->subbuf = subbuf_size(fs);
		ret = open_cpus(fs, epfd, &t);
	}
	free(ids);
	free(args);
	free(stacks);
	free(funcs);
	if (ret == -ENOMEM)
		ft_error("out of memory");
	return ret;
}

int ft_ftrace_source_enable(struct ft_ftrace_source *fs)
{
	return ft_ftrace_write(fs, "tracing_on", "1", false, TRACEFS_UNDO_WRITE, "0");
}

void ft_ftrace_source_disable(struct ft_ftrace_source *fs)
{
	if (fs)
		ft_ftrace_write(fs, "tracing_on", "0", false, TRACEFS_UNDO_WRITE, "0");
}

bool ft_ftrace_source_owns(const struct ft_ftrace_source *fs, const void *cookie)
{
	return fs && fs->ncpus && cookie >= (const void *)fs->cpus &&
	       cookie < (const void *)(fs->cpus + fs->ncpus);
}

/* Remembers that thread TID is of process TGID (its set's oldest out) */
static void tgid_put(struct ft_ftrace_source *fs, uint32_t tid, uint32_t tgid)
{
	typeof(fs->tgids[0]) *set = &fs->tgids[agg_cache_set(tid, 0, TGID_CACHE)], *t = NULL;
	for (unsigned w = 0; w < AGG_CACHE_WAYS && !t; w++)
		if (set[w].tid == tid)
			t = &set[w];
	if (!t)
		t = agg_cache_front(set, sizeof(*set));
	t->tid = tid, t->tgid = tgid;
}

/* The process of thread TID: from /proc on first sight, then cached. Records
 * carry only the thread; the user_stack record has the process when it came. */
static uint32_t tgid_of(struct ft_ftrace_source *fs, uint32_t tid)
{
	const typeof(fs->tgids[0]) *set = &fs->tgids[agg_cache_set(tid, 0, TGID_CACHE)];
	for (unsigned w = 0; w < AGG_CACHE_WAYS && tid; w++)
		if (set[w].tid == tid)
			return set[w].tgid;
	pid_t tgid = (pid_t)tid;
	host_tgid("/proc", (pid_t)tid, &tgid); /* gone: its own process, as before it exited */
	tgid_put(fs, tid, (uint32_t)tgid);
	return (uint32_t)tgid;
}

static void on_sample(void *ctx, const struct tfs_raw_sample *rs)
{
	struct ft_ftrace_cpu *pc = ctx;
	struct ft_ftrace_source *fs = pc->src;
	const struct ft_ftrace_config *c = &fs->cfg;
	uint32_t tid = (uint32_t)rs->tid;
	uint32_t pid = rs->tgid ? rs->tgid : tid == 0 ? 0 : tgid_of(fs, tid);
	if (pid == (uint32_t)c->self) {
		(*c->self_events)++;
		return;
	}
	if (rs->tgid)
		tgid_put(fs, tid, rs->tgid);
	const uint64_t *kips = rs->kips;
	uint32_t nkips = rs->nkips;
	if (c->plan->events[rs->event].kind == FT_EV_FUNCTION)
		ft_ftrace_function_cut(&c->plan->events[rs->event], &kips, &nkips);
	struct perfev_sample smp = {
		.pid = pid, .tid = tid, .time = rs->ts, .cpu = (uint32_t)pc->cpu, .period = 1,
		.kips = kips, .nkips = nkips, .uips = rs->uips, .nuips = rs->nuips,
		/* [sp] at a function-entry uprobe, as the perf backend's user stack copy */
		.ustack = rs->has_arg ? (const uint8_t *)&rs->arg : NULL,
		.ustack_size = rs->has_arg ? sizeof(rs->arg) : 0,
	};
	c->count(c->ctx, &smp, (uint32_t)rs->event, 1);
}

void ft_ftrace_cpu_feed(struct ft_ftrace_cpu *pc, const void *page, size_t len)
{
	if (tfs_raw_feed(pc->raw, page, len, on_sample, pc) < 0)
		pc->src->bad_pages++;
}

void ft_ftrace_cpu_flush(struct ft_ftrace_cpu *pc)
{
	tfs_raw_flush(pc->raw, on_sample, pc);
}

static int read_cpu(struct ft_ftrace_cpu *pc, int max_pages)
{
	struct ft_ftrace_source *fs = pc->src;
	for (int i = 0; i < max_pages; i++) {
		ssize_t n = tfs_cpu_read(pc->tcpu, fs->buf);
		if (n <= 0)
			return (int)n;
		ft_ftrace_cpu_feed(pc, fs->buf, (size_t)n);
	}
	return 0;
}

int ft_ftrace_source_ready(struct ft_ftrace_source *fs, void *cookie)
{
	if (!ft_ftrace_source_owns(fs, cookie))
		return 0;
	return read_cpu(cookie, MAX_PAGES_PER_READY);
}

/* Reads "KEY: N" from per_cpu/cpuN/stats. Returns false when absent. */
static bool stat_value(const char *text, const char *key, uint64_t *out)
{
	const char *p = strstr(text, key);
	if (!p)
		return false;
	*out = strtoull(p + strlen(key), NULL, 10);
	return true;
}

/* Adds what the kernel could not store since the last look: overrun
 * (overwritten) and dropped (buffer full) events, from the CPU's stats;
 * pages' "missed events" counts only when the stats cannot be read. */
static void add_lost(struct ft_ftrace_cpu *pc)
{
	struct ft_ftrace_source *fs = pc->src;
	char rel[128], *text = NULL;
	uint64_t over = 0, drop = 0;
	snprintf(rel, sizeof(rel), "%s/per_cpu/cpu%d/stats", fs->inst, pc->cpu);
	if (tfs_read_file(fs->cfg.plan->tracefs, rel, &text) > 0 &&
	    stat_value(text, "overrun:", &over)) {
		stat_value(text, "dropped events:", &drop);
		if (over > pc->overrun)
			*fs->cfg.lost += over - pc->overrun;
		if (drop > pc->dropped)
			*fs->cfg.lost += drop - pc->dropped;
		pc->overrun = over;
		pc->dropped = drop;
	} else {
		uint64_t m = tfs_raw_stats(pc->raw)->missed;
		*fs->cfg.lost += m - pc->missed;
		pc->missed = m;
	}
	free(text);
}

int ft_ftrace_source_drain_all(struct ft_ftrace_source *fs)
{
	if (!fs)
		return 0;
	for (int i = 0; i < fs->ncpus; i++) {
		struct ft_ftrace_cpu *pc = &fs->cpus[i];
		int ret = read_cpu(pc, 1 << 30);
		if (ret < 0)
			return ret;
		ft_ftrace_cpu_flush(pc);
		add_lost(pc);
		const struct tfs_raw_stats *st = tfs_raw_stats(pc->raw);
		ft_debug("ftrace cpu%d: %llu pages, %llu events, %llu kernel stacks, %llu user "
			 "stacks, %llu orphan stacks, %llu incomplete, %llu missed, %llu bad pages",
			 pc->cpu, (unsigned long long)st->pages, (unsigned long long)st->events,
			 (unsigned long long)st->kstacks, (unsigned long long)st->ustacks,
			 (unsigned long long)st->orphans, (unsigned long long)st->incomplete,
			 (unsigned long long)(st->missed + st->missed_unknown),
			 (unsigned long long)st->bad_pages);
	}
	return 0;
}

void ft_ftrace_source_close(struct ft_ftrace_source *fs)
{
	if (!fs)
		return;
	for (int i = 0; i < fs->ncpus; i++) {
		if (fs->cpus[i].tcpu)
			tfs_cpu_close(fs->cpus[i].tcpu);
		tfs_raw_free(fs->cpus[i].raw);
	}
	free(fs->cpus);
	free(fs->buf);
	free(fs);
}
