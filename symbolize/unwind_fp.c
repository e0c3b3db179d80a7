/* Frame-pointer steps through code without CFI: JIT code (node's, the
 * JVM's, anything a perf map names), CPython's -X perf trampolines, and
 * hand-written code in a file whose .eh_frame leaves it out (node's
 * embedded builtins). Such code keeps rbp as a frame pointer (V8 always;
 * the JVM with -XX:+PreserveFramePointer; CPython's trampolines push it),
 * so a frame's caller is the return address at rbp + 8, its sp rbp + 16
 * and its rbp the word at rbp. A step is taken only while it is
 * plausible: rbp lies at or above the frame's sp inside the copy, the
 * return address is in executable memory the process maps (a file's or
 * anonymous), and the saved rbp moves up too unless the caller has CFI
 * again (then CFI, which restores rbp where the caller saved it, takes
 * over, and a caller that keeps no frame pointer may have had anything
 * there). Two sampled frames step otherwise, by the return address at a
 * known place: a -X perf trampoline's, and glibc's clone and clone3 past
 * their syscall in the parent. Apart from the CFI walks (unwind.c,
 * unwind_rules.c) because both take these steps, each where its CFI runs
 * out. */
#include <string.h>
#include "symbolize/unwind_internal.h"

bool sym_uw_copy_word(const struct sym_ustack *s, uint64_t addr, uint64_t *w)
{
	uint64_t sp = s->regs[7];
	if (addr < sp || addr - sp > s->size || s->size - (addr - sp) < 8)
		return false;
	memcpy(w, s->stack + (addr - sp), 8);
	return true;
}

/* Whether the word at AT in S is a return address into a libpython whose
 * trampoline template keeps it at sp + N (struct ufile's tramp_ra), right
 * after an indirect call through a register (ff d0+r: py_trampoline_evaluator
 * calls each trampoline so, "call *%r14" in 3.12): a stack word that merely
 * points into libpython is seldom that */
static bool into_python(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t at,
			uint64_t *ra)
{
	uint64_t bias;
	const struct ufile *lib;
	const uint8_t *call;
	return sym_uw_copy_word(s, at, ra) && (lib = sym_uw_file_at(u, *ra, &bias)) &&
	       lib->tramp_ra == 8 && (call = sym_uw_file_bytes(lib, *ra - bias - 2, 2)) &&
	       call[0] == 0xff && (call[1] & 0xf8) == 0xd0;
}

/* A CPython -X perf trampoline's step from frame F of S: its caller's
 * return address lies at sp + 8 (the template's "sub $8,%rsp" made room
 * before its call); rbp is untouched. The sampled frame may also be in
 * the trampoline's first or last instruction, before the sub or after its
 * add: then the return address is at sp. */
static bool trampoline_step(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t f[3])
{
	uint64_t ra;
	if (into_python(u, s, f[1] + 8, &ra)) {
		f[0] = ra, f[1] += 16;
		return true;
	}
	if (f[0] == s->regs[16] && f[1] == s->regs[7] && into_python(u, s, f[1], &ra)) {
		f[0] = ra, f[1] += 8;
		return true;
	}
	return false;
}

bool sym_uw_past_clone(struct sym_unwinder *u, const struct sym_ustack *s)
{
	static const int after[] = { 0, 3, 5 }; /* the ip past the syscall: at test, jl, je */
	uint64_t ip = s->regs[16], bias;
	if (s->regs_known && !(s->regs_known & 1u))
		return false; /* rax not taken: parent and child not told apart */
	u->cur = s; /* sym_uw_file_at's process: a ruled walk may not have set it */
	for (int i = 0; i < 3; i++) {
		uint64_t at = ip - (uint64_t)after[i] - 2;
		const struct ufile *f = sym_uw_file_at(u, at, &bias);
		const uint8_t *c = f ? sym_uw_file_bytes(f, at - bias, 9) : NULL;
		if (c && c[0] == 0x0f && c[1] == 0x05 && c[2] == 0x48 && c[3] == 0x85 &&
		    c[4] == 0xc0 && c[5] == 0x7c && c[7] == 0x74)
			return true;
	}
	return false;
}

/* Whether RET is a return address: in code S's process maps, just past a
 * call (e8 rel32; ff 15 disp32; ff d0+r, with or without a REX prefix) */
static bool after_call(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t ret)
{
	uint64_t bias;
	if (ret < 6 || !sym_procs_exec_at(u->procs, s->pid, s->time, ret - 1))
		return false;
	const struct ufile *f = sym_uw_file_at(u, ret - 6, &bias);
	const uint8_t *c = f ? sym_uw_file_bytes(f, ret - 6 - bias, 6) : NULL;
	return c && (c[1] == 0xe8 || (c[0] == 0xff && c[1] == 0x15) ||
		     (c[4] == 0xff && (c[5] & 0xf8) == 0xd0));
}

/* The sampled frame F of S past glibc's clone or clone3 syscall in the
 * parent (rax the child's tid, an error, or -ENOSYS inside the syscall),
 * whose caller's return address is at [rsp]: neither function pushes a
 * thing, and both end their CFI before the syscall. An rbp step would
 * skip that caller (where rbp is a frame pointer at all: Debian's libc
 * keeps none). A child has rax 0, or no return address at its fresh
 * stack's top. */
static bool clone_step(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t f[3])
{
	uint64_t ra;
	if (f[0] != s->regs[16] || f[1] != s->regs[7] || s->regs[0] == 0 ||
	    !sym_uw_copy_word(s, f[1], &ra) || !sym_uw_past_clone(u, s) || !after_call(u, s, ra))
		return false;
	f[0] = ra, f[1] += 8; /* rbp as it was: the syscall's code keeps it */
	return true;
}

int sym_uw_fp_step(struct sym_unwinder *u, unw_addr_space_t as, const struct sym_ustack *s,
		   uint64_t f[3])
{
	uint64_t bp = f[2], ra, up, bias;
	bool anon = !sym_uw_file_at(u, f[0], &bias);
	/* JIT code, for the summary's advice: not a file ftstack could not
	 * read, nor the old program's ip in a sample taken during exec */
	if (anon && !u->anon_ip && sym_procs_jit_at(u->procs, s->pid, s->time, f[0]))
		u->anon_ip = f[0];
	/* in anonymous code, a trampoline first: its caller may keep no frame
	 * pointer, and an rbp step would skip it; in a file's, a parent past
	 * clone's syscall, for the same reason */
	if (anon ? trampoline_step(u, s, f) : clone_step(u, s, f))
		return 1;
	if (bp < f[1] || (bp & 7) || bp - s->regs[7] >= SYM_UW_STACK_RANGE)
		return -1; /* not a frame pointer of this stack */
	if (!sym_uw_copy_word(s, bp + 8, &ra) || !sym_uw_copy_word(s, bp, &up)) {
		u->cut = true; /* a frame above the copy's end */
		return -1;
	}
	if (ra == 0 || !sym_procs_exec_at(u->procs, s->pid, s->time, ra))
		return -1;
	if (up <= bp && !sym_uw_has_cfi(u, as, ra - 1))
		return -1; /* the next step would be by rbp again: it must move up */
	f[0] = ra, f[1] = bp + 16, f[2] = up;
	return 1;
}
