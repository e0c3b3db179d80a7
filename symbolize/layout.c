/* A process's layouts: which code its addresses hold can change while its
 * pid stays, at an exec, when a library is unmapped and another (or the
 * same file at another offset) is mapped where it was (perf records no
 * munmap: the new MMAP2 record overlapping an old mapping says it), and
 * when the pid is taken by a new process after the old one was forgotten.
 * Each such moment starts a layout with a serial no other layout of any
 * process ever had, so caches of per-address facts (unwind.c's rules and
 * repairs, symcache.c's names) keyed by pid, layout and address can never
 * give one file's fact for another's code. A layout boundary where nothing changed costs only a
 * fact learnt again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

void sym_layout_add(struct sym_procs *p, struct proc *pr, uint64_t time)
{
	size_t i = pr->nlayout;
	while (i > 0 && pr->layouts[i - 1].time > time)
		i--;
	if (MEM_GROW(pr->layouts, pr->caplayout, pr->nlayout + 1, 4)) {
		/* no room for a boundary: the layout in effect at TIME
		 * gets a new serial, so its facts are learnt again */
		if (pr->nlayout)
			pr->layouts[i ? i - 1 : 0].serial = ++p->serial;
		return;
	}
	memmove(&pr->layouts[i + 1], &pr->layouts[i], (pr->nlayout - i) * sizeof(*pr->layouts));
	pr->layouts[i] = (struct layout){ .time = time, .serial = ++p->serial };
	pr->nlayout++;
}

void sym_layout_renew_from(struct sym_procs *p, struct proc *pr, uint64_t time)
{
	for (size_t i = 0; i < pr->nlayout; i++)
		if (pr->layouts[i].time >= time)
			pr->layouts[i].serial = ++p->serial;
}

bool sym_layout_replaces(const struct gen *g, const struct map *m)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct map *o = &g->maps[i];
		/* the same file at the same bias (an mprotect's record, a
		 * snapshot of what records said) holds the same code */
		if (o->start < m->end && m->start < o->end &&
		    (o->file != m->file || o->start - o->pgoff != m->start - m->pgoff))
			return true;
	}
	return false;
}

uint64_t sym_layout_at(const struct proc *pr, uint64_t time)
{
	if (!pr || !pr->nlayout)
		return 0;
	/* the earliest when TIME precedes all, as the generations' gen_at */
	for (size_t i = pr->nlayout; i > 0; i--)
		if (pr->layouts[i - 1].time <= time)
			return pr->layouts[i - 1].serial;
	return pr->layouts[0].serial;
}
