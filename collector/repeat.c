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
 *    answer is the layout's too. A walk that took anything else (a CFI
 *    walk, a cut, Python frames) is not repeated: the next sample walks.
 * The aggregator's last key must still be that sample's: every full count
 * (count_now) forgets the last one first, and a drop or reset leaves no
 * last key (agg_add_last). */
#include <string.h>
#include "collector/session.h"

static bool same_words(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	return na == nb && (!na || memcmp(a, b, na * sizeof(*a)) == 0);
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
	uint64_t w;
	if (!r->slot)
		return true;
	if (!smp->ustack || smp->ustack_size < (uint64_t)r->slot * 8)
		return false;
	memcpy(&w, smp->ustack + (size_t)(r->slot - 1) * 8, sizeof(w));
	return w == r->word;
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
	const uint64_t *user = smp->uips;
	uint32_t nu = smp->nuips;
	if (r->walked) {
		if (!u->repeatable || !sym_unwind_spliced_by_rule(u->unwinder, &r->image, &r->slot))
			return;
		nu = ft_ustack_last_chain(u, smp, &user);
		if (r->slot)
			memcpy(&r->word, smp->ustack + (size_t)(r->slot - 1) * 8, sizeof(r->word));
	}
	if (nu > AGG_MAX_DEPTH)
		return;
	r->pid = smp->pid, r->tid = smp->tid, r->event = event, r->cgroup = smp->cgroup;
	r->nk = smp->nkips, r->nu = nu;
	if (r->nk)
		memcpy(r->kips, smp->kips, r->nk * sizeof(*r->kips));
	if (nu)
		memcpy(r->uips, user, nu * sizeof(*r->uips));
	r->valid = true;
}
