/* Every traced process's history, so addresses name what was mapped when
 * the stack was taken, even after the process exited: per pid a list of
 * generations (address spaces: an exec starts one), each with executable
 * mappings stamped with the time they appeared, and a list of comm changes.
 * A thread other than a process's main one has an entry of its own under
 * its tid, with comm changes only (tids and pids share one number space).
 *
 * This file: the object and its entries, found by pid through the hash
 * index (aggregate/index.c). The rest, one job each (internal.h holds what they share):
 *   procs_history.c  the records and /proc snapshots that build each history
 *   procs_files.c    the mapped files, one entry per path (ELF opened once)
 *   procs_lookup.c   an address at a time: its mapping, file, symbol or perf map
 *   layout.c         the layout serials; forget.c what exited */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

int sym_procs_alloc(const char *proc_root, const char *debug_root, struct sym_procs **out)
{
	struct sym_procs *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!(p->hint = calloc(1, sizeof(*p->hint)))) {
		free(p);
		return -ENOMEM;
	}
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
	for (size_t i = 0; i < pr->nperfmap_old; i++)
		sym_perfmap_free(pr->perfmap_old[i]);
	free(pr->perfmap_old);
}

void sym_procs_free(struct sym_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		sym_proc_release(&p->procs[i]);
	for (size_t i = 0; i < p->nfiles; i++)
		sym_file_release(&p->files[i]);
	agg_index_clear(&p->fidx);
	agg_index_clear(&p->pids);
	free(p->files);
	free(p->procs);
	free(p->hint);
	free(p);
}

static uint64_t pid_hash(uint32_t pid)
{
	return agg_hash_finish(agg_hash_mix(0, pid));
}

/* The entry of PID (P's probe left where it ended), or NULL. */
static struct proc *find(const struct sym_procs *p, uint32_t pid, struct agg_probe *pr)
{
	for (uint32_t it = agg_index_first(&p->pids, pid_hash(pid), pr); it;
	     it = agg_index_next(&p->pids, pr))
		if (p->procs[it - 1].pid == pid)
			return &p->procs[it - 1];
	return NULL;
}

struct proc *sym_proc_find(const struct sym_procs *p, uint32_t pid)
{
	struct agg_probe pr;
	if (!p)
		return NULL;
	/* a run's records come mostly from one process, and each record asks
	 * two or three times (count, the walk, its image): the last entry
	 * found is tried first (a hash probe was 4-6% of count's reader) */
	size_t *hint = p->hint;
	if (*hint < p->n && p->procs[*hint].pid == pid)
		return &p->procs[*hint];
	struct proc *found = find(p, pid, &pr);
	if (found)
		*hint = (size_t)(found - p->procs);
	return found;
}

/* CAP halved while N entries still fit in a quarter of it (and it stays at
 * least MIN): after many exits the array shrinks. */
static size_t shrunk(size_t cap, size_t n, size_t min)
{
	while (cap / 2 >= min && (n + 1) * 4 <= cap / 2)
		cap /= 2;
	return cap;
}

int sym_procs_compact(struct sym_procs *p, size_t kept,
		      bool (*drop)(struct sym_procs *p, const struct proc *pr, void *ctx), void *ctx)
{
	if (kept > p->n || agg_index_reset(&p->pids, (uint32_t)kept) < 0)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (drop(p, &p->procs[i], ctx)) {
			sym_proc_release(&p->procs[i]);
			continue;
		}
		p->procs[n] = p->procs[i];
		agg_index_add(&p->pids, pid_hash(p->procs[n].pid), (uint32_t)n + 1);
		n++;
	}
	p->n = n;
	size_t cap = shrunk(p->cap, n, 256);
	struct proc *np = cap < p->cap ? realloc(p->procs, cap * sizeof(*np)) : NULL;
	if (np) {
		p->procs = np;
		p->cap = cap;
	}
	return 0;
}

struct proc *sym_proc_get(struct sym_procs *p, uint32_t pid)
{
	struct agg_probe pr;
	if (agg_index_reserve(&p->pids) < 0)
		return NULL;
	struct proc *found = find(p, pid, &pr);
	if (found)
		return found;
	if (p->n >= UINT32_MAX - 1 || MEM_GROW(p->procs, p->cap, p->n + 1, 256) < 0)
		return NULL;
	p->procs[p->n] = (struct proc){ .pid = pid };
	agg_index_put(&p->pids, &pr, (uint32_t)p->n + 1);
	return &p->procs[p->n++];
}
