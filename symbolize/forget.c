/* Forgetting the tasks that exited, so the process history grows with what
 * runs, not with everything that ever ran. A task's EXIT record marks its
 * entry; once every ring has been read past the exit (and the grace its
 * last samples take), nothing of it can come any more, and the caller
 * forgets it after it named what it counted (or keeps it while its table
 * still holds the task's stacks). The ELF files no mapping left refers to
 * go with it.
 *
 * A process ends with its main thread's exit, unless it goes on without it
 * (pthread_exit in main): then a later record or sample of it brings it
 * back, and its other threads' exits end it again; the last one's stays. */
#include <errno.h>
#include <stdlib.h>
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

static void mark_exited(struct sym_procs *p, struct proc *pr, uint64_t time)
{
	if (!pr->exited)
		p->nexited++;
	if (!pr->exited || time > pr->exit_time)
		pr->exit_time = time;
	pr->exited = true;
}

void sym_proc_revive(struct sym_procs *p, struct proc *pr, uint64_t time)
{
	if (!pr->exited || time <= pr->exit_time)
		return;
	pr->exited = false; /* leader_gone stays: only a fork or exec makes a main thread */
	p->nexited--;
}

void sym_procs_exit(struct sym_procs *p, uint32_t pid, uint32_t tid, uint64_t time)
{
	/* noted when unknown too: a late sample's snapshot makes an entry */
	struct proc *pr = tid == pid ? sym_proc_get(p, pid) : sym_proc_find(p, pid);
	if (!pr || (tid != pid && !pr->leader_gone))
		return;
	mark_exited(p, pr, time);
	pr->leader_gone = true;
}

void sym_procs_thread_exit(struct sym_procs *p, uint32_t tid, uint64_t time)
{
	struct proc *t = sym_proc_get(p, tid);
	if (t)
		mark_exited(p, t, time);
}

bool sym_procs_sampled(struct sym_procs *p, uint32_t pid, uint64_t time)
{
	struct proc *pr = sym_proc_find(p, pid);
	if (pr && pr->exited && time > SYM_EXIT_GRACE_NS)
		sym_proc_revive(p, pr, time - SYM_EXIT_GRACE_NS);
	return pr && pr->based;
}

size_t sym_procs_exited(const struct sym_procs *p)
{
	return p->nexited;
}

struct forget {
	uint64_t horizon;
	bool (*keep)(void *ctx, uint32_t id);
	void *ctx;
	size_t forgotten;
};

static bool forgettable(const struct proc *pr, const struct forget *f)
{
	return pr->exited && pr->exit_time < f->horizon &&
	       f->horizon - pr->exit_time > SYM_EXIT_GRACE_NS && !(f->keep && f->keep(f->ctx, pr->pid));
}

static bool drop_exited(struct sym_procs *p, const struct proc *pr, void *ctx)
{
	struct forget *f = ctx;
	if (!forgettable(pr, f))
		return false;
	p->nexited--;
	f->forgotten++;
	return true;
}

/* Frees the ELF files no mapping of any entry left refers to, and numbers
 * the rest anew. Returns 0 or -ENOMEM (then all are kept). */
static int drop_unmapped_files(struct sym_procs *p)
{
	uint32_t *remap = calloc(p->nfiles + 1, sizeof(*remap)); /* new index + 1; 0: unused */
	if (!remap)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++)
		for (size_t g = 0; g < p->procs[i].n; g++)
			for (size_t m = 0; m < p->procs[i].gens[g].n; m++)
				remap[p->procs[i].gens[g].maps[m].file] = 1;
	size_t n = 0;
	for (size_t i = 0; i < p->nfiles; i++)
		n += remap[i];
	if (n == p->nfiles) {
		free(remap);
		return 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		if (!remap[i]) {
			sym_file_release(&p->files[i]);
			continue;
		}
		p->files[k] = p->files[i];
		remap[i] = (uint32_t)++k;
	}
	p->nfiles = k;
	for (size_t i = 0; i < p->n; i++)
		for (size_t g = 0; g < p->procs[i].n; g++)
			for (size_t m = 0; m < p->procs[i].gens[g].n; m++) {
				struct map *mp = &p->procs[i].gens[g].maps[m];
				mp->file = remap[mp->file] - 1;
			}
	free(remap);
	return sym_files_reindex(p); /* fewer files: cannot fail */
}

size_t sym_procs_forget(struct sym_procs *p, uint64_t horizon,
			bool (*keep)(void *ctx, uint32_t id), void *ctx)
{
	struct forget f = { .horizon = horizon, .keep = keep, .ctx = ctx };
	size_t n = 0;
	if (!p || !p->nexited)
		return 0;
	for (size_t i = 0; i < p->n; i++)
		n += !forgettable(&p->procs[i], &f);
	if (n == p->n || sym_procs_compact(p, n, drop_exited, &f) < 0)
		return 0;
	drop_unmapped_files(p);
	return f.forgotten;
}
