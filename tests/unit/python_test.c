/* python/: a sample of a real python3.11 replayed. The fixture
 * (tests/unit/fixtures/python311.txt) holds what the reader needed of one
 * stopped python3.11 running tests/lib/python/split.py: the binary's
 * symbols, its text mapping, the sample's walked frames (ips and rsps),
 * the stack copy and every range of memory the reader read, with the names
 * it gave. Replayed through a fake read function, the reader must give the
 * same names; with the memory or the copy changed, it must refuse, and say
 * why. `python_test --capture PID FILE` makes a fixture from a live
 * process (it stops it with ptrace while it reads). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "aggregate/aggregate.h"
#include "python/internal.h"
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

#define FIX_MAX_FRAMES 256
#define FIX_MAX_READS 4096
#define FIX_STACK (64 * 1024)

struct range { uint64_t addr; size_t len; uint8_t *bytes; };

struct fixture {
	uint32_t pid, tid;
	char path[256], maps[512];
	struct py_symbols sy;
	uint64_t ips[FIX_MAX_FRAMES], sps[FIX_MAX_FRAMES], regs[17];
	uint32_t n;
	bool whole;
	uint64_t age_ns; /* how long before the read the sample was taken */
	uint64_t sp, size;
	uint8_t stack[FIX_STACK];
	struct range reads[FIX_MAX_READS];
	size_t nreads;
	char *names[FIX_MAX_FRAMES]; /* the Python frames the capture gave, in order */
	uint32_t nnames;
	int fail_read;               /* the fake read's answer when not 0 */
	unsigned calls, spans;       /* the fake read's calls (the reader's system calls), spans */
};

/* The fake read: each span's bytes from a recorded range that holds all
 * of them. One span of the fake process's memory: 0 or -errno */
static int fake_span(struct fixture *f, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; i < f->nreads; i++) {
		const struct range *r = &f->reads[i];
		if (addr >= r->addr && addr - r->addr <= r->len && r->len - (addr - r->addr) >= len) {
			memcpy(buf, r->bytes + (addr - r->addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

static int fake_read(void *ctx, uint32_t pid, const struct py_span *sp, unsigned n)
{
	struct fixture *f = ctx;
	if (f->fail_read || pid != f->pid)
		return f->fail_read ? f->fail_read : -ESRCH;
	f->calls++;
	f->spans += n;
	unsigned k = 0;
	while (k < n && fake_span(f, sp[k].addr, sp[k].buf, sp[k].len) == 0)
		k++;
	return k ? (int)k : -EFAULT;
}

/* The recording read of --capture: each span read and kept alone */
static int record_read(void *ctx, uint32_t pid, const struct py_span *sp, unsigned n)
{
	struct fixture *f = ctx;
	unsigned k = 0;
	for (; k < n && py_read_process(NULL, pid, &sp[k], 1) == 1; k++) {
		if (f->nreads == FIX_MAX_READS)
			continue;
		struct range *r = &f->reads[f->nreads++];
		r->addr = sp[k].addr, r->len = sp[k].len, r->bytes = malloc(sp[k].len);
		if (r->bytes)
			memcpy(r->bytes, sp[k].buf, sp[k].len);
	}
	return k ? (int)k : -EFAULT;
}

static void put_hex(FILE *o, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%02x", b[i]);
	fputc('\n', o);
}

static size_t get_hex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned v;
	while (n < max && sscanf(s + 2 * n, "%2x", &v) == 1)
		out[n++] = (uint8_t)v;
	return n;
}

static int load(const char *file, struct fixture *f)
{
	FILE *in = fopen(file, "r");
	char *line = NULL, key[16];
	size_t cap = 0;
	int off;
	memset(f, 0, sizeof(*f));
	while (in && getline(&line, &cap, in) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%15s %n", key, &off) < 1)
			continue;
		char *v = line + off;
		if (!strcmp(key, "pid"))
			sscanf(v, "%u %u", &f->pid, &f->tid);
		else if (!strcmp(key, "path"))
			snprintf(f->path, sizeof(f->path), "%s", v);
		else if (!strcmp(key, "maps"))
			snprintf(f->maps, sizeof(f->maps), "%s", v);
		else if (!strcmp(key, "symbols"))
			sscanf(v, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
			       " %" SCNx64, &f->sy.runtime, &f->sy.code_type, &f->sy.version,
			       &f->sy.eval_lo, &f->sy.eval_hi, &f->sy.text_off, &f->sy.text_vaddr);
		else if (!strcmp(key, "frame") && f->n < FIX_MAX_FRAMES)
			sscanf(v, "%" SCNx64 " %" SCNx64, &f->ips[f->n], &f->sps[f->n]), f->n++;
		else if (!strcmp(key, "regs"))
			for (int i = 0, o2 = 0, k; i < 17 && sscanf(v + o2, "%" SCNx64 "%n", &f->regs[i], &k) == 1; i++)
				o2 += k;
		else if (!strcmp(key, "whole"))
			f->whole = atoi(v);
		else if (!strcmp(key, "stack") && sscanf(v, "%" SCNx64 " %n", &f->sp, &off) == 1)
			f->size = get_hex(v + off, f->stack, FIX_STACK);
		else if (!strcmp(key, "read") && f->nreads < FIX_MAX_READS) {
			struct range *r = &f->reads[f->nreads];
			if (sscanf(v, "%" SCNx64 " %zu %n", &r->addr, &r->len, &off) == 2 &&
			    (r->bytes = malloc(r->len)) && get_hex(v + off, r->bytes, r->len) == r->len)
				f->nreads++;
		} else if (!strcmp(key, "name") && f->nnames < FIX_MAX_FRAMES)
			f->names[f->nnames++] = strdup(v);
	}
	free(line);
	if (in)
		fclose(in);
	return f->n && f->size && f->nreads ? 0 : -ENOENT;
}

static void unload(struct fixture *f)
{
	for (size_t i = 0; i < f->nreads; i++)
		free(f->reads[i].bytes);
	for (uint32_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	f->nreads = f->nnames = 0;
}

/* A proc root under DIR with the fixture's one mapping */
static int proc_root(const struct fixture *f, char *dir)
{
	char p[512];
	if (!mkdtemp(dir))
		return -errno;
	snprintf(p, sizeof(p), "%s/%u", dir, f->pid);
	if (mkdir(p, 0700) < 0)
		return -errno;
	snprintf(p, sizeof(p), "%s/%u/maps", dir, f->pid);
	FILE *m = fopen(p, "w");
	if (!m)
		return -errno;
	fprintf(m, "%s\n", f->maps);
	return fclose(m) == 0 ? 0 : -errno;
}

static void rm_root(const struct fixture *f, const char *dir)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%u/maps", dir, f->pid);
	unlink(p);
	snprintf(p, sizeof(p), "%s/%u", dir, f->pid);
	rmdir(p);
	rmdir(dir);
}

/* Expands the fixture's sample with a new reader: the count, and the
 * reader's counts */
static int replay(struct fixture *f, const char *root, uint64_t *out, struct py_counts *c,
		  struct py_reader **keep, struct sym_procs **keep_procs)
{
	struct sym_procs *procs = NULL;
	struct py_reader *r = NULL;
	int n = -ENOMEM;
	struct py_stack s = { .pid = f->pid, .tid = f->tid, .time = 1, .ips = f->ips, .sps = f->sps,
			      .n = f->n, .stack = f->stack, .size = f->size, .whole = f->whole,
			      .regs = f->regs, .age_ns = f->age_ns };
	if (sym_procs_alloc(root, "/nonexistent", &procs) == 0 &&
	    py_reader_alloc(procs, root, fake_read, f, &r) == 0 &&
	    py_reader_binary(r, f->path, &f->sy) == 0) {
		n = py_reader_expand(r, &s, out, FIX_MAX_FRAMES * 2);
		py_reader_counts(r, c);
	}
	if (keep && n >= 0) {
		*keep = r, *keep_procs = procs; /* the caller frees them */
		return n;
	}
	py_reader_free(r);
	sym_procs_free(procs);
	return n;
}

/* The synthetic frames of OUT (N) named by R, in order, against F's names */
static bool names_match(const struct py_reader *r, const struct fixture *f, const uint64_t *out,
			int n)
{
	uint32_t j = 0;
	for (int i = 0; i < n; i++) {
		const char *name = py_frame_name(r, out[i]);
		if (!name)
			continue;
		if (j >= f->nnames || strcmp(name, f->names[j]) != 0) {
			printf("# frame %d: %s, expected %s\n", i, name, j < f->nnames ? f->names[j] : "none");
			return false;
		}
		j++;
	}
	return j == f->nnames;
}

/* The range read at the code object of the leaf Python frame: its first
 * recorded read of co_size bytes (the code objects' reads) */
static struct range *code_read(struct fixture *f)
{
	for (size_t i = 0; i < f->nreads; i++)
		if (f->reads[i].len == 136)
			return &f->reads[i];
	return NULL;
}

static void test_replay(const char *file)
{
	static struct fixture f;
	uint64_t out[FIX_MAX_FRAMES * 2];
	struct py_counts c;
	char dir[] = "/tmp/ftstack_pytest.XXXXXX";
	if (load(file, &f) < 0 || proc_root(&f, dir) < 0) {
		CHECK(0, "fixture %s loaded", file);
		return;
	}
	struct py_reader *r = NULL;
	struct sym_procs *procs = NULL;
	int n = replay(&f, dir, out, &c, &r, &procs);
	struct py_proc *pp = r ? py_proc_get(r, f.pid, 1) : NULL;
	uint64_t lo = f.sy.eval_lo + (pp ? pp->bias : 0), span = f.sy.eval_hi - f.sy.eval_lo;
	CHECK(n == (int)(f.n + f.nnames), "%s replayed: %d frames, %u native + %u Python", file, n,
	      f.n, f.nnames);
	CHECK(c.stacks == 1 && c.read == 1, "counted as read (%" PRIu64 " of %" PRIu64 ")", c.read,
	      c.stacks);
	CHECK(c.frames == f.nnames, "its Python frames counted as put in (%" PRIu64 ")", c.frames);
	CHECK(names_match(r, &f, out, n), "the names the live reader gave, in order (%s ...)",
	      f.nnames ? f.names[0] : "");
	/* in place: each eval loop's Python frames just before it */
	bool placed = n > 0 && f.nnames > 0;
	for (int i = 0; i + 1 < n && placed; i++)
		if (py_frame_is(out[i]) && !py_frame_is(out[i + 1]))
			placed = out[i + 1] - 1 - lo < span;
	CHECK(placed, "each eval loop's Python frames end at it");
	/* the loop's millisecond poll: while the process lives */
	bool was = py_reader_active(r);
	py_reader_exit(r, f.pid + 1);
	bool other = py_reader_active(r);
	py_reader_exit(r, f.pid);
	CHECK(was && other && !py_reader_active(r),
	      "active once read (%d), after another's exit (%d), not after its own", was, other);
	/* a second sample of the same frames: the code objects' names are kept */
	struct py_stack s = { .pid = f.pid, .tid = f.tid, .time = 1, .ips = f.ips, .sps = f.sps,
			      .n = f.n, .stack = f.stack, .size = f.size, .whole = f.whole,
			      .regs = f.regs };
	uint64_t again[FIX_MAX_FRAMES * 2], reads = c.reads;
	int n2 = r ? py_reader_expand(r, &s, again, FIX_MAX_FRAMES * 2) : -1;
	py_reader_counts(r, &c);
	/* the thread's last sample's frames and code objects, and the liveness
	 * check after, taken along by the first read (the check before; 3.13's
	 * thread state's current frame): one system call */
	CHECK(n2 == n && memcmp(again, out, (size_t)n * 8) == 0 && c.reads - reads == 1,
	      "again: the same frames, in %" PRIu64 " read of 1 (the names not read again)",
	      c.reads - reads);
	/* its second frame's code object not the one guessed: read then, and
	 * each frame's code object with the next frame after it (the last's
	 * with the check): 1 + the frames from the second on */
	struct py_thread *th = pp ? py_proc_thread(pp, f.tid) : NULL;
	if (th && th->nguess > 1 && f.nnames > 1) {
		th->code[1] ^= 0x1000;
		reads = c.reads;
		n2 = py_reader_expand(r, &s, again, FIX_MAX_FRAMES * 2);
		py_reader_counts(r, &c);
		CHECK(n2 == n && memcmp(again, out, (size_t)n * 8) == 0 &&
		      c.reads - reads == f.nnames, "a guess that differs: the same frames, %" PRIu64
		      " reads of %u", c.reads - reads, f.nnames);
	}
	/* a prefetch: taken along by the next read, served once to a read of
	 * exactly its span, dropped by any other read in between */
	if (pp && f.nreads >= 3) {
		const struct range *x = &f.reads[0], *y = &f.reads[1], *z = &f.reads[2];
		uint8_t bx[8], by[8], bz[8];
		unsigned calls = f.calls;
		py_proc_prefetch(r, x->addr, 8);
		bool ok = py_proc_read(r, pp, y->addr, by, 8) == 0 && f.calls == calls + 1 &&
			  py_proc_read(r, pp, x->addr, bx, 8) == 0 && f.calls == calls + 1 &&
			  memcmp(bx, x->bytes, 8) == 0 && py_proc_read(r, pp, x->addr, bx, 8) == 0 &&
			  f.calls == calls + 2;
		py_proc_prefetch(r, x->addr, 8);
		ok = ok && py_proc_read(r, pp, y->addr, by, 8) == 0 &&
		     py_proc_read(r, pp, z->addr, bz, 8) == 0 && py_proc_read(r, pp, x->addr, bx, 8) == 0 &&
		     f.calls == calls + 5 && memcmp(bz, z->bytes, 8) == 0;
		CHECK(ok, "a prefetch: read with the next read, served once, dropped by another read "
		      "(%u calls of 5)", f.calls - calls);
		/* asked again while read ahead and not taken: not read again */
		unsigned spans = f.spans;
		py_proc_prefetch(r, x->addr, 8);
		ok = py_proc_read(r, pp, y->addr, by, 8) == 0;
		py_proc_prefetch(r, x->addr, 8);
		ok = ok && py_proc_read(r, pp, x->addr, bx, 8) == 0 &&
		     py_proc_read(r, pp, z->addr, bz, 8) == 0;
		CHECK(ok && f.spans - spans == 3, "a span read ahead, asked for again: read once "
		      "(%u spans of 3)", f.spans - spans);
		py_reader_counts(r, &c);
	}
	/* the reader behind the kernel: its native frames, no memory read */
	s.behind = true;
	reads = c.reads;
	int nb = r ? py_reader_expand(r, &s, again, FIX_MAX_FRAMES * 2) : -1;
	py_reader_counts(r, &c);
	CHECK(nb == (int)f.n && c.failed[PY_FAIL_BEHIND] == 1 && c.reads == reads,
	      "read while behind: the %d native frames, counted, %" PRIu64 " reads", nb,
	      c.reads - reads);
	int32_t rec_off = pp && pp->bin ? pp->bin->rec_off : 0;
	uint64_t tstate = pp && pp->nthreads ? pp->threads[0].tstate : 0;
	struct py_layout lay = pp ? pp->lay : (struct py_layout){ 0 };
	py_reader_free(r);
	sym_procs_free(procs);

	/* the code object freed and its memory reused: not named */
	struct range *code = code_read(&f);
	if (code) {
		uint8_t saved = code->bytes[8];
		code->bytes[8] ^= 0x40; /* ob_type */
		n = replay(&f, dir, out, &c, NULL, NULL);
		CHECK(n == (int)f.n && c.failed[PY_FAIL_CODE] == 1,
		      "a code object whose type changed: native frames only, counted (%d)", n);
		code->bytes[8] = saved;
	} else {
		CHECK(0, "the fixture has a code object's read");
	}
	/* the copy's eval loop record changed: the chain does not hold (3.11,
	 * 3.12: the _PyCFrame's previous; 3.13: the entry frame's owner) */
	uint64_t at = 0;
	for (uint32_t k = 0; k + 1 < f.n && !at && rec_off; k++)
		if (f.ips[k] - (k > 0) - lo < span)
			at = f.sps[k + 1] + (uint64_t)(int64_t)rec_off +
			     (lay.entry_frame ? lay.fr_owner : lay.cf_previous);
	if (at && at - f.sp < f.size) {
		f.stack[at - f.sp] ^= 0x08;
		n = replay(&f, dir, out, &c, NULL, NULL);
		CHECK(n == (int)f.n && c.failed[PY_FAIL_LEARN] + c.failed[PY_FAIL_CHAIN] == 1,
		      "3.%u: an eval loop's record that does not chain: not read, counted", lay.minor);
		f.stack[at - f.sp] ^= 0x08;
	} else {
		CHECK(0, "the fixture's stack holds an eval loop's cframe");
	}
	/* the thread has left the sampled frames when they are read: the live
	 * record (3.11, 3.12) or the thread's current frame (3.13) says another */
	uint64_t live = 0;
	for (uint32_t k = 0; k + 1 < f.n && !live && rec_off; k++)
		if (f.ips[k] - (k > 0) - lo < span)
			live = lay.entry_frame ? tstate + lay.ts_current_frame :
			       f.sps[k + 1] + (uint64_t)(int64_t)rec_off + lay.cf_current;
	uint8_t *word = NULL;
	for (size_t i = 0; i < f.nreads && live && !word; i++)
		if (live >= f.reads[i].addr && live + 8 <= f.reads[i].addr + f.reads[i].len)
			word = f.reads[i].bytes + (live - f.reads[i].addr);
	if (word) {
		word[1] ^= 0x10; /* another frame, 4 KB away */
		n = replay(&f, dir, out, &c, NULL, NULL);
		/* 3.13 learns its offset from the same current frame: then it
		 * is not learnt from this sample */
		CHECK(n == (int)f.n && c.failed[PY_FAIL_MOVED] +
					       (lay.entry_frame ? c.failed[PY_FAIL_LEARN] : 0) == 1,
		      "3.%u: the thread since in another frame: not read, counted", lay.minor);
		word[1] ^= 0x10;
	} else {
		CHECK(0, "the fixture holds the read of the thread's live frame");
	}
	/* read 2 ms after the sample: refused (the thread may have left the
	 * frames), counted; at the bound, read */
	f.age_ns = 2000000;
	n = replay(&f, dir, out, &c, NULL, NULL);
	CHECK(n == (int)f.n && c.failed[PY_FAIL_LATE] == 1, "read 2 ms late: not read, counted (%d)", n);
	f.age_ns = PY_MAX_AGE_NS;
	n = replay(&f, dir, out, &c, NULL, NULL);
	CHECK(n == (int)(f.n + f.nnames) && c.read == 1, "read 1 ms after: read (%d)", n);
	f.age_ns = 0;
	/* the process gone */
	f.fail_read = -ESRCH;
	n = replay(&f, dir, out, &c, NULL, NULL);
	CHECK(n == -1 || (n == (int)f.n && c.read == 0),
	      "the process's memory unreadable: native frames only (%d)", n);
	f.fail_read = 0;
	rm_root(&f, dir);
	unload(&f);
}

static void test_layouts(void)
{
	uint64_t w[PY_DEBUG_WORDS] = { 0 };
	struct py_layout l;
	memcpy(&w[0], "xdebugpy", 8);
	w[1] = 0x030d00f0;
	w[5] = 632, w[8] = 7264, w[9] = 7344, w[21] = 8, w[23] = 72, w[25] = 160;
	w[28] = 80, w[29] = 8, w[30] = 0, w[33] = 70, w[34] = 200;
	w[35] = 112, w[36] = 120, w[37] = 128, w[39] = 68, w[45] = 8;
	w[68] = 32, w[69] = 16, w[70] = 40;
	CHECK(py_layout_debug(w, PY_DEBUG_WORDS, &l) == 0 && l.minor == 13 && l.ts_current_frame == 72 &&
	      l.fr_owner == 70 && l.str_compact == 56 && l.entry_frame,
	      "3.13's layout from its _Py_DebugOffsets");
	w[1] = 0x030e00f0;
	CHECK(py_layout_debug(w, PY_DEBUG_WORDS, &l) == -ENOTSUP, "3.14's debug offsets: not read");
	w[1] = 0x030d00f0;
	w[0] ^= 1;
	CHECK(py_layout_debug(w, PY_DEBUG_WORDS, &l) == -EAGAIN,
	      "no cookie: not read, and not there yet (a data segment not mapped), not another version");
	CHECK(py_layout_of(11) && py_layout_of(12) && !py_layout_of(10), "3.11 and 3.12 built in");
	CHECK(!py_frame_is(0x7fff12345678ull) && py_frame_is(PY_TAG | 3), "synthetic addresses apart");
}

/* --capture PID FILE: stops PID (a python3.11), walks its stack as a
 * sample's, reads its Python frames recording every read, writes FILE */
static int capture(uint32_t pid, const char *file)
{
	static struct fixture f;
	struct user_regs_struct ur;
	int st;
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0 || ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 ||
	    waitpid((pid_t)pid, &st, __WALL) < 0 || ptrace(PTRACE_GETREGS, pid, 0, &ur) < 0)
		return -errno;
	struct sym_ustack us = { .pid = pid, .tid = pid, .time = 1 };
	uint64_t r[17] = { ur.rax, ur.rdx, ur.rcx, ur.rbx, ur.rsi, ur.rdi, ur.rbp, ur.rsp, ur.r8,
			   ur.r9, ur.r10, ur.r11, ur.r12, ur.r13, ur.r14, ur.r15, ur.rip };
	memcpy(us.regs, r, sizeof(r));
	f.sp = ur.rsp;
	for (f.size = 0; f.size < FIX_STACK; f.size += 4096) {
		struct py_span page = { f.sp + f.size, f.stack + f.size, 4096 };
		if (py_read_process(NULL, pid, &page, 1) < 1)
			break;
	}
	us.stack = f.stack, us.size = f.size;
	struct sym_procs *procs;
	struct sym_unwinder *u;
	struct py_reader *rd;
	if (sym_procs_alloc("/proc", "/usr/lib/debug", &procs) < 0 ||
	    sym_procs_snapshot(procs, pid, 1) < 0 || sym_unwinder_alloc(procs, &u) < 0 ||
	    py_reader_alloc(procs, "/proc", record_read, &f, &rd) < 0)
		return -ENOMEM;
	sym_unwinder_sps(u, f.sps);
	bool cut;
	f.n = sym_unwind(u, &us, f.ips, FIX_MAX_FRAMES, &cut);
	f.whole = !cut && sym_unwind_ended(u);
	uint64_t out[FIX_MAX_FRAMES * 2];
	memcpy(f.regs, r, sizeof(r));
	struct py_stack s = { .pid = pid, .tid = pid, .time = 1, .ips = f.ips, .sps = f.sps, .n = f.n,
			      .stack = f.stack, .size = f.size, .whole = f.whole, .regs = f.regs };
	int n = py_reader_expand(rd, &s, out, FIX_MAX_FRAMES * 2);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	struct py_proc *p = py_proc_get(rd, pid, 1);
	if (n <= (int)f.n || !p || !p->bin)
		return -ENOENT;
	FILE *o = fopen(file, "w");
	if (!o)
		return -errno;
	fprintf(o, "# python_test's fixture: python_test --capture %u, of %s\n", pid, p->bin->path);
	fprintf(o, "pid %u %u\npath %s\n", pid, pid, p->bin->path);
	fprintf(o, "symbols %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
		" %" PRIx64 "\n", p->bin->runtime, p->bin->code_type, p->bin->version,
		p->bin->eval_lo, p->bin->eval_hi, p->bin->text_off, p->bin->text_vaddr);
	char mp[64], line[600];
	snprintf(mp, sizeof(mp), "/proc/%u/maps", pid);
	FILE *m = fopen(mp, "r");
	while (m && fgets(line, sizeof(line), m))
		if (strstr(line, p->bin->path) && strstr(line, " r-xp ")) {
			fprintf(o, "maps %s", line);
			break;
		}
	if (m)
		fclose(m);
	for (uint32_t i = 0; i < f.n; i++)
		fprintf(o, "frame %" PRIx64 " %" PRIx64 "\n", f.ips[i], f.sps[i]);
	fprintf(o, "regs");
	for (int i = 0; i < 17; i++)
		fprintf(o, " %" PRIx64, f.regs[i]);
	fprintf(o, "\nwhole %d\n", f.whole);
	/* the copy up to a little above the outermost frame's rsp */
	uint64_t keep = f.sps[f.n - 1] && f.sps[f.n - 1] + 512 - f.sp < f.size ?
			f.sps[f.n - 1] + 512 - f.sp : f.size;
	fprintf(o, "stack %" PRIx64 " ", f.sp);
	put_hex(o, f.stack, keep);
	for (size_t i = 0; i < f.nreads; i++) {
		fprintf(o, "read %" PRIx64 " %zu ", f.reads[i].addr, f.reads[i].len);
		put_hex(o, f.reads[i].bytes, f.reads[i].len);
	}
	for (int i = 0; i < n; i++)
		if (py_frame_name(rd, out[i]))
			fprintf(o, "name %s\n", py_frame_name(rd, out[i]));
	return fclose(o) == 0 ? 0 : -errno;
}

/* Processes whose pids share a set of the reader's per-process cache stay
 * in it together, as many as the set has slots (one slot a set, a lookup
 * of one found the other's interpreter again, reading its maps and
 * binary: a Python service's workers whose pids met paid that at every
 * sample); one more puts the least recently found out */
static void test_procs_cache(void)
{
	struct sym_procs *procs = NULL;
	struct py_reader *r = NULL;
	uint32_t pids[AGG_CACHE_WAYS + 1] = { 1000 }, n = 1;
	for (uint32_t q = 1001; n <= AGG_CACHE_WAYS && q < 10000000; q++)
		if (agg_cache_set(q, 0, PY_PROCS) == agg_cache_set(pids[0], 0, PY_PROCS))
			pids[n++] = q;
	bool kept = n == AGG_CACHE_WAYS + 1 &&
		    sym_procs_alloc("/nonexistent", "/nonexistent", &procs) == 0 &&
		    py_reader_alloc(procs, "/nonexistent", fake_read, NULL, &r) == 0;
	for (uint32_t i = 0; i < AGG_CACHE_WAYS && kept; i++) {
		struct py_proc *p = py_proc_get(r, pids[i], 1);
		kept = p && p->kind == PY_NOT;
		if (kept)
			p->next_thread = 100 + i; /* a mark a second finding would clear */
	}
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < AGG_CACHE_WAYS && kept; i++)
			kept = py_proc_get(r, pids[i], 1)->next_thread == 100 + i;
	CHECK(kept, "%d processes of one set of the cache, looked up in turn: each found once",
	      AGG_CACHE_WAYS);
	bool out = kept && py_proc_get(r, pids[AGG_CACHE_WAYS], 1)->next_thread == 0 &&
		   py_proc_get(r, pids[0], 1)->next_thread == 0 &&
		   py_proc_get(r, pids[AGG_CACHE_WAYS - 1], 1)->next_thread == 100 + AGG_CACHE_WAYS - 1;
	CHECK(out, "one more: the least recently found out, the latest kept");
	py_reader_free(r);
	sym_procs_free(procs);
}

/* Writes PID's maps under the proc root DIR: LINES */
static int write_maps(const char *dir, uint32_t pid, const char *lines)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%u/maps", dir, pid);
	FILE *m = fopen(p, "w");
	if (!m)
		return -errno;
	fputs(lines, m);
	return fclose(m) == 0 ? 0 : -errno;
}

/* A fixture's process under a reader of its own, not sampled yet: its
 * /proc in DIR, its libpython text mapping's LO-HI at file offset PGOFF
 * (the fixture's maps' first line) */
struct under_test {
	struct fixture f;
	char dir[32];
	uint64_t lo, hi, pgoff;
	struct sym_procs *procs;
	struct py_reader *r;
};

/* T set up from FILE: false (and said) when it could not be */
static bool under_test_open(struct under_test *t, const char *file)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/ftstack_pytest.XXXXXX");
	t->procs = NULL, t->r = NULL;
	if (load(file, &t->f) < 0 || proc_root(&t->f, t->dir) < 0 ||
	    sscanf(t->f.maps, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &t->lo, &t->hi,
		   &t->pgoff) != 3) {
		CHECK(0, "fixture %s loaded", file);
		return false;
	}
	bool ok = sym_procs_alloc(t->dir, "/nonexistent", &t->procs) == 0 &&
		  py_reader_alloc(t->procs, t->dir, fake_read, &t->f, &t->r) == 0 &&
		  py_reader_binary(t->r, t->f.path, &t->f.sy) == 0;
	CHECK(ok, "%s: a reader of its own", file);
	return ok;
}

static void under_test_close(struct under_test *t)
{
	py_reader_free(t->r);
	sym_procs_free(t->procs);
	unload(&t->f);
	rm_root(&t->f, t->dir);
}

/* A process found to run no CPython is looked at again once it maps more:
 * its loader may map libpython after the first samples were read (pyenv's
 * python, a program embedding one), in space where nothing was, which
 * sym_procs_image does not follow. Until then the judgment is kept. */
static void test_late_interpreter(const char *file)
{
	static struct under_test t;
	char both[1024];
	const char *prog = "00400000-00401000 r-xp 00000000 00:00 0 /usr/bin/prog\n";
	bool ok = under_test_open(&t, file);
	snprintf(both, sizeof(both), "%s%s\n", prog, t.f.maps);
	ok = ok && write_maps(t.dir, t.f.pid, prog) == 0;
	if (ok)
		sym_procs_mmap(t.procs, t.f.pid, 1, 0x400000, 0x1000, 0, true, "/usr/bin/prog", NULL);
	struct py_proc *p = ok ? py_proc_get(t.r, t.f.pid, 2) : NULL;
	CHECK(p && p->kind == PY_NOT, "before libpython is mapped: no CPython");
	uint64_t image = ok ? sym_procs_image(t.procs, t.f.pid, 2) : 0;
	ok = ok && write_maps(t.dir, t.f.pid, both) == 0;
	p = ok ? py_proc_get(t.r, t.f.pid, 2) : NULL;
	CHECK(p && p->kind == PY_NOT, "no mapping recorded since: the judgment kept, its maps not read again");
	if (ok)
		sym_procs_mmap(t.procs, t.f.pid, 3, t.lo, t.hi - t.lo, t.pgoff, true, t.f.path, NULL);
	CHECK(ok && image && sym_procs_image(t.procs, t.f.pid, 4) == image,
	      "libpython mapped where nothing was: the same layout (image %" PRIu64 ")", image);
	p = ok ? py_proc_get(t.r, t.f.pid, 4) : NULL;
	CHECK(p && p->kind == PY_YES, "once its mapping is recorded: its CPython found");
	under_test_close(&t);
}

static void count_said(void *ctx, const char *what)
{
	(void)what;
	(*(int *)ctx)++;
}

/* A process whose libpython is mapped but whose memory cannot tell its
 * version yet (a loader between its mappings: 3.13's debug offsets not
 * there) is no CPython for now, not "unsupported" for good, and nothing
 * is said; its CPython is found once it maps more, or (BY_TIME) when it
 * maps nothing more, once it is looked at again after a while */
#define MS(n) ((uint64_t)(n) * 1000000u)
static void test_unreadable_interpreter(const char *file, bool by_time)
{
	static struct under_test t;
	struct fixture *f = &t.f;
	int said = 0;
	bool ok = under_test_open(&t, file);
	if (ok)
		sym_procs_mmap(t.procs, f->pid, 1, t.lo, t.hi - t.lo, t.pgoff, true, f->path, NULL);
	f->fail_read = -EFAULT;
	struct py_proc *p = ok ? py_proc_get(t.r, f->pid, 2) : NULL;
	if (t.r)
		py_reader_unsupported(t.r, count_said, &said);
	CHECK(p && p->kind == PY_NOT && said == 0,
	      "%s, its memory unreadable: no CPython for now, nothing said (%d)", file, said);
	if (by_time) {
		/* no mapping comes: looked at again 10 ms on, then 20 ms after that */
		p = ok ? py_proc_get(t.r, f->pid, 2 + MS(10)) : NULL;
		CHECK(p && p->kind == PY_NOT, "10 ms on, still unreadable: no CPython for now");
		f->fail_read = 0;
		p = ok ? py_proc_get(t.r, f->pid, 2 + MS(29)) : NULL;
		CHECK(p && p->kind == PY_NOT, "readable, 19 ms after the second look: not looked at again yet");
		p = ok ? py_proc_get(t.r, f->pid, 2 + MS(30)) : NULL;
		CHECK(p && p->kind == PY_YES, "20 ms after the second look, no mapping since: its CPython found");
	} else {
		f->fail_read = 0;
		p = ok ? py_proc_get(t.r, f->pid, 3) : NULL;
		CHECK(p && p->kind == PY_NOT, "no mapping recorded since, 1 ns on: not looked at again");
		if (ok)
			sym_procs_mmap(t.procs, f->pid, 3, 0x400000, 0x1000, 0, true, "/usr/bin/prog", NULL);
		p = ok ? py_proc_get(t.r, f->pid, 4) : NULL;
		CHECK(p && p->kind == PY_YES, "once it maps more: its CPython found");
	}
	under_test_close(&t);
}

/* py_read_process: spans of this very process, in one call; how many
 * were read whole, from the first on */
static void test_read_process(void)
{
	static const char a[] = "first span", b[] = "second";
	char x[sizeof(a)] = { 0 }, y[sizeof(b)] = { 0 };
	uint32_t self = (uint32_t)getpid();
	struct py_span two[2] = { { (uint64_t)(uintptr_t)a, x, sizeof(a) },
				  { (uint64_t)(uintptr_t)b, y, sizeof(b) } };
	CHECK(py_read_process(NULL, self, two, 2) == 2 && strcmp(x, a) == 0 && strcmp(y, b) == 0,
	      "two spans read in one call");
	two[1].addr = 16; /* unmapped */
	CHECK(py_read_process(NULL, self, two, 2) == 1, "the second unreadable: 1 read");
	two[0].addr = 16;
	CHECK(py_read_process(NULL, self, two, 2) == -EFAULT, "the first unreadable: -EFAULT");
	struct py_span many[12] = { { (uint64_t)(uintptr_t)a, x, sizeof(a) } };
	CHECK(py_read_process(NULL, self, many, 12) == -EINVAL, "more spans than a call takes: -EINVAL");
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--capture") == 0) {
		int ret = capture((uint32_t)atoi(argv[2]), argv[3]);
		if (ret < 0)
			fprintf(stderr, "capture: %s\n", strerror(-ret));
		return ret < 0;
	}
	test_layouts();
	test_procs_cache();
	test_read_process();
	/* Debian's python3.11 (stripped), pyenv's 3.12.1 and 3.13.0 (shared libpython) */
	test_replay("tests/unit/fixtures/python311.txt");
	test_replay("tests/unit/fixtures/python312.txt");
	test_replay("tests/unit/fixtures/python313.txt");
	test_late_interpreter("tests/unit/fixtures/python311.txt");
	test_unreadable_interpreter("tests/unit/fixtures/python313.txt", false);
	test_unreadable_interpreter("tests/unit/fixtures/python313.txt", true);
	CHECK_DONE();
}
