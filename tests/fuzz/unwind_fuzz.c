/* libFuzzer target of the DWARF unwinder (symbolize.h's sym_unwind): a
 * random stack copy and registers, walked against the real ELF files
 * mapped in this very process (the fuzzer binary, libc, ...), as ftstack
 * walks a sample's copy against the traced process's files. The input is
 * 17 registers then the stack bytes; rip is steered into this binary's
 * text so the CFI of real code is used, rsp is taken as given (the copy is
 * all the unwinder may read). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sym_procs *procs;
static struct sym_unwinder *unw;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!procs) {
		if (sym_procs_alloc("/proc", "/usr/lib/debug", &procs) < 0 ||
		    sym_procs_snapshot(procs, (uint32_t)getpid(), 0) < 0 ||
		    sym_unwinder_alloc(procs, &unw) < 0)
			abort();
	}
	struct sym_ustack s = { .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(), .time = 1 };
	size_t nregs = sizeof(s.regs);
	if (size < nregs)
		return 0;
	memcpy(s.regs, data, nregs);
	/* rip (16): somewhere in this binary's code, 64 KB around the target */
	uintptr_t text = (uintptr_t)&LLVMFuzzerTestOneInput;
	if (s.regs[16] & 1)
		s.regs[16] = text - 0x8000 + (s.regs[16] >> 1) % 0x10000;
	uint8_t *stack = malloc(size - nregs ? size - nregs : 1); /* exact size */
	if (!stack)
		return 0;
	memcpy(stack, data + nregs, size - nregs);
	s.stack = stack;
	s.size = size - nregs;
	uint64_t ips[128];
	bool cut = false;
	volatile uint32_t n = sym_unwind(unw, &s, ips, 128, &cut);
	(void)n;
	free(stack);
	return 0;
}
