/* sym_unwind_splice: count's --call-graph fp repaired at its top. A
 * frame-pointer chain lacks the caller of a function that keeps no frame
 * pointer (a frameless leaf, a function's first instruction); libunwind
 * steps from the sampled registers over the top of the stack copied with
 * the sample until two return addresses in a row are the chain's, which
 * then holds the rest (one is not enough: the chain's step from a function
 * that keeps no frame pointer skips that function's caller). What the
 * repair of an ip was (none, or the stack slot of the one return address
 * the chain lacks, right after the ip or after the chain's first entry) is
 * kept per ip and process layout, so later samples there need no walk.
 * Apart from sym_unwind (unwind.c) because it is count's method, with its
 * own cache, over the same walk. */
#include <string.h>
#include "symbolize/unwind_internal.h"

/* Keeps R in T, the slot of its ip, or else in its set's oldest (SET) */
static void repair_keep(struct urepair *set, struct urepair *t, struct urepair r)
{
	*(t ? t : (struct urepair *)agg_cache_front(set, sizeof(*set))) = r;
}

/* What the walk of IPS (N frames) that met CHAIN at MET says of the
 * sampled ip: the repair to keep in R (false: none to keep). No frame
 * put in: the walk met the chain at its first return address; one: the
 * walk's frame P, 1 or 2, is the only one the chain lacks, the frames
 * before it the chain's own (its return address found in the first 64
 * slots: the CFI step read it at its CFA - 8, at or above sp). */
static bool repair_of(const struct sym_ustack *s, const uint64_t *chain, const uint64_t *ips,
		      uint32_t n, struct sym_uw_met met, struct urepair *r)
{
	if (met.k == met.j && met.j == 1)
		return true;
	uint32_t p = met.j;
	if (met.k != met.j + 1 || p > 2 || p >= n || (p == 2 && ips[1] != chain[1]))
		return false;
	r->after = (uint8_t)(p - 1);
	r->next = p == 2 ? chain[1] : 0;
	for (uint32_t i = 0; i < 64 && (uint64_t)(i + 1) * 8 <= s->size; i++) {
		uint64_t w;
		memcpy(&w, s->stack + (uint64_t)i * 8, sizeof(w));
		if (w == ips[p]) {
			r->ra_slot = i + 1;
			return true;
		}
	}
	return false;
}

/* The stack by T's repair: the ip, the chain, and the return address T
 * puts in. Returns the count. */
static uint32_t repaired(struct sym_unwinder *u, const struct sym_ustack *s, const struct urepair *t,
			 const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max)
{
	uint32_t n = 0;
	ips[n++] = s->regs[16];
	for (uint32_t j = 1; j <= nchain && n < max; j++) {
		if (t->ra_slot && j - 1 == t->after) /* where it always is */
			memcpy(&ips[n++], s->stack + (t->ra_slot - 1) * 8, sizeof(*ips));
		if (j < nchain && n < max)
			ips[n++] = chain[j];
	}
	for (uint32_t j = 0; j < n; j++) /* a chain's frames: rsp not known */
		sym_uw_keep_sp(u, j, j ? 0 : s->regs[7]);
	return n;
}

uint32_t sym_unwind_splice(struct sym_unwinder *u, const struct sym_ustack *s,
			   const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max,
			   bool *cut)
{
	bool failed, cfi;
	struct sym_uw_met met;
	uint64_t ip = s->regs[16], image = sym_procs_image(u->procs, s->pid, s->time);
	struct urepair *set = &u->top[agg_cache_set(ip, s->pid, FP_CACHE)], *t = NULL;
	for (unsigned w = 0; w < AGG_CACHE_WAYS && !t; w++)
		if (set[w].ip == ip && set[w].pid == s->pid)
			t = &set[w];
	u->anon_ip = 0;
	u->by_rule = NULL;
	u->ruled_image = 0;
	if (nchain > 1 && max > 1 && t && t->image == image && (uint64_t)t->ra_slot * 8 <= s->size &&
	    (!t->ra_slot || !t->after || chain[1] == t->next)) {
		*cut = false;
		u->by_rule = t;
		return repaired(u, s, t, chain, nchain, ips, max);
	}
	uint64_t rules = u->no_rules ? 0 : image;
	uint32_t n = sym_uw_walk(u, s, rules, chain, nchain, ips, max, cut, &failed, &met, &cfi);
	/* the frames libunwind stepped teach their rules (a program without
	 * frame pointers, whose chain is never met, walks its copy each time) */
	if (rules && u->uw_steps)
		sym_uw_learn(u, s, rules);
	/* by kept rules alone: no step of libunwind's, no rule learnt (nor
	 * tried), no repair kept (the chain not met), no JIT code */
	if (rules && !u->uw_steps && !u->learn_tries && !met.met && !u->anon_ip &&
	    u->nread <= READ_MAX)
		u->ruled_image = rules;
	struct urepair r = { .pid = s->pid, .image = image, .ip = ip };
	if ((failed && !*cut) || (*cut && !met.met && nchain > n)) {
		/* no CFI to repair with, or the copy ended before the walk met
		 * the chain (then still cut): the chain as it is */
		n = nchain < max ? nchain : max;
		memcpy(ips, chain, n * sizeof(*ips));
		for (uint32_t j = 0; j < n; j++)
			sym_uw_keep_sp(u, j, j ? 0 : s->regs[7]);
	} else if (met.met && cfi && image && nchain > 1 && repair_of(s, chain, ips, n, met, &r)) {
		/* only a step by the ip's own CFI says its rule */
		repair_keep(set, t, r);
	}
	return n;
}

bool sym_unwind_spliced_by_rule(const struct sym_unwinder *u, uint64_t *image, uint32_t *ra_slot)
{
	if (!u->by_rule)
		return false;
	*image = u->by_rule->image;
	*ra_slot = u->by_rule->ra_slot;
	return true;
}

bool sym_unwind_walked_by_rules(const struct sym_unwinder *u, uint64_t *image, uint32_t *offs,
				bool *less_sp, uint32_t max, uint32_t *n, bool *rbp)
{
	if (!u->ruled_image)
		return false;
	*n = 0;
	for (uint32_t i = 0; i < u->nread; i++) {
		if (u->read_need[i] == NEED_NOT)
			continue;
		if (*n == max)
			return false;
		less_sp[*n] = u->read_need[i] == NEED_LESS_SP;
		offs[(*n)++] = u->read_off[i];
	}
	*image = u->ruled_image;
	*rbp = u->need_rbp;
	return true;
}
