/* symbolize/layout.c: the layout sym_procs_image gives, the key of the
 * unwinder's per-ip caches and of the name cache, changes whenever an
 * address of the process may come to hold other code (an exec, another
 * file mapped over a mapping, the pid taken again after it was forgotten),
 * and only then; the unwinder's rules learnt in one file are not applied to
 * another file mapped at the same address. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

#define PID 4242u
#define LIBA "/nonexistent/liba.so"
#define LIBB "/nonexistent/libb.so"

static void test_image(void)
{
	struct sym_procs *p = NULL;
	CHECK(sym_procs_alloc("/nonexistent", NULL, &p) == 0, "procs");
	if (!p)
		return;
	CHECK_EQ_U64(sym_procs_image(p, PID, 5), 0, "an unknown pid: no layout");
	sym_procs_mmap(p, PID, 10, 0x400000, 0x10000, 0, true, LIBA, NULL);
	uint64_t a = sym_procs_image(p, PID, 20);
	CHECK(a != 0, "a mapping seen: a layout (%" PRIu64 ")", a);
	/* an mprotect's record, the same file at the same bias; another
	 * library where nothing was: the addresses keep their code */
	sym_procs_mmap(p, PID, 21, 0x404000, 0x1000, 0x4000, true, LIBA, NULL);
	sym_procs_mmap(p, PID, 22, 0x800000, 0x10000, 0, true, LIBB, NULL);
	CHECK_EQ_U64(sym_procs_image(p, PID, 25), a, "the same code mapped again, a new library "
		     "elsewhere: the same layout");
	/* liba unmapped (perf says nothing), libb mapped where it was */
	sym_procs_mmap(p, PID, 30, 0x400000, 0x10000, 0, true, LIBB, NULL);
	uint64_t b = sym_procs_image(p, PID, 40);
	CHECK(b != 0 && b != a, "another file over liba: a new layout (%" PRIu64 " after %" PRIu64
	      ")", b, a);
	CHECK_EQ_U64(sym_procs_image(p, PID, 25), a, "before it, the old layout still");
	/* the same file at another offset holds other code too */
	sym_procs_mmap(p, PID, 50, 0x800000, 0x10000, 0x2000, true, LIBB, NULL);
	uint64_t c = sym_procs_image(p, PID, 60);
	CHECK(c != b && c != a, "the same file at another bias: a new layout");
	sym_procs_comm(p, PID, 70, "next", true);
	uint64_t d = sym_procs_image(p, PID, 80);
	CHECK(d != c && d != b && d != a, "an exec: a new layout");
	/* the process exits and is forgotten; a new one takes its pid, its
	 * first record an mmap (its fork unseen), as the old one's was */
	sym_procs_exit(p, PID, PID, 100);
	CHECK_EQ_U64(sym_procs_forget(p, 100 + 2 * SYM_EXIT_GRACE_NS, NULL, NULL), 1,
		     "the exited process forgotten");
	uint64_t t = 100 + 3 * SYM_EXIT_GRACE_NS;
	sym_procs_mmap(p, PID, t, 0x400000, 0x10000, 0, true, LIBB, NULL);
	uint64_t e = sym_procs_image(p, PID, t + 10);
	CHECK(e != 0 && e != a && e != b && e != c && e != d,
	      "the pid taken again after it was forgotten: a layout never seen (%" PRIu64 ")", e);
	sym_procs_free(p);
}

#if defined(__x86_64__)
/* Walked from its first instruction: its CFA is rsp + 8 there */
__attribute__((noinline, used)) int layout_target(int x)
{
	return x * 3 + 1;
}

/* PATH's mapping that holds ADDR in this process, recorded for PID at TIME */
static int map_like_self(struct sym_procs *p, uint64_t addr, uint64_t time, const char *path)
{
	char file[4096];
	uint64_t start, pgoff;
	if (test_self_mapping(addr, file, sizeof(file), &start, &pgoff) < 0)
		return -1;
	sym_procs_mmap(p, PID, time, start, 0x100000, pgoff, true, path ? path : file, NULL);
	return 0;
}

/* The unwinder steps from layout_target's first instruction in this test
 * binary and learns its caller's rule; once another file (libc) is mapped
 * over it, a sample at the same address is walked by libc's CFI, not by the
 * test binary's. */
static void test_rules_not_shared(void)
{
	struct sym_procs *p = NULL;
	struct sym_unwinder *u = NULL;
	uint64_t ip = (uint64_t)(uintptr_t)&layout_target, libc_addr = (uint64_t)(uintptr_t)&abort;
	char libc[4096];
	uint64_t s0, o0;
	bool ok = sym_procs_alloc("/nonexistent", NULL, &p) == 0 &&
		  sym_unwinder_alloc(p, &u) == 0 && map_like_self(p, ip, 10, NULL) == 0 &&
		  test_self_mapping(libc_addr, libc, sizeof(libc), &s0, &o0) == 0;
	CHECK(ok, "unwinder: this test's mapping recorded for a fake pid");
	/* sampled at layout_target's first instruction, called from
	 * layout_target + 1 (a return address whose rule is learnt), whose own
	 * return address is 0: the end; room for the probes that learn the
	 * rule from rsp shifted by 64 bytes */
	uint64_t stack[32] = { ip + 1 };
	struct sym_ustack s = { .pid = PID, .tid = PID, .time = 20,
				.stack = (const uint8_t *)stack, .size = sizeof(stack) };
	s.regs[7] = 0x7fff0000;
	s.regs[16] = ip;
	uint64_t ips[8], ruled = 0, full = 0;
	bool cut;
	for (int i = 0; ok && i < 2; i++)
		sym_unwind(u, &s, ips, 8, &cut);
	if (ok)
		sym_unwinder_counts(u, &ruled, &full);
	uint64_t learnt = ok ? sym_unwinder_learnt(u) : 0;
	CHECK(ruled == 2 && full == 0 && learnt == 1 && ips[1] == ip + 1,
	      "unwinder: the caller's rule learnt once, both walks by it "
	      "(%" PRIu64 " ruled, %" PRIu64 " full, %" PRIu64 " learnt)", ruled, full, learnt);
	if (ok)
		sym_procs_mmap(p, PID, 30, ip & ~0xfffull, 0x100000, 0, true, libc, NULL);
	s.time = 40;
	uint32_t n = ok ? sym_unwind(u, &s, ips, 8, &cut) : 0;
	uint64_t ruled2 = 0, full2 = 0;
	if (ok)
		sym_unwinder_counts(u, &ruled2, &full2);
	uint64_t learnt2 = ok ? sym_unwinder_learnt(u) : 0;
	/* libc's first page there (its ELF header) has no CFI: the walk
	 * stops at the ip, where the test binary's frames would go on */
	CHECK(n == 1 && learnt2 == learnt, "unwinder: libc mapped over it, "
	      "the same address walked by libc's CFI, not the test binary's (%u frames, %" PRIu64
	      " ruled, %" PRIu64 " full, %" PRIu64 " learnt)", n, ruled2, full2, learnt2);
	sym_unwinder_free(u);
	sym_procs_free(p);
}
#else
static void test_rules_not_shared(void)
{
	SKIP("DWARF registers are taken on x86-64 only", "rules not shared");
}
#endif

int main(void)
{
	test_image();
	test_rules_not_shared();
	CHECK_DONE();
}
