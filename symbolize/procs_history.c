/* How each process's history is built: from the kernel's records (mmap,
 * comm and exec, fork, thread creation) and from /proc snapshots of
 * processes that existed before the run, in whatever order the rings give
 * them (a snapshot is dropped where a fork or exec record says better).
 * Generations (an exec starts one) hold the executable mappings, each
 * stamped with its time; comms are kept by time too. Apart from the
 * lookups (procs_lookup.c) because this is the one writer of histories. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

static int map_push(struct gen *g, const struct map *m)
{
	if (MEM_GROW(g->maps, g->cap, g->n + 1, 16) < 0)
		return -ENOMEM;
	g->maps[g->n++] = *m;
	return 0;
}

/* Starts a generation of PR at TIME (kept in time order), a layout of its
 * own. Mappings the
 * generation before holds from TIME on are this one's: rings are decoded
 * one after another, so a process's MMAP2 records (on the CPU it ran on)
 * can come before the exec or fork record (on another) that began it. */
static struct gen *gen_add(struct sym_procs *p, struct proc *pr, uint64_t time, bool snapshot)
{
	if (MEM_GROW(pr->gens, pr->cap, pr->n + 1, 2) < 0)
		return NULL;
	sym_layout_add(p, pr, time);
	size_t i = pr->n;
	while (i > 0 && pr->gens[i - 1].time > time)
		i--;
	memmove(&pr->gens[i + 1], &pr->gens[i], (pr->n - i) * sizeof(*pr->gens));
	pr->gens[i] = (struct gen){ .time = time, .snapshot = snapshot };
	pr->n++;
	struct gen *g = &pr->gens[i], *prev = i ? &pr->gens[i - 1] : NULL;
	size_t k = 0;
	for (size_t j = 0; prev && j < prev->n; j++)
		if (prev->maps[j].time < time || map_push(g, &prev->maps[j]) < 0)
			prev->maps[k++] = prev->maps[j];
	if (prev)
		prev->n = k;
	return g;
}

/* The generation in effect at TIME (the earliest when TIME precedes all:
 * a snapshot is taken a little after the first samples). */
struct gen *sym_gen_at(const struct proc *pr, uint64_t time)
{
	if (!pr || !pr->n)
		return NULL;
	for (size_t i = pr->n; i > 0; i--)
		if (pr->gens[i - 1].time <= time)
			return &pr->gens[i - 1];
	return &pr->gens[0];
}

static void comm_add(struct proc *pr, uint64_t time, const char *name, bool snapshot)
{
	size_t i = pr->ncomm;
	while (i > 0 && pr->comms[i - 1].time > time)
		i--;
	/* the same name again (a thread renaming itself to what it is) adds
	 * nothing; a snapshot's may be dropped later, so it does not count */
	if (!name || !*name || (i > 0 && !snapshot && !pr->comms[i - 1].snapshot &&
				strncmp(pr->comms[i - 1].name, name, sizeof(pr->comms[i - 1].name) - 1) == 0))
		return;
	if (MEM_GROW(pr->comms, pr->capcomm, pr->ncomm + 1, 2) < 0)
		return;
	memmove(&pr->comms[i + 1], &pr->comms[i], (pr->ncomm - i) * sizeof(*pr->comms));
	pr->comms[i].time = time;
	pr->comms[i].snapshot = snapshot;
	snprintf(pr->comms[i].name, sizeof(pr->comms[i].name), "%s", name);
	pr->ncomm++;
}

/* Forgets what snapshots said of PR from TIME on: a fork or exec record at
 * TIME starts a history the records describe completely. The MMAP2
 * mappings a dropped generation held go to the one in effect at their time. */
static void drop_snapshots_from(struct sym_procs *p, struct proc *pr, uint64_t time)
{
	sym_layout_renew_from(p, pr, time);
	for (size_t i = pr->n; i > 0; i--) {
		struct gen g = pr->gens[i - 1];
		if (!g.snapshot || g.time < time)
			continue;
		memmove(&pr->gens[i - 1], &pr->gens[i], (pr->n - i) * sizeof(*pr->gens));
		pr->n--;
		for (size_t j = 0; j < g.n; j++) {
			struct gen *to = pr->n ? sym_gen_at(pr, g.maps[j].time) : gen_add(p, pr, 0, false);
			if (!g.maps[j].snapshot && to)
				map_push(to, &g.maps[j]);
		}
		free(g.maps);
	}
	size_t k = 0;
	for (size_t i = 0; i < pr->ncomm; i++)
		if (!pr->comms[i].snapshot || pr->comms[i].time < time)
			pr->comms[k++] = pr->comms[i];
	pr->ncomm = k;
}

static int map_add(struct sym_procs *p, struct proc *pr, struct gen *g, uint64_t time,
		   uint64_t start, uint64_t end, uint64_t pgoff, long file, bool snapshot)
{
	if (file < 0 || end <= start)
		return file < 0 ? (int)file : 0;
	const struct map m = { start, end, pgoff, time, (uint32_t)file, snapshot };
	if (sym_layout_replaces(g, &m))
		sym_layout_add(p, pr, time);
	return map_push(g, &m);
}

/* Reads a /proc comm file at PATH into COMM (empty when unreadable).
 * Returns 0, -ESRCH when the task is gone, or -errno. */
static int read_comm(const char *path, char *comm, size_t len)
{
	FILE *f = fopen(path, "re");
	comm[0] = '\0';
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	return 0;
}

/* Adds the executable mappings of a /proc/PID/maps file to G. */
static int read_maps(struct sym_procs *p, struct proc *pr, FILE *f, struct gen *g, uint64_t time)
{
	char line[4352];
	int ret = 0;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		uint64_t start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &off, &maj, &min, &ino, &pos) < 7 ||
		    !strchr(perms, 'x') || !pos)
			continue;
		const struct sym_file_id id = { makedev(maj, min), ino };
		char *file = line + pos;
		file[strcspn(file, "\n")] = '\0';
		/* anonymous code (JIT) is named "//anon", as MMAP2 records name it:
		 * the unwinder's frame-pointer steps need to know it is code */
		ret = map_add(p, pr, g, time, start, end, off,
			      sym_file_index(p, pr, *file ? file : "//anon", &id, start, end), true);
	}
	return ret;
}

int sym_procs_snapshot(struct sym_procs *p, uint32_t pid, uint64_t time)
{
	char path[320], comm[64];
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", p->proc_root, pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/comm", p->proc_root, pid);
	read_comm(path, comm, sizeof(comm));
	struct proc *pr = sym_proc_get(p, pid);
	struct gen *g = NULL;
	if (pr) /* read for a sample: not a death's last one */
		sym_proc_revive(p, pr, time > SYM_EXIT_GRACE_NS ? time - SYM_EXIT_GRACE_NS : 0);
	/* only MMAP2 records seen so far: complete that generation */
	if (pr && !pr->based && pr->n) {
		g = &pr->gens[pr->n - 1];
	} else if (pr) {
		g = gen_add(p, pr, time, true);
	}
	int ret = g ? read_maps(p, pr, f, g, time) : -ENOMEM;
	fclose(f);
	if (pr) {
		pr->based = true;
		comm_add(pr, time, comm, true);
	}
	return ret;
}

bool sym_procs_known(const struct sym_procs *p, uint32_t pid)
{
	const struct proc *pr = sym_proc_find(p, pid);
	return pr && pr->based;
}

void sym_procs_mmap(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t start,
		    uint64_t len, uint64_t pgoff, bool exec, const char *filename,
		    const struct sym_file_id *id)
{
	if (!exec || !filename || !*filename || start + len < start)
		return;
	struct proc *pr = sym_proc_get(p, pid);
	if (pr)
		sym_proc_revive(p, pr, time);
	struct gen *g = !pr ? NULL : pr->n ? sym_gen_at(pr, time) : gen_add(p, pr, 0, false);
	if (g)
		map_add(p, pr, g, time, start, start + len, pgoff,
			sym_file_index(p, pr, filename, id, start, start + len), false);
}

void sym_procs_comm(struct sym_procs *p, uint32_t tid, uint64_t time, const char *comm, bool exec)
{
	struct proc *pr = sym_proc_get(p, tid);
	if (!pr)
		return;
	sym_proc_revive(p, pr, time);
	if (exec && time > pr->exit_time)
		pr->leader_gone = false; /* the exec'ing thread is the main one now */
	if (exec) {
		drop_snapshots_from(p, pr, time);
		pr->mntns_read = false; /* an exec may follow setns (a container's start) */
	}
	if (exec && gen_add(p, pr, time, false))
		pr->based = true;
	comm_add(pr, time, comm, false);
}

/* The comm a task created by thread PTID of process PPID starts with. */
static const char *creator_comm(const struct sym_procs *p, uint32_t ppid, uint32_t ptid,
				uint64_t time)
{
	const char *c = sym_procs_comm_at(p, ptid, time);
	return c ? c : sym_procs_comm_at(p, ppid, time);
}

void sym_procs_fork(struct sym_procs *p, uint32_t pid, uint32_t ppid, uint32_t ptid,
		    uint64_t time)
{
	if (pid == ppid) /* a thread: same address space */
		return;
	struct proc *pr = sym_proc_get(p, pid);
	/* looked up after proc_get: growing the table moves entries */
	const struct proc *pp = sym_proc_find(p, ppid);
	const struct gen *pg = sym_gen_at(pp, time);
	if (pr && time > pr->exit_time) { /* the pid of a process that exited, taken again */
		sym_proc_revive(p, pr, time);
		pr->leader_gone = false;
	}
	if (pr)
		pr->nspid_read = false; /* a new process's */
	if (!pr || !pg)
		return; /* parent unknown: a snapshot will tell */
	drop_snapshots_from(p, pr, time);
	struct gen *g = gen_add(p, pr, time, false);
	if (!g)
		return;
	pr->based = true;
	pr->mntns = pp->mntns; /* unless its own says otherwise, read at its next mapping */
	pr->mntns_read = false;
	comm_add(pr, time, creator_comm(p, ppid, ptid, time), false);
	/* all of them: a parent snapshot taken after the fork stamps its maps
	 * later than the fork, yet they are what the child started with */
	for (size_t i = 0; i < pg->n; i++)
		map_add(p, pr, g, time, pg->maps[i].start, pg->maps[i].end, pg->maps[i].pgoff,
			pg->maps[i].file, false);
}

void sym_procs_thread(struct sym_procs *p, uint32_t pid, uint32_t tid, uint32_t ptid,
		      uint64_t time)
{
	struct proc *t = tid != pid ? sym_proc_get(p, tid) : NULL;
	if (!t)
		return;
	sym_proc_revive(p, t, time);
	/* a process making threads runs, whatever its main thread did */
	struct proc *pr = sym_proc_find(p, pid);
	if (pr)
		sym_proc_revive(p, pr, time);
	t->thread_seen = true;
	drop_snapshots_from(p, t, time);
	comm_add(t, time, creator_comm(p, pid, ptid, time), false);
}

int sym_procs_thread_snapshot(struct sym_procs *p, uint32_t pid, uint32_t tid, uint64_t time)
{
	char path[320], comm[64];
	struct proc *t = sym_proc_get(p, tid);
	if (!t)
		return -ENOMEM;
	sym_proc_revive(p, t, time > SYM_EXIT_GRACE_NS ? time - SYM_EXIT_GRACE_NS : 0);
	t->thread_seen = true; /* tried once: a thread gone stays unnamed */
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task/%" PRIu32 "/comm", p->proc_root, pid,
		 tid);
	int ret = read_comm(path, comm, sizeof(comm));
	if (ret == 0)
		comm_add(t, time, comm, true);
	return ret;
}

bool sym_procs_thread_known(const struct sym_procs *p, uint32_t tid)
{
	const struct proc *t = sym_proc_find(p, tid);
	return t && (t->thread_seen || t->ncomm);
}

const char *sym_procs_comm_at(const struct sym_procs *p, uint32_t tid, uint64_t time)
{
	const struct proc *pr = sym_proc_find(p, tid);
	if (!pr || !pr->ncomm)
		return NULL;
	for (size_t i = pr->ncomm; i > 0; i--)
		if (pr->comms[i - 1].time <= time)
			return pr->comms[i - 1].name;
	return pr->comms[pr->ncomm - 1].name;
}
