/* perfev: record decoding from hand-built bytes, the drain loop on a fake
 * ring, and (as root) live rings fed by raw_syscalls:sys_enter. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfev/perfev.h"
#include "tests/unit/check.h"
#include "tests/unit/perf_records.h"

static size_t build_sample(struct bld *b, const uint64_t *chain, size_t n)
{
	begin(b);
	p64(b, 77);          /* identifier */
	p32x2(b, 10, 11);    /* pid, tid */
	p64(b, 123456789);   /* time */
	p32x2(b, 1, 0);      /* cpu, res */
	p64(b, 3);           /* period */
	p64(b, n);
	for (size_t i = 0; i < n; i++)
		p64(b, chain[i]);
	return b->n;
}

/* Every shorter length fails: with the header still claiming the full size,
 * and with the header rewritten to the short size (the parser's own checks). */
static void check_truncations(const struct bld *full, size_t len, uint64_t type,
			      uint64_t mask, const char *what)
{
	int bad = 0;
	for (size_t l = 0; l < len; l++) {
		struct bld t = *full;
		struct perfev_record r;
		if (perfev_decode(t.w, l, type, mask, &r) != -EINVAL)
			bad++;
		uint16_t sz = (uint16_t)l;
		memcpy(bytes_of(&t) + 6, &sz, 2);
		if (perfev_decode(t.w, l, type, mask, &r) != -EINVAL)
			bad++;
	}
	CHECK(bad == 0, "%s: all %zu truncations give -EINVAL (%d did not)", what, len, bad);
}

static void test_sample_chain(void)
{
	const uint64_t k1 = 0xffffffff81000010ULL, k2 = 0xffffffff81000020ULL;
	const uint64_t chain[] = { PERF_CONTEXT_KERNEL, k1, k2, PERF_CONTEXT_USER, 0x401000, 0x401100, 0x401200 };
	struct bld b;
	size_t len = build_sample(&b, chain, 7);
	finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	struct perfev_record r;
	CHECK_EQ_U64(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r), 0, "sample decodes");
	CHECK_EQ_U64(r.kind, PERFEV_SAMPLE, "kind");
	CHECK_EQ_U64(r.misc, PERF_RECORD_MISC_KERNEL, "misc");
	CHECK(r.sample.id == 77 && r.id == 77 && r.sample.pid == 10 && r.sample.tid == 11 &&
	      r.pid == 10 && r.tid == 11 && r.sample.time == 123456789 && r.time == 123456789 &&
	      r.sample.cpu == 1 && r.cpu == 1 && r.sample.period == 3,
	      "id 77, pid/tid 10/11, time, cpu 1, period 3");
	CHECK_EQ_U64(r.sample.nkips, 2, "nkips");
	CHECK(r.sample.kips == &b.w[8] && r.sample.kips[0] == k1 && r.sample.kips[1] == k2,
	      "kips point at k1, k2 in the buffer");
	CHECK_EQ_U64(r.sample.nuips, 3, "nuips");
	CHECK(r.sample.uips == &b.w[11] && r.sample.uips[0] == 0x401000 && r.sample.uips[2] == 0x401200,
	      "uips point at u1..u3 in the buffer");
	CHECK(!r.sample.raw && !r.sample.ustack && !r.sample.uregs, "no raw, stack, regs");
	check_truncations(&b, len, PERFEV_SAMPLE_TYPE, 0, "sample with callchain");

	/* guest entries are dropped; a missing kernel part is NULL/0 */
	const uint64_t g[] = { PERF_CONTEXT_KERNEL, k1, PERF_CONTEXT_GUEST_KERNEL, 0x1234,
			       PERF_CONTEXT_USER, 0x401000 };
	len = build_sample(&b, g, 6);
	finish(&b, PERF_RECORD_SAMPLE, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.sample.nkips == 1 &&
	      r.sample.kips[0] == k1 && r.sample.nuips == 1 && r.sample.uips[0] == 0x401000,
	      "guest segment skipped");
	const uint64_t u[] = { PERF_CONTEXT_USER, 0x401000, 0x402000 };
	len = build_sample(&b, u, 3);
	finish(&b, PERF_RECORD_SAMPLE, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.sample.nkips == 0 &&
	      !r.sample.kips && r.sample.nuips == 2, "user-only chain");
	/* a count larger than the record */
	len = build_sample(&b, u, 3);
	b.w[6] = 4;
	finish(&b, PERF_RECORD_SAMPLE, 0);
	CHECK_EQ_U64(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r), -EINVAL, "callchain nr too big");
	b.w[6] = UINT64_MAX / 4;
	CHECK_EQ_U64(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r), -EINVAL, "callchain nr overflow");
	CHECK_EQ_U64(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE | PERF_SAMPLE_READ, 0, &r), -EINVAL,
		     "PERF_SAMPLE_READ refused");
	CHECK_EQ_U64(perfev_decode(b.w, len - 8, PERFEV_SAMPLE_TYPE, 0, &r), -EINVAL,
		     "len disagrees with header");
}

/* RAW (10 bytes + 2 of padding), REGS_USER and STACK_USER after the chain. */
static void test_sample_raw_user(void)
{
	const uint64_t chain[] = { PERF_CONTEXT_USER, 0x401000 };
	const uint64_t type = PERFEV_SAMPLE_TYPE | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
			      PERF_SAMPLE_STACK_USER;
	const uint64_t mask = perfev_user_regs_mask();
	struct bld b;
	build_sample(&b, chain, 2);
	uint32_t rs = 10;
	put(&b, &rs, 4);
	put(&b, "0123456789\0\0", 12);
	p64(&b, PERF_SAMPLE_REGS_ABI_64);
	for (int i = 0; i < __builtin_popcountll(mask); i++)
		p64(&b, 1000 + (uint64_t)i);
	p64(&b, 64);
	size_t stack_at = b.n;
	for (int i = 0; i < 8; i++)
		p64(&b, 0x5555000000000000ULL + (uint64_t)i);
	p64(&b, 40);
	size_t len = finish(&b, PERF_RECORD_SAMPLE, 0);
	struct perfev_record r;
	CHECK_EQ_U64(perfev_decode(b.w, len, type, mask, &r), 0, "raw+user sample decodes");
	CHECK(r.sample.raw_size == 10 && r.sample.raw && memcmp(r.sample.raw, "0123456789", 10) == 0,
	      "raw payload");
	CHECK_EQ_U64(r.sample.uregs_abi, PERF_SAMPLE_REGS_ABI_64, "regs abi");
	CHECK(r.sample.uregs && r.sample.uregs[0] == 1000 && r.sample.uregs[16] == 1016,
	      "17 user regs in mask order");
	CHECK(r.sample.ustack == bytes_of(&b) + stack_at && r.sample.ustack_size == 40,
	      "user stack: dyn_size bytes in place");
	CHECK_EQ_U64(r.sample.nuips, 1, "chain before raw");
	check_truncations(&b, len, type, mask, "raw+regs+stack sample");
	/* dyn_size larger than the copy */
	b.w[len / 8 - 1] = 65;
	CHECK_EQ_U64(perfev_decode(b.w, len, type, mask, &r), -EINVAL, "dyn_size > size");
	CHECK_EQ_U64(perfev_user_regs_mask(), 0xff01ffULL, "x86-64 regs mask: ax..ip, r8..r15");
}

static size_t build_mmap2(struct bld *b, bool build_id)
{
	begin(b);
	p32x2(b, 200, 201);
	P64S(b, 0x7f0000001000, 0x2000, 0x1000); /* start, len, pgoff */
	if (build_id) {
		uint8_t id[24] = { 20, 0, 0, 0, 0xab, 0xcd };
		put(b, id, 24);
	} else {
		p32x2(b, 8, 1);
		P64S(b, 4242, 1);
	}
	p32x2(b, 5, 2); /* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	put(b, "/usr/lib/libc.so.6\0\0\0\0\0", 24);
	trailer(b, 200, 201, 999, 1, 88);
	return finish(b, PERF_RECORD_MMAP2, build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
}

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

static void test_side_band(void)
{
	struct bld b;
	struct perfev_record r;
	for (int bid = 0; bid < 2; bid++) {
		size_t len = build_mmap2(&b, bid);
		CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_MMAP2,
		      "mmap2 (build-id form %d) decodes", bid);
		CHECK(r.pid == 200 && r.tid == 201 && r.mmap2.start == 0x7f0000001000 &&
		      r.mmap2.len == 0x2000 && r.mmap2.pgoff == 0x1000 && r.mmap2.prot == 5 &&
		      r.mmap2.flags == 2, "mmap2 fields");
		CHECK_STR(r.mmap2.filename, "/usr/lib/libc.so.6", "mmap2 filename");
		CHECK(r.time == 999 && r.cpu == 1 && r.id == 88, "mmap2 trailer: time, cpu, id");
		check_truncations(&b, len, PERFEV_SAMPLE_TYPE, 0, "mmap2");
	}
	/* a filename without its NUL inside the record */
	build_mmap2(&b, false);
	memset(bytes_of(&b) + 72, 'x', 24);
	CHECK_EQ_U64(perfev_decode(b.w, b.n, PERFEV_SAMPLE_TYPE, 0, &r), -EINVAL, "unterminated filename");

	begin(&b);
	p32x2(&b, 300, 301);
	put(&b, "bash\0\0\0\0", 8);
	trailer(&b, 300, 301, 1000, 0, 88);
	size_t len = finish(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_COMM &&
	      r.comm.exec && r.pid == 300 && r.tid == 301 && r.time == 1000, "comm exec");
	CHECK_STR(r.comm.comm, "bash", "comm");
	check_truncations(&b, len, PERFEV_SAMPLE_TYPE, 0, "comm");
	finish(&b, PERF_RECORD_COMM, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && !r.comm.exec, "comm, no exec");

	for (int exit = 0; exit < 2; exit++) {
		begin(&b);
		p32x2(&b, 400, 1);   /* pid, ppid */
		p32x2(&b, 402, 401); /* tid, ptid */
		p64(&b, 5000);
		trailer(&b, 1, 401, 5001, 1, 66);
		len = finish(&b, exit ? PERF_RECORD_EXIT : PERF_RECORD_FORK, 0);
		CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 &&
		      r.kind == (exit ? PERFEV_EXIT : PERFEV_FORK), "%s decodes", exit ? "exit" : "fork");
		CHECK(r.pid == 400 && r.task.ppid == 1 && r.tid == 402 && r.task.ptid == 401 &&
		      r.time == 5000 && r.cpu == 1 && r.id == 66, "task fields, trailer cpu/id");
		check_truncations(&b, len, PERFEV_SAMPLE_TYPE, 0, exit ? "exit" : "fork");
	}

	begin(&b);
	P64S(&b, 66, 42);
	trailer(&b, 0, 0, 7000, 1, 66);
	len = finish(&b, PERF_RECORD_LOST, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_LOST &&
	      r.lost.lost == 42 && r.id == 66 && r.time == 7000, "lost 42");
	check_truncations(&b, len, PERFEV_SAMPLE_TYPE, 0, "lost");

	begin(&b);
	P64S(&b, 8000, 66, 66);
	trailer(&b, 0, 0, 8000, 0, 66);
	len = finish(&b, PERF_RECORD_THROTTLE, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_THROTTLE &&
	      r.time == 8000 && r.id == 66, "throttle");
	finish(&b, PERF_RECORD_UNTHROTTLE, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_UNTHROTTLE,
	      "unthrottle");
	finish(&b, 0x7f0, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_OTHER &&
	      r.id == 66 && r.time == 8000, "other record type, trailer read");

	/* a CPU-wide switch-out: the next task in the body, ours in the trailer */
	begin(&b);
	p32x2(&b, 77, 78);
	trailer(&b, 55, 56, 9000, 1, 66);
	len = finish(&b, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_SWITCH &&
	      r.sw.out && r.sw.other_pid == 77 && r.sw.other_tid == 78 && r.pid == 55 &&
	      r.tid == 56 && r.time == 9000, "switch-out, cpu-wide");
	check_truncations(&b, len, PERFEV_SAMPLE_TYPE, 0, "switch");
	begin(&b);
	trailer(&b, 57, 57, 9100, 1, 66);
	len = finish(&b, PERF_RECORD_SWITCH, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_SWITCH &&
	      !r.sw.out && r.tid == 57 && r.time == 9100, "switch-in, per task");
}

/* --per-cgroup: PERF_SAMPLE_CGROUP after the user stack, as the kernel
 * writes it, and PERF_RECORD_CGROUP's id and path */
static void test_cgroup(void)
{
	const uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
				   PERF_CONTEXT_USER, 0x401000 };
	const uint64_t type = PERFEV_SAMPLE_TYPE | PERF_SAMPLE_CGROUP;
	struct bld b;
	struct perfev_record r;
	size_t len = build_sample(&b, chain, 4);
	p64(&b, 0x1234abcd);
	len = finish(&b, PERF_RECORD_SAMPLE, 0);
	CHECK(perfev_decode(b.w, len, type, 0, &r) == 0 && r.kind == PERFEV_SAMPLE &&
	      r.sample.cgroup == 0x1234abcd && r.sample.nkips == 1 && r.sample.nuips == 1 &&
	      r.sample.uips[0] == 0x401000, "sample: cgroup id after the callchain");
	check_truncations(&b, len, type, 0, "sample with cgroup");
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.sample.cgroup == 0,
	      "without the bit: no cgroup id read");

	/* after RAW, REGS_USER and STACK_USER, in the kernel's order */
	const uint64_t mask = 0x7; /* three registers */
	const uint64_t full = type | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	build_sample(&b, chain, 4);
	uint32_t raw_size = 4;
	put(&b, &raw_size, 4);
	put(&b, "abcd", 4);
	P64S(&b, 2, 11, 12, 13);       /* abi 64, three registers */
	P64S(&b, 16, 0x55, 0x66, 16);  /* size, 16 bytes of stack, dyn_size */
	p64(&b, 777);
	len = finish(&b, PERF_RECORD_SAMPLE, 0);
	CHECK(perfev_decode(b.w, len, full, mask, &r) == 0 && r.sample.cgroup == 777 &&
	      r.sample.raw_size == 4 && r.sample.uregs && r.sample.uregs[2] == 13 &&
	      r.sample.ustack_size == 16, "sample: raw, registers, stack, then cgroup");
	check_truncations(&b, len, full, mask, "sample with stack and cgroup");
	/* WEIGHT comes before CGROUP: skipped, not taken for the id */
	build_sample(&b, chain, 4);
	P64S(&b, 5, 888);
	len = finish(&b, PERF_RECORD_SAMPLE, 0);
	CHECK(perfev_decode(b.w, len, type | PERF_SAMPLE_WEIGHT, 0, &r) == 0 &&
	      r.sample.cgroup == 888, "sample: weight skipped before the cgroup");
	CHECK_EQ_U64(perfev_decode(b.w, len, type | PERF_SAMPLE_REGS_INTR, 0, &r), -EINVAL,
		     "REGS_INTR (not decoded) refused");

	begin(&b);
	p64(&b, 0x99);
	put(&b, "/ftstack_a\0\0\0\0\0\0", 16);
	trailer(&b, 0, 0, 4242, 1, 66);
	len = finish(&b, PERF_RECORD_CGROUP, 0);
	CHECK(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r) == 0 && r.kind == PERFEV_CGROUP &&
	      r.cgroup.id == 0x99 && r.time == 4242 && r.cpu == 1, "cgroup record: id, trailer");
	CHECK_STR(r.cgroup.path, "/ftstack_a", "cgroup record: path");
	check_truncations(&b, len, PERFEV_SAMPLE_TYPE, 0, "cgroup record");
	memset(bytes_of(&b) + 16, 'x', 16);
	CHECK_EQ_U64(perfev_decode(b.w, len, PERFEV_SAMPLE_TYPE, 0, &r), -EINVAL,
		     "cgroup record: path without its NUL");
}

/* ---- bytes captured from this kernel's rings (fixtures/perfev_*.bin):
 * 5 getppid sys_enter samples with RAW; a cpu-clock --call-graph dwarf
 * ring with MMAP2 of /bin/true, COMM "pevtest" and 4 samples ---- */
static void test_fixtures(void)
{
	static const char *const files[] = { "tests/unit/fixtures/perfev_getppid.bin",
					      "tests/unit/fixtures/perfev_dwarf.bin" };
	const uint64_t types[] = { PERFEV_SAMPLE_TYPE | PERF_SAMPLE_RAW,
		PERFEV_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER };
	static uint64_t buf[1024];
	for (int f = 0; f < 2; f++) {
		FILE *fp = fopen(files[f], "rb");
		size_t n = fp ? fread(buf, 1, sizeof(buf), fp) : 0;
		if (fp)
			fclose(fp);
		long kinds[PERFEV_OTHER + 1] = { 0 }, good = 0, bad = 0;
		uint64_t last = 0;
		for (size_t off = 0; off + 8 <= n;) {
			uint16_t size;
			memcpy(&size, (uint8_t *)buf + off + 6, 2);
			struct perfev_record r;
			if (size < 8 || off + size > n ||
			    perfev_decode((uint8_t *)buf + off, size, types[f], perfev_user_regs_mask(), &r)) {
				bad++;
				break;
			}
			kinds[r.kind]++;
			const struct perfev_sample *s = &r.sample;
			int64_t nr = 0;
			if (f == 0 && s->raw_size == 68)
				memcpy(&nr, (const uint8_t *)s->raw + 8, 8);
			good += r.pid == 7684 && r.tid == 7684 && r.time > last && r.id == 103 + (uint64_t)f &&
				(r.kind != PERFEV_SAMPLE ||
				 (f == 0 ? nr == 110 && s->nkips == 3 && s->nuips == 2 :
				  s->uregs_abi == 2 && s->ustack_size == 256 && s->nkips == 0 &&
				  s->nuips == 3 && s->uregs[8] == s->uips[0])) &&
				(r.kind != PERFEV_MMAP2 || (r.mmap2.start == 0x7ff79a582000 && r.mmap2.prot == 5 &&
				 strcmp(r.mmap2.filename, "/usr/bin/true") == 0)) &&
				(r.kind != PERFEV_COMM || (!r.comm.exec && strcmp(r.comm.comm, "pevtest") == 0));
			last = r.time;
			off += size;
		}
		CHECK(bad == 0 && (f == 0 ? kinds[PERFEV_SAMPLE] == 5 && good == 5 :
				   kinds[PERFEV_SAMPLE] == 4 && kinds[PERFEV_MMAP2] == 1 &&
				   kinds[PERFEV_COMM] == 1 && good == 6),
		      "%s: %ld records as captured", files[f], good);
	}
}

/* Random bytes and mutated valid records: decode must only ever say yes or
 * -EINVAL (ASan/UBSan watch the reads). */
static void test_fuzz(void)
{
	static const uint64_t types[] = { PERFEV_SAMPLE_TYPE, PERFEV_SAMPLE_TYPE | PERF_SAMPLE_RAW,
		PERFEV_SAMPLE_TYPE | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID, 0 };
	uint64_t mask = perfev_user_regs_mask();
	unsigned seed = 12345;
	long odd = 0, ok = 0;
	struct bld b;
	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)(rand_r(&seed) % 40) * 8;
		if (i & 1) {
			memset(&b, 0, sizeof(b));
			for (size_t j = 0; j < len; j++)
				bytes_of(&b)[j] = (uint8_t)rand_r(&seed);
			if (rand_r(&seed) % 4) /* small type and counts, so parsers get deep */
				bytes_of(&b)[0] = (uint8_t)(rand_r(&seed) % 15), bytes_of(&b)[1] = 0;
		} else {
			len = i % 4 ? build_mmap2(&b, i % 8 == 2) : 0;
			if (!len) {
				const uint64_t c[] = { PERF_CONTEXT_KERNEL, 1, PERF_CONTEXT_USER, 2 };
				len = build_sample(&b, c, 4);
				finish(&b, PERF_RECORD_SAMPLE, 0);
			}
			for (int k = 0; k < 3; k++)
				bytes_of(&b)[rand_r(&seed) % (unsigned)len] = (uint8_t)rand_r(&seed);
		}
		if (len >= 8 && rand_r(&seed) % 2) {
			uint16_t sz = (uint16_t)len;
			memcpy(bytes_of(&b) + 6, &sz, 2);
		}
		struct perfev_record r;
		int ret = perfev_decode(b.w, len, types[i % 5], mask, &r);
		if (ret == 0)
			ok++;
		else if (ret != -EINVAL)
			odd++;
	}
	CHECK(odd == 0 && ok > 0, "fuzz: 200000 decodes, %ld accepted, %ld odd returns", ok, odd);
}

struct tally {
	long samples, lost, other, in_scratch, stop_after;
	uint64_t lost_sum;
	const struct perfev_ring *ring;
	uint32_t pid;
	long bad_pid, no_kips, no_uips, raw_ok;
	uint64_t t0, t1, id; /* with t1: sample times never go back, ids match */
	long bad_time, dwarf, mmap2, comm;
};

static int count_cb(void *ctx, const struct perfev_record *rec)
{
	struct tally *t = ctx;
	if (rec->kind == PERFEV_SAMPLE) {
		t->samples++;
		const uint8_t *k = (const uint8_t *)rec->sample.uips;
		if (t->ring && k >= t->ring->scratch && k < t->ring->scratch + 65536)
			t->in_scratch++;
		t->bad_pid += rec->pid != t->pid;
		t->no_kips += rec->sample.nkips == 0;
		t->no_uips += rec->sample.nuips == 0;
		/* sys_enter's raw payload: 8 bytes of common fields, then the id */
		int64_t nr = -1;
		if (rec->sample.raw && rec->sample.raw_size >= 16)
			memcpy(&nr, (const uint8_t *)rec->sample.raw + 8, 8);
		t->raw_ok += nr == SYS_getppid;
		/* perf's own clock: only its order is comparable here */
		t->bad_time += t->t1 && (rec->time < t->t0 || rec->id != t->id);
		t->t0 = rec->time;
		t->dwarf += rec->sample.uregs_abi == PERF_SAMPLE_REGS_ABI_64 && rec->sample.uregs &&
			    rec->sample.ustack_size > 0 && rec->sample.ustack_size <= 8192;
	} else if (rec->kind == PERFEV_LOST) {
		t->lost++;
		t->lost_sum += rec->lost.lost;
	} else {
		t->other++;
		if (rec->kind == PERFEV_MMAP2)
			t->mmap2 += rec->mmap2.filename && strstr(rec->mmap2.filename, "/true") != NULL;
		else if (rec->kind == PERFEV_COMM)
			t->comm += !rec->comm.exec && strcmp(rec->comm.comm, "pevtest") == 0;
	}
	return t->stop_after && t->samples + t->lost + t->other >= t->stop_after;
}

/* ---- the drain loop on a ring we fill ourselves ---- */
static void test_fake_ring(void)
{
	struct perfev_ring r;
	struct perf_event_mmap_page *meta = fake_ring(&r);
	const uint64_t chain[] = { PERF_CONTEXT_KERNEL, 1, 2, PERF_CONTEXT_USER, 3 };
	struct bld smp, bad, lost;
	size_t slen = build_sample(&smp, chain, 5);
	finish(&smp, PERF_RECORD_SAMPLE, 0);
	bad = smp;
	bad.w[6] = 99; /* callchain longer than the record */
	begin(&lost);
	P64S(&lost, 66, 5);
	trailer(&lost, 0, 0, 1, 0, 66);
	size_t llen = finish(&lost, PERF_RECORD_LOST, 0);
	/* start near the end so the second sample wraps */
	uint64_t start = 3 * 4096 + 4096 - slen - 16, pos = start;
	ring_put(&r, &pos, smp.w, slen);
	ring_put(&r, &pos, smp.w, slen);
	ring_put(&r, &pos, bad.w, slen);
	ring_put(&r, &pos, lost.w, llen);
	ring_put(&r, &pos, smp.w, slen);
	meta->data_head = pos;
	meta->data_tail = start;

	struct tally t = { .ring = &r, .pid = 10, .stop_after = 2 };
	CHECK_EQ_U64(perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t), 2, "stops after 2");
	CHECK_EQ_U64(meta->data_tail, start + 2 * slen, "tail released up to the stop");
	CHECK_EQ_U64(t.in_scratch, 1, "wrapping sample read from scratch");
	t.stop_after = 0;
	CHECK_EQ_U64(perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t), 2, "2 more records");
	CHECK(t.samples == 3 && t.lost == 1 && t.lost_sum == 5 && t.bad_pid == 0, "3 samples, lost 5");
	CHECK_EQ_U64(r.bad_records, 1, "undecodable record skipped and counted");
	CHECK_EQ_U64(meta->data_tail, pos, "tail == head");
	CHECK_EQ_U64(perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t), 0, "empty ring");

	/* corruption: a zero size, then a size beyond head */
	uint64_t zero = 0, before = pos;
	ring_put(&r, &pos, smp.w, slen);
	ring_put(&r, &pos, &zero, 8);
	meta->data_head = pos;
	CHECK_EQ_U64(perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t), -EINVAL, "size 0: -EINVAL");
	CHECK_EQ_U64(meta->data_tail, before + slen, "tail kept at the good record");
	pos = meta->data_tail;
	ring_put(&r, &pos, smp.w, 8);
	meta->data_head = pos;
	CHECK_EQ_U64(perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t), -EINVAL,
		     "size beyond head: -EINVAL");
	fake_ring_free(&r);
}

/* perfev_ring_drain_until: the step of the merge of several rings */
static void test_drain_until(void)
{
	struct perfev_ring r;
	struct perf_event_mmap_page *meta = fake_ring(&r);
	const uint64_t chain[] = { PERF_CONTEXT_USER, 3 };
	struct bld smp;
	size_t slen = build_sample(&smp, chain, 2);
	finish(&smp, PERF_RECORD_SAMPLE, 0);
	uint64_t pos = 0, next = 0;
	for (uint64_t t = 10; t <= 30; t += 10) {
		smp.w[3] = t; /* the sample's time */
		ring_put(&r, &pos, smp.w, slen);
	}
	meta->data_head = pos;
	struct tally t = { .ring = &r, .pid = 10 };
	CHECK_EQ_U64(perfev_ring_drain_until(&r, PERFEV_SAMPLE_TYPE, 0, 15, count_cb, &t, &next), 1,
		     "until 15: the record at 10");
	CHECK_EQ_U64(next, 20, "the next one's time");
	CHECK_EQ_U64(meta->data_tail, slen, "its space released, no more");
	CHECK_EQ_U64(perfev_ring_drain_until(&r, PERFEV_SAMPLE_TYPE, 0, 19, count_cb, &t, &next), 0,
		     "until 19: none");
	CHECK_EQ_U64(perfev_ring_drain_until(&r, PERFEV_SAMPLE_TYPE, 0, 20, count_cb, &t, &next), 1,
		     "until 20: the record at 20 (inclusive)");
	CHECK_EQ_U64(perfev_ring_drain_until(&r, PERFEV_SAMPLE_TYPE, 0, UINT64_MAX, count_cb, &t, &next),
		     1, "the rest");
	CHECK_EQ_U64(next, UINT64_MAX, "none left: UINT64_MAX");
	CHECK_EQ_U64(t.samples, 3, "3 samples in all");
	fake_ring_free(&r);
}

/* ---- live rings (root): raw_syscalls:sys_enter filtered to getppid ---- */
static int sys_enter_id(void)
{
	struct stat st;
	if (stat("/sys/kernel/tracing/events", &st) < 0)
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	int fd = open("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id", O_RDONLY);
	char buf[32] = "";
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -EIO;
}

/* raw_syscalls:sys_enter (id TP) on this process, filtered to getppid; with
 * STACK_DUMP, each sample copies that many bytes of the user stack and takes
 * the registers the fp and copy methods take. */
static int open_getppid(int tp, size_t ring_bytes, bool raw, uint32_t stack_dump,
			struct perfev_ring *r)
{
	struct perfev_opts o = { .type = PERF_TYPE_TRACEPOINT, .config = (uint64_t)tp,
				 .sample_period = 1, .disabled = true, .raw = raw,
				 .regs_user = stack_dump ? perfev_user_frame_regs_mask() : 0,
				 .stack_dump = stack_dump };
	int fd = perfev_open(&o, 0, -1, -1);
	if (fd < 0)
		return fd;
	char filter[32];
	snprintf(filter, sizeof(filter), "id == %d", SYS_getppid);
	int ret = ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0 ? -errno : 0;
	if (!ret)
		ret = perfev_ring_map(r, fd, ring_bytes);
	if (ret < 0)
		close(fd);
	return ret < 0 ? ret : fd;
}

static void getppids(int fd, long n)
{
	perfev_enable(fd);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	perfev_disable(fd);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* cpu-clock with every option ftstack uses: real MMAP2, COMM and dwarf
 * samples decode (the bytes come from this kernel, not from us). */

static void test_live_side_band(void)
{
	struct perfev_opts o = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = true, .sample_freq = 999, .regs_user = perfev_user_regs_mask(), .stack_dump = 8192,
		.track = true, .track_mmap = true, .disabled = true,
		.max_stack = 32, .wakeup_bytes = 4096 };
	struct perfev_ring r;
	int fd = perfev_open(&o, 0, -1, -1), ret = fd < 0 ? fd : perfev_ring_map(&r, fd, 1 << 20);
	CHECK(ret == 0, "cpu-clock dwarf+track event (%d)", ret);
	if (ret < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct timespec cpu_start;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
	uint64_t cpu0 = (uint64_t)cpu_start.tv_sec * 1000000000u + (uint64_t)cpu_start.tv_nsec;
	perfev_enable(fd);
	int bin = open("/bin/true", O_RDONLY);
	void *m = bin >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, bin, 0) : MAP_FAILED;
	char old[16] = "";
	prctl(PR_GET_NAME, old);
	prctl(PR_SET_NAME, "pevtest");
	/* 100 ms of this thread's CPU time (about 100 samples at 999 Hz),
	 * however long a busy host takes to give it; 10 s at most */
	struct timespec cpu;
	uint64_t give_up = mono_ns() + 10000000000ull;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	while ((uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec < cpu0 + 100000000 &&
	       mono_ns() < give_up);
	perfev_disable(fd);
	prctl(PR_SET_NAME, old);
	struct tally sd = { .pid = 0 };
	uint64_t type = PERFEV_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	long n = perfev_ring_drain(&r, type, perfev_user_regs_mask(), count_cb, &sd);
	CHECK(n > 0 && r.bad_records == 0 && sd.dwarf >= 20 && sd.mmap2 == 1 && sd.comm == 1,
	      "%ld records: %ld dwarf samples, mmap2 of /bin/true, comm pevtest", n, sd.dwarf);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	if (bin >= 0)
		close(bin);
	perfev_ring_unmap(&r);
	close(fd);
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

/* ---- perfev_ustack_judge on made-up rounds ---- */

static unsigned long judge_seed = 12345;
/* uniform in [-a, a), the same sequence on every run */
static double noise(double a)
{
	judge_seed = judge_seed * 6364136223846793005ul + 1442695040888963407ul;
	return ((double)(judge_seed >> 11) / (double)(1ul << 53) * 2 - 1) * a;
}

/* N rounds: a baseline around BASE, the walk and the copy FP and COPY ns
 * dearer, each timing with its own noise of +-A */
static void judge_rounds(int n, double base, double fp, double copy, double a,
			 struct perfev_ustack_cost *c)
{
	double tn[64], tf[64], tc[64];
	for (int i = 0; i < n; i++) {
		double drift = noise(base / 10); /* the host's speed wanders between rounds */
		tn[i] = base + drift + noise(a);
		tf[i] = base + drift + fp + noise(a);
		tc[i] = base + drift + copy + noise(a);
	}
	perfev_ustack_judge(tn, tf, tc, n, c);
}

static void test_ustack_judge(void)
{
	struct perfev_ustack_cost c;
	/* this project's VMs: 15 us a sample, fp (walk + 1 KB copy) 1.2 us,
	 * the 2 KB copy 0.4 */
	judge_rounds(31, 15000, 1200, 400, 150, &c);
	CHECK(c.fp_measured && c.fp_ns > 1000 && c.fp_ns < 1400 && c.copy_measured &&
	      c.copy_ns > 200 && c.copy_ns < 600 && c.verdict == PERFEV_USTACK_COPY,
	      "slow reads: fp %.0f ns, copy %.0f ns, the copy the cheaper", c.fp_ns, c.copy_ns);
	/* a fast host where the copy costs more */
	judge_rounds(31, 1000, 80, 300, 20, &c);
	CHECK(c.fp_measured && c.copy_measured && c.verdict == PERFEV_USTACK_FP,
	      "fast host: fp %.0f ns, copy %.0f ns, fp measurably cheaper", c.fp_ns, c.copy_ns);
	/* the copy cheaper, but not by half: copy (the old rule, "copy only
	 * below half the walk", said fp) */
	judge_rounds(31, 15000, 1000, 700, 50, &c);
	CHECK(c.verdict == PERFEV_USTACK_COPY, "copy 700 against fp 1000: copy (%d)", c.verdict);
	/* session 7's VM: fp 1.37 us, the copy 0.55 (old rule: fp) */
	judge_rounds(31, 15000, 1370, 550, 300, &c);
	CHECK(c.verdict == PERFEV_USTACK_COPY, "copy 550 against fp 1370: copy (%d)", c.verdict);
	/* fp cheaper by less than the noise: too small to tell, not fp */
	judge_rounds(31, 15000, 600, 620, 400, &c);
	CHECK(c.verdict == PERFEV_USTACK_TOO_SMALL, "fp 20 ns cheaper in +-400 ns of noise: too "
	      "small to tell (%d)", c.verdict);
	/* the host that printed -12.7 us: noise of +-20 us around costs of
	 * 1 us and 0.5 us; and costs of nothing in the same noise */
	int negative = 0, measured_nothing = 0, fp_won = 0;
	for (int run = 0; run < 20; run++) {
		judge_rounds(31, 30000, 1000, 500, 20000, &c);
		negative += c.fp_ns < 0 || c.copy_ns < 0 || c.fp_measured != (c.fp_ns > 0) ||
			    c.copy_measured != (c.copy_ns > 0);
		fp_won += c.verdict == PERFEV_USTACK_FP;
		judge_rounds(31, 30000, 0, 0, 20000, &c);
		negative += c.fp_ns < 0 || c.copy_ns < 0;
		measured_nothing += c.fp_measured + c.copy_measured;
		fp_won += c.verdict == PERFEV_USTACK_FP;
	}
	CHECK(negative == 0, "noise 20x the costs, 20 runs: no figure negative, 0 when not measured");
	CHECK(measured_nothing <= 3, "costs of nothing in noise, 20 runs: %d of 40 figures measured "
	      "(a 95%% interval: 1 expected)", measured_nothing);
	CHECK(fp_won <= 2, "noise 20x the costs, 40 judgements: fp chosen %d times (at most 2.5%% "
	      "each expected)", fp_won);
	/* fp and copy that cost the same, and a baseline dearer than both */
	judge_rounds(31, 15000, 600, 600, 100, &c);
	CHECK(c.verdict == PERFEV_USTACK_TOO_SMALL, "equal costs: they differ too little (%d)", c.verdict);
	judge_rounds(31, 15000, -800, -900, 100, &c);
	CHECK(!c.fp_measured && !c.copy_measured && c.fp_ns == 0 && c.copy_ns == 0,
	      "samples cheaper than the baseline: not measured, 0 (never negative)");
	/* noiseless: exact medians */
	double tn[9], tf[9], tc[9];
	for (int i = 0; i < 9; i++)
		tn[i] = 1000 + i, tf[i] = 1100 + i, tc[i] = 1020 + i;
	perfev_ustack_judge(tn, tf, tc, 9, &c);
	CHECK(c.fp_measured && c.fp_ns == 100 && c.copy_measured && c.copy_ns == 20 &&
	      c.verdict == PERFEV_USTACK_COPY && c.rounds == 9, "noiseless: 100 and 20 ns, the copy");
	/* noiseless, fp 1 ns cheaper: fp (the old rule said fp too, but for
	 * the walk's sake; this and the next pin the new rule's boundary) */
	for (int i = 0; i < 9; i++)
		tf[i] = 1019 + i;
	perfev_ustack_judge(tn, tf, tc, 9, &c);
	CHECK(c.verdict == PERFEV_USTACK_FP, "noiseless: fp 19, copy 20 ns: fp (%d)", c.verdict);
	/* noiseless, copy 1 ns cheaper: copy (the old rule: fp) */
	for (int i = 0; i < 9; i++)
		tf[i] = 1021 + i;
	perfev_ustack_judge(tn, tf, tc, 9, &c);
	CHECK(c.verdict == PERFEV_USTACK_COPY, "noiseless: fp 21, copy 20 ns: copy (%d)", c.verdict);
	/* too few rounds for a 95% interval: nothing measured */
	perfev_ustack_judge(tn, tf, tc, 5, &c);
	CHECK(!c.fp_measured && !c.copy_measured && c.verdict == PERFEV_USTACK_TOO_SMALL,
	      "5 rounds: too few to measure anything");
}

/* The measurement on this host: its meaning, not its figures (they are
 * this host's); fast (about 200 ms; the bound is generous) */
static void test_live_ustack_cost(int tp)
{
	struct perfev_ustack_cost c;
	uint64_t t0 = mono_ns();
	int ret = perfev_ustack_cost(tp, 1024, 2048, &c);
	double ms = (double)(mono_ns() - t0) / 1e6;
	CHECK(ret == 0, "perfev_ustack_cost (%d)", ret);
	if (ret < 0)
		return;
	CHECK(c.fp_ns >= 0 && c.copy_ns >= 0 && c.fp_measured == (c.fp_ns > 0) &&
	      c.copy_measured == (c.copy_ns > 0),
	      "user stack costs: fp %.0f ns (%s), copy %.0f ns (%s), never negative", c.fp_ns,
	      c.fp_measured ? "measured" : "too small", c.copy_ns, c.copy_measured ? "measured" : "too small");
	CHECK(c.rounds >= 9 && c.rounds <= 31 && c.calls >= 100 && c.calls <= 1000 && c.frames == 16 &&
	      c.fp_bytes == 1024 && c.copy_bytes == 2048,
	      "%d rounds of %d calls under %d frames, copies of %u and %u bytes", c.rounds, c.calls,
	      c.frames, c.fp_bytes, c.copy_bytes);
	CHECK(ms < 5000, "timed in %.0f ms (about 200 expected)", ms);
}

static void test_live(void)
{
	if (geteuid() != 0) {
		SKIP("not root", "live ring test");
		return;
	}
	int tp = sys_enter_id();
	CHECK(tp > 0, "raw_syscalls:sys_enter id %d", tp);
	struct perfev_ring r;
	int fd = open_getppid(tp, 1 << 20, false, 0, &r);
	CHECK(fd >= 0 && r.data_size == 1 << 20, "1 MiB ring (%d)", fd);
	if (fd < 0)
		return;
	struct tally t = { .pid = (uint32_t)getpid(), .t0 = 0 };
	getppids(fd, 1000);
	t.t1 = 1;
	CHECK(perfev_id(fd, &t.id) == 0, "event id");
	CHECK_EQ_U64(perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t), 1000, "1000 records");
	CHECK(t.samples == 1000 && t.lost == 0 && t.bad_pid == 0 && t.no_kips == 0 && t.no_uips == 0,
	      "1000 samples of this pid with kernel and user stacks");
	CHECK_EQ_U64(t.bad_time, 0, "sample times in order, ids match");
	perfev_ring_unmap(&r);
	close(fd);

	/* a 1-page ring, never drained while 100000 events come: the kernel
	 * counts what did not fit and reports it in a LOST record before the
	 * next record that fits, so one more event after the drain flushes it */
	fd = open_getppid(tp, 4096, false, 0, &r);
	CHECK(fd >= 0 && r.data_size == 4096, "1-page ring");
	if (fd < 0)
		return;
	memset(&t, 0, sizeof(t));
	t.pid = (uint32_t)getpid();
	getppids(fd, 100000);
	perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t);
	/* ... which no record has told yet, but the event's own count has */
	uint64_t klost = 0;
	CHECK(perfev_lost(fd, &klost) == 0 && t.lost == 0 && klost + (uint64_t)t.samples == 100000,
	      "before the flush: no LOST record, the event counts %" PRIu64 " lost + %ld samples == 100000",
	      klost, t.samples);
	getppids(fd, 1);
	perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t);
	CHECK(t.lost > 0 && t.lost_sum + (uint64_t)t.samples == 100001,
	      "lost %" PRIu64 " + samples %ld == 100001", t.lost_sum, t.samples);
	perfev_ring_unmap(&r);
	close(fd);

	/* the same ring drained often: nothing lost, records wrap the end (the
	 * raw payload makes samples a size that does not divide the ring) */
	fd = open_getppid(tp, 4096, true, 0, &r);
	memset(&t, 0, sizeof(t));
	t.pid = (uint32_t)getpid();
	t.ring = &r;
	long got = 0;
	for (int i = 0; fd >= 0 && i < 5000; i++) {
		getppids(fd, 4);
		got += perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE | PERF_SAMPLE_RAW, 0, count_cb, &t);
	}
	CHECK(got == 20000 && t.samples == 20000 && t.lost == 0 && t.in_scratch > 0 && r.bad_records == 0,
	      "20000 samples drained 4 at a time, %ld wrapped", t.in_scratch);
	CHECK_EQ_U64(t.raw_ok, 20000, "raw payloads carry id == getppid");
	perfev_ring_unmap(&r);
	if (fd >= 0)
		close(fd);
	test_live_side_band();
	test_live_ustack(tp);
	test_live_ustack_cost(tp);
}

int main(void)
{
	test_sample_chain();
	test_sample_raw_user();
	test_ustack_walk();
	test_side_band();
	test_cgroup();
	test_fixtures();
	test_fuzz();
	test_fake_ring();
	test_drain_until();
	test_ustack_judge();
	test_live();
	CHECK_DONE();
}
