/* symbolize's walk through code without CFI (symbolize/unwind_fp.c) on
 * this test's own stack, copied whole as the kernel copies it for a
 * sample (up to where the process started): a frame-pointer frame in this
 * file with no CFI, the same in anonymous executable memory (JIT code),
 * each walked through to main and the process's start, by the full walk
 * and by the rules; a JIT frame whose rbp is no frame pointer stops the
 * walk (not whole); the walk names the first JIT address it met. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"
#include "tests/unit/stack_copy.h"

#if defined(__x86_64__)
extern void *__libc_stack_end;
static struct sym_ustack sample;
static uint8_t copy[32768];

/* The leaf: its registers (rip, rsp, rbp: what the walk needs) and the
 * stack up to the process's start, as a sample takes them */
__attribute__((used, noinline)) static void leaf(void)
{
	uint64_t *r = sample.regs;
	__asm__ volatile("mov %%rbp, 48(%0)\n\tmov %%rsp, 56(%0)\n\t"
			 "lea 0(%%rip), %%rax\n\tmov %%rax, 128(%0)" : : "r"(r) : "rax", "memory");
	sample.regs_known = 1u << 6 | 1u << 7 | 1u << 16;
	uint64_t n = (uint64_t)(uintptr_t)__libc_stack_end + 64 - r[7];
	sample.size = n < sizeof(copy) ? n : sizeof(copy);
	copy_raw(copy, r[7], sample.size);
}

/* Hand-written code without CFI that keeps a frame pointer (as node's
 * embedded builtins): fp_frame calls leaf */
void fp_frame(void);
__asm__(".text\n.type fp_frame, @function\nfp_frame:\n"
	"push %rbp\nmov %rsp, %rbp\ncall leaf\npop %rbp\nret\n"
	".size fp_frame, .-fp_frame\n");

__attribute__((noinline)) static void fp_caller(void)
{
	fp_frame();
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

/* JIT code: "push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret", or with
 * rbp zeroed instead of set (xor %ebp,%ebp: no frame pointer), copied to
 * anonymous executable memory */
static const uint8_t jit_fp[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3 };
static const uint8_t jit_nofp[] = { 0x55, 0x31, 0xed, 0x90, 0xff, 0xd7, 0x5d, 0xc3 };
typedef void (*jit_fn)(void (*)(void));

__attribute__((noinline)) static void jit_caller(jit_fn fn)
{
	fn(leaf);
	__asm__ volatile("" ::: "memory");
}

/* Whether one of IPS[1..N) is in function NAME of this process */
static bool walk_has(struct sym_procs *p, const uint64_t *ips, uint32_t n, const char *name)
{
	for (uint32_t i = 1; i < n; i++) {
		struct sym_frame f;
		if (sym_procs_lookup(p, (uint32_t)getpid(), 200, ips[i] - 1, &f) == 0 && f.name &&
		    strcmp(f.name, name) == 0)
			return true;
	}
	return false;
}

/* SAMPLE walked twice by one unwinder (a full walk, then by the rules it
 * learnt) and once with full walks only: WHOLE (ended, through CALLER and
 * main) or not, and the first JIT address met ANON (0: none) */
static void walks(struct sym_procs *p, const char *what, const char *caller, bool whole,
		  uint64_t anon)
{
	struct sym_unwinder *u = NULL, *f = NULL;
	CHECK(sym_unwinder_alloc(p, &u) == 0 && sym_unwinder_alloc(p, &f) == 0, "%s: unwinders",
	      what);
	sym_unwinder_rules(f, false);
	uint64_t ips[3][64];
	uint32_t n[3];
	bool cut, ended[3];
	for (int pass = 0; pass < 3; pass++) {
		struct sym_unwinder *w = pass < 2 ? u : f;
		n[pass] = sym_unwind(w, &sample, ips[pass], 64, &cut);
		ended[pass] = sym_unwind_ended(w);
		CHECK(!cut && ended[pass] == whole && (!whole || (walk_has(p, ips[pass], n[pass], caller) &&
								   walk_has(p, ips[pass], n[pass], "main"))),
		      "%s, %s: %u frames%s", what, pass == 0 ? "full walk" : pass == 1 ? "by the rules" :
		      "rules off", n[pass], whole ? ", through it to main and the start" :
		      ", stopped there: not whole");
		CHECK(sym_unwind_anon(w) == anon, "%s, pass %d: the first JIT address met (%#" PRIx64 ")",
		      what, pass + 1, sym_unwind_anon(w));
	}
	CHECK(n[0] == n[1] && n[1] == n[2] && memcmp(ips[0], ips[1], n[0] * 8) == 0 &&
	      memcmp(ips[1], ips[2], n[0] * 8) == 0, "%s: the same frames every way", what);
	sym_unwinder_free(u);
	sym_unwinder_free(f);
}

/* JIT code CODE in anonymous memory, called by jit_caller; the snapshot
 * taken after it is mapped. Returns the address its call returns to. */
static uint64_t jit_sample(struct sym_procs **p, const uint8_t *code, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	if (mem == MAP_FAILED)
		return 0;
	memcpy(mem + 64, code, len);
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC) < 0)
		return 0;
	jit_caller((jit_fn)(uintptr_t)(mem + 64));
	CHECK(sym_procs_alloc("/proc", "/usr/lib/debug", p) == 0 &&
	      sym_procs_snapshot(*p, (uint32_t)getpid(), 100) == 0, "procs of self, JIT code mapped");
	return (uint64_t)(uintptr_t)(mem + 64 + 6);
}

static void test_unwind_fp(void)
{
	struct sym_procs *p = NULL;
	sample.pid = sample.tid = (uint32_t)getpid();
	sample.time = 200;
	sample.stack = copy;
	fp_caller();
	CHECK(sym_procs_alloc("/proc", "/usr/lib/debug", &p) == 0 &&
	      sym_procs_snapshot(p, (uint32_t)getpid(), 100) == 0, "procs of self");
	walks(p, "a frame-pointer frame without CFI in this file", "fp_caller", true, 0);
	sym_procs_free(p);

	uint64_t ra = jit_sample(&p, jit_fp, sizeof(jit_fp));
	CHECK(ra != 0 && sym_procs_exec_at(p, (uint32_t)getpid(), 200, ra),
	      "anonymous executable memory is code the process maps");
	walks(p, "JIT code keeping a frame pointer", "jit_caller", true, ra);
	sym_procs_free(p);

	ra = jit_sample(&p, jit_nofp, sizeof(jit_nofp));
	walks(p, "JIT code whose rbp is 0", "jit_caller", false, ra);
	sym_procs_free(p);
	/* the copy ends just above the JIT frame's return address: the CFI
	 * step out of leaf is made, the frame-pointer step needs the words at
	 * rbp (beyond): stopped, cut */
	ra = jit_sample(&p, jit_fp, sizeof(jit_fp));
	uint64_t size = sample.size, ips[8], w;
	uint32_t at = 0;
	for (uint32_t i = 0; i + 8 <= size && !at; i += 8)
		if (memcpy(&w, copy + i, 8) && w == ra)
			at = i + 8;
	struct sym_unwinder *u = NULL;
	bool cut = false;
	CHECK(at && sym_unwinder_alloc(p, &u) == 0, "JIT code's return address in the copy (at %u)", at);
	sample.size = at;
	uint32_t n = sym_unwind(u, &sample, ips, 8, &cut);
	CHECK(cut && !sym_unwind_ended(u) && n == 2 && ips[1] == ra,
	      "a copy ending in the JIT frame: %u frames, cut", n);
	sample.size = size;
	sym_unwinder_free(u);
	sym_procs_free(p);
}
#else
static void test_unwind_fp(void)
{
	SKIP("DWARF registers are taken on x86-64 only", "walks through code without CFI");
}
#endif

int main(void)
{
	test_unwind_fp();
	CHECK_DONE();
}
