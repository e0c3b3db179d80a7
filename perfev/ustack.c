/* The user-space half of --call-graph copy: a sample carries the user
 * registers and a copy of the top of the user stack (PERF_SAMPLE_REGS_USER
 * and STACK_USER), and the frame-pointer walk the kernel would have done in
 * the sample path is done here, on the copy. On hosts where every read of
 * user memory from the kernel is slow (this project's PVM guest: ~0.6 us a
 * read, two reads a frame), one bulk copy costs a fraction of the walk.
 * Also the registers in DWARF order, where --call-graph dwarf's unwinder
 * (symbolize/unwind.c) starts. */
#include <errno.h>
#include <string.h>
#include "perfev/perfev.h"

#if defined(__x86_64__)
#include <asm/perf_regs.h>
#define REG_IP PERF_REG_X86_IP
#define REG_SP PERF_REG_X86_SP
#define REG_FP PERF_REG_X86_BP
#endif

/* A frame pointer this far above the copy's end is taken for garbage (code
 * without frame pointers), not for a stack frame the copy did not reach. */
#define USTACK_CUT_RANGE (64ULL << 20)
/* The bytes of a copy fetched ahead of a walk: count's default copy (its
 * frames lie beyond 1 KB of it: fetching 512 or 1024 bytes left the
 * reader's CPU where no prefetch did, bench/ab), the top of a larger one */
#define USTACK_PREFETCH 2048u

void perfev_ustack_prefetch(const struct perfev_sample *s)
{
	uint64_t size = s->ustack ? s->ustack_size : 0;
	for (uint64_t o = 0; o < size && o < USTACK_PREFETCH; o += 64)
		__builtin_prefetch(s->ustack + o);
}

#ifdef REG_IP
/* The index of register REG in a REGS_USER array taken with MASK, or -1.
 * A run has one mask, and each sample asks for 20 registers: the indices
 * are counted once per mask (a popcount is a libgcc call on baseline
 * x86-64, 9% of the reader's time when counted per register). */
static int reg_index(uint64_t mask, int reg)
{
	static _Thread_local uint64_t known;
	static _Thread_local int8_t at[64];
	if (known != mask || !mask) {
		for (int r = 0, n = 0; r < 64; r++)
			at[r] = (int8_t)(mask & (1ULL << r) ? n++ : -1);
		known = mask;
	}
	return at[reg];
}

int perfev_ustack_dwarf_regs(const struct perfev_sample *s, uint64_t regs_mask,
			     uint64_t out[17], uint32_t *known)
{
	/* x86-64 DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	static const int perf_reg[17] = {
		PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
		PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
		PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
		PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
		PERF_REG_X86_IP,
	};
	if (!s->uregs || reg_index(regs_mask, REG_IP) < 0 || reg_index(regs_mask, REG_SP) < 0)
		return -ENOENT;
	*known = 0;
	for (int i = 0; i < 17; i++) {
		int at = reg_index(regs_mask, perf_reg[i]);
		out[i] = at < 0 ? 0 : s->uregs[at];
		*known |= at < 0 ? 0 : 1u << i;
	}
	return 0;
}

uint32_t perfev_ustack_walk(const struct perfev_sample *s, uint64_t regs_mask,
			    uint64_t *ips, uint32_t max, bool *cut)
{
	int iip = reg_index(regs_mask, REG_IP), isp = reg_index(regs_mask, REG_SP);
	int ifp = reg_index(regs_mask, REG_FP);
	*cut = false;
	if (!s->uregs || iip < 0 || isp < 0 || ifp < 0 || max == 0)
		return 0;
	uint64_t sp = s->uregs[isp], fp = s->uregs[ifp];
	uint64_t size = s->ustack ? s->ustack_size : 0;
	uint32_t n = 0;
	ips[n++] = s->uregs[iip];
	perfev_ustack_prefetch(s);
	/* as the kernel's walk: [fp] is the caller's fp, [fp + 8] the return
	 * address, stored whatever it is; it ends where the frame can't be read */
	while (n < max) {
		if (fp < sp)
			break; /* frames are above sp: garbage, or the end */
		uint64_t off = fp - sp;
		if (off > size || size - off < 16) {
			*cut = off <= size || off - size < USTACK_CUT_RANGE;
			break;
		}
		uint64_t next, ret;
		memcpy(&next, s->ustack + off, sizeof(next));
		memcpy(&ret, s->ustack + off + 8, sizeof(ret));
		ips[n++] = ret;
		fp = next;
	}
	return n;
}
#else
int perfev_ustack_dwarf_regs(const struct perfev_sample *s, uint64_t regs_mask,
			     uint64_t out[17], uint32_t *known)
{
	(void)s, (void)regs_mask, (void)out, (void)known;
	return -ENOTSUP;
}

uint32_t perfev_ustack_walk(const struct perfev_sample *s, uint64_t regs_mask,
			    uint64_t *ips, uint32_t max, bool *cut)
{
	(void)s, (void)regs_mask, (void)ips, (void)max;
	*cut = false;
	return 0;
}
#endif
