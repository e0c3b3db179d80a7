/* symbolize's unwinder (symbolize/unwind*.c) on this test's own stack,
 * copied as the kernel copies it for a sample: full walks, the per-ip
 * rules against full walks, the repair of a frame-pointer chain
 * (sym_unwind_splice), a signal frame, a PLT stub, a realigning prologue,
 * samples with only the frame registers, and the .eh_frame_hdr rules. */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <gelf.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"
#include "symbolize/unwind_internal.h"
#include "tests/unit/check.h"
#include "tests/unit/stack_copy.h"

/* ---- DWARF unwinding of a copied stack: this test's own ---- */
#if defined(__x86_64__)
static struct sym_ustack unwind_sample;
static uint8_t unwind_copy[1024];
static uint64_t unwind_returns[3]; /* where unwind_inner, _middle, _outer return */
static struct sym_ustack leaf_sample; /* unwind_inner's again, at another ip */
static uint8_t leaf_copy[1024];

/* The caller's registers (DWARF numbering) into R, as the kernel takes them
 * for PERF_SAMPLE_REGS_USER */
#define CAPTURE_REGS(r) \
	__asm__ volatile("mov %%rax, 0(%0)\n\tmov %%rdx, 8(%0)\n\tmov %%rcx, 16(%0)\n\t" \
			 "mov %%rbx, 24(%0)\n\tmov %%rsi, 32(%0)\n\tmov %%rdi, 40(%0)\n\t" \
			 "mov %%rbp, 48(%0)\n\tmov %%rsp, 56(%0)\n\tmov %%r8, 64(%0)\n\t" \
			 "mov %%r9, 72(%0)\n\tmov %%r10, 80(%0)\n\tmov %%r11, 88(%0)\n\t" \
			 "mov %%r12, 96(%0)\n\tmov %%r13, 104(%0)\n\tmov %%r14, 112(%0)\n\t" \
			 "mov %%r15, 120(%0)\n\tlea 0(%%rip), %%rax\n\tmov %%rax, 128(%0)" \
			 : : "r"(r) : "rax", "memory");

/* Takes its own registers and the top of its stack, as the kernel does for
 * PERF_SAMPLE_REGS_USER and STACK_USER. */
__attribute__((noinline)) static void unwind_inner(void)
{
	uint64_t *r = unwind_sample.regs;
	CAPTURE_REGS(r);
	copy_raw(unwind_copy, r[7], sizeof(unwind_copy));
	r = leaf_sample.regs;
	CAPTURE_REGS(r);
	copy_raw(leaf_copy, r[7], sizeof(leaf_copy));
	unwind_returns[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);
}

__attribute__((noinline)) static void unwind_middle(void)
{
	unwind_inner();
	unwind_returns[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) static void unwind_outer(void)
{
	unwind_middle();
	unwind_returns[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* A signal frame: registers taken in a handler; the walk must go through
 * libc's __restore_rt (its CFI describes the interrupted registers) back
 * to the function that raised the signal. */
static struct sym_ustack sig_sample;
static uint8_t sig_copy[32768];
static uint64_t stack_limit; /* main's frame: the copy stops below it */

__attribute__((noinline)) static void sig_handler(int sig)
{
	(void)sig;
	uint64_t *r = sig_sample.regs;
	CAPTURE_REGS(r);
	sig_sample.size = stack_limit > r[7] && stack_limit - r[7] < sizeof(sig_copy) ?
			  stack_limit - r[7] : sizeof(sig_copy);
	copy_raw(sig_copy, r[7], sig_sample.size);
}

__attribute__((noinline)) static void sig_raiser(void)
{
	raise(SIGUSR1);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

/* The vaddr of section NAME of the ELF file PATH, or 0. */
static uint64_t section_vaddr(const char *path, const char *name)
{
	uint64_t addr = 0;
	int fd = open(path, O_RDONLY);
	elf_version(EV_CURRENT);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstr;
	if (e && elf_getshdrstrndx(e, &shstr) == 0)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) && !addr;) {
			GElf_Shdr sh;
			const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
			if (n && strcmp(n, name) == 0)
				addr = sh.sh_addr;
		}
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return addr;
}

/* Whether one of IPS[1..N) is in function NAME of this process. */
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

static void test_unwind_special(struct sym_procs *p, struct sym_unwinder *u)
{
	uint64_t ips[32];
	bool cut;
	signal(SIGUSR1, sig_handler);
	sig_raiser();
	signal(SIGUSR1, SIG_DFL);
	sig_sample.pid = sig_sample.tid = (uint32_t)getpid();
	sig_sample.time = 200;
	sig_sample.stack = sig_copy;
	uint32_t n = sym_unwind(u, &sig_sample, ips, 32, &cut);
	CHECK(n > 3 && walk_has(p, ips, n, "sig_raiser") && walk_has(p, ips, n, "main"),
	      "a signal frame: through __restore_rt to sig_raiser and on to main (%u frames)", n);
	/* the splice of it, with a chain never met, twice: the second walk
	 * steps by the rules learnt up to the signal frame, which has none
	 * (its CFA is read from the stack), and is made again without them,
	 * as libunwind's cursor would start there from rip, rsp and rbp
	 * alone: the same frames as the first and sym_unwind's */
	struct sym_unwinder *v = NULL;
	uint64_t junk[2] = { sig_sample.regs[16], 0x10 }, a[32], b[32];
	uint64_t r0 = 0, u0 = 0, g0 = 0, s0 = 0, r1 = 0, u1 = 0, g1 = 0, s1 = 0;
	uint32_t na = 0, nb = 0;
	if (sym_unwinder_alloc(p, &v) == 0) {
		na = sym_unwind_splice(v, &sig_sample, junk, 2, a, 32, &cut);
		sym_unwinder_steps(v, &r0, &u0, &g0, &s0);
		nb = sym_unwind_splice(v, &sig_sample, junk, 2, b, 32, &cut);
		sym_unwinder_steps(v, &r1, &u1, &g1, &s1);
		sym_unwinder_free(v);
	}
	CHECK(na == n && nb == n && memcmp(a, ips, n * sizeof(*a)) == 0 &&
	      memcmp(b, ips, n * sizeof(*b)) == 0 && g0 == 0 && g1 == 1 && r1 > r0,
	      "a signal frame, spliced twice: the same %u frames (%u, %u); the second walk by rules "
	      "(%" PRIu64 " steps), then made again without them (%" PRIu64 ")", n, na, nb, r1 - r0,
	      g1 - g0);
	/* a pc in a PLT stub, after its push, before the jump to PLT0: the
	 * stub's CFA is an expression of rip (rsp + 8, + 8 more from the 11th
	 * byte of an entry on), so the return address is at [rsp + 8] */
	const char *path;
	uint64_t bias, plt = 0;
	if (sym_procs_module(p, (uint32_t)getpid(), 200, (uint64_t)(uintptr_t)sig_raiser, &path,
			     &bias) == 0)
		plt = section_vaddr(path, ".plt");
	uint64_t fake[4] = { 7 /* the pushed relocation index */,
			     (uint64_t)(uintptr_t)sig_raiser + 8, 0, 0 };
	struct sym_ustack ps = { .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(), .time = 200,
				 .stack = (const uint8_t *)fake, .size = sizeof(fake) };
	ps.regs[7] = 0x7fff0000; /* rsp: the copy is read from here on */
	ps.regs[16] = plt + bias + 16 + 11;
	n = plt ? sym_unwind(u, &ps, ips, 2, &cut) : 0;
	CHECK(n == 2 && ips[1] == fake[1], "a pc in a PLT stub: its CFA from the rip expression (%u)", n);
}

/* S walked by V (rules) and by W (full walks only): the same frames and
 * cut, at every MAX */
static bool same_walks(struct sym_unwinder *v, struct sym_unwinder *w,
		       const struct sym_ustack *s, uint32_t maxn)
{
	for (uint32_t max = 1; max <= maxn; max++) {
		uint64_t a[64], b[64];
		bool ca = true, cb = false;
		uint32_t na = sym_unwind(v, s, a, max, &ca), nb = sym_unwind(w, s, b, max, &cb);
		if (na != nb || ca != cb || memcmp(a, b, na * sizeof(*a)) != 0) {
			fprintf(stderr, "# max %u: %u%s against %u%s\n", max, na, ca ? " cut" : "", nb,
				cb ? " cut" : "");
			for (uint32_t i = 0; i < na || i < nb; i++)
				fprintf(stderr, "#   %#" PRIx64 " %#" PRIx64 "\n", i < na ? a[i] : 0,
					i < nb ? b[i] : 0);
			return false;
		}
	}
	return true;
}

/* sym_unwind's per-ip rules: the same frames as full walks, on this test's
 * own stack copies (unwind_sample, the signal handler's), whole and cut
 * short; the second time by the rules alone */
static void test_unwind_rules(struct sym_procs *p)
{
	struct sym_unwinder *v = NULL, *w = NULL;
	uint64_t ruled, full;
	bool made = sym_unwinder_alloc(p, &v) == 0 && sym_unwinder_alloc(p, &w) == 0;
	CHECK(made, "rules: two unwinders");
	if (!made) {
		sym_unwinder_free(v);
		return;
	}
	sym_unwinder_rules(w, false);
	uint64_t ips[32];
	bool cut;
	uint32_t n = sym_unwind(w, &unwind_sample, ips, 32, &cut);
	for (int pass = 0; pass < 3; pass++)
		CHECK(same_walks(v, w, &unwind_sample, 32), "rules, pass %d: %u frames at every "
		      "max as the full walk", pass + 1, n);
	sym_unwinder_counts(v, &ruled, &full);
	/* the copy ends before the 4th frame's caller: walks that reach it are
	 * full ones (its rule cannot be learnt from this copy), the shorter
	 * ones of passes 2 and 3 by the rules */
	CHECK(ruled >= 6, "rules: the later walks by the rules (%" PRIu64 " ruled, "
	      "%" PRIu64 " full)", ruled, full);
	/* the copy cut at every 8 bytes: a rule never reads past it */
	uint64_t size = unwind_sample.size;
	bool same = true;
	for (uint64_t cutat = 0; cutat <= 1024 && same; cutat += 8) {
		unwind_sample.size = cutat;
		same = same_walks(v, w, &unwind_sample, 16);
	}
	unwind_sample.size = size;
	CHECK(same, "rules: copies cut short, the same frames and cut as the full walk");
	/* a signal frame on the stack: __restore_rt's rule is no simple one,
	 * the walk goes on by libunwind's. (libunwind's own walks of this
	 * sample differ from the first on: 7 frames, cut, then 2, with rules or
	 * without; each pass is compared with the same pass of the other.) */
	if (sig_sample.size) {
		struct sym_unwinder *w2;
		bool same = sym_unwinder_alloc(p, &w2) == 0;
		if (same)
			sym_unwinder_rules(w2, false);
		for (int pass = 0; pass < 3 && same; pass++) {
			uint64_t a[32], b[32];
			bool ca, cb;
			uint32_t na = sym_unwind(v, &sig_sample, a, 32, &ca);
			uint32_t nb = sym_unwind(w2, &sig_sample, b, 32, &cb);
			same = na == nb && ca == cb && memcmp(a, b, na * sizeof(*a)) == 0;
		}
		CHECK(same, "rules: through a signal frame, the same frames as full walks");
		sym_unwinder_free(w2);
	}
	uint64_t r0 = 0, f0 = 0;
	sym_unwinder_counts(w, &r0, &f0);
	CHECK(r0 == 0, "rules off: every walk full (%" PRIu64 ")", f0);
	sym_unwinder_free(v);
	sym_unwinder_free(w);
}

/* A sample at another ip of a frame whose callers' rules are known, as
 * offcpu's switch-outs come (the same return from a system call, over and
 * over): the first two walks step its frame with libunwind, the second
 * learns its rule (unwind_leaf.c), the later ones need no libunwind; the
 * frames always a full walk's */
static void test_unwind_leaf(struct sym_procs *p)
{
	struct sym_unwinder *v = NULL, *w = NULL;
	uint64_t a[32], b[32];
	bool ca, cb, same = sym_unwinder_alloc(p, &v) == 0 && sym_unwinder_alloc(p, &w) == 0;
	leaf_sample.pid = leaf_sample.tid = (uint32_t)getpid();
	leaf_sample.time = 200;
	leaf_sample.stack = leaf_copy;
	leaf_sample.size = sizeof(leaf_copy);
	if (same) {
		sym_unwinder_rules(w, false);
		sym_unwind(v, &unwind_sample, a, 32, &ca); /* a full walk: the callers' rules */
	}
	uint32_t na = 0;
	uint64_t steps0 = same ? sym_unwinder_leaf_steps(v) : 0, ruled0 = 0, full0 = 0;
	if (same)
		sym_unwinder_counts(v, &ruled0, &full0);
	for (int pass = 0; pass < 5 && same; pass++) {
		/* 4 frames: the copy ends before the 4th's caller (test_unwind_rules) */
		na = sym_unwind(v, &leaf_sample, a, 4, &ca);
		uint32_t nb = sym_unwind(w, &leaf_sample, b, 4, &cb);
		same = na == 4 && na == nb && ca == cb && memcmp(a, b, na * sizeof(*a)) == 0 &&
		       a[1] == unwind_returns[0] && leaf_sample.regs[16] != unwind_sample.regs[16];
	}
	CHECK(same, "another ip of a known frame: 5 walks, each the full walk's frames (%u)", na);
	uint64_t ruled = 0, full = 0, steps = same ? sym_unwinder_leaf_steps(v) - steps0 : 0;
	if (same)
		sym_unwinder_counts(v, &ruled, &full);
	ruled -= ruled0, full -= full0;
	CHECK(steps == 2 && ruled == 5 && full == 0,
	      "its frame by libunwind at the first two walks, by its rule at the next three "
	      "(%" PRIu64 " libunwind steps, %" PRIu64 " walks by the rules, %" PRIu64 " full)", steps, ruled, full);
	sym_unwinder_free(v);
	sym_unwinder_free(w);
}

/* Two processes of one layout (a fork: a pipe ping-pong's two ends)
 * sampled in turn at the same leaf, with pids whose keys share a set of
 * the caches: one's leaf rule and the other's rule of unwind_inner's
 * return, and both first sights of the leaf. One slot a set, they evicted
 * each other at every sample, and every sample was stepped by libunwind
 * (1 pipe ping-pong in ~20 lost records so): each pid's leaf by libunwind
 * at its first two sights only, the frames always a full walk's */
static void test_unwind_leaf_twins(struct sym_procs *p)
{
	uint32_t self = (uint32_t)getpid(), a = 4000000, b = 0;
	uint64_t ip = leaf_sample.regs[16], ret = unwind_returns[0] * 2 + 1;
	for (uint32_t q = a + 1; !b && q < a + 100000000; q++)
		if (agg_cache_set(ip * 2, a, RULE_CACHE) == agg_cache_set(ret, q, RULE_CACHE) &&
		    agg_cache_set(ip, a, LEAF_SEEN) == agg_cache_set(ip, q, LEAF_SEEN))
			b = q;
	sym_procs_fork(p, a, self, self, 150);
	sym_procs_fork(p, b, self, self, 150);
	struct sym_unwinder *v = NULL, *w = NULL;
	bool same = b && sym_unwinder_alloc(p, &v) == 0 && sym_unwinder_alloc(p, &w) == 0;
	if (same)
		sym_unwinder_rules(w, false);
	uint64_t x[8], y[8];
	bool cx, cy;
	uint32_t nx = 0;
	for (int pass = 0; pass < 12 && same; pass++) {
		struct sym_ustack s = leaf_sample;
		s.pid = s.tid = pass % 2 ? b : a;
		nx = sym_unwind(v, &s, x, 4, &cx);
		uint32_t ny = sym_unwind(w, &s, y, 4, &cy);
		same = nx == 4 && nx == ny && cx == cy && memcmp(x, y, nx * sizeof(*x)) == 0 &&
		       x[1] == unwind_returns[0];
	}
	CHECK(same, "twin processes %u and %u in turn: 12 walks, each the full walk's frames (%u)",
	      a, b, nx);
	uint64_t ruled = 0, full = 0, steps = same ? sym_unwinder_leaf_steps(v) : 0;
	if (same)
		sym_unwinder_counts(v, &ruled, &full);
	/* a's second sight learns the leaf's rule, which b's second sight
	 * takes by the file: 3 steps by libunwind (4 before rules by file) */
	CHECK(steps == 3 && ruled == 12 && full == 0,
	      "twins whose keys share a set: the leaf by libunwind at a's first two sights and b's "
	      "first only (%" PRIu64 " libunwind steps, %" PRIu64 " walks by the rules, %" PRIu64
	      " full)",
	      steps, ruled, full);
	sym_unwinder_free(v);
	sym_unwinder_free(w);
}

/* S with only rip, rsp and rbp (the fp and copy methods take these and
 * r10, r11: perfev_user_frame_regs_mask): the same frames and cut as with
 * all 17, each with an unwinder of its own, full walks and by the rules */
static bool same_with_frame_regs(struct sym_procs *p, const struct sym_ustack *s, bool rules)
{
	struct sym_ustack three = *s;
	memset(three.regs, 0, sizeof(three.regs));
	three.regs[6] = s->regs[6], three.regs[7] = s->regs[7], three.regs[16] = s->regs[16];
	three.regs_known = 1u << 6 | 1u << 7 | 1u << 16;
	struct sym_unwinder *a = NULL, *b = NULL;
	bool same = sym_unwinder_alloc(p, &a) == 0 && sym_unwinder_alloc(p, &b) == 0;
	for (int pass = 0; pass < 2 && same; pass++) {
		uint64_t x[32], y[32];
		bool cx, cy;
		if (!rules)
			sym_unwinder_rules(a, false), sym_unwinder_rules(b, false);
		uint32_t nx = sym_unwind(a, s, x, 32, &cx), ny = sym_unwind(b, &three, y, 32, &cy);
		/* (libunwind's second walk of the signal frame's sample stops
		 * early, with all registers or three: test_unwind_rules) */
		same = (pass || nx > 2) && nx == ny && cx == cy &&
		       memcmp(x, y, nx * sizeof(*x)) == 0;
	}
	sym_unwinder_free(a);
	sym_unwinder_free(b);
	return same;
}

/* A sample in a stack-realigning prologue, as gcc writes one: the CFA is
 * r10 until the frame is built. r10_frame takes its registers there
 * (DWARF order into r10_sample.regs, rax and rcx clobbered) and its stack
 * (r10_copy), then returns to r10_caller. */
static struct sym_ustack r10_sample;
static uint8_t r10_stack[256];
void r10_frame(void);
__attribute__((used)) static void r10_copy(void)
{
	copy_raw(r10_stack, r10_sample.regs[7], sizeof(r10_stack));
}
__asm__(".text\n.type r10_frame, @function\nr10_frame:\n.cfi_startproc\n"
	"lea 8(%rsp), %r10\n"
	".cfi_def_cfa %r10, 0\n"
	"and $-32, %rsp\n"
	"lea r10_sample+16(%rip), %rax\n" /* regs[]: after pid, tid, time */
	"mov %rbp, 48(%rax)\nmov %rsp, 56(%rax)\nmov %r10, 80(%rax)\nmov %r11, 88(%rax)\n"
	"lea 0(%rip), %rcx\nmov %rcx, 128(%rax)\n"
	"sub $32, %rsp\nmov %r10, (%rsp)\ncall r10_copy\nmov (%rsp), %r10\n" /* r10 is the callee's */
	"lea -8(%r10), %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n.cfi_endproc\n.size r10_frame, .-r10_frame\n");

__attribute__((noinline)) static void r10_caller(void)
{
	r10_frame();
	__asm__ volatile("" ::: "memory"); /* no tail call: r10_caller stays the caller */
}

/* A frame without CFI, as hand-written assembly (GMP's mpn routines) has:
 * nocfi_frame zeroes rbp and calls nocfi_inner, which takes the sample.
 * libunwind's guess past it (the rbp chain) finds rbp 0 and gives up: the
 * walk stops there, and is not whole. */
static struct sym_ustack nocfi_sample;
static uint8_t nocfi_stack[512];
void nocfi_frame(void);
__attribute__((used, noinline)) static void nocfi_inner(void)
{
	uint64_t *r = nocfi_sample.regs;
	CAPTURE_REGS(r);
	copy_raw(nocfi_stack, r[7], sizeof(nocfi_stack));
}
__asm__(".text\n.type nocfi_frame, @function\nnocfi_frame:\n"
	"push %rbp\nxor %ebp, %ebp\ncall nocfi_inner\npop %rbp\nret\n"
	".size nocfi_frame, .-nocfi_frame\n");

/* Its caller's return address, from the CFI with KNOWN registers (0: all) */
static uint32_t r10_walk(struct sym_procs *p, uint32_t known, uint64_t *ips)
{
	struct sym_unwinder *u = NULL;
	bool cut;
	r10_sample.regs_known = known;
	uint32_t n = sym_unwinder_alloc(p, &u) == 0 ? sym_unwind(u, &r10_sample, ips, 2, &cut) : 0;
	sym_unwinder_free(u);
	return n;
}

static void test_unwind_frame_regs(struct sym_procs *p)
{
	CHECK(same_with_frame_regs(p, &unwind_sample, false) &&
	      same_with_frame_regs(p, &unwind_sample, true),
	      "rip, rsp and rbp only: this test's own stack, the same frames as with all 17");
	CHECK(!sig_sample.size || (same_with_frame_regs(p, &sig_sample, false) &&
				   same_with_frame_regs(p, &sig_sample, true)),
	      "rip, rsp and rbp only: through a signal frame, the same frames as with all 17");
	/* the walk needs r10 there: with it (as fp and copy take it), the
	 * caller; without it, the step is refused, not made up */
	r10_caller();
	r10_sample.pid = r10_sample.tid = (uint32_t)getpid();
	r10_sample.time = 200;
	r10_sample.stack = r10_stack;
	r10_sample.size = sizeof(r10_stack);
	const uint32_t frame = 1u << 6 | 1u << 7 | 1u << 10 | 1u << 11 | 1u << 16;
	uint64_t ips[2] = { 0, 0 };
	uint32_t n = r10_walk(p, frame, ips);
	bool took = n == 2 && walk_has(p, ips, n, "r10_caller");
	uint64_t caller = ips[1];
	CHECK(took && (n = r10_walk(p, 0, ips)) == 2 && ips[1] == caller,
	      "a realigning prologue (CFA r10): the caller with rip, rsp, rbp, r10, r11 as with all");
	n = r10_walk(p, frame & ~(1u << 10), ips);
	CHECK(n == 1, "the same without r10: the ip only (%u)", n);
}

/* A sample whose copy holds the whole stack, up to where the process
 * started (glibc's __libc_stack_end: the stack pointer _start was given) */
extern void *__libc_stack_end;
static struct sym_ustack whole_sample;
static uint8_t whole_stack[16384];
__attribute__((noinline)) static void whole_inner(void)
{
	uint64_t *r = whole_sample.regs;
	CAPTURE_REGS(r);
	uint64_t n = (uint64_t)(uintptr_t)__libc_stack_end + 64 - r[7];
	whole_sample.size = n < sizeof(whole_stack) ? n : sizeof(whole_stack);
	copy_raw(whole_stack, r[7], whole_sample.size);
}

/* libc's clone, not a PLT stub of this test's */
static uintptr_t clone_addr(void)
{
	int (*volatile f)(int (*)(void *), void *, int, void *, ...) = clone;
	return (uintptr_t)f;
}

/* A parent's stack as clone leaves it for the return: [rsp] its caller's
 * return address (parent_inner's into parent_outer, past a call), the
 * caller's rbp in rbp; the copy up to the process's start */
static struct sym_ustack parent_sample;
static uint8_t parent_stack[16384];
static uint64_t parent_ret;
__attribute__((noinline)) static void parent_inner(void)
{
	uint64_t *fa = __builtin_frame_address(0);
	parent_ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
	parent_sample.regs[6] = fa[0];
	parent_sample.regs[7] = (uint64_t)(uintptr_t)(fa + 1);
	uint64_t n = (uint64_t)(uintptr_t)__libc_stack_end + 64 - parent_sample.regs[7];
	parent_sample.size = n < sizeof(parent_stack) ? n : sizeof(parent_stack);
	copy_raw(parent_stack, parent_sample.regs[7], parent_sample.size);
}

__attribute__((noinline)) static void parent_outer(void)
{
	parent_inner();
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

/* The parent, past clone's syscall at IP with rax RAX: its walk goes on
 * from the return address at [rsp] to the process's start */
static void parent_walk(struct sym_procs *p, struct sym_unwinder *u, uint64_t ip, uint64_t rax)
{
	uint64_t ips[64], sps[64] = { 0 };
	bool cut = true;
	parent_outer();
	sym_unwinder_sps(u, sps);
	parent_sample.pid = parent_sample.tid = (uint32_t)getpid();
	parent_sample.time = 200;
	parent_sample.stack = parent_stack;
	parent_sample.regs[16] = ip, parent_sample.regs[0] = rax;
	uint32_t n = sym_unwind(u, &parent_sample, ips, 64, &cut);
	sym_unwinder_sps(u, NULL);
	uint64_t sp = parent_sample.regs[7];
	CHECK(sps[0] == sp && sps[1] == sp + 8,
	      "and each frame's stack pointer at its frame: %#" PRIx64 " %#" PRIx64 " (%#" PRIx64 ")",
	      sps[0], sps[1], sp);
	CHECK(n > 3 && ips[0] == ip && ips[1] == parent_ret &&
	      walk_has(p, ips, n, "parent_outer") && walk_has(p, ips, n, "main") && !cut &&
	      sym_unwind_ended(u),
	      "the parent past clone's syscall, rax %ld: on from [rsp] through main, whole (%u)",
	      (long)rax, n);
}

/* A new thread's first instructions, as clone's (and clone3's) child runs
 * them: the ip past the syscall, at its "test %rax,%rax", "jl" or "je"
 * (libc's clone's), rax 0, a stack of its own holding no return address
 * (words no code is at). The parent's CFI there reads one and stops: whole
 * all the same, one frame. The parent (rax its child's tid, an error, or
 * -ENOSYS inside the syscall) has its caller's return address at [rsp]: its
 * walk goes on from there; without one there (rax not 0 nor -ENOSYS),
 * with rax not taken, or with the ip past another syscall (getppid's):
 * stopped, not whole. */
static void test_thread_first(struct sym_procs *p, struct sym_unwinder *u)
{
	const uint8_t *at = (const uint8_t *)clone_addr();
	int k = 0;
	while (k < 96 && !(at[k] == 0x0f && at[k + 1] == 0x05 && at[k + 2] == 0x48))
		k++;
	if (k == 96) {
		CHECK(0, "clone's syscall, then test %%rax,%%rax, in libc");
		return;
	}
	static uint64_t garbage[8];
	for (int i = 0; i < 8; i++)
		garbage[i] = 0x4141414141414141ull;
	struct sym_ustack t = { .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(), .time = 200,
				.stack = (const uint8_t *)garbage, .size = sizeof(garbage) };
	t.regs[7] = (uint64_t)(uintptr_t)garbage;
	uint64_t ips[8];
	bool cut = true;
	const int past[] = { 0, 3, 5 };
	for (int i = 0; i < 3; i++) {
		t.regs[16] = (uint64_t)(uintptr_t)(at + k + 2 + past[i]);
		uint32_t n = sym_unwind(u, &t, ips, 8, &cut);
		CHECK(n == 1 && !cut && sym_unwind_ended(u),
		      "a new thread %d bytes past clone's syscall, rax 0: its one frame, whole (%u)",
		      past[i], n);
	}
	/* rbp still the parent's, pointing above the child's stack, beyond
	 * its copy (java's threads' stacks lie close): the step by it is cut,
	 * but the child needs none */
	struct sym_ustack e = t;
	e.regs[6] = e.regs[7] + 4096;
	uint32_t n = sym_unwind(u, &e, ips, 8, &cut);
	CHECK(n == 1 && !cut && sym_unwind_ended(u),
	      "a new thread past clone's syscall, rax 0, rbp its parent's above the copy: its one "
	      "frame, whole, not cut (%u)", n);
	e.regs[0] = (uint64_t)-ENOSYS;
	n = sym_unwind(u, &e, ips, 8, &cut);
	CHECK(cut && !sym_unwind_ended(u),
	      "the same with rax -ENOSYS (a parent's return address may lie above): cut, not whole (%u)",
	      n);
	t.regs[0] = (uint64_t)-ENOSYS; /* sampled in the kernel before its first return */
	n = sym_unwind(u, &t, ips, 8, &cut);
	CHECK(n == 1 && sym_unwind_ended(u), "the same with rax -ENOSYS: whole (%u)", n);
	t.regs[0] = 4242;
	n = sym_unwind(u, &t, ips, 8, &cut);
	CHECK(!sym_unwind_ended(u),
	      "the same with rax 4242 (the parent) and no return address at [rsp]: stopped, not whole (%u)",
	      n);
	parent_walk(p, u, t.regs[16], 4242);
	parent_walk(p, u, t.regs[16], (uint64_t)-ENOSYS);
	parent_walk(p, u, t.regs[16], (uint64_t)-EAGAIN);
	t.regs[0] = 0;
	t.regs_known = (1u << 16) | (1u << 7) | (1u << 6);
	n = sym_unwind(u, &t, ips, 8, &cut);
	CHECK(!sym_unwind_ended(u), "the same with rax not taken: stopped, not whole (%u)", n);
	t.regs_known = 0;
	pid_t (*volatile gp)(void) = getppid;
	const uint8_t *g = (const uint8_t *)(uintptr_t)gp;
	for (k = 0; k < 64 && !(g[k] == 0x0f && g[k + 1] == 0x05); k++)
		;
	t.regs[16] = (uint64_t)(uintptr_t)(g + k + 2);
	n = sym_unwind(u, &t, ips, 8, &cut);
	CHECK(k < 64 && !sym_unwind_ended(u),
	      "past getppid's syscall, rax 0, the same stack: stopped, not whole (%u)", n);
}

/* The rule kept for KEY of process PID in U, or NULL */
static const struct urule *kept_rule(const struct sym_unwinder *u, uint32_t pid, uint64_t key)
{
	for (unsigned i = 0; i < RULE_CACHE; i++)
		if (u->rules[i].kind && u->rules[i].pid == pid && u->rules[i].key == key)
			return &u->rules[i];
	return NULL;
}

/* A frame met at the copy's end (its step needs a word beyond it) has its
 * rule learnt there once, from probes that read a filler beyond the copy:
 * for each frame of this test's whole stack, copies that end at its rsp,
 * spliced twice (the first walk learns the frames below it), give it the
 * rule a walk of the whole copy learns */
static void test_rules_at_copy_end(struct sym_procs *p)
{
	struct sym_unwinder *w = NULL;
	uint64_t ips[64], sps[64], junk[3] = { whole_sample.regs[16], 0x10, 0x20 };
	bool cut;
	CHECK(sym_unwinder_alloc(p, &w) == 0, "an unwinder for the whole copy");
	sym_unwinder_sps(w, sps);
	uint32_t n = 0;
	for (int pass = 0; pass < 2; pass++)
		n = sym_unwind_splice(w, &whole_sample, junk, 3, ips, 64, &cut);
	sym_unwinder_sps(w, NULL);
	uint64_t size = whole_sample.size;
	uint32_t same = 0, learnt = 0, frames = 0;
	for (uint32_t k = 1; k + 1 < n; k++) {
		const struct urule *want = kept_rule(w, whole_sample.pid, ips[k] * 2 + 1);
		struct sym_unwinder *v = NULL;
		if (!want || !sps[k] || sym_unwinder_alloc(p, &v) < 0)
			continue;
		frames++;
		whole_sample.size = sps[k] - whole_sample.regs[7];
		uint64_t got[64], learnt0 = sym_unwinder_learnt(v);
		for (int pass = 0; pass < 2; pass++)
			sym_unwind_splice(v, &whole_sample, junk, 3, got, 64, &cut);
		const struct urule *r = kept_rule(v, whole_sample.pid, ips[k] * 2 + 1);
		learnt += sym_unwinder_learnt(v) > learnt0;
		if (r && r->kind == want->kind && r->cfa_off == want->cfa_off &&
		    r->ra_off == want->ra_off && r->bp_saved == want->bp_saved &&
		    (!r->bp_saved || r->bp_off == want->bp_off))
			same++;
		else
			fprintf(stderr, "# frame %u (%#" PRIx64 "): rule %s\n", k, ips[k],
				r ? "not the whole copy's" : "not learnt");
		sym_unwinder_free(v);
	}
	whole_sample.size = size;
	CHECK(frames >= 3 && same == frames && learnt == frames,
	      "rules learnt at the copy's end: %u of %u frames, each the whole copy's (%u)", learnt,
	      frames, same);
	sym_unwinder_free(w);
}

/* A splice of unwind_sample by V, whose rules are all learnt (the last
 * splice learnt the last frame's, at the copy's end): by the rules alone,
 * and what it read, as repeat.c keeps it: each caller's return address
 * among the words its frames depend on */
static void test_walked_by_rules(struct sym_unwinder *v, struct sym_procs *p,
				 const uint64_t *chain)
{
	uint32_t offs[64], noffs = 0, found = 0;
	bool less_sp[64], rbp, cut;
	uint64_t image, ips[16];
	uint32_t n = sym_unwind_splice(v, &unwind_sample, chain, 3, ips, 16, &cut);
	bool by_rules = sym_unwind_walked_by_rules(v, &image, offs, less_sp, 64, &noffs, &rbp);
	for (uint32_t k = 1; by_rules && k < n; k++) {
		for (uint32_t i = 0; i < noffs; i++) {
			uint64_t w;
			if (less_sp[i] || offs[i] + 8 > unwind_sample.size)
				continue;
			memcpy(&w, unwind_sample.stack + offs[i], sizeof(w));
			if (w == ips[k]) {
				found++;
				break;
			}
		}
	}
	CHECK(by_rules && found == n - 1 &&
	      image == sym_procs_image(p, unwind_sample.pid, unwind_sample.time),
	      "splice by the rules alone: said so, %u of %u return addresses among the %u words "
	      "its frames depend on (cut %d)", found, n - 1, noffs, cut);
}

/* Whole or not: a walk ends at the process's start (_start's CFI says it
 * has no caller), and never where libunwind's guess gives up in code
 * without CFI */
static void test_unwind_ended(struct sym_procs *p)
{
	struct sym_unwinder *u = NULL;
	uint64_t ips[64];
	bool cut;
	CHECK(sym_unwinder_alloc(p, &u) == 0, "an unwinder for the ends");
	whole_inner();
	whole_sample.pid = whole_sample.tid = (uint32_t)getpid();
	whole_sample.time = 200;
	whole_sample.stack = whole_stack;
	uint32_t n = sym_unwind(u, &whole_sample, ips, 64, &cut);
	CHECK(!cut && sym_unwind_ended(u) && walk_has(p, ips, n, "main"),
	      "this test's own stack: %u frames through main to the start, whole", n);
	test_rules_at_copy_end(p);
	nocfi_frame();
	nocfi_sample.pid = nocfi_sample.tid = (uint32_t)getpid();
	nocfi_sample.time = 200;
	nocfi_sample.stack = nocfi_stack;
	nocfi_sample.size = sizeof(nocfi_stack);
	for (int pass = 0; pass < 2; pass++) { /* by the full walk, then by the rules */
		n = sym_unwind(u, &nocfi_sample, ips, 64, &cut);
		CHECK(n >= 2 && walk_has(p, ips, 2, "nocfi_frame") && !sym_unwind_ended(u),
		      "pass %d: stopped in a frame without CFI (%u frames): not whole", pass + 1, n);
	}
	test_thread_first(p, u);
	sym_unwinder_free(u);
}

static void test_unwind(void)
{
	struct sym_procs *p = NULL;
	struct sym_unwinder *u = NULL;
	uint64_t ips[16];
	bool cut = true;
	unwind_outer();
	unwind_sample.pid = unwind_sample.tid = (uint32_t)getpid();
	unwind_sample.time = 200;
	unwind_sample.stack = unwind_copy;
	unwind_sample.size = sizeof(unwind_copy);
	CHECK(sym_procs_alloc("/proc", "/usr/lib/debug", &p) == 0 &&
	      sym_procs_snapshot(p, (uint32_t)getpid(), 100) == 0 &&
	      sym_unwinder_alloc(p, &u) == 0, "procs and unwinder of self");
	uint32_t n = sym_unwind(u, &unwind_sample, ips, 16, &cut);
	CHECK(n >= 4 && ips[0] == unwind_sample.regs[16] && ips[1] == unwind_returns[0] &&
	      ips[2] == unwind_returns[1] && ips[3] == unwind_returns[2],
	      "%u frames: the ip, then the returns into unwind_middle, _outer and the test", n);
	/* the same again: the process's Dwfl and modules are kept */
	CHECK(sym_unwind(u, &unwind_sample, ips, 16, &cut) == n, "a second walk, the same frames");
	CHECK(sym_unwind(u, &unwind_sample, ips, 2, &cut) == 2 && ips[1] == unwind_returns[0],
	      "at most MAX addresses");
	/* nothing copied: not even the first return address, and cut */
	unwind_sample.size = 0;
	n = sym_unwind(u, &unwind_sample, ips, 16, &cut);
	CHECK(n == 1 && cut, "an empty copy: %u frame, cut", n);
	/* the default's repair. Each case with an unwinder of its own: the
	 * repair of an ip is remembered, and one pc cannot be both framed and
	 * frameless. A frame-pointer chain that lacks unwind_inner's caller (as
	 * when unwind_inner keeps no frame pointer) gets it from the CFI, then
	 * goes on with the chain's own tail; the second time from the cache */
	struct sym_unwinder *v;
	unwind_sample.size = sizeof(unwind_copy);
	uint64_t chain[4] = { unwind_sample.regs[16], unwind_returns[1], unwind_returns[2], 0x1234 };
	CHECK(sym_unwinder_alloc(p, &v) == 0, "a second unwinder");
	for (int pass = 0; pass < 2; pass++) {
		n = sym_unwind_splice(v, &unwind_sample, chain, 4, ips, 16, &cut);
		CHECK(n == 5 && ips[1] == unwind_returns[0] && ips[2] == unwind_returns[1] &&
		      ips[3] == unwind_returns[2] && ips[4] == 0x1234 && !cut,
		      "splice, pass %d: the missing caller from CFI, then the chain (%u frames)",
		      pass + 1, n);
	}
	sym_unwinder_free(v);
	/* a chain of garbage: never met, the CFI walk alone */
	uint64_t junk[3] = { unwind_sample.regs[16], 0x10, 0x20 };
	uint64_t whole[16];
	uint32_t nw = sym_unwind(u, &unwind_sample, whole, 16, &cut);
	CHECK(sym_unwinder_alloc(p, &v) == 0, "a third unwinder");
	n = sym_unwind_splice(v, &unwind_sample, junk, 3, ips, 16, &cut);
	CHECK(n == nw && memcmp(ips, whole, n * sizeof(*ips)) == 0,
	      "splice: a chain never met gives the CFI walk (%u frames)", n);
	uint32_t offs[64], noffs;
	bool less_sp[64], rbp;
	uint64_t image;
	CHECK(!sym_unwind_walked_by_rules(v, &image, offs, less_sp, 64, &noffs, &rbp),
	      "splice by libunwind's steps: not by the rules alone (repeat.c walks the next)");
	/* its frames' rules learnt: the second time each frame by its rule
	 * (the last one's, whose step needs a word beyond the copy, from
	 * probes then), no libunwind step, the same frames, cut as before; a
	 * program without frame pointers walks its copy at every sample */
	bool cut0 = cut;
	uint64_t by_rule0, by_unw0, by_rule, by_unw, again0, again, shared0, shared;
	sym_unwinder_steps(v, &by_rule0, &by_unw0, &again0, &shared0);
	n = sym_unwind_splice(v, &unwind_sample, junk, 3, ips, 16, &cut);
	sym_unwinder_steps(v, &by_rule, &by_unw, &again, &shared);
	CHECK(n == nw && memcmp(ips, whole, n * sizeof(*ips)) == 0 && cut == cut0 &&
	      by_unw == by_unw0 && by_rule - by_rule0 == n && again == again0 && by_unw0 >= n - 1,
	      "splice again: the same %u frames (cut %d, %d), %" PRIu64 " steps by the rules learnt, %"
	      PRIu64 " by libunwind (first: %" PRIu64 "), %" PRIu64 " made again", n, cut, cut0,
	      by_rule - by_rule0, by_unw - by_unw0, by_unw0, again - again0);
	/* another process of the same files (a fork, as each of a shell
	 * script's processes runs bash): the rules learnt in the first by
	 * file (the last frame's too, whose step needs a word beyond the copy:
	 * learnt there), none by libunwind, the same frames */
	struct sym_ustack other = unwind_sample;
	other.pid = other.tid = 4100000;
	sym_procs_fork(p, other.pid, (uint32_t)getpid(), (uint32_t)getpid(), 150);
	bool cut1 = cut;
	n = sym_unwind_splice(v, &other, junk, 3, ips, 16, &cut);
	sym_unwinder_steps(v, &by_rule0, &by_unw0, &again0, &shared0);
	CHECK(n == nw && memcmp(ips, whole, n * sizeof(*ips)) == 0 && cut == cut1 &&
	      by_unw0 == by_unw && by_rule0 - by_rule == n && shared0 - shared == n,
	      "splice in another process of the same files: the same %u frames, %" PRIu64 " rules "
	      "taken by file, %" PRIu64 " steps by libunwind", n, shared0 - shared,
	      by_unw0 - by_unw);
	test_walked_by_rules(v, p, junk);
	/* a copy that ends before the first CFA: cut, and said */
	unwind_sample.size = 8;
	n = sym_unwind_splice(v, &unwind_sample, chain, 4, ips, 16, &cut);
	CHECK(cut && n == 4 && memcmp(ips, chain, sizeof(chain)) == 0,
	      "splice: a copy ending before the CFA: the chain as it is, cut");
	unwind_sample.size = sizeof(unwind_copy);
	sym_unwinder_free(v);
	/* a whole chain (unwind_inner keeps its frame pointer): kept as it is,
	 * the second time straight from the per-ip cache */
	uint64_t good[4] = { unwind_sample.regs[16], unwind_returns[0], unwind_returns[1], 0x5678 };
	CHECK(sym_unwinder_alloc(p, &v) == 0, "a fourth unwinder");
	for (int pass = 0; pass < 2; pass++) {
		n = sym_unwind_splice(v, &unwind_sample, good, 4, ips, 16, &cut);
		CHECK(n == 4 && memcmp(ips, good, sizeof(good)) == 0 && !cut,
		      "splice, pass %d: a whole chain as it is (%u frames)", pass + 1, n);
	}
	sym_unwinder_free(v);
	test_unwind_special(p, u);
	test_unwind_rules(p);
	test_unwind_leaf(p);
	test_unwind_leaf_twins(p);
	test_unwind_frame_regs(p);
	test_unwind_ended(p);
	/* a pid nothing is known of: the ip alone */
	unwind_sample.pid = 999999999;
	unwind_sample.size = sizeof(unwind_copy);
	n = sym_unwind(u, &unwind_sample, ips, 16, &cut);
	CHECK(n == 1 && ips[0] == unwind_sample.regs[16] && !cut, "unknown process: the ip only");
	sym_unwinder_free(u);
	sym_procs_free(p);
}
#else
static void test_unwind(void)
{
	SKIP("DWARF registers are taken on x86-64 only", "unwinding of this test's own stack");
}
#endif

/* ---- the .eh_frame_hdr table the unwinder (and the frame-pointer
 * verdict, symbolize_test.c) reads: sym_eh_frame_hdr_count ---- */

struct own_hdr {
	const uint8_t *h;
	size_t len;
};

/* The program's own PT_GNU_EH_FRAME, as mapped (the first object listed). */
static int find_own_hdr(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct own_hdr *o = ctx;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) {
			o->h = (const uint8_t *)(uintptr_t)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
			o->len = info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

#if defined(__x86_64__)
/* A copy laid over a file's mapping (an rsp that points into it): the
 * walk reads the file's own .eh_frame_hdr and CFI, as with a copy of
 * the same bytes, never the copy's. A copy of 0xff bytes gave a table
 * search that failed, and in the unwind fuzz target a DW_CFA_register
 * libunwind indexed its stack with (unwind_space.c's access_mem). */
static void test_copy_over_file(void)
{
	struct own_hdr o = { 0 };
	dl_iterate_phdr(find_own_hdr, &o);
	struct sym_procs *p = NULL;
	struct sym_unwinder *u = NULL;
	size_t len = o.len + 4096;
	uint8_t *junk = malloc(len), *same = malloc(len);
	uint64_t a[16], b[16];
	uint32_t na = 0, nb = 0;
	bool ca = false, cb = false;
	if (o.h && junk && same && sym_procs_alloc("/proc", "/usr/lib/debug", &p) == 0 &&
	    sym_procs_snapshot(p, (uint32_t)getpid(), 100) == 0 && sym_unwinder_alloc(p, &u) == 0) {
		memset(junk, 0xff, len);
		memcpy(same, o.h, len); /* the mapped bytes: the header, then .eh_frame */
		struct sym_ustack s = unwind_sample;
		s.pid = s.tid = (uint32_t)getpid();
		s.time = 200;
		/* at a function's first instruction: its CFA is rsp + 8 whatever
		 * the compiler (unwind_inner's own may be rbp's, off the copy) */
		s.regs[16] = (uint64_t)(uintptr_t)unwind_middle;
		s.regs[7] = (uint64_t)(uintptr_t)o.h;
		s.size = (uint32_t)len;
		s.stack = same;
		na = sym_unwind(u, &s, a, 16, &ca);
		s.stack = junk;
		nb = sym_unwind(u, &s, b, 16, &cb);
	}
	/* the caller, at [rsp]: the header's first word, from the file; then
	 * nothing mapped there */
	uint64_t first = 0;
	if (o.h)
		memcpy(&first, o.h, sizeof(first));
	CHECK(nb == 2 && b[1] == first && na == nb && memcmp(a, b, na * sizeof(*a)) == 0 && ca == cb,
	      "a copy of 0xff over the file's own .eh_frame_hdr: the file's CFI and words, %u "
	      "frames as with its own bytes (%u)", nb, na);
	sym_unwinder_free(u);
	sym_procs_free(p);
	free(junk);
	free(same);
}
#else
static void test_copy_over_file(void)
{
	SKIP("DWARF registers are taken on x86-64 only", "a copy laid over a file");
}
#endif

static void test_eh_frame_hdr(void)
{
	struct own_hdr o = { 0 };
	dl_iterate_phdr(find_own_hdr, &o);
	long n = o.h ? sym_eh_frame_hdr_count(o.h, o.len) : -1;
	int32_t first = 0, second = 0;
	if (n > 1) {
		memcpy(&first, o.h + SYM_EH_TABLE_OFF, 4);
		memcpy(&second, o.h + SYM_EH_TABLE_OFF + 8, 4);
	}
	CHECK(n > 1 && first < second && (size_t)n * 8 + SYM_EH_TABLE_OFF <= o.len,
	      "this program's own table: %ld functions, sorted by start", n);
	/* the linker's header, with two pairs */
	uint8_t h[SYM_EH_TABLE_OFF + 16] = { 1, DW_EH_PE_pcrel | DW_EH_PE_sdata4, DW_EH_PE_udata4,
					     DW_EH_PE_datarel | DW_EH_PE_sdata4, 0, 0, 0, 0, 2 };
	CHECK(sym_eh_frame_hdr_count(h, sizeof(h)) == 2, "the linker's encodings: 2 pairs");
	CHECK(sym_eh_frame_hdr_count(h, sizeof(h) - 1) == -ENOENT, "a table cut by a byte: none");
	CHECK(sym_eh_frame_hdr_count(h, SYM_EH_TABLE_OFF - 1) == -ENOENT, "a header cut: none");
	/* each rule broken alone: the unwinder read an 8-byte or absolute
	 * eh_frame_ptr before, whose table it then took from elsewhere */
	static const struct { int at; uint8_t v; const char *what; } bad[] = {
		{ 0, 2, "version 2" },
		{ 1, DW_EH_PE_pcrel | DW_EH_PE_sdata8, "an 8-byte eh_frame_ptr" },
		{ 1, DW_EH_PE_udata4, "an absolute eh_frame_ptr" },
		{ 2, DW_EH_PE_udata8, "an 8-byte count" },
		{ 3, DW_EH_PE_pcrel | DW_EH_PE_sdata4, "pc-relative pairs" },
		{ 8, 0, "no pair" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t c[sizeof(h)];
		memcpy(c, h, sizeof(h));
		c[bad[i].at] = bad[i].v;
		CHECK(sym_eh_frame_hdr_count(c, sizeof(c)) == -ENOENT, "%s: none", bad[i].what);
	}
}

int main(void)
{
#if defined(__x86_64__)
	stack_limit = (uint64_t)(uintptr_t)__builtin_frame_address(0);
#endif
	test_unwind();
	test_copy_over_file();
	test_eh_frame_hdr();
	CHECK_DONE();
}
