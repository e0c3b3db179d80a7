/* Every traced process's history, so addresses name what was mapped when
 * the stack was taken, even after the process exited: per pid a list of
 * generations (address spaces: an exec starts one), each with executable
 * mappings stamped with the time they appeared, and a list of comm changes.
 * A thread other than a process's main one has an entry of its own under
 * its tid, with comm changes only (tids and pids share one number space).
 *
 * This file: the object and its table of entries by pid (open
 * addressing). The rest, one job each (internal.h holds what they share):
 *   procs_history.c  the records and /proc snapshots that build each history
 *   procs_files.c    the mapped files, one entry per path (ELF opened once)
 *   procs_lookup.c   an address at a time: its mapping, file, symbol or perf map
 *   layout.c         the layout serials; forget.c what exited */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
