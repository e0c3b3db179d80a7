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
#include <string.h>
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

/* Resumes the CFI walk at frame F, reached by a frame-pointer step: a
 * cursor from its rip, rsp and rbp alone (u->fp_regs), rip one byte back
 * (a return address: libunwind takes a first frame's row at the ip itself,
 * a caller's at its call). False when libunwind cannot start there. */
static bool resume_at(struct sym_unwinder *u, unw_addr_space_t as, unw_cursor_t *c,
		      const uint64_t f[3])
{
	memset(u->fp_regs, 0, sizeof(u->fp_regs));
	u->fp_regs[16] = f[0] - 1, u->fp_regs[7] = f[1], u->fp_regs[6] = f[2];
	u->regs = u->fp_regs;
	return unw_init_remote(c, as, u) == 0;
}

/* A frame of the walk (rip, rsp, rbp F) kept for the rules to learn from */
static void keep_frame(struct sym_unwinder *u, const uint64_t f[3])
{
	if (u->nfr > RULE_FRAMES)
		return;
	u->fr[u->nfr].ip = f[0], u->fr[u->nfr].sp = f[1], u->fr[u->nfr].bp = f[2];
	u->nfr++;
}

/* One step of the walk from frame F (*N frames so far, cursor C at F
 * unless *FP_AT, then F was reached by a frame-pointer step): by CFI where
 * F's code has it, else by rbp (sym_uw_fp_step), the cursor then started
 * anew at the caller. 1 with the caller in F (*KNOWN false when libunwind
 * did not give its rsp and rbp), 0 at the stack's end (the CFI says it,
 * or a zero return address by CFI), < 0 when it stops. */
static int step(struct sym_unwinder *u, unw_addr_space_t as, unw_cursor_t *c, uint64_t f[3],
		uint32_t n, bool *fp_at, bool *known)
{
	*known = true;
	if (!sym_uw_has_cfi(u, as, f[0] - (n > 1))) {
		if (sym_uw_at_entry(u, f[0] - (n > 1)))
			return 0; /* Debian's ld.so's _start has no CFI */
		if (sym_uw_fp_step(u, as, u->cur, f) < 0)
			return -UNW_ENOINFO;
		/* where the caller has no CFI either the next step is by rbp
		 * again, and needs no cursor */
		*fp_at = true;
		return 1;
	}
	if (*fp_at && !resume_at(u, as, c, f))
		return -UNW_ENOINFO;
	*fp_at = false;
	unw_word_t v[3];
	int ret = unw_step(c);
	if (ret <= 0)
		return ret;
	if (unw_get_reg(c, UNW_REG_IP, &v[0]) < 0)
		return -UNW_EUNSPEC;
	/* libunwind may not say rbp (a sample in an epilogue after its pop:
	 * the CFI's restore leaves no rule) nor rsp: its cursor goes on, the
	 * rules learn nothing of the frame, and a frame-pointer step from it
	 * takes them unchanged */
	*known = unw_get_reg(c, UNW_X86_64_RSP, &v[1]) == 0 &&
		 unw_get_reg(c, UNW_X86_64_RBP, &v[2]) == 0;
	f[0] = v[0];
	if (*known)
		f[1] = v[1], f[2] = v[2];
	/* a zero return address ends some stacks: the CFI said so */
	return f[0] ? 1 : 0;
}

/* The walk's first step by libunwind, from S's sampled frame: *CFI
 * whether its ip has CFI, then cursor C at it, or else *FP_AT (a
 * frame-pointer step first). False when the ip lies in no code the
 * process maps: nothing to go on with. Looked up only here: a walk whose
 * first step is by a rule needs neither (the lookup was a tenth of
 * ftstack's CPU in count on programs without frame pointers) */
static bool start(struct sym_unwinder *u, unw_addr_space_t as, const struct sym_ustack *s,
		  unw_cursor_t *c, bool *cfi, bool *fp_at)
{
	*cfi = sym_uw_has_cfi(u, as, s->regs[16]);
	*fp_at = !*cfi; /* no cursor yet: the first CFI frame starts one */
	return *cfi ? unw_init_remote(c, as, u) == 0 :
		      sym_procs_exec_at(u->procs, s->pid, s->time, s->regs[16]);
}

/* CHAIN's entries from FROM on after the N frames of IPS, up to MAX:
 * returns the count. */
static uint32_t take_chain(struct sym_unwinder *u, const uint64_t *chain, uint32_t nchain,
			   uint32_t from, uint64_t *ips, uint32_t n, uint32_t max)
{
	for (uint32_t j = from; j < nchain && n < max; j++) {
		sym_uw_keep_sp(u, n, 0); /* not known from a chain */
		ips[n++] = chain[j];
	}
	return n;
}

/* The walk of sym_unwind and sym_unwind_splice (sym_uw_walk): CFI steps
 * from the sampled registers, frame-pointer steps through code without
 * CFI, until CHAIN (if any) is met (*MET); by the rules of layout IMAGE
 * (0: none) where they are kept. *AGAIN when it stopped at a frame with
 * CFI and no rule after steps by rules: libunwind's cursor would start
 * there from rip, rsp and rbp alone, and that CFI may need another
 * register (the rules do not restore them), so the walk is to be made
 * again without rules. */
static uint32_t walk_once(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
			  const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max,
			  bool *cut, bool *failed, struct sym_uw_met *met, bool *cfi, bool *again)
{
	*cut = false;
	*failed = true;
	*met = (struct sym_uw_met){ 0 };
	*cfi = false;
	u->ended = false;
	u->anon_ip = 0;
	u->by_rule = NULL;
	if (max == 0)
		return 0;
	u->cur = s;
	u->regs = s->regs;
	u->nseen = 0;
	u->cut = false;
	u->uw_steps = 0;
	u->nread = 0;
	u->learn_tries = 0;
	u->bp_src = BP_SAMPLED;
	u->need_rbp = false;
	uint32_t n = 0;
	sym_uw_keep_sp(u, n, s->regs[7]);
	ips[n++] = s->regs[16];
	uint64_t f[3] = { s->regs[16], s->regs[7], s->regs[6] };
	unw_addr_space_t as = sym_uw_proc_as(u);
	unw_cursor_t c;
	bool fp_at = false, known;
	if (!as)
		return n;
	int ret = 1;
	u->nfr = 0;
	keep_frame(u, f);
	uint32_t j = 0; /* the chain's entry the last frame equals, to be checked */
	bool ruled = false;
	while (n < max) {
		/* a frame's kept rule first: libunwind takes a lock for each
		 * step (two sigprocmask calls) */
		ret = image ? sym_uw_rule_step(u, s, image, f, n, ruled) : SYM_UW_NO_RULE;
		if (ret == SYM_UW_NO_RULE && ruled && sym_uw_has_cfi(u, as, f[0] - (n > 1))) {
			*again = true;
			return n;
		}
		if (ret == SYM_UW_NO_RULE) {
			if (n == 1 && !start(u, as, s, &c, cfi, &fp_at))
				return n; /* the ip in no code the process maps */
			u->uw_steps++;
			u->n_uw_steps++;
			ret = step(u, as, &c, f, n, &fp_at, &known);
		} else {
			*cfi |= n == 1 && ret != 0; /* a rule of its own CFI's */
			u->n_rule_steps++;
			u->cut |= ret < 0;
			known = fp_at = ruled = true; /* libunwind's cursor starts anew at the caller */
		}
		if (ret <= 0)
			break;
		if (known)
			keep_frame(u, f);
		*failed = false;
		sym_uw_keep_sp(u, n, f[1]);
		ips[n++] = f[0];
		/* met where two frames in a row are the chain's: the chain's step
		 * from a function that keeps no frame pointer skips its caller
		 * (a vDSO leaf's: vDSO -> libc's clock_gettime -> clock_calls,
		 * the chain going from libc's frame on to main), so one return
		 * address in common is not enough */
		if (j && f[0] == chain[j + 1]) {
			*met = (struct sym_uw_met){ true, n - 2, j };
			return take_chain(u, chain, nchain, j + 2, ips, n, max);
		}
		j = chain ? chain_at(chain, nchain, f[0]) : 0;
		if (j && j + 1 == nchain) { /* nothing after it to check */
			*met = (struct sym_uw_met){ true, n - 1, j };
			return n;
		}
	}
	if (j) { /* the walk stopped past the meeting: the chain holds the rest */
		*met = (struct sym_uw_met){ true, n - 1, j };
		return take_chain(u, chain, nchain, j + 1, ips, n, max);
	}
	/* the end of the stack when the frame's CFI says so (_start's and
	 * clone3's mark their return address undefined) or the frame is an
	 * entry point's (step); a walk that
	 * stopped anywhere else (code without CFI where rbp led nowhere:
	 * hand-written assembly, as GMP's mpn routines; the copy's end) is not
	 * whole */
	u->last_ret = ret;
	u->ended = ret == 0;
	*cut = u->cut;
	return n;
}

uint32_t sym_uw_walk(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
		     const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max, bool *cut,
		     bool *failed, struct sym_uw_met *met, bool *cfi)
{
	bool again = false;
	uint32_t n = walk_once(u, s, image, chain, nchain, ips, max, cut, failed, met, cfi, &again);
	if (again) {
		u->n_again++;
		n = walk_once(u, s, 0, chain, nchain, ips, max, cut, failed, met, cfi, &again);
	}
	return n;
}

/* sym_unwind's walk when its rules walk could not: libunwind's alone */
static uint32_t walk_full(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
			  uint32_t max, bool *cut)
{
	bool failed, cfi;
	struct sym_uw_met met;
	u->nfr = 0;
	return sym_uw_walk(u, s, 0, NULL, 0, ips, max, cut, &failed, &met, &cfi);
}

void sym_unwinder_counts(const struct sym_unwinder *u, uint64_t *ruled, uint64_t *full)
{
	*ruled = u->n_ruled;
	*full = u->n_full;
}

void sym_unwinder_steps(const struct sym_unwinder *u, uint64_t *by_rule, uint64_t *by_libunwind,
			uint64_t *again, uint64_t *shared)
{
	*by_rule = u->n_rule_steps;
	*by_libunwind = u->n_uw_steps;
	*again = u->n_again;
	*shared = u->n_shared;
}

uint64_t sym_unwinder_learnt(const struct sym_unwinder *u)
{
	return u->n_learnt;
}

bool sym_unwind_ended(const struct sym_unwinder *u)
{
	return u->ended;
}

uint64_t sym_unwind_anon(const struct sym_unwinder *u)
{
	return u->anon_ip;
}

void sym_unwinder_sps(struct sym_unwinder *u, uint64_t *sps)
{
	u->sps = sps;
}

void sym_unwinder_rules(struct sym_unwinder *u, bool on)
{
	u->no_rules = !on;
}

/* Whether S, a walk that stopped at once past glibc's clone or clone3
 * syscall (sym_uw_past_clone), is a new thread's whole stack: the child
 * (rax 0; -ENOSYS inside the syscall) runs on a stack of its own that
 * holds no return address. A parent there took its first step by the one
 * at [rsp] (clone_step, unwind_fp.c); one with none there is not whole. */
static bool thread_first(struct sym_unwinder *u, const struct sym_ustack *s)
{
	return (s->regs[0] == 0 || s->regs[0] == (uint64_t)-ENOSYS) && sym_uw_past_clone(u, s);
}

uint32_t sym_unwind(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
		    uint32_t max, bool *cut)
{
	uint64_t image = u->no_rules ? 0 : sym_procs_image(u->procs, s->pid, s->time);
	uint32_t n = image && max ? sym_uw_rules_walk(u, s, image, ips, max, cut) : 0;
	if (n) {
		u->n_ruled++;
	} else {
		u->n_full++;
		n = walk_full(u, s, ips, max, cut);
		if (image)
			sym_uw_learn(u, s, image);
	}
	/* a child (rax 0) needs no word of its copy, which is empty while
	 * its stack's page is untouched: not cut for want of one (a parent
	 * inside the syscall, rax -ENOSYS, has its return address there) */
	if (!u->ended && (!*cut || s->regs[0] == 0) && n >= 1 && n <= 2 && thread_first(u, s)) {
		u->ended = true; /* the thread's whole stack: this one frame */
		*cut = false;
		n = 1;
	}
	return n;
}
