/* perfev's rings (perfev/ring.c, perfev/open.c): the drain loop on a ring we
 * fill ourselves, and (as root) live rings fed by raw_syscalls:sys_enter
 * and by cpu-clock with every option ftstack uses. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfev/perfev.h"
#include "tests/unit/check.h"
#include "tests/unit/perf_live.h"
#include "tests/unit/perf_records.h"

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

/* A sample with one user address into SMP; returns its length */
static size_t user_sample(struct bld *smp)
{
	const uint64_t chain[] = { PERF_CONTEXT_USER, 3 };
	size_t len = build_sample(smp, chain, 2);
	finish(smp, PERF_RECORD_SAMPLE, 0);
	return len;
}

/* A ring of copies of one user sample (its length into *SLEN) from START
 * while they fit in BYTES: data_tail at START, data_head after the last.
 * Returns how many. */
static int fill_samples(struct perfev_ring *r, size_t *slen, uint64_t start, uint64_t bytes)
{
	struct perf_event_mmap_page *meta = r->base;
	struct bld smp;
	uint64_t pos = start;
	int n = 0;
	*slen = user_sample(&smp);
	while (pos + *slen - start <= bytes)
		ring_put(r, &pos, smp.w, *slen), n++;
	meta->data_head = pos;
	meta->data_tail = start;
	return n;
}

/* The space a drain has read goes back to the kernel as the drain goes
 * (each 1/32 of the ring), never a record before the callback is done with
 * it: at each callback, data_tail is at most the record's start and at
 * most 1/32 of the ring (128 bytes here) behind it */
struct release_watch {
	const struct perf_event_mmap_page *meta;
	uint64_t at, slen; /* the record's start, the records' size */
	long early, late, calls;
};

static int release_cb(void *ctx, const struct perfev_record *rec)
{
	struct release_watch *w = ctx;
	(void)rec;
	uint64_t tail = w->meta->data_tail;
	w->early += tail > w->at;
	w->late += w->at - tail > 4096 / 32;
	w->at += w->slen;
	w->calls++;
	return 0;
}

static void test_release_as_it_goes(void)
{
	struct perfev_ring r;
	struct perf_event_mmap_page *meta = fake_ring(&r);
	size_t slen;
	uint64_t start = 8192;
	int n = fill_samples(&r, &slen, start, 4096);
	uint64_t pos = meta->data_head;
	struct release_watch w = { .meta = meta, .at = start, .slen = slen };
	CHECK_EQ_U64(perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, release_cb, &w), n,
		     "a full ring's records, all read");
	CHECK(w.calls == n && n > 8 && w.early == 0 && w.late == 0,
	      "the space handed back as the drain goes: never before a record's callback "
	      "(%ld early), never more than 1/32 of the ring behind it (%ld late, of %d)",
	      w.early, w.late, n);
	CHECK_EQ_U64(meta->data_tail, pos, "and all of it at the end");
	fake_ring_free(&r);
}

/* perfev_ring_drain_until: the step of the merge of several rings */
static void test_drain_until(void)
{
	struct perfev_ring r;
	struct perf_event_mmap_page *meta = fake_ring(&r);
	struct bld smp;
	size_t slen = user_sample(&smp);
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

/* behind: on each record handed while more than 3/8 of the ring (1536 of
 * its 4096 bytes) waited from the record's start to the head, the head
 * read again at each release (each 1/32 of the ring, 128 bytes): the
 * flags of each record, and the kernel's head moved on at the first */
struct behind_watch {
	struct perf_event_mmap_page *meta;
	uint64_t move_head; /* where the first callback puts data_head (0: not) */
	bool flag[64];
	int n;
};

static int behind_cb(void *ctx, const struct perfev_record *rec)
{
	struct behind_watch *w = ctx;
	if (w->n == 0 && w->move_head)
		w->meta->data_head = w->move_head;
	if (w->n < 64)
		w->flag[w->n] = rec->sample.behind;
	w->n++;
	return 0;
}

/* How many of N records (SLEN bytes each, from 0) W saw flagged otherwise
 * than behind a head at BEFORE up to record RELEASED_AFTER and at AFTER
 * from the next one on (or W saw another number of records) */
static int behind_wrong(const struct behind_watch *w, int n, uint64_t slen, uint64_t before,
			uint64_t after, int released_after)
{
	int wrong = w->n != n;
	for (int i = 0; i < n && i < 64; i++) {
		uint64_t head = i > released_after ? after : before;
		wrong += w->flag[i] != (head - (uint64_t)i * slen > 1536 && head > (uint64_t)i * slen);
	}
	return wrong;
}

static void test_behind(void)
{
	struct perfev_ring r;
	struct perf_event_mmap_page *meta = fake_ring(&r);
	size_t slen;
	int n = fill_samples(&r, &slen, 0, 3500), behind = 0;
	uint64_t pos = meta->data_head;
	struct behind_watch w = { .meta = meta };
	perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, behind_cb, &w);
	for (int i = 0; i < n; i++)
		behind += pos - (uint64_t)i * slen > 1536;
	CHECK(behind > 0 && behind < n && behind_wrong(&w, n, slen, pos, pos, -1) == 0,
	      "behind exactly on the %d of %d records that started over 1536 bytes before the head",
	      behind, n);
	/* the head at 8 records, then moved on to 3500 bytes while the drain
	 * reads: from the first release on, the records are behind the new head */
	meta->data_head = 8 * slen;
	meta->data_tail = 0;
	w = (struct behind_watch){ .meta = meta, .move_head = pos };
	perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, behind_cb, &w);
	int released_after = (int)((128 + slen - 1) / slen) - 1; /* the record that ends the first 128 bytes */
	CHECK(released_after + 1 < 8 && behind_wrong(&w, 8, slen, 8 * slen, pos, released_after) == 0,
	      "the head read again at a release: behind from record %d of 8 on",
	      released_after + 1);
	fake_ring_free(&r);
}

/* ---- live rings (root): raw_syscalls:sys_enter filtered to getppid ---- */
static void getppids(int fd, long n)
{
	perfev_enable(fd);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	perfev_disable(fd);
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


/* perfev_ring_maps_start and _finish: three rings mapped in PROCS
 * processes at once (three: this one and two helpers; one: this one
 * alone, as where ftstack check found that sooner) are this process's
 * rings, each getting its own event's samples, and every helper process
 * is gone after finish. */
static void test_map_many(int tp, size_t procs)
{
	enum { N = 3 };
	struct perfev_ring tmp, r[N] = { { 0 } };
	int fd[N];
	for (int i = 0; i < N; i++) {
		fd[i] = open_getppid(tp, 4096, false, 0, &tmp);
		if (fd[i] >= 0)
			perfev_ring_unmap(&tmp); /* the kernel's ring goes with its last mapping */
	}
	CHECK(fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0, "three getppid events");
	if (fd[0] < 0 || fd[1] < 0 || fd[2] < 0)
		return;
	struct perfev_ring_maps m;
	int ret = perfev_ring_maps_start(&m, r, fd, N, 8 << 20, procs);
	CHECK(m.running == procs - 1, "%zu helpers forked for %zu processes", m.running, procs);
	int err = perfev_ring_maps_finish(&m);
	ret = ret < 0 ? ret : err;
	CHECK(ret == 0 && r[0].base && r[1].base && r[2].base && r[2].data_size == 8 << 20,
	      "three 8 MB rings mapped by %zu processes (%d)", procs, ret);
	errno = 0;
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no helper process left");
	for (int i = 0; i < N && r[i].base; i++) {
		struct tally t = { .pid = (uint32_t)getpid() };
		getppids(fd[i], 100 * (i + 1));
		long n = perfev_ring_drain(&r[i], PERFEV_SAMPLE_TYPE, 0, count_cb, &t);
		CHECK(n == 100 * (i + 1) && t.samples == n,
		      "%zu processes, ring %d: its own event's %d samples (%ld)", procs, i,
		      100 * (i + 1), n);
	}
	for (int i = 0; i < N; i++) {
		perfev_ring_unmap(&r[i]); /* mapped, or still zero */
		close(fd[i]);
	}
}

/* perfev_ring_maps_start/finish: once start returns, the helpers' rings
 * exist though not mapped here, and records written then are read after
 * finish maps them; a helper that cannot map says why through start. */
static void test_map_steps(int tp)
{
	enum { N = 3 };
	struct perfev_ring tmp, r[N] = { { 0 } };
	struct perfev_ring_maps m;
	int fd[N];
	for (int i = 0; i < N; i++) {
		fd[i] = open_getppid(tp, 4096, false, 0, &tmp);
		if (fd[i] >= 0)
			perfev_ring_unmap(&tmp);
	}
	if (fd[0] < 0 || fd[1] < 0 || fd[2] < 0) {
		CHECK(0, "three getppid events");
		return;
	}
	int ret = perfev_ring_maps_start(&m, r, fd, N, 1 << 20, N);
	CHECK(ret == 0 && r[0].base && !r[1].base && !r[2].base,
	      "start: this process's ring mapped, the helpers' not yet (%d)", ret);
	getppids(fd[1], 150); /* into the ring only a helper has mapped */
	ret = perfev_ring_maps_finish(&m);
	CHECK(ret == 0 && r[1].base && r[2].base, "finish: every ring mapped here (%d)", ret);
	struct tally t = { .pid = (uint32_t)getpid() };
	long n = r[1].base ? perfev_ring_drain(&r[1], PERFEV_SAMPLE_TYPE, 0, count_cb, &t) : -1;
	CHECK(n == 150 && t.samples == 150, "the samples written before finish are there (%ld)", n);
	errno = 0;
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no helper process left");
	for (int i = 0; i < N; i++)
		perfev_ring_unmap(&r[i]);
	/* a read-only file's fd: the helper's shared writable mapping is refused */
	int ro = open("/dev/zero", O_RDONLY | O_CLOEXEC), bad[N] = { fd[0], ro, fd[2] };
	struct perfev_ring r2[N] = { { 0 } };
	ret = perfev_ring_maps_start(&m, r2, bad, N, 1 << 20, N);
	CHECK(ret == -EACCES, "a helper that cannot map: its errno from start (%d)", ret);
	perfev_ring_maps_release(&m);
	errno = 0;
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "released: no helper left");
	for (int i = 0; i < N; i++) {
		perfev_ring_unmap(&r2[i]);
		close(fd[i]);
	}
	close(ro);
}

/* Both events of EV enabled for N getppid calls: 2N samples. */
static void both_getppids(const int ev[2], long n)
{
	perfev_enable(ev[0]);
	perfev_enable(ev[1]);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	perfev_disable(ev[0]);
	perfev_disable(ev[1]);
}

/* G's state once it left PERFEV_GROW_MAPPING (or WAS), within 60 s. */
static int grow_wait(struct perfev_ring_grow *g, int was)
{
	/* a bound for a hang, not a time to meet: under valgrind a helper's
	 * fork, mapping and exit took 2.7-8.8 s a ring on one host and over
	 * 10 s for the failing one (2026-11-28) */
	uint64_t end = mono_ns() + 60000000000ull;
	int st;
	while ((st = perfev_ring_grow_state(g)) == was && mono_ns() < end)
		usleep(1000);
	return st;
}

static long samples_in(struct perfev_ring *r)
{
	struct tally t = { .pid = (uint32_t)getpid() };
	long n = perfev_ring_drain(r, PERFEV_SAMPLE_TYPE, 0, count_cb, &t);
	return n < 0 ? n : t.samples;
}

/* perfev_ring_grow: two events write into a dummy's ring; a bigger ring
 * for a new dummy is mapped in a thread, the events stay on the old ring
 * until move and write only into the new one after: each sample in
 * exactly one of them. Joined before move, nothing moves; a new owner
 * that cannot be mapped fails with its errno. */
static void test_grow(int tp)
{
	struct perfev_opts dummy = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				     .sample_period = 1, .disabled = true };
	struct perfev_ring tmp, old = { 0 }, grown = { 0 }, unmoved = { 0 }, none = { 0 };
	struct perfev_ring_grow g;
	int ev[2], owner = perfev_open(&dummy, 0, -1, -1), bigger = perfev_open(&dummy, 0, -1, -1);
	int spare = perfev_open(&dummy, 0, -1, -1), ro = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	size_t to[2] = { 0, 0 };
	for (int i = 0; i < 2; i++)
		if ((ev[i] = open_getppid(tp, 4096, false, 0, &tmp)) >= 0)
			perfev_ring_unmap(&tmp); /* no ring of its own: it may be sent elsewhere */
	int ret = owner < 0 || bigger < 0 || spare < 0 || ev[0] < 0 || ev[1] < 0 ? -1 :
		  perfev_ring_map(&old, owner, 1 << 20);
	if (ret == 0 && (ret = perfev_set_output(ev[0], owner)) == 0)
		ret = perfev_set_output(ev[1], owner);
	CHECK(ret == 0, "two getppid events into a dummy's 1 MB ring (%d)", ret);
	if (ret < 0)
		goto out;
	both_getppids(ev, 100);
	/* joined before move: mapped, never moved */
	ret = perfev_ring_grow_start(&g, &unmoved, &spare, 1, 2 << 20, ev, to, 2);
	int st = ret == 0 ? grow_wait(&g, PERFEV_GROW_MAPPING) : ret;
	ret = perfev_ring_grow_join(&g);
	both_getppids(ev, 50);
	CHECK(st == PERFEV_GROW_MAPPED && ret == -ECANCELED && unmoved.data_size == 2 << 20,
	      "joined before move: the new ring was mapped, nothing moved (%d, %d)", st, ret);
	CHECK_EQ_U64(samples_in(&unmoved), 0, "joined before move: no sample in the new ring");
	CHECK_EQ_U64(samples_in(&old), 300, "joined before move: every sample in the old ring");
	/* grown: 200 samples before move, 200 after */
	ret = perfev_ring_grow_start(&g, &grown, &bigger, 1, 4 << 20, ev, to, 2);
	st = ret == 0 ? grow_wait(&g, PERFEV_GROW_MAPPING) : ret;
	CHECK(st == PERFEV_GROW_MAPPED && grown.base && grown.data_size == 4 << 20,
	      "the new 4 MB ring mapped here (%d)", st);
	both_getppids(ev, 100);
	perfev_ring_grow_move(&g);
	st = grow_wait(&g, PERFEV_GROW_MAPPED);
	ret = perfev_ring_grow_join(&g);
	CHECK(st == PERFEV_GROW_DONE && ret == 0, "every event moved (%d, %d)", st, ret);
	both_getppids(ev, 100);
	CHECK_EQ_U64(samples_in(&old), 200, "the old ring: the 200 samples from before the move");
	CHECK_EQ_U64(samples_in(&grown), 200, "the new ring: the 200 samples from after it");
	/* a new owner that cannot be mapped (a read-only file): said, failed */
	ret = perfev_ring_grow_start(&g, &none, &ro, 1, 1 << 20, ev, to, 2);
	st = ret == 0 ? grow_wait(&g, PERFEV_GROW_MAPPING) : ret;
	ret = perfev_ring_grow_join(&g);
	CHECK(st == PERFEV_GROW_FAILED && ret == -EACCES && !none.base,
	      "a ring that cannot be mapped: failed with its errno (%d, %d)", st, ret);
	errno = 0;
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "grown: no helper process left");
out:
	perfev_ring_unmap(&old);
	perfev_ring_unmap(&grown);
	perfev_ring_unmap(&unmoved);
	int fds[] = { owner, bigger, spare, ro, ev[0], ev[1] };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
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
	test_map_many(tp, 3);
	test_map_many(tp, 1);
	test_map_steps(tp);
	test_grow(tp);
}

int main(void)
{
	test_fake_ring();
	test_release_as_it_goes();
	test_drain_until();
	test_behind();
	test_live();
	CHECK_DONE();
}
