/* sym_unwind_splice: count's --call-graph fp repaired at its top. A
 * frame-pointer chain lacks the caller of a function that keeps no frame
 * pointer (a frameless leaf, a function's first instruction); libunwind
 * steps from the sampled registers over the top of the stack copied with
 * the sample until a return address meets the chain, which holds the rest.
 * What the repair of an ip was (none, or the stack slot of the one return
 * address the chain lacks) is kept per ip and process layout, so later
 * samples there need no walk. Apart from sym_unwind (unwind.c) because it
 * is count's method, with its own cache, over the same walk. */
#include <string.h>
#include "symbolize/unwind_internal.h"

/* Keeps R in T, the slot of its ip, or else in its set's oldest (SET) */
static void repair_keep(struct urepair *set, struct urepair *t, struct urepair r)
{
	*(t ? t : (struct urepair *)agg_cache_front(set, sizeof(*set))) = r;
}

uint32_t sym_unwind_splice(struct sym_unwinder *u, const struct sym_ustack *s,
			   const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max,
			   bool *cut)
{
	bool failed, met, cfi;
	uint64_t ip = s->regs[16], image = sym_procs_image(u->procs, s->pid, s->time);
	struct urepair *set = &u->top[agg_cache_set(ip, s->pid, FP_CACHE)], *t = NULL;
	for (unsigned w = 0; w < AGG_CACHE_WAYS && !t; w++)
		if (set[w].ip == ip && set[w].pid == s->pid)
			t = &set[w];
	u->anon_ip = 0;
	if (nchain > 1 && max > 1 && t && t->image == image && (uint64_t)t->ra_slot * 8 <= s->size) {
		*cut = false;
		uint32_t n = 0;
		ips[n++] = ip;
		if (t->ra_slot) /* the caller the chain lacks, where it always is */
			memcpy(&ips[n++], s->stack + (t->ra_slot - 1) * 8, sizeof(*ips));
		for (uint32_t j = 1; j < nchain && n < max; j++)
			ips[n++] = chain[j];
		for (uint32_t j = 0; j < n; j++) /* a chain's frames: rsp not known */
			sym_uw_keep_sp(u, j, j ? 0 : s->regs[7]);
		return n;
	}
	uint32_t n = sym_uw_walk(u, s, chain, nchain, ips, max, cut, &failed, &met, &cfi);
	if ((failed && !*cut) || (*cut && !met && nchain > n)) {
		/* no CFI to repair with, or the copy ended before the walk met
		 * the chain (then still cut): the chain as it is */
		n = nchain < max ? nchain : max;
		memcpy(ips, chain, n * sizeof(*ips));
		for (uint32_t j = 0; j < n; j++)
			sym_uw_keep_sp(u, j, j ? 0 : s->regs[7]);
	} else if (!met || !cfi || !image) {
		/* nothing learnt: only a step by the ip's own CFI says its rule */
	} else if (n >= 2 && nchain > 1 && ips[1] == chain[1]) {
		repair_keep(set, t, (struct urepair){ .pid = s->pid, .image = image, .ip = ip });
	} else if (n >= 3 && nchain > 1 && ips[2] == chain[1]) {
		/* one frame inserted: the first stack slot holding its return
		 * address (the CFI step read it from CFA - 8, at or above sp) */
		for (uint32_t i = 0; i < 64 && (uint64_t)(i + 1) * 8 <= s->size; i++) {
			uint64_t w;
			memcpy(&w, s->stack + (uint64_t)i * 8, sizeof(w));
			if (w == ips[1]) {
				repair_keep(set, t, (struct urepair){ .pid = s->pid, .image = image,
								      .ip = ip, .ra_slot = i + 1 });
				break;
			}
		}
	}
	return n;
}
