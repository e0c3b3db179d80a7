/* Every traced process's history, so addresses name what was mapped when
 * the stack was taken, even after the process exited: per pid a list of
 * generations (an exec starts one), each with its comm and its executable
 * mappings stamped with the time they appeared. ELF files are opened once
 * per path and cached, failures too. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/symbolize.h"

struct map {
	uint64_t start, end, pgoff, time;
	const char *path; /* interned in the file cache */
};

struct gen {
	uint64_t time;
	char comm[16];
	struct map *maps;
	size_t n, cap;
};

struct proc {
	uint32_t pid;
	bool used, exited;
	struct gen *gens;
	size_t n, cap;
};

struct file {
	char *path;
	struct sym_elf *elf; /* NULL: not readable as ELF */
	bool tried;
};

struct sym_procs {
	char proc_root[256];
	char debug_root[256];
	struct proc *procs;
	size_t cap, n;
	struct file *files;
	size_t nfiles, capfiles;
};

int sym_procs_create(const char *proc_root, const char *debug_root, struct sym_procs **out)
{
	struct sym_procs *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->proc_root, sizeof(p->proc_root), "%s", proc_root);
	snprintf(p->debug_root, sizeof(p->debug_root), "%s", debug_root ? debug_root : "/usr/lib/debug");
	*out = p;
	return 0;
}

void sym_procs_free(struct sym_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++) {
		for (size_t g = 0; g < p->procs[i].n; g++)
			free(p->procs[i].gens[g].maps);
		free(p->procs[i].gens);
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		sym_elf_free(p->files[i].elf);
	}
	free(p->files);
	free(p->procs);
	free(p);
}

static size_t pid_slot(size_t cap, uint32_t pid)
{
	return (pid * 2654435761u) & (cap - 1);
}

static struct proc *proc_find(const struct sym_procs *p, uint32_t pid)
{
	if (!p->cap)
		return NULL;
	for (size_t i = pid_slot(p->cap, pid); p->procs[i].used; i = (i + 1) & (p->cap - 1))
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	return NULL;
}

static struct proc *proc_get(struct sym_procs *p, uint32_t pid)
{
	struct proc *pr = proc_find(p, pid);
	if (pr)
		return pr;
	if ((p->n + 1) * 2 > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct proc *np = calloc(cap, sizeof(*np));
		if (!np)
			return NULL;
		for (size_t i = 0; i < p->cap; i++) {
			if (!p->procs[i].used)
				continue;
			size_t j = pid_slot(cap, p->procs[i].pid);
			while (np[j].used)
				j = (j + 1) & (cap - 1);
			np[j] = p->procs[i];
		}
		free(p->procs);
		p->procs = np;
		p->cap = cap;
	}
	size_t i = pid_slot(p->cap, pid);
	while (p->procs[i].used)
		i = (i + 1) & (p->cap - 1);
	p->procs[i] = (struct proc){ .pid = pid, .used = true };
	p->n++;
	return &p->procs[i];
}

/* Starts a generation of PR at TIME (kept in time order). */
static struct gen *gen_add(struct proc *pr, uint64_t time)
{
	if (pr->n == pr->cap) {
		size_t cap = pr->cap ? pr->cap * 2 : 2;
		struct gen *ng = realloc(pr->gens, cap * sizeof(*ng));
		if (!ng)
			return NULL;
		pr->gens = ng;
		pr->cap = cap;
	}
	size_t i = pr->n;
	while (i > 0 && pr->gens[i - 1].time > time)
		i--;
	memmove(&pr->gens[i + 1], &pr->gens[i], (pr->n - i) * sizeof(*pr->gens));
	pr->gens[i] = (struct gen){ .time = time };
	pr->n++;
	return &pr->gens[i];
}

/* The generation in effect at TIME (the earliest when TIME precedes all). */
static struct gen *gen_at(const struct proc *pr, uint64_t time)
{
	if (!pr || !pr->n)
		return NULL;
	for (size_t i = pr->n; i > 0; i--)
		if (pr->gens[i - 1].time <= time)
			return &pr->gens[i - 1];
	return &pr->gens[0];
}

static const char *intern_path(struct sym_procs *p, const char *path)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (strcmp(p->files[i].path, path) == 0)
			return p->files[i].path;
	if (p->nfiles == p->capfiles) {
		size_t cap = p->capfiles ? p->capfiles * 2 : 64;
		struct file *nf = realloc(p->files, cap * sizeof(*nf));
		if (!nf)
			return NULL;
		p->files = nf;
		p->capfiles = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	p->files[p->nfiles++] = (struct file){ .path = copy };
	return copy;
}

static int map_add(struct sym_procs *p, struct gen *g, uint64_t time, uint64_t start,
		   uint64_t end, uint64_t pgoff, const char *path)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct map *nm = realloc(g->maps, cap * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		g->maps = nm;
		g->cap = cap;
	}
	const char *ip = intern_path(p, path);
	if (!ip)
		return -ENOMEM;
	g->maps[g->n++] = (struct map){ start, end, pgoff, time, ip };
	return 0;
}

static void read_comm(const struct sym_procs *p, uint32_t pid, char *comm, size_t len)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/%u/comm", p->proc_root, pid);
	FILE *f = fopen(path, "r");
	if (f && fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
}

int sym_procs_snapshot(struct sym_procs *p, uint32_t pid, uint64_t time)
{
	char path[320], line[4352];
	snprintf(path, sizeof(path), "%s/%u/maps", p->proc_root, pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	struct proc *pr = proc_get(p, pid);
	struct gen *g = pr ? gen_add(pr, time) : NULL;
	int ret = g ? 0 : -ENOMEM;
	if (g)
		read_comm(p, pid, g->comm, sizeof(g->comm));
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		uint64_t start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end,
			   perms, &off, &pos) < 4 || !strchr(perms, 'x') || !pos)
			continue;
		char *file = line + pos;
		file[strcspn(file, "\n")] = '\0';
		if (*file)
			ret = map_add(p, g, time, start, end, off, file);
	}
	fclose(f);
	return ret;
}

bool sym_procs_known(const struct sym_procs *p, uint32_t pid)
{
	const struct proc *pr = proc_find(p, pid);
	return pr && pr->n;
}

void sym_procs_mmap(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t start,
		    uint64_t len, uint64_t pgoff, bool exec, const char *filename)
{
	if (!exec || !filename)
		return;
	struct proc *pr = proc_get(p, pid);
	if (!pr)
		return;
	struct gen *g = pr->n ? gen_at(pr, time) : gen_add(pr, 0);
	if (g)
		map_add(p, g, time, start, start + len, pgoff, filename);
}

void sym_procs_comm(struct sym_procs *p, uint32_t pid, uint64_t time, const char *comm, bool exec)
{
	struct proc *pr = proc_get(p, pid);
	if (!pr)
		return;
	struct gen *g = exec || !pr->n ? gen_add(pr, exec ? time : 0) : gen_at(pr, time);
	if (g)
		snprintf(g->comm, sizeof(g->comm), "%s", comm);
}

void sym_procs_fork(struct sym_procs *p, uint32_t pid, uint32_t ppid, uint64_t time)
{
	struct proc *pr = proc_get(p, pid);
	struct gen *g = pr ? gen_add(pr, time) : NULL;
	/* looked up after proc_get: growing the table moves entries */
	const struct gen *pg = g ? gen_at(proc_find(p, ppid), time) : NULL;
	if (!pg || pg == g)
		return;
	memcpy(g->comm, pg->comm, sizeof(g->comm));
	for (size_t i = 0; i < pg->n; i++)
		map_add(p, g, time, pg->maps[i].start, pg->maps[i].end, pg->maps[i].pgoff,
			pg->maps[i].path);
}

void sym_procs_exit(struct sym_procs *p, uint32_t pid, uint64_t time)
{
	(void)time;
	struct proc *pr = proc_find(p, pid);
	if (pr)
		pr->exited = true; /* its history stays: exited processes still symbolize */
}

const char *sym_procs_comm_at(const struct sym_procs *p, uint32_t pid, uint64_t time)
{
	const struct proc *pr = proc_find(p, pid);
	const struct gen *g = gen_at(pr, time);
	if (g && g->comm[0])
		return g->comm;
	for (size_t i = pr ? pr->n : 0; i > 0; i--)
		if (pr->gens[i - 1].comm[0])
			return pr->gens[i - 1].comm;
	return NULL;
}

static struct sym_elf *file_elf(struct sym_procs *p, const char *path)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		struct file *f = &p->files[i];
		if (f->path != path && strcmp(f->path, path) != 0)
			continue;
		if (!f->tried) {
			f->tried = true;
			if (path[0] == '/' && sym_elf_open(path, p->debug_root, &f->elf) < 0)
				f->elf = NULL;
		}
		return f->elf;
	}
	return NULL;
}

int sym_procs_lookup(struct sym_procs *p, uint32_t pid, uint64_t time, uint64_t addr,
		     struct sym_frame *out)
{
	const struct gen *g = gen_at(proc_find(p, pid), time);
	const struct map *m = NULL;
	memset(out, 0, sizeof(*out));
	for (size_t i = g ? g->n : 0; i > 0 && !m; i--) {
		const struct map *c = &g->maps[i - 1];
		if (addr >= c->start && addr < c->end && c->time <= time)
			m = c;
	}
	for (size_t i = g ? g->n : 0; i > 0 && !m; i--) {
		const struct map *c = &g->maps[i - 1];
		if (addr >= c->start && addr < c->end)
			m = c; /* mapped after the sample's time stamp: best guess */
	}
	if (!m)
		return -ENOENT;
	out->dso = m->path;
	out->dso_offset = addr - m->start + m->pgoff;
	struct sym_elf *e = file_elf(p, m->path);
	uint64_t vaddr;
	if (e && sym_elf_offset_to_vaddr(e, out->dso_offset, &vaddr) == 0)
		out->name = sym_elf_lookup(e, vaddr, &out->offset);
	return 0;
}
