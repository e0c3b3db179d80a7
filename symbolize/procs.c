/* Every traced process's history, so addresses name what was mapped when
 * the stack was taken, even after the process exited: per pid a list of
 * generations (address spaces: an exec starts one), each with executable
 * mappings stamped with the time they appeared, and a list of comm changes.
 * A thread other than a process's main one has an entry of its own under
 * its tid, with comm changes only (tids and pids share one number space).
 * ELF files are opened once per path and cached, failures too (a hash by
 * path; mappings refer to files by index). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

int sym_procs_alloc(const char *proc_root, const char *debug_root, struct sym_procs **out)
{
	struct sym_procs *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->proc_root, sizeof(p->proc_root), "%s", proc_root ? proc_root : "/proc");
	snprintf(p->debug_root, sizeof(p->debug_root), "%s", debug_root ? debug_root : "/usr/lib/debug");
	sym_procs_set_perfmap_dir(p, "/tmp");
	*out = p;
	return 0;
}

void sym_procs_set_perfmap_dir(struct sym_procs *p, const char *dir)
{
	snprintf(p->perfmap_dir, sizeof(p->perfmap_dir), "%s", dir);
}

void sym_proc_release(struct proc *pr)
{
	for (size_t g = 0; g < pr->n; g++)
		free(pr->gens[g].maps);
	free(pr->gens);
	free(pr->comms);
	free(pr->layouts);
	sym_perfmap_free(pr->perfmap);
}

void sym_procs_free(struct sym_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		if (p->procs[i].used)
			sym_proc_release(&p->procs[i]);
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		sym_elf_free(p->files[i].elf);
	}
	free(p->fhash);
	free(p->files);
	free(p->procs);
	free(p);
}

static size_t pid_slot(size_t cap, uint32_t pid)
{
	return (pid * 2654435761u) & (cap - 1);
}

struct proc *sym_proc_find(const struct sym_procs *p, uint32_t pid)
{
	if (!p || !p->cap)
		return NULL;
	for (size_t i = pid_slot(p->cap, pid); p->procs[i].used; i = (i + 1) & (p->cap - 1))
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	return NULL;
}

int sym_procs_rehash(struct sym_procs *p, size_t cap,
		     bool (*drop)(struct sym_procs *p, const struct proc *pr, void *ctx), void *ctx)
{
	struct proc *np = calloc(cap, sizeof(*np));
	if (!np)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < p->cap; i++) {
		if (!p->procs[i].used)
			continue;
		if (drop && drop(p, &p->procs[i], ctx)) {
			sym_proc_release(&p->procs[i]);
			continue;
		}
		size_t j = pid_slot(cap, p->procs[i].pid);
		while (np[j].used)
			j = (j + 1) & (cap - 1);
		np[j] = p->procs[i];
		n++;
	}
	free(p->procs);
	p->procs = np;
	p->cap = cap;
	p->n = n;
	return 0;
}

struct proc *sym_proc_get(struct sym_procs *p, uint32_t pid)
{
	struct proc *pr = sym_proc_find(p, pid);
	if (pr)
		return pr;
	if ((p->n + 1) * 2 > p->cap && sym_procs_rehash(p, p->cap ? p->cap * 2 : 256, NULL, NULL) < 0)
		return NULL;
	size_t i = pid_slot(p->cap, pid);
	while (p->procs[i].used)
		i = (i + 1) & (p->cap - 1);
	p->procs[i] = (struct proc){ .pid = pid, .used = true };
	p->n++;
	return &p->procs[i];
}

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
static struct gen *gen_at(const struct proc *pr, uint64_t time)
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
			struct gen *to = pr->n ? gen_at(pr, g.maps[j].time) : gen_add(p, pr, 0, false);
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

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h ^ (h >> 31);
}

static void fhash_insert(uint32_t *fhash, size_t cap, const struct file *files, uint32_t idx)
{
	size_t mask = cap - 1, i = path_hash(files[idx].path) & mask;
	while (fhash[i])
		i = (i + 1) & mask;
	fhash[i] = idx + 1;
}

int sym_files_rehash(struct sym_procs *p, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h && cap > p->fhcap)
		return -ENOMEM;
	if (!h) { /* shrinking without memory: the old slots, refilled */
		h = p->fhash;
		cap = p->fhcap;
		memset(h, 0, cap * sizeof(*h));
	} else {
		free(p->fhash);
	}
	for (size_t i = 0; i < p->nfiles; i++)
		fhash_insert(h, cap, p->files, (uint32_t)i);
	p->fhash = h;
	p->fhcap = cap;
	return 0;
}

/* Index of the file entry for PATH, added when new; -ENOMEM. */
static long file_index(struct sym_procs *p, const char *path)
{
	for (size_t i = p->fhcap ? path_hash(path) & (p->fhcap - 1) : 0; p->fhcap && p->fhash[i];
	     i = (i + 1) & (p->fhcap - 1))
		if (strcmp(p->files[p->fhash[i] - 1].path, path) == 0)
			return p->fhash[i] - 1;
	if ((p->nfiles + 1) * 2 > p->fhcap &&
	    sym_files_rehash(p, p->fhcap ? p->fhcap * 2 : 128) < 0)
		return -ENOMEM;
	char *copy = strdup(path);
	if (!copy || p->nfiles >= UINT32_MAX || MEM_GROW(p->files, p->capfiles, p->nfiles + 1, 64) < 0) {
		free(copy);
		return -ENOMEM;
	}
	p->files[p->nfiles] = (struct file){ .path = copy };
	fhash_insert(p->fhash, p->fhcap, p->files, (uint32_t)p->nfiles);
	return (long)p->nfiles++;
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
		uint64_t start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end,
			   perms, &off, &pos) < 4 || !strchr(perms, 'x') || !pos)
			continue;
		char *file = line + pos;
		file[strcspn(file, "\n")] = '\0';
		if (*file) /* anonymous code (JIT) has no file to name it */
			ret = map_add(p, pr, g, time, start, end, off, file_index(p, file), true);
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
		    uint64_t len, uint64_t pgoff, bool exec, const char *filename)
{
	if (!exec || !filename || !*filename || start + len < start)
		return;
	struct proc *pr = sym_proc_get(p, pid);
	if (pr)
		sym_proc_revive(p, pr, time);
	struct gen *g = !pr ? NULL : pr->n ? gen_at(pr, time) : gen_add(p, pr, 0, false);
	if (g)
		map_add(p, pr, g, time, start, start + len, pgoff, file_index(p, filename), false);
}

void sym_procs_comm(struct sym_procs *p, uint32_t tid, uint64_t time, const char *comm, bool exec)
{
	struct proc *pr = sym_proc_get(p, tid);
	if (!pr)
		return;
	sym_proc_revive(p, pr, time);
	if (exec && time > pr->exit_time)
		pr->leader_gone = false; /* the exec'ing thread is the main one now */
	if (exec)
		drop_snapshots_from(p, pr, time);
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
	const struct gen *pg = gen_at(pp, time);
	if (pr && time > pr->exit_time) { /* the pid of a process that exited, taken again */
		sym_proc_revive(p, pr, time);
		pr->leader_gone = false;
	}
	if (!pr || !pg)
		return; /* parent unknown: a snapshot will tell */
	drop_snapshots_from(p, pr, time);
	struct gen *g = gen_add(p, pr, time, false);
	if (!g)
		return;
	pr->based = true;
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

static struct sym_elf *file_elf(struct sym_procs *p, struct file *f)
{
	if (!f->tried) {
		f->tried = true;
		/* "[vdso]", "//anon", "/memfd:x (deleted)": open fails, cached */
		if (f->path[0] != '/' || sym_elf_open(f->path, p->debug_root, &f->elf) < 0)
			f->elf = NULL;
	}
	return f->elf;
}

/* The mapping of ADDR at TIME: the newest added at or before TIME, else
 * (added after the sample's stamp, records race) the earliest. */
static const struct map *map_at(const struct gen *g, uint64_t time, uint64_t addr)
{
	const struct map *best = NULL, *late = NULL;
	for (size_t i = 0; g && i < g->n; i++) {
		const struct map *m = &g->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		if (m->time <= time && (!best || m->time >= best->time))
			best = m;
		if (m->time > time && (!late || m->time < late->time))
			late = m;
	}
	return best ? best : late;
}

/* PID's id in its own pid namespace (NSpid's last field), when that is
 * another one than ours (a container). */
static bool nspid_of(const struct sym_procs *p, uint32_t pid, uint32_t *nspid)
{
	char path[320], line[256], *save = NULL;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/status", p->proc_root, pid);
	FILE *f = fopen(path, "re");
	int n = 0;
	while (f && n == 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		for (char *tok = strtok_r(line + 6, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save), n++)
			*nspid = (uint32_t)strtoul(tok, NULL, 10);
	}
	if (f)
		fclose(f);
	return n > 1;
}

/* Loads the perf map at PATH into PR when its owner may name PR's frames:
 * root, this process's user or PR's (while /proc still shows it); a map
 * anyone could write would let them rename another user's frames. */
static void load_perfmap(const struct sym_procs *p, struct proc *pr, const char *path)
{
	struct stat st, proc_st;
	char proc_path[320];
	if (stat(path, &st) < 0)
		return;
	snprintf(proc_path, sizeof(proc_path), "%s/%" PRIu32, p->proc_root, pr->pid);
	bool owner_ok = st.st_uid == 0 || st.st_uid == geteuid() ||
			(stat(proc_path, &proc_st) == 0 && proc_st.st_uid == st.st_uid);
	if (owner_ok && sym_perfmap_load(path, &pr->perfmap) < 0)
		pr->perfmap = NULL;
}

/* PR's perf map, read once: perf-PID.map in the perf map directory, else,
 * for a process in a container, its own /tmp/perf-NSPID.map through
 * /proc/PID/root (only while it runs), as perf looks for them. */
static const struct sym_perfmap *perfmap_of(const struct sym_procs *p, struct proc *pr)
{
	char path[400];
	uint32_t nspid;
	if (pr->perfmap_tried)
		return pr->perfmap;
	pr->perfmap_tried = true;
	snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", p->perfmap_dir, pr->pid);
	load_perfmap(p, pr, path);
	if (!pr->perfmap && nspid_of(p, pr->pid, &nspid)) {
		snprintf(path, sizeof(path), "%s/%" PRIu32 "/root/tmp/perf-%" PRIu32 ".map",
			 p->proc_root, pr->pid, nspid);
		load_perfmap(p, pr, path);
	}
	return pr->perfmap;
}

uint64_t sym_procs_image(const struct sym_procs *p, uint32_t pid, uint64_t time)
{
	return sym_layout_at(sym_proc_find(p, pid), time);
}

int sym_procs_module(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
		     const char **path, uint64_t *bias)
{
	const struct map *m = map_at(gen_at(sym_proc_find(p, pid), time), time, addr);
	uint64_t vaddr;
	if (!m)
		return -ENOENT;
	struct file *f = &p->files[m->file];
	struct sym_elf *e = file_elf(p, f);
	if (!e || sym_elf_offset_to_vaddr(e, addr - m->start + m->pgoff, &vaddr) < 0)
		return -ENOENT;
	*path = f->path;
	*bias = addr - vaddr;
	return 0;
}

int sym_procs_lookup(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
		     struct sym_frame *out)
{
	struct proc *pr = sym_proc_find(p, pid);
	const struct map *m = map_at(gen_at(pr, time), time, addr);
	uint64_t vaddr;
	memset(out, 0, sizeof(*out));
	if (m) {
		struct file *f = &p->files[m->file];
		out->dso = f->path;
		out->dso_offset = addr - m->start + m->pgoff;
		struct sym_elf *e = file_elf(p, f);
		if (e && sym_elf_offset_to_vaddr(e, out->dso_offset, &vaddr) == 0)
			out->name = sym_elf_lookup(e, vaddr, &out->offset);
	}
	/* no ELF symbol: JIT code (anonymous memory, or a memfd) may be named */
	const char *jit = !out->name && pr ? sym_perfmap_lookup(perfmap_of(p, pr), addr,
								&out->offset) : NULL;
	if (jit)
		out->name = jit;
	return m || jit ? 0 : -ENOENT;
}
