/* The remote address space libunwind walks a sample in: its memory is the
 * sample's stack copy (stack addresses) and the mapped files (code,
 * .eh_frame_hdr, .eh_frame: unwind_files.c), its registers the sampled
 * ones (or a probe's own, unwind_rules.c). Each process gets an address
 * space with libunwind's global cache of register rules per ip, flushed
 * when the process's layout changes (an exec, a library mapped over
 * another: sym_procs_image). Apart from the walks because these are
 * libunwind's callbacks, the one place its remote API is spoken to. */
#include <stdlib.h>
#include <string.h>
#include "symbolize/unwind_internal.h"

/* Exported by libunwind (perf calls it the same way) but left out of its
 * public header: the binary search of an .eh_frame_hdr table read through
 * the address space's accessors. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct sym_unwinder *u = arg;
	uint64_t bias;
	struct ufile *f = sym_uw_file_at(u, ip, &bias);
	if (!f || !f->nfde)
		return -UNW_ENOINFO;
	unw_dyn_info_t di = {
		.format = UNW_INFO_FORMAT_REMOTE_TABLE,
		.start_ip = f->lo + bias, .end_ip = f->hi + bias,
		.u.rti = { .segbase = f->hdr + bias, .table_data = f->table + bias,
			   .table_len = f->nfde * 8 / sizeof(unw_word_t) },
	};
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as, (void)pi, (void)arg; /* libunwind frees what its table search made */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	(void)as, (void)dilap, (void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
		      void *arg)
{
	(void)as;
	struct sym_unwinder *u = arg;
	const struct sym_ustack *s = u->cur;
	uint64_t sp = s->regs[7], bias;
	if (write)
		return -UNW_EINVAL;
	/* a file this walk has met before the copy: libunwind reads a frame's
	 * CFI from the file whose table it searched (find_proc_info met it),
	 * and a copy laid over that file (an rsp pointing into it) must not
	 * stand in for it. Such a copy gave libunwind a DW_CFA_register whose
	 * second register's number it takes unchecked as an index into an
	 * array on its own stack (libunwind 1.6.2, apply_reg_state): the
	 * unwind fuzz target's SEGV, rsp drawn into the target's own
	 * .eh_frame. A real stack never lies in a file's mapping. */
	struct ufile *f = sym_uw_file_seen(u, addr, &bias);
	const uint8_t *in_file = f ? sym_uw_file_bytes(f, addr - bias, sizeof(*valp)) : NULL;
	if (!in_file && addr >= sp && addr - sp <= s->size && s->size - (addr - sp) >= sizeof(*valp)) {
		memcpy(valp, s->stack + (addr - sp), sizeof(*valp));
		return 0;
	}
	/* then any file, also just above the stack: a thread's stack is mapped
	 * below the libraries (clone3's CFI, in libc, lay 1.7 MB above
	 * pingpong's second thread's sp), and until 2026-11-26 such reads were
	 * taken for stack words beyond the copy, so every thread's stack was
	 * "cut" at start_thread */
	if (!f && (f = sym_uw_file_at(u, addr, &bias)))
		in_file = sym_uw_file_bytes(f, addr - bias, sizeof(*valp));
	if (in_file) {
		memcpy(valp, in_file, sizeof(*valp));
		return 0;
	}
	if (!f && addr >= sp && addr - sp < SYM_UW_STACK_RANGE) {
		if (u->fill_beyond) {
			*valp = SYM_UW_FILLER;
			u->filled = true;
			return 0;
		}
		u->cut = true; /* a stack word the copy did not reach */
	}
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
		      void *arg)
{
	(void)as;
	struct sym_unwinder *u = arg;
	/* libunwind's x86-64 numbering is DWARF's: rax..r15, then rip */
	if (write || reg < 0 || reg > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	/* one the sample did not take (the fp and copy methods take ip, sp,
	 * bp, r10 and r11): a rule that needs it fails its step, and the splice keeps
	 * the frame-pointer chain as it is (as where there is no CFI), rather
	 * than walking on from a made-up 0 */
	const struct sym_ustack *s = u->cur;
	if (s && u->regs == s->regs && s->regs_known && !(s->regs_known & (1u << reg)))
		return -UNW_EBADREG;
	/* after a frame-pointer step only rip, rsp and rbp are known: the
	 * code without CFI may have kept the others anywhere */
	if (u->regs == u->fp_regs && reg != UNW_X86_64_RIP && reg != UNW_X86_64_RSP &&
	    reg != UNW_X86_64_RBP)
		return -UNW_EBADREG;
	*valp = u->regs[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as, (void)reg, (void)val, (void)write, (void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as, (void)c, (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	(void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
	return -UNW_EINVAL;
}

unw_accessors_t sym_uw_accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

/* The address space of the walk's process, its cache kept while its
 * layout stays. */
unw_addr_space_t sym_uw_proc_as(struct sym_unwinder *u)
{
	const struct sym_ustack *s = u->cur;
	uint64_t image = sym_procs_image(u->procs, s->pid, s->time);
	struct uproc *slot = NULL;
	for (int i = 0; i < UNWIND_PROCS && !slot; i++)
		if (u->procs_cache[i].as && u->procs_cache[i].pid == s->pid)
			slot = &u->procs_cache[i];
	if (slot && slot->image != image)
		unw_flush_cache(slot->as, 0, 0);
	if (!slot) {
		slot = &u->procs_cache[u->next_proc++ % UNWIND_PROCS];
		if (slot->as)
			unw_flush_cache(slot->as, 0, 0);
		else if ((slot->as = unw_create_addr_space(&sym_uw_accessors, 0)))
			unw_set_caching_policy(slot->as, UNW_CACHE_GLOBAL);
	}
	slot->pid = s->pid;
	slot->image = image;
	return slot->as;
}

/* sym_uw_proc_as for S's process, set as the walk in progress */
unw_addr_space_t sym_uw_proc_as_of(struct sym_unwinder *u, const struct sym_ustack *s)
{
	u->cur = s;
	return sym_uw_proc_as(u);
}

bool sym_uw_has_cfi(struct sym_unwinder *u, unw_addr_space_t as, uint64_t ip)
{
	unw_proc_info_t pi;
	return unw_get_proc_info_by_ip(as, ip, &pi, u) == 0;
}
