/* Bounded memory over a long run: what the process history and the name
 * cache hold is let go once nothing still to come can need it.
 *  - With -i, an interval's stacks are named, printed and the table reset;
 *    the names go with them (the next interval names its own).
 *  - A task that exited is forgotten once every ring was read past its exit
 *    and the grace its dying samples take (symbolize/forget.c), unless a
 *    stack the table still counts needs its name: none right after an
 *    interval's reset; without -i, the stacks of the run so far.
 *  - Sweeps also come between intervals (and without -i) after a number of
 *    exits that grows with what the last sweep had to keep, so their cost,
 *    a pass over the table, stays a few steps per exit.
 * offcpu forgets its own threads (offcpu.c); the unwinder keeps a fixed
 * number of processes, and of files within a byte bound (symbolize/unwind.c). Without -i the table
 * itself grows with distinct stacks, up to --max-stacks.
 * What was let go goes back to the system (ft_heap_trim): freed memory
 * the allocator keeps counts in RSS as much as memory in use. */
#include <stdlib.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "mem/mem.h"
#include "collector/session.h"

#define FORGET_BATCH 1024 /* exits between sweeps, at least */

/* The task ids the table's keys still name, sorted. */
struct ids {
	uint32_t *v;
	size_t n, cap;
	bool failed;
};

static void push(struct ids *ids, uint32_t id)
{
	if (!id || ids->failed)
		return;
	if (MEM_GROW(ids->v, ids->cap, ids->n + 1, 256)) {
		ids->failed = true;
		return;
	}
	ids->v[ids->n++] = id;
}

static void collect(void *ctx, uint32_t pid, uint32_t tid)
{
	push(ctx, pid);
	if (tid != pid)
		push(ctx, tid);
}

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static bool needed(void *ctx, uint32_t id)
{
	const struct ids *ids = ctx;
	return bsearch(&id, ids->v, ids->n, sizeof(*ids->v), cmp_id) != NULL;
}

void ft_session_drained(struct ft_session *s, uint64_t horizon)
{
	if (horizon > s->forget.read_until)
		s->forget.read_until = horizon;
}

void ft_heap_trim(void)
{
#ifdef __GLIBC__
	/* glibc keeps freed memory below the heap's top (an ELF file's symbol
	 * names, 64 KB chunks among smaller blocks still in use) and in each
	 * thread's arena; malloc_trim gives back every free page of them */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	malloc_trim(0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	struct mallinfo2 m = mallinfo2();
	ft_debug("heap: %zu KB in use, %zu KB in blocks of their own, %zu KB free (its whole "
		 "pages given back in %lld us)", m.uordblks >> 10, m.hblkhd >> 10, m.fordblks >> 10,
		 (long long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
#endif
}

void ft_session_forget(struct ft_session *s)
{
	if (s->output.symcache)
		sym_cache_clear(s->output.symcache);
	/* samples waiting for the kernel's symbols are in no table yet */
	if (!s->procs || !sym_procs_exited(s->procs) || s->kernel.state == FT_KSYMS_LOADING) {
		ft_heap_trim();
		return;
	}
	struct ids ids = { 0 };
	if (s->agg)
		agg_table_tasks(s->agg, collect, &ids);
	if (ids.failed) { /* out of memory: all kept, tried again at the next sweep */
		free(ids.v);
		return;
	}
	if (ids.n)
		qsort(ids.v, ids.n, sizeof(*ids.v), cmp_id);
	size_t gone = sym_procs_forget(s->procs, s->forget.read_until, ids.n ? needed : NULL, &ids);
	free(ids.v);
	s->forget.kept = sym_procs_exited(s->procs);
	ft_debug("forgot %zu exited tasks; %zu exited kept (stacks of theirs counted, or "
		 "within %llu ms of their exit)", gone, s->forget.kept,
		 (unsigned long long)(SYM_EXIT_GRACE_NS / 1000000));
	ft_heap_trim();
}

bool ft_session_forget_due(const struct ft_session *s)
{
	return s->procs && s->kernel.state != FT_KSYMS_LOADING &&
	       sym_procs_exited(s->procs) >= FORGET_BATCH + 2 * s->forget.kept;
}
