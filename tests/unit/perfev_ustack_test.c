/* perfev's user-stack copy (perfev/ustack.c): the frame-pointer walk on a
 * copied stack and the registers in DWARF order, on stacks built by hand,
 * and (as root) the walk on the kernel's copies against the kernel's own
 * walk of the same stacks. */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfev/perfev.h"
#include "tests/unit/check.h"
#include "tests/unit/perf_live.h"

/* ---- the frame-pointer walk on a copied stack ---- */
#define WALK_SP 0x7ffd00001000ULL

struct copied_stack {
	uint64_t regs[17];  /* ax..ip, r8..r15: perfev_user_regs_mask() order */
	uint64_t words[64]; /* 512 bytes from sp */
	struct perfev_sample s;
};

/* regs in mask order: ax bx cx dx si di bp sp ip r8..r15 */
static void copied_stack_init(struct copied_stack *c, uint64_t ip, uint64_t fp)
{
	memset(c, 0, sizeof(*c));
	c->regs[6] = fp;
	c->regs[7] = WALK_SP;
	c->regs[8] = ip;
	c->s.uregs = c->regs;
	c->s.ustack = (const uint8_t *)c->words;
	c->s.ustack_size = sizeof(c->words);
}

/* a frame at byte offset OFF from sp: [next frame pointer, return address] */
static void frame_at(struct copied_stack *c, uint64_t off, uint64_t next, uint64_t ret)
{
	c->words[off / 8] = next;
	c->words[off / 8 + 1] = ret;
}

static void test_ustack_walk(void)
{
	const uint64_t mask = perfev_user_regs_mask();
	struct copied_stack c;
	uint64_t ips[8];
	bool cut = true;
	copied_stack_init(&c, 0x401000, WALK_SP + 32);
	frame_at(&c, 32, WALK_SP + 96, 0x402000);
	frame_at(&c, 96, WALK_SP + 200, 0x403000);
	frame_at(&c, 200, 0, 0x404000);
	uint32_t n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 4 && ips[0] == 0x401000 && ips[1] == 0x402000 && ips[2] == 0x403000 &&
	      ips[3] == 0x404000 && !cut, "three frames, then a null frame pointer: %u", n);

	CHECK_EQ_U64(perfev_ustack_walk(&c.s, mask, ips, 2, &cut), 2, "at most MAX addresses");

	/* the next frame is beyond the 512 copied bytes: cut */
	frame_at(&c, 200, WALK_SP + 4096, 0x404000);
	n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 4 && cut, "a frame past the copy's end cuts the walk");
	/* half of the last frame in the copy: cut too */
	frame_at(&c, 200, WALK_SP + 504, 0x404000);
	n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 4 && cut, "a frame straddling the copy's end cuts the walk");
	/* the last 16 bytes of the copy are a whole frame */
	frame_at(&c, 200, WALK_SP + 496, 0x404000);
	frame_at(&c, 496, 0, 0x405000);
	n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 5 && ips[4] == 0x405000 && !cut, "a frame ending at the copy's end is read");

	/* garbage in bp (code without frame pointers): below sp, or far off */
	frame_at(&c, 200, 0x1234, 0x404000);
	n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 4 && !cut, "a frame pointer below sp ends the walk, not cut");
	frame_at(&c, 200, WALK_SP + (1ULL << 30), 0x404000);
	n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 4 && !cut, "a frame pointer 1 GiB away ends the walk, not cut");
	copied_stack_init(&c, 0x401000, UINT64_MAX - 8);
	n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 1 && !cut, "bp near the top of the address space: the ip only");

	/* no copy at all (the kernel could not read the stack): the ip only */
	copied_stack_init(&c, 0x401000, WALK_SP + 32);
	c.s.ustack = NULL;
	c.s.ustack_size = 0;
	n = perfev_ustack_walk(&c.s, mask, ips, 8, &cut);
	CHECK(n == 1 && ips[0] == 0x401000 && cut, "no copy: the ip, and the walk is cut");
	c.s.uregs = NULL;
	CHECK_EQ_U64(perfev_ustack_walk(&c.s, mask, ips, 8, &cut), 0, "no registers: nothing");
	CHECK_EQ_U64(perfev_ustack_walk(&c.s, 1ULL << 8, ips, 8, &cut), 0,
		     "a mask without sp and bp: nothing");

	/* DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip, from
	 * perf's ax bx cx dx si di bp sp ip r8..r15 */
	uint64_t dw[17];
	for (int i = 0; i < 17; i++)
		c.regs[i] = 100 + i;
	c.s.uregs = c.regs;
	static const uint64_t want[17] = { 100, 103, 102, 101, 104, 105, 106, 107,
		109, 110, 111, 112, 113, 114, 115, 116, 108 };
	uint32_t known = 0;
	CHECK(perfev_ustack_dwarf_regs(&c.s, mask, dw, &known) == 0 &&
	      memcmp(dw, want, sizeof(dw)) == 0,
	      "registers in DWARF order: rdx %" PRIu64 ", rip %" PRIu64, dw[1], dw[16]);
	CHECK_EQ_U64(known, 0x1ffff, "all 17 taken");

	/* what fp and copy take: bp, sp, ip, r10, r11 (perf's order), the
	 * rest unknown */
	const uint64_t frame = perfev_user_frame_regs_mask();
	CHECK_EQ_U64(frame, 0xc01c0ULL, "x86-64 frame regs mask: bp, sp, ip, r10, r11");
	uint64_t five[5] = { WALK_SP + 32, WALK_SP, 0x401000, 10, 11 };
	c.s.uregs = five;
	static const uint64_t want5[17] = { [6] = WALK_SP + 32, [7] = WALK_SP, [10] = 10, [11] = 11,
					    [16] = 0x401000 };
	CHECK(perfev_ustack_dwarf_regs(&c.s, frame, dw, &known) == 0 &&
	      memcmp(dw, want5, sizeof(dw)) == 0,
	      "frame regs: rbp, rsp, r10, r11, rip in place, 0 elsewhere");
	CHECK_EQ_U64(known, (1u << 6) | (1u << 7) | (1u << 10) | (1u << 11) | (1u << 16),
		     "frame regs: known rbp, rsp, r10, r11, rip");
	copied_stack_init(&c, 0x401000, WALK_SP + 32);
	c.s.uregs = five;
	frame_at(&c, 32, WALK_SP + 96, 0x402000);
	frame_at(&c, 96, 0, 0x403000);
	n = perfev_ustack_walk(&c.s, frame, ips, 8, &cut);
	CHECK(n == 3 && ips[0] == 0x401000 && ips[1] == 0x402000 && ips[2] == 0x403000,
	      "frame regs: the walk as with all registers (%u)", n);
	CHECK(perfev_ustack_dwarf_regs(&c.s, frame & ~(1ULL << 7), dw, &known) == -ENOENT,
	      "a mask without sp: no DWARF registers");
	for (int i = 0; i < 17; i++)
		c.regs[i] = 100 + i;
	c.s.uregs = c.regs;
	CHECK(perfev_ustack_dwarf_regs(&c.s, mask & ~(1ULL << 23), dw, &known) == 0 &&
	      !(known & (1u << 15)) && dw[15] == 0, "a mask without r15: r15 unknown");
}

/* Three frames that keep their frame pointers whatever -O the test has
 * (gcc's -O2 drops them; the clang ASan build keeps them anyway). */
#if defined(__clang__)
#define FP_FRAME __attribute__((noinline))
#else
#define FP_FRAME __attribute__((noinline, optimize("no-omit-frame-pointer")))
#endif
FP_FRAME static void fp_getppid(void) { syscall(SYS_getppid); __asm__ volatile(""); }
FP_FRAME static void fp_mid(void) { fp_getppid(); __asm__ volatile(""); }
FP_FRAME static void fp_top(long n) { for (long i = 0; i < n; i++) fp_mid(); }

struct walk_cmp { long samples, same, deep, cut; };

static int walk_cmp_cb(void *ctx, const struct perfev_record *rec)
{
	struct walk_cmp *w = ctx;
	if (rec->kind != PERFEV_SAMPLE)
		return 0;
	uint64_t ips[128];
	bool cut;
	const struct perfev_sample *s = &rec->sample;
	uint32_t n = perfev_ustack_walk(s, perfev_user_frame_regs_mask(), ips, 128, &cut);
	w->samples++;
	w->same += n > 0 && n <= s->nuips && memcmp(ips, s->uips, n * sizeof(ips[0])) == 0;
	w->deep += n >= 4;
	w->cut += cut;
	return 0;
}

/* The walk on the copy against the kernel's own walk of the same stack, in
 * the same samples: every address the copy gives is the kernel's. */
static void test_live_ustack(int tp)
{
	if (getenv("FTSTACK_UNDER_VALGRIND")) { /* set by tests/valgrind/run */
		SKIP("valgrind's emulated CPU: the kernel's walk and the copy's cannot agree",
		     "the copy's walk is the kernel's");
		return;
	}
	struct perfev_ring r;
	int fd = open_getppid(tp, 1 << 22, false, 4096, &r);
	CHECK(fd >= 0, "getppid event with a 4096-byte stack copy (%d)", fd);
	if (fd < 0)
		return;
	perfev_enable(fd);
	fp_top(500);
	perfev_disable(fd);
	struct walk_cmp w = { 0 };
	uint64_t type = PERFEV_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	perfev_ring_drain(&r, type, perfev_user_frame_regs_mask(), walk_cmp_cb, &w);
	CHECK(w.samples == 500 && w.same == 500 && w.deep == 500,
	      "500 samples: the copy's walk is the kernel's in %ld, 4+ frames deep in %ld",
	      w.same, w.deep);
	perfev_ring_unmap(&r);
	close(fd);
}

int main(void)
{
	test_ustack_walk();
	if (geteuid() != 0)
		SKIP("not root", "the copy's walk is the kernel's");
	else
		test_live_ustack(sys_enter_id());
	CHECK_DONE();
}
