/* perfev's record decoding (perfev/decode.c): samples and side-band records
 * built by hand, every truncation of each, bytes captured from this
 * kernel's rings, and random bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfev/perfev.h"
#include "tests/unit/check.h"
#include "tests/unit/perf_records.h"

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
	CHECK_EQ_U64(r.sample.ustack_room, 64, "user stack: its room, the static size");
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

int main(void)
{
	test_sample_chain();
	test_sample_raw_user();
	test_side_band();
	test_cgroup();
	test_fixtures();
	test_fuzz();
	CHECK_DONE();
}
