/* tracefs raw pages: decoding of pages captured from trace_pipe_raw on a
 * 6.18 kernel (fixtures/ftrace_raw, see capture.sh: 40 getppid calls of
 * getppid_paths, 10 from caller_a and 30 from caller_b, with the stacktrace
 * trigger and userstacktrace), and pairing on hand-built pages where
 * interrupts and other threads interleave. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"
#include "tracefs/tracefs.h"

#define FIX "tests/unit/fixtures/ftrace_raw/"
#define SUBBUF 4096

/* ---- collecting what the decoder gives out ---- */

struct got {
	int n;
	struct tfs_raw_sample s[64];
	uint64_t k0[64], u0[64], u1[64]; /* first frames, copied */
};

static void on_sample(void *ctx, const struct tfs_raw_sample *smp)
{
	struct got *g = ctx;
	if (g->n >= 64)
		return;
	g->s[g->n] = *smp;
	g->k0[g->n] = smp->nkips ? smp->kips[0] : 0;
	g->u0[g->n] = smp->nuips ? smp->uips[0] : 0;
	g->u1[g->n] = smp->nuips > 1 ? smp->uips[1] : 0;
	g->s[g->n].kips = g->s[g->n].uips = NULL;
	g->n++;
}

static int kinds[4];
static int count_record(void *ctx, const struct tfs_raw_record *rec)
{
	(void)ctx;
	kinds[rec->kind]++;
	return 0;
}

static void test_captured(void)
{
	uint8_t *cpu0, *cpu1;
	size_t n0 = check_read_fixture(FIX "cpu0.raw", &cpu0), n1 = check_read_fixture(FIX "cpu1.raw", &cpu1);
	CHECK_EQ_U64(n0, 0, "captured: cpu0 had no records");
	CHECK_EQ_U64(n1, 2 * SUBBUF, "captured: cpu1 is two sub-buffers");
	uint16_t getppid = 305;
	struct tfs_raw_types t = { .kernel_stack = 4, .user_stack = 13,
				       .events = &getppid, .nevents = 1 };
	struct tfs_raw *r;
	CHECK(tfs_raw_alloc(&t, SUBBUF, true, true, &r) == 0, "create");

	int recs = 0;
	for (size_t off = 0; off < n1; off += SUBBUF)
		recs += tfs_raw_decode(r, cpu1 + off, SUBBUF, count_record, NULL);
	CHECK_EQ_U64(recs, 120, "captured: records in the pages");
	CHECK_EQ_U64(kinds[TRACEFS_RAW_EVENT], 40, "captured: sys_enter_getppid records");
	CHECK_EQ_U64(kinds[TRACEFS_RAW_KSTACK], 40, "captured: kernel_stack records");
	CHECK_EQ_U64(kinds[TRACEFS_RAW_USTACK], 40, "captured: user_stack records");
	CHECK_EQ_U64(kinds[TRACEFS_RAW_OTHER], 0, "captured: other records");
	tfs_raw_free(r);

	static struct got g;
	CHECK(tfs_raw_alloc(&t, SUBBUF, true, true, &r) == 0, "create");
	for (size_t off = 0; off < n1; off += SUBBUF)
		tfs_raw_feed(r, cpu1 + off, SUBBUF, on_sample, &g);
	CHECK_EQ_U64(g.n, 40, "captured: complete samples before the flush");
	tfs_raw_flush(r, on_sample, &g);
	CHECK_EQ_U64(g.n, 40, "captured: nothing left pending");
	const struct tfs_raw_stats *st = tfs_raw_stats(r);
	CHECK_EQ_U64(st->orphans, 0, "captured: no orphan stacks");
	CHECK_EQ_U64(st->incomplete, 0, "captured: no incomplete events");
	CHECK_EQ_U64(st->missed + st->missed_unknown, 0, "captured: nothing lost");
	CHECK_EQ_U64(st->pages, 2, "captured: pages");
	int a = 0, b = 0, five = 0, pid = 0;
	for (int i = 0; i < g.n; i++) {
		a += g.u1[i] == 0x564b30b430e2ull;
		b += g.u1[i] == 0x564b30b430edull;
		five += g.s[i].nkips == 5 && g.k0[i] == 0xffffffff814c2981ull;
		pid += g.s[i].tid == 12265 && g.s[i].tgid == 12265 && g.s[i].nuips == 3 &&
		       g.u0[i] == 0x564b30b43267ull;
	}
	CHECK_EQ_U64(a, 10, "captured: user stacks through caller_a");
	CHECK_EQ_U64(b, 30, "captured: user stacks through caller_b");
	CHECK_EQ_U64(five, 40, "captured: 5 kernel frames, ftrace_syscall_enter first");
	CHECK_EQ_U64(pid, 40, "captured: pid, tgid and 3 user frames from do_getppid");
	/* trace shows 1442.132124 (mono, us) for the first event */
	CHECK_EQ_U64(g.s[0].ts / 1000, 1442132124ull, "captured: first timestamp (mono)");
	CHECK(g.s[39].ts > g.s[0].ts, "captured: time goes forward");
	tfs_raw_free(r);
	free(cpu0);
	free(cpu1);
}

/* ---- hand-built pages ---- */

struct page {
	uint8_t b[SUBBUF];
	uint32_t len; /* data bytes after the header */
};

static void page_init(struct page *p, uint64_t ts)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->b, &ts, 8);
}

/* Appends one record of DATALEN bytes (a multiple of 4, at most 112). */
static void put(struct page *p, uint32_t delta, const void *data, uint32_t datalen)
{
	uint32_t hdr = (delta << 5) | (datalen / 4);
	memcpy(p->b + 16 + p->len, &hdr, 4);
	memcpy(p->b + 16 + p->len + 4, data, datalen);
	p->len += 4 + datalen;
	uint64_t commit = p->len;
	memcpy(p->b + 8, &commit, 8);
}

static void put_event(struct page *p, uint16_t type, int32_t pid)
{
	uint8_t d[16] = { 0 };
	memcpy(d, &type, 2);
	memcpy(d + 4, &pid, 4);
	put(p, 10, d, sizeof(d));
}

/* kernel_stack (type 4) with N frames BASE, BASE+1, ... */
static void put_kstack(struct page *p, int32_t pid, int32_t n, uint64_t base)
{
	uint8_t d[112] = { 0 };
	uint16_t type = 4;
	memcpy(d, &type, 2);
	memcpy(d + 4, &pid, 4);
	memcpy(d + 8, &n, 4);
	for (int i = 0; i < n; i++) {
		uint64_t ip = base + (uint64_t)i;
		memcpy(d + 16 + 8 * i, &ip, 8);
	}
	put(p, 10, d, 16 + 8 * (uint32_t)n);
}

/* user_stack (type 13): fixed caller[8], N used */
static void put_ustack(struct page *p, int32_t pid, uint32_t tgid, int n, uint64_t base)
{
	uint8_t d[80] = { 0 };
	uint16_t type = 13;
	memcpy(d, &type, 2);
	memcpy(d + 4, &pid, 4);
	memcpy(d + 8, &tgid, 4);
	for (int i = 0; i < n; i++) {
		uint64_t ip = base + (uint64_t)i;
		memcpy(d + 16 + 8 * i, &ip, 8);
	}
	put(p, 10, d, sizeof(d));
}

static const uint16_t ev_ids[2] = { 300, 301 };
static const struct tfs_raw_types types = { .kernel_stack = 4, .user_stack = 13,
						.events = ev_ids, .nevents = 2 };

static struct tfs_raw *fresh(bool k, bool u)
{
	struct tfs_raw *r = NULL;
	if (tfs_raw_alloc(&types, SUBBUF, k, u, &r) < 0)
		abort();
	return r;
}

static void test_nested(void)
{
	static struct page p;
	static struct got g;
	page_init(&p, 1000);
	put_kstack(&p, 7, 3, 0x9000);       /* trigger of a filtered-out hit: orphan */
	put_event(&p, 300, 7);              /* task context */
	put_ustack(&p, 7, 70, 2, 0x100);
	put_event(&p, 301, 7);              /* an interrupt on the same task */
	put_ustack(&p, 7, 70, 4, 0x200);
	put_kstack(&p, 7, 2, 0x8200);
	put_kstack(&p, 7, 6, 0x8100);       /* back in the task */
	struct tfs_raw *r = fresh(true, true);
	CHECK_EQ_U64(tfs_raw_feed(r, p.b, sizeof(p.b), on_sample, &g), 7, "nested: records");
	CHECK_EQ_U64(g.n, 2, "nested: two samples");
	CHECK(g.s[0].event == 1 && g.k0[0] == 0x8200 && g.s[0].nkips == 2 &&
	      g.u0[0] == 0x200 && g.s[0].nuips == 4, "nested: the interrupt's event got its stacks");
	CHECK(g.s[1].event == 0 && g.k0[1] == 0x8100 && g.s[1].nkips == 6 &&
	      g.u0[1] == 0x100 && g.s[1].nuips == 2 && g.s[1].tgid == 70,
	      "nested: the task's event got its stacks");
	CHECK_EQ_U64(tfs_raw_stats(r)->orphans, 1, "nested: orphan kernel stack");
	CHECK_EQ_U64(g.s[1].ts, 1000 + 20, "nested: time of the first event");
	tfs_raw_free(r);
}

static void test_other_pid(void)
{
	static struct page p;
	static struct got g;
	page_init(&p, 0);
	put_event(&p, 300, 7);
	put_event(&p, 300, 8);          /* another thread's record in between */
	put_kstack(&p, 8, 1, 0x800);
	put_kstack(&p, 7, 1, 0x700);
	put_kstack(&p, 9, 1, 0x900);    /* nobody's */
	put_event(&p, 301, 7);          /* never gets a stack: given out at flush */
	struct tfs_raw *r = fresh(true, false);
	tfs_raw_feed(r, p.b, 16 + p.len, on_sample, &g);
	CHECK_EQ_U64(g.n, 2, "other pid: two complete before flush");
	CHECK(g.s[0].tid == 8 && g.k0[0] == 0x800, "other pid: 8 paired with its own stack");
	CHECK(g.s[1].tid == 7 && g.k0[1] == 0x700, "other pid: 7 paired with its own stack");
	tfs_raw_flush(r, on_sample, &g);
	CHECK(g.n == 3 && g.s[2].tid == 7 && !g.s[2].has_kstack && g.s[2].nkips == 0,
	      "other pid: stackless event at flush");
	const struct tfs_raw_stats *st = tfs_raw_stats(r);
	CHECK_EQ_U64(st->orphans, 1, "other pid: orphans");
	CHECK_EQ_U64(st->incomplete, 1, "other pid: incomplete");
	tfs_raw_free(r);
}

static void test_overflow_and_kinds(void)
{
	static struct page p;
	static struct got g;
	page_init(&p, 0);
	for (int i = 0; i < TRACEFS_RAW_PENDING + 2; i++)
		put_event(&p, 300, 7);      /* stacks lost: oldest given out early */
	put_event(&p, 555, 7);              /* not traced */
	struct tfs_raw *r = fresh(true, false);
	tfs_raw_feed(r, p.b, 16 + p.len, on_sample, &g);
	CHECK_EQ_U64(g.n, 2, "overflow: two given out when the pending list is full");
	tfs_raw_flush(r, on_sample, &g);
	CHECK_EQ_U64(g.n, TRACEFS_RAW_PENDING + 2, "overflow: all given out at flush");
	CHECK_EQ_U64(tfs_raw_stats(r)->others, 1, "overflow: untraced type counted");
	tfs_raw_free(r);

	/* nothing wanted: every event is complete at once (user-only without ustack) */
	memset(&g, 0, sizeof(g));
	r = fresh(false, false);
	tfs_raw_feed(r, p.b, 16 + p.len, on_sample, &g);
	CHECK_EQ_U64(g.n, TRACEFS_RAW_PENDING + 2, "no stacks wanted: given out at once");
	tfs_raw_free(r);
}

static void test_bad_and_missed(void)
{
	static struct page p;
	struct tfs_raw *r = fresh(true, false);
	page_init(&p, 0);
	put_event(&p, 300, 7);
	CHECK_EQ_U64(tfs_raw_decode(r, p.b, 16 + p.len - 4, NULL, NULL), (uint64_t)-EINVAL,
		     "bad: committed size beyond the bytes read");
	CHECK_EQ_U64(tfs_raw_decode(r, p.b, 8, NULL, NULL), (uint64_t)-EINVAL,
		     "bad: shorter than the header");
	CHECK_EQ_U64(tfs_raw_decode(r, p.b, SUBBUF + 1, NULL, NULL), (uint64_t)-EINVAL,
		     "bad: longer than a sub-buffer");
	CHECK_EQ_U64(tfs_raw_stats(r)->bad_pages, 3, "bad: counted");

	/* missed events with the count stored after the data (bits 31 and 30) */
	uint64_t commit = p.len | (1ull << 31) | (1ull << 30), lost = 1234;
	memcpy(p.b + 8, &commit, 8);
	memcpy(p.b + 16 + p.len, &lost, 8);
	CHECK_EQ_U64(tfs_raw_decode(r, p.b, SUBBUF, NULL, NULL), 1, "missed: record still read");
	CHECK_EQ_U64(tfs_raw_stats(r)->missed, 1234, "missed: stored count");
	commit = p.len | (1ull << 31);
	memcpy(p.b + 8, &commit, 8);
	tfs_raw_decode(r, p.b, SUBBUF, NULL, NULL);
	CHECK_EQ_U64(tfs_raw_stats(r)->missed_unknown, 1, "missed: without a count");

	/* a kernel_stack whose size field claims more than the record holds */
	page_init(&p, 0);
	put_event(&p, 300, 7);
	put_kstack(&p, 7, 2, 0x10);
	int32_t big = 1000;
	memcpy(p.b + 16 + 20 + 4 + 8, &big, 4); /* the kstack's size field */
	static struct got g;
	tfs_raw_feed(r, p.b, SUBBUF, on_sample, &g);
	CHECK(g.n == 1 && g.s[0].nkips == 2, "size field bounded by the record");
	tfs_raw_free(r);
}

/* Appends a padding record (type_len 29) whose length word is LEN: the
 * kernel's discarded event, LEN bytes after the header's first word. */
static void put_padding(struct page *p, int32_t len)
{
	uint32_t hdr = (1u << 5) | 29;
	memcpy(p->b + 16 + p->len, &hdr, 4);
	memcpy(p->b + 16 + p->len + 4, &len, 4);
	p->len += 4 + (uint32_t)(len > 4 ? len : 4);
	uint64_t commit = p->len;
	memcpy(p->b + 8, &commit, 8);
}

/* kbuffer follows a padding's length inside one call: a length that leads
 * back would spin there (the raw fuzz target's timeout). Such a page is bad;
 * a padding that leads forward is passed over. */
static void test_padding(void)
{
	static struct page p;
	struct tfs_raw *r = fresh(true, false);
	page_init(&p, 0);
	put_event(&p, 300, 7);
	put_padding(&p, 12);
	put_event(&p, 300, 8);
	CHECK_EQ_U64(tfs_raw_decode(r, p.b, SUBBUF, NULL, NULL), 2, "padding: passed over");
	page_init(&p, 0);
	put_padding(&p, -4); /* leads to itself */
	CHECK_EQ_U64(tfs_raw_decode(r, p.b, SUBBUF, NULL, NULL), (uint64_t)-EINVAL,
		     "padding: a length to itself is a bad page");
	page_init(&p, 0);
	put_event(&p, 300, 7);
	put_padding(&p, -24); /* leads back to the event: a loop of records */
	CHECK_EQ_U64(tfs_raw_decode(r, p.b, SUBBUF, NULL, NULL), (uint64_t)-EINVAL,
		     "padding: a length back to an event is a bad page");
	CHECK_EQ_U64(tfs_raw_stats(r)->bad_pages, 2, "padding: bad pages counted");
	tfs_raw_free(r);
}

/* A uprobe event (user stack only) carries its ra field; a tracepoint
 * beside it still waits for both stacks. */
static void test_user_event_arg(void)
{
	static struct page p;
	static struct got g;
	static const int offs[2] = { 16, -1 };
	static const uint8_t stacks[2] = { TRACEFS_RAW_WANT_USTACK,
					   TRACEFS_RAW_WANT_KSTACK | TRACEFS_RAW_WANT_USTACK };
	const struct tfs_raw_types t = { .kernel_stack = 4, .user_stack = 13, .events = ev_ids,
					     .nevents = 2, .arg_offsets = offs, .stacks = stacks };
	uint8_t d[24] = { 0 };
	uint16_t type = 300;
	int32_t pid = 7;
	uint64_t ra = 0x4011aa;
	memcpy(d, &type, 2);
	memcpy(d + 4, &pid, 4);
	memcpy(d + 16, &ra, 8);
	page_init(&p, 0);
	put(&p, 10, d, sizeof(d));      /* uprobe hit with ra */
	put_ustack(&p, 7, 70, 3, 0x100);
	put_event(&p, 301, 7);          /* a tracepoint: both stacks */
	put_ustack(&p, 7, 70, 2, 0x200);
	put_kstack(&p, 7, 2, 0x8000);
	put(&p, 10, d, 16);             /* a record too short for its field */
	put_ustack(&p, 7, 70, 1, 0x300);
	struct tfs_raw *r = NULL;
	CHECK_EQ_U64(tfs_raw_alloc(&t, SUBBUF, true, true, &r), 0, "user event: create");
	tfs_raw_feed(r, p.b, 16 + p.len, on_sample, &g);
	CHECK_EQ_U64(g.n, 3, "user event: three samples before flush");
	CHECK(g.s[0].event == 0 && g.s[0].has_arg && g.s[0].arg == ra && !g.s[0].has_kstack &&
	      g.u0[0] == 0x100, "user event: complete with its user stack and ra");
	CHECK(g.s[1].event == 1 && !g.s[1].has_arg && g.k0[1] == 0x8000 && g.u0[1] == 0x200,
	      "user event: the tracepoint waited for its kernel stack");
	CHECK(g.s[2].event == 0 && !g.s[2].has_arg, "user event: short record has no ra");
	CHECK_EQ_U64(tfs_raw_stats(r)->incomplete, 0, "user event: none incomplete");
	tfs_raw_free(r);
}

/* Function tracer records (type 1, ip at 8) map to events by address and
 * wait for a kernel stack only, even when user stacks are wanted. */
static void put_function(struct page *p, int32_t pid, uint64_t ip)
{
	uint8_t d[24] = { 0 };
	uint16_t type = 1;
	memcpy(d, &type, 2);
	memcpy(d + 4, &pid, 4);
	memcpy(d + 8, &ip, 8);
	put(p, 10, d, sizeof(d));
}

static void test_functions(void)
{
	static struct page p;
	static struct got g;
	static const uint16_t ids[3] = { 0, 0, 300 };
	static const struct tfs_raw_func funcs[2] = {
		{ 0x2000, 0x2080, 1 }, { 0x1000, 0x1100, 0 }, /* unsorted on purpose */
	};
	const struct tfs_raw_types t = { .kernel_stack = 4, .user_stack = 13, .events = ids,
					     .nevents = 3, .function = 1, .function_ip_offset = 8,
					     .funcs = funcs, .nfuncs = 2 };
	page_init(&p, 0);
	put_function(&p, 7, 0x1004);    /* fentry site of the first function */
	put_kstack(&p, 7, 3, 0xa000);
	put_function(&p, 7, 0x3000);    /* not a traced function: ignored */
	put_function(&p, 8, 0x207f);    /* last byte of the second */
	put_kstack(&p, 8, 2, 0xb000);
	put_function(&p, 8, 0x2080);    /* just past it */
	put_event(&p, 300, 7);          /* a tracepoint still waits for both */
	put_kstack(&p, 7, 1, 0xc000);
	put_ustack(&p, 7, 70, 1, 0x100);
	struct tfs_raw *r = NULL;
	CHECK_EQ_U64(tfs_raw_alloc(&t, SUBBUF, true, true, &r), 0, "functions: create");
	tfs_raw_feed(r, p.b, 16 + p.len, on_sample, &g);
	CHECK_EQ_U64(g.n, 3, "functions: three samples");
	CHECK(g.s[0].event == 0 && g.k0[0] == 0xa000 && g.s[0].nkips == 3 && !g.s[0].has_ustack,
	      "functions: first function, its kernel stack, no user stack awaited");
	CHECK(g.s[1].event == 1 && g.k0[1] == 0xb000 && g.s[1].tid == 8,
	      "functions: second function by its last byte");
	CHECK(g.s[2].event == 2 && g.k0[2] == 0xc000 && g.u0[2] == 0x100,
	      "functions: the tracepoint beside them");
	const struct tfs_raw_stats *st = tfs_raw_stats(r);
	CHECK_EQ_U64(st->others, 2, "functions: untraced addresses are other records");
	CHECK_EQ_U64(st->incomplete + st->orphans, 0, "functions: none incomplete or orphaned");
	tfs_raw_free(r);
}

static void test_format_id(void)
{
	CHECK_EQ_U64(tfs_event_type_id("tests/unit/fixtures/tracefs", "ftrace", "kernel_stack"),
		     4, "type id from the format (libtraceevent)");
	CHECK_EQ_U64(tfs_event_type_id("tests/unit/fixtures/tracefs", "kmem", "kmalloc"), 480,
		     "a tracepoint's type id");
	CHECK_EQ_U64(tfs_event_type_id("tests/unit/fixtures/tracefs", "kmem", "kfree"),
		     (uint64_t)-ENOENT, "no format");
	struct tfs_raw *r;
	CHECK_EQ_U64(tfs_raw_alloc(&types, 8, true, true, &r), (uint64_t)-EINVAL,
		     "sub-buffer smaller than its header");
}

int main(void)
{
	test_captured();
	test_nested();
	test_other_pid();
	test_overflow_and_kinds();
	test_bad_and_missed();
	test_padding();
	test_user_event_arg();
	test_functions();
	test_format_id();
	CHECK_DONE();
}
