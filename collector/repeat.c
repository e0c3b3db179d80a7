/* A sample like the last one counted is counted into its key again
 * without its walk, filters or hash (issue 32). A loop that calls the same
 * function sends the same sample hundreds of thousands of times a second,
 * and count's work per sample was most of the reader's: decoding aside,
 * the walk's repair, the kernel-stack filters, the Python check and the
 * aggregator's compare. A sample is the last one again when every input
 * its key was made from is equal:
 *  - its pid (and tid, where threads are kept apart), event and cgroup;
 *  - its kernel stack, as the kernel gave it (the filters read nothing else);
 *  - its user frames' inputs. count's default walks a frame-pointer chain
 *    (the kernel's, or its own in the copy) and repairs its top by a rule
 *    kept per ip and process layout (sym_unwind_splice): the frames are
 *    then a function of the chain, the layout and, where the rule takes
 *    one, a single word of the copy, all checked here; the Python check's
 *    answer is the layout's too. A program without frame pointers has its
 *    copy walked by CFA rules kept per ip, whose frames are a function of
 *    the chain, the layout, rip, the copy's size, the return addresses
 *    the rules read (a few a frame) and, less rsp, the rbp values a CFA
 *    was taken from, all checked here too (sym_unwind_walked_by_rules):
 *    perl calls malloc from the same place again and again. A walk that
 *    took anything else (libunwind's steps, a rule learnt, Python frames,
 *    JIT code) is not repeated: the next sample walks. A cut walk is
 *    counted as cut again.
 * The aggregator's last key must still be that sample's: every full count
 * (count_now) forgets the last one first, and a drop or reset leaves no
 * last key (agg_add_last). */
#include <string.h>
#include "collector/session.h"

static bool same_words(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	return na == nb && (!na || memcmp(a, b, na * sizeof(*a)) == 0);
}

/* Whether SMP's registers and copy hold what the walk by rules R kept
 * read, wherever its stack pointer */
static bool same_ruled(const struct ft_ustacks *u, const struct ft_repeat *r,
		       const struct perfev_sample *smp)
{
	uint64_t regs[17];
	uint32_t known;
	/* the size: where a walk runs off its copy, and whether the splice
	 * takes a repair kept for the ip, which needs its slot in the copy */
	if (!smp->ustack || smp->ustack_size != r->size ||
	    perfev_ustack_dwarf_regs(smp, u->regs_mask, regs, &known) < 0 || regs[16] != r->rip ||
	    (r->rbp && regs[6] - regs[7] != r->rbp_less_sp))
		return false;
	for (uint32_t i = 0; i < r->nw; i++) {
		uint64_t w;
		memcpy(&w, smp->ustack + r->offs[i], sizeof(w));
		if (w - (r->less_sp[i] ? regs[7] : 0) != r->words[i])
			return false;
	}
	return true;
}

/* Whether SMP's user frames come from the inputs R kept */
static bool same_user(struct ft_session *s, const struct ft_repeat *r,
		      const struct perfev_sample *smp)
{
	if (!r->walked)
		return same_words(smp->uips, smp->nuips, r->uips, r->nu);
	const uint64_t *chain;
	bool cut;
	/* the walk starts from the registers (none: the kernel's frames stand) */
	if (!smp->uregs)
		return false;
	uint32_t n = ft_ustack_chain(&s->ustacks, smp, &chain, &cut);
	if (cut || !same_words(chain, n, r->uips, r->nu) ||
	    sym_procs_image(s->procs, smp->pid, smp->time) != r->image)
		return false;
	if (r->by_rules)
		return same_ruled(&s->ustacks, r, smp);
	uint64_t w;
	if (!r->slot)
		return true;
	if (!smp->ustack || smp->ustack_size < (uint64_t)r->slot * 8)
		return false;
	memcpy(&w, smp->ustack + (size_t)(r->slot - 1) * 8, sizeof(w));
	return w == r->word;
}

/* A repeat of a cut walk: counted as cut again, where the walk was */
static void count_cut(struct ft_ustacks *u, const struct ft_cut_of *c)
{
	u->cut += c->cut;
	u->cut_top += c->top;
	if (c->file)
		c->file->at_end++;
}

/* Adds SMP's words at the N byte offsets OFFS from sp, less SP where
 * LESS_SP says, to R's: false when R holds no more */
static bool keep_ruled_words(struct ft_repeat *r, const struct perfev_sample *smp, uint64_t sp,
			     const uint32_t *offs, const bool *less_sp, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		/* a word beyond the copy cut the walk: the same size cuts it again */
		if (offs[i] > smp->ustack_size || smp->ustack_size - offs[i] < 8)
			continue;
		if (r->nw == FT_REPEAT_WORDS)
			return false;
		r->offs[r->nw] = offs[i];
		r->less_sp[r->nw] = less_sp[i];
		memcpy(&r->words[r->nw], smp->ustack + offs[i], sizeof(uint64_t));
		r->words[r->nw++] -= less_sp[i] ? sp : 0;
	}
	return true;
}

/* Keeps what the last walk, by rules alone, read of SMP into R (and the
 * word at sp, where a uprobe at an entry takes its caller: ENTRY): false
 * when it read more than R holds (or no copy) */
static bool keep_ruled(const struct ft_ustacks *u, struct ft_repeat *r,
		       const struct perfev_sample *smp, const uint32_t *offs, const bool *less_sp,
		       uint32_t n, bool entry)
{
	static const uint32_t at_sp = 0;
	static const bool word = false;
	uint64_t regs[17];
	uint32_t known;
	if (!smp->ustack || perfev_ustack_dwarf_regs(smp, u->regs_mask, regs, &known) < 0)
		return false;
	r->nw = 0;
	if ((entry && !keep_ruled_words(r, smp, regs[7], &at_sp, &word, 1)) ||
	    !keep_ruled_words(r, smp, regs[7], offs, less_sp, n))
		return false;
	r->rip = regs[16];
	r->rbp_less_sp = regs[6] - regs[7];
	r->size = smp->ustack_size;
	return true;
}

bool ft_repeat_count(struct ft_session *s, const struct perfev_sample *smp, uint32_t event,
		     uint64_t weight)
{
	const struct ft_repeat *r = &s->repeat;
	if (!r->valid || smp->pid != r->pid || event != r->event || smp->cgroup != r->cgroup ||
	    (s->keep.key_tid && smp->tid != r->tid) ||
	    !same_words(smp->kips, smp->nkips, r->kips, r->nk) || !same_user(s, r, smp) ||
	    agg_add_last(s->agg, smp->time, weight) < 0)
		return false;
	if (r->walked)
		count_cut(&s->ustacks, &r->cut);
	s->cnt.entry_callers += r->entry_added;
	if (smp->time > s->last_time)
		s->last_time = smp->time;
	/* a process marked exited lives on with a later sample (the thread,
	 * where threads are kept apart, is the kept sample's: already read) */
	ft_session_know_process(s, smp->pid, smp->time);
	s->cnt.counted++;
	s->repeat.hits++;
	return true;
}

void ft_repeat_keep(struct ft_session *s, const struct perfev_sample *smp, uint32_t event)
{
	struct ft_repeat *r = &s->repeat;
	const struct ft_ustacks *u = &s->ustacks;
	bool counted = r->counted;
	r->valid = false;
	r->counted = false;
	if (!counted || s->kernel.state == FT_KSYMS_LOADING || smp->nkips > AGG_MAX_DEPTH)
		return;
	r->walked = u->copy_size && u->unwinder;
	r->by_rules = false;
	const uint64_t *user = smp->uips;
	uint32_t nu = smp->nuips;
	if (r->walked) {
		uint32_t offs[FT_REPEAT_WORDS], n;
		bool less_sp[FT_REPEAT_WORDS];
		if (!u->repeatable)
			return;
		if (sym_unwind_spliced_by_rule(u->unwinder, &r->image, &r->slot)) {
			if (r->slot)
				memcpy(&r->word, smp->ustack + (size_t)(r->slot - 1) * 8, sizeof(r->word));
			if (r->entry)
				return; /* [sp] not checked */
		} else if (sym_unwind_walked_by_rules(u->unwinder, &r->image, offs, less_sp,
						      FT_REPEAT_WORDS, &n, &r->rbp)) {
			if (!keep_ruled(u, r, smp, offs, less_sp, n, r->entry))
				return;
			r->by_rules = true;
		} else {
			return;
		}
		r->cut = u->last_cut;
		nu = ft_ustack_last_chain(u, smp, &user);
	}
	if (nu > AGG_MAX_DEPTH || (r->entry && !r->by_rules))
		return;
	r->pid = smp->pid, r->tid = smp->tid, r->event = event, r->cgroup = smp->cgroup;
	r->nk = smp->nkips, r->nu = nu;
	if (r->nk)
		memcpy(r->kips, smp->kips, r->nk * sizeof(*r->kips));
	if (nu)
		memcpy(r->uips, user, nu * sizeof(*r->uips));
	r->valid = true;
}
