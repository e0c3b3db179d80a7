/* --call-graph dwarf (libunwind): a sample's copied user stack unwound
 * in a remote address space whose memory is the copy (stack addresses)
 * and the mapped files themselves (code, .eh_frame_hdr, .eh_frame), and
 * whose registers are the sampled ones. A file's unwind table is found
 * through its PT_GNU_EH_FRAME header, read once per file and kept while
 * the file is among the recently used (bounded by count and bytes); each
 * process gets an address space with libunwind's global cache of register
 * rules per ip, dropped when the process's layout changes (an exec, a
 * library mapped over another: sym_procs_image). sym_unwind also keeps
 * each ip's CFA rule when it is a simple one (learnt by probing libunwind)
 * and walks later samples by the rules alone.
 *
 * This file: the unwinder object, its full walk and sym_unwind, which
 * chooses between the rules and the full walk. The rest, one job each
 * (unwind_internal.h holds the struct they share):
 *   unwind_files.c   the mapped ELF files and their unwind tables
 *   unwind_space.c   libunwind's address space: its callbacks, one per process
 *   unwind_rules.c   the per-ip CFA rules: learnt, kept and walked by
 *   unwind_splice.c  sym_unwind_splice: a frame-pointer chain repaired by CFI */
#include <errno.h>
#include <libelf.h>
#include <stdlib.h>
#include "symbolize/unwind_internal.h"

#define SPLICE_LOOK 4       /* chain entries a CFI return address is looked for in */

int sym_unwinder_alloc(struct sym_procs *procs, struct sym_unwinder **out)
{
	struct sym_unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	u->procs = procs;
	*out = u;
	return 0;
}

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < UNWIND_PROCS; i++)
		if (u->procs_cache[i].as)
			unw_destroy_addr_space(u->procs_cache[i].as);
	for (unsigned i = 0; i < UNWIND_FILES; i++)
		sym_uw_file_free(u->files[i]);
	if (u->probe_as)
		unw_destroy_addr_space(u->probe_as);
	free(u);
}


/* The index in CHAIN[1..SPLICE_LOOK] of return address IP, or 0. */
static uint32_t chain_at(const uint64_t *chain, uint32_t nchain, uint64_t ip)
{
	for (uint32_t j = 1; j < nchain && j <= SPLICE_LOOK; j++)
		if (chain[j] == ip)
			return j;
	return 0;
}

/* The walk of sym_unwind and sym_unwind_splice: CFI steps from the sampled
 * registers, until CHAIN (if any) is met (*MET). Returns the count; *FAILED
 * when not even the first step could be made; *CFI when the ip's function
 * has CFI (else libunwind's first step followed rbp). */
uint32_t sym_uw_walk(struct sym_unwinder *u, const struct sym_ustack *s, const uint64_t *chain,
		     uint32_t nchain, uint64_t *ips, uint32_t max, bool *cut, bool *failed,
		     bool *met, bool *cfi)
{
	*cut = false;
	*failed = true;
	*met = false;
	*cfi = false;
	u->ended = false;
	if (max == 0)
		return 0;
	u->cur = s;
	u->regs = s->regs;
	u->nseen = 0;
	u->cut = false;
	uint32_t n = 0;
	sym_uw_keep_sp(u, n, s->regs[7]);
	ips[n++] = s->regs[16];
	uint64_t bias;
	if (!sym_uw_file_at(u, s->regs[16], &bias))
		return n; /* the ip is in no ELF file */
	unw_addr_space_t as = sym_uw_proc_as(u);
	unw_cursor_t c;
	if (!as || unw_init_remote(&c, as, u) < 0)
		return n;
	*cfi = sym_uw_has_cfi(u, as, s->regs[16]);
	int ret = 1;
	u->fr[0].ip = s->regs[16], u->fr[0].sp = s->regs[7], u->fr[0].bp = s->regs[6];
	u->nfr = 1;
	while (n < max && (ret = unw_step(&c)) > 0) {
		unw_word_t ip, sp, bp;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			break;
		bool have_sp = unw_get_reg(&c, UNW_X86_64_RSP, &sp) == 0;
		sym_uw_keep_sp(u, n, have_sp ? sp : 0);
		if (u->nfr <= RULE_FRAMES && have_sp && unw_get_reg(&c, UNW_X86_64_RBP, &bp) == 0) {
			u->fr[u->nfr].ip = ip, u->fr[u->nfr].sp = sp, u->fr[u->nfr].bp = bp;
			u->nfr++;
		}
		if (ip == 0) {
			/* a zero return address ends some stacks, when the CFI
			 * says so: libunwind's guess where there is none (the
			 * rbp chain) may read a zero anywhere */
			u->ended = sym_uw_has_cfi(u, as, ips[n - 1] - (n > 1)) ||
				   sym_uw_at_entry(u, ips[n - 1] - (n > 1));
			break;
		}
		*failed = false;
		ips[n++] = ip;
		uint32_t j = chain ? chain_at(chain, nchain, ip) : 0;
		if (j) { /* the frame-pointer chain holds the rest */
			*met = true;
			for (j++; j < nchain && n < max; j++) {
				sym_uw_keep_sp(u, n, 0); /* not known from a chain */
				ips[n++] = chain[j];
			}
			return n;
		}
	}
	/* unw_step's 0 is the stack's end when the frame's CFI says so
	 * (_start's and clone3's mark their return address undefined) or the
	 * frame is an entry point's; in other code without CFI (hand-written
	 * assembly, as GMP's mpn routines, a stripped program's _init) it is
	 * libunwind's rbp guess giving up, and a walk that stopped there is
	 * not whole */
	uint64_t last = ips[n - 1] - (n > 1);
	u->last_ret = ret == 0 && !sym_uw_has_cfi(u, as, last) && !sym_uw_at_entry(u, last) ?
		      -UNW_ENOINFO : ret;
	u->ended |= u->last_ret == 0;
	*cut = u->cut;
	return n;
}

static uint32_t walk_full(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
			  uint32_t max, bool *cut)
{
	bool failed, met, cfi;
	u->nfr = 0;
	return sym_uw_walk(u, s, NULL, 0, ips, max, cut, &failed, &met, &cfi);
}

void sym_unwinder_counts(const struct sym_unwinder *u, uint64_t *ruled, uint64_t *full)
{
	*ruled = u->n_ruled;
	*full = u->n_full;
}

uint64_t sym_unwinder_learnt(const struct sym_unwinder *u)
{
	return u->n_learnt;
}

bool sym_unwind_ended(const struct sym_unwinder *u)
{
	return u->ended;
}

void sym_unwinder_sps(struct sym_unwinder *u, uint64_t *sps)
{
	u->sps = sps;
}

void sym_unwinder_rules(struct sym_unwinder *u, bool on)
{
	u->no_rules = !on;
}

uint32_t sym_unwind(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
		    uint32_t max, bool *cut)
{
	uint64_t image = u->no_rules ? 0 : sym_procs_image(u->procs, s->pid, s->time);
	uint32_t n = image && max ? sym_uw_rules_walk(u, s, image, ips, max, cut) : 0;
	if (n) {
		u->n_ruled++;
		return n;
	}
	u->n_full++;
	n = walk_full(u, s, ips, max, cut);
	if (image)
		sym_uw_learn(u, s, image);
	return n;
}
