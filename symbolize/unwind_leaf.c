/* The sampled frame's rule, learnt when its ip comes back. A walk by the
 * rules (unwind_rules.c) takes the sampled frame's step with libunwind
 * when its ip has no rule yet: right for profile's samples, whose ips
 * seldom repeat, dear for offcpu's, which stop at the same few returns
 * from system calls thousands of times a second (libunwind's table search
 * and CFI parse for that one step were most of the reader's time on a
 * pipe ping-pong). An ip met a second time in the same process layout
 * has its rule learnt from that step, as the frames of a full walk do
 * (the probes check it needs only ip, sp and bp); later samples at it are
 * walked by the rules alone. This file says when; sym_uw_learn learns. */
#include "symbolize/unwind_internal.h"

bool sym_uw_leaf_again(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
		       const uint64_t f[3])
{
	uint64_t ip = s->regs[16];
	uint64_t tag = ip ^ image ^ ((uint64_t)s->pid << 40);
	uint64_t *set = &u->leaf_seen[agg_cache_set(ip, s->pid, LEAF_SEEN)];
	bool again = false;
	for (unsigned w = 0; w < AGG_CACHE_WAYS; w++)
		again |= set[w] == tag;
	u->n_leaf++;
	if (!image || !again) {
		if (!again) /* the first sight: remembered, not learnt */
			*(uint64_t *)agg_cache_front(set, sizeof(*set)) = tag;
		return false;
	}
	u->fr[0].ip = ip, u->fr[0].sp = s->regs[7], u->fr[0].bp = s->regs[6];
	u->fr[1].ip = f[0], u->fr[1].sp = f[1], u->fr[1].bp = f[2];
	u->nfr = 2;
	u->last_ret = 1;
	return true;
}

uint64_t sym_unwinder_leaf_steps(const struct sym_unwinder *u)
{
	return u->n_leaf;
}
