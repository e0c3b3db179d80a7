/* source/perf_source on captured records: perf rings built in memory for
 * two CPUs (no perf_event_open), each written in its own time order as the
 * kernel writes it, their records interleaved in time across the CPUs:
 * samples of three events, one of an id no event has, a LOST record, and
 * comm/mmap2 side band. What reaches the record callback: every record
 * once, in time order across the CPUs, each sample with the plan event its
 * id maps to. And, on real perf fds of this thread (skipped where
 * perf_event_open is refused), the kernel's lost counts summed, and rings
 * that grow each alone. */
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <unistd.h>
#include <string.h>
#include <sys/utsname.h>
#include "source/perf_source_int.h"
#include "tests/unit/check.h"
#include "tests/unit/perf_records.h"

#define MAX_GOT 64

struct got {
	int n;
	enum perfev_kind kind[MAX_GOT];
	uint64_t time[MAX_GOT];
	int event[MAX_GOT];
	uint32_t cpu[MAX_GOT];
	int samples, side_band;
	uint64_t lost;
};

static int record(void *ctx, const struct perfev_record *rec, int event)
{
	struct got *g = ctx;
	if (g->n < MAX_GOT) {
		g->kind[g->n] = rec->kind;
		g->time[g->n] = rec->time;
		g->event[g->n] = event;
		g->cpu[g->n] = rec->cpu;
	}
	g->n++;
	g->samples += rec->kind == PERFEV_SAMPLE;
	g->side_band += rec->kind == PERFEV_COMM || rec->kind == PERFEV_MMAP2;
	if (rec->kind == PERFEV_LOST)
		g->lost += rec->lost.lost;
	return 0;
}

/* ---- records as the kernel writes them (PERFEV_SAMPLE_TYPE) ---- */
static size_t sample(struct bld *b, uint64_t id, uint64_t time, uint32_t cpu)
{
	begin(b);
	p64(b, id);
	p32x2(b, 10, 11);  /* pid, tid */
	p64(b, time);
	p32x2(b, cpu, 0);
	p64(b, 1);         /* period */
	P64S(b, 2, PERF_CONTEXT_USER, 0x401000); /* the callchain */
	return finish(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

static size_t comm(struct bld *b, uint64_t time, uint32_t cpu, uint64_t id)
{
	begin(b);
	p32x2(b, 10, 10);
	put(b, "worker\0\0", 8);
	trailer(b, 10, 10, time, cpu, id);
	return finish(b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
}

static size_t mmap2(struct bld *b, uint64_t time, uint32_t cpu, uint64_t id)
{
	begin(b);
	p32x2(b, 10, 10);
	P64S(b, 0x400000, 0x2000, 0);  /* start, len, pgoff */
	p32x2(b, 8, 1);                /* maj, min */
	P64S(b, 4242, 1);              /* ino, ino_generation */
	p32x2(b, 5, 2);                /* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	put(b, "/usr/bin/worker\0", 16);
	trailer(b, 10, 10, time, cpu, id);
	return finish(b, PERF_RECORD_MMAP2, 0);
}

static size_t lost(struct bld *b, uint64_t n, uint64_t time, uint32_t cpu, uint64_t id)
{
	begin(b);
	P64S(b, id, n);
	trailer(b, 0, 0, time, cpu, id);
	return finish(b, PERF_RECORD_LOST, 0);
}

/* A ring in memory being written: records appended at POS, published by
 * moving the kernel's head. */
struct wring {
	struct perfev_ring *r;
	struct perf_event_mmap_page *meta;
	uint64_t pos;
};

static void wput(struct wring *w, struct bld *b, size_t len)
{
	ring_put(w->r, &w->pos, b->w, len);
	w->meta->data_head = w->pos;
}

/* Three events; on CPU 0 their ids are 501-503, on CPU 1 601-603 (the
 * kernel gives each fd its own id), added out of order. */
static struct ft_perf_source *source_of(struct ft_event *events, int nevents, struct got *g,
					struct wring w[2])
{
	struct ft_perf_config cfg = { .record = record, .ctx = g, .cgroup_fd = -1 };
	struct ft_perf_source *ps = ft_perf_source_alloc(&cfg, events, nevents, 2);
	if (!ps)
		return NULL;
	const uint64_t ids[] = { 603, 501, 602, 503, 601, 502 };
	const uint32_t evs[] = { 2, 0, 1, 2, 0, 1 };
	for (int i = 0; i < 6; i++)
		if (ft_perf_source_add_id(ps, ids[i], evs[i] % (uint32_t)nevents) < 0)
			return NULL;
	ft_perf_source_ids_done(ps);
	for (int c = 0; c < 2; c++) {
		w[c] = (struct wring){ .r = &ps->rings[c].ring };
		w[c].meta = fake_ring(w[c].r);
		ps->rings[c].cpu = c;
	}
	return ps;
}

static void source_free(struct ft_perf_source *ps)
{
	for (int c = 0; c < 2; c++)
		fake_ring_free(&ps->rings[c].ring); /* not mapped: close must not unmap */
	ft_perf_source_close(ps, false);
}

/* The merge and the id lookup: ten records on two CPUs, in time order
 * 100..1000 with the CPUs taking turns out of step. */
static void test_merge(void)
{
	struct ft_event events[3] = { { .kind = FT_EV_TRACEPOINT } };
	struct got g = { 0 };
	struct wring w[2];
	struct bld b;
	struct ft_perf_source *ps = source_of(events, 3, &g, w);
	CHECK(ps != NULL, "a source with two in-memory rings");
	if (!ps)
		return;
	wput(&w[0], &b, comm(&b, 100, 0, 501));
	wput(&w[0], &b, sample(&b, 502, 300, 0));   /* event 1 */
	wput(&w[0], &b, sample(&b, 503, 400, 0));   /* event 2 */
	wput(&w[0], &b, lost(&b, 7, 600, 0, 501));
	wput(&w[0], &b, sample(&b, 501, 900, 0));   /* event 0 */
	wput(&w[1], &b, mmap2(&b, 200, 1, 601));
	wput(&w[1], &b, sample(&b, 603, 250, 1));   /* event 2 */
	wput(&w[1], &b, sample(&b, 999, 500, 1));   /* no event has id 999 */
	wput(&w[1], &b, sample(&b, 601, 700, 1));   /* event 0 */
	wput(&w[1], &b, sample(&b, 602, 1000, 1));  /* event 1 */
	CHECK(ft_perf_source_owns(ps, &ps->rings[1]) && !ft_perf_source_owns(ps, &g) &&
	      !ft_perf_source_owns(NULL, &ps->rings[0]), "the rings are its epoll cookies, nothing else");
	CHECK_EQ_U64(ft_perf_source_ready(ps, &ps->rings[1]), 0, "a ring ready: drained");
	CHECK_EQ_U64(g.n, 10, "every record handed over once");
	CHECK(g.samples == 7 && g.side_band == 2, "7 samples, comm and mmap2 (%d, %d)",
	      g.samples, g.side_band);
	CHECK_EQ_U64(g.lost, 7, "the LOST record's count");
	const uint64_t want_time[] = { 100, 200, 250, 300, 400, 500, 600, 700, 900, 1000 };
	const uint32_t want_cpu[] = { 0, 1, 1, 0, 0, 1, 0, 1, 0, 1 };
	const int want_ev[] = { -1, -1, 2, 1, 2, -1, -1, 0, 0, 1 };
	int order = 0, cpus = 0, evs = 0;
	for (int i = 0; i < 10; i++) {
		order += g.time[i] == want_time[i];
		cpus += g.cpu[i] == want_cpu[i];
		evs += g.event[i] == want_ev[i];
	}
	CHECK_EQ_U64(order, 10, "in time order across the CPUs");
	CHECK_EQ_U64(cpus, 10, "each from its CPU's ring");
	CHECK_EQ_U64(evs, 10, "samples' events by id (an unknown id: -1), side band -1");
	CHECK(w[0].meta->data_tail == w[0].pos && w[1].meta->data_tail == w[1].pos,
	      "both rings' space released");

	/* more records later: only what is new, still merged */
	g = (struct got){ 0 };
	wput(&w[1], &b, sample(&b, 603, 1100, 1));
	wput(&w[0], &b, sample(&b, 503, 1200, 0));
	wput(&w[1], &b, sample(&b, 602, 1300, 1));
	CHECK_EQ_U64(ft_perf_source_drain_all(ps), 0, "drained again");
	CHECK(g.n == 3 && g.time[0] == 1100 && g.time[1] == 1200 && g.time[2] == 1300 &&
	      g.event[0] == 2 && g.event[1] == 2 && g.event[2] == 1,
	      "the three new samples, in order, events 2 2 1 (%d records)", g.n);
	CHECK_EQ_U64(ft_perf_source_drain_all(ps), 0, "empty rings: nothing to do");
	CHECK_EQ_U64(g.n, 3, "nothing handed twice");

	/* a record the decoder refuses is counted, the others go on */
	g = (struct got){ 0 };
	size_t len = sample(&b, 502, 1400, 0);
	b.w[6] = 99; /* a callchain longer than the record */
	wput(&w[0], &b, len);
	wput(&w[0], &b, sample(&b, 501, 1500, 0));
	CHECK_EQ_U64(ft_perf_source_drain_all(ps), 0, "a ring with a bad record drained");
	CHECK(g.n == 1 && g.time[0] == 1500, "the good record after it handed over");
	CHECK_EQ_U64(ft_perf_source_bad_records(ps), 1, "the bad one counted");
	unsigned pct;
	CHECK(ft_perf_source_fullest(ps, &pct) >= 0 && pct > 0 && pct < 100,
	      "the fullest ring and how full (%u%%)", pct);
	CHECK(ft_perf_source_ring_kb(ps, 0) == 4 && ft_perf_source_ring_kb(ps, 2) == 0,
	      "a CPU's ring size, KB; none for a CPU without a ring");
	source_free(ps);
}

/* One event: every sample is its, whatever the id (the kernel's id is not
 * looked up), and the lost count a source keeps only rises. */
static void test_single_event(void)
{
	struct ft_event events[1] = { { .kind = FT_EV_TRACEPOINT } };
	struct got g = { 0 };
	struct wring w[2];
	struct bld b;
	struct ft_perf_source *ps = source_of(events, 1, &g, w);
	if (!ps)
		return;
	wput(&w[1], &b, sample(&b, 4711, 20, 1));
	wput(&w[0], &b, sample(&b, 601, 10, 0));
	CHECK_EQ_U64(ft_perf_source_drain_all(ps), 0, "drained");
	CHECK(g.n == 2 && g.time[0] == 10 && g.event[0] == 0 && g.event[1] == 0,
	      "one event: both samples are event 0, in order");
	uint64_t run_lost = 5;
	ps->cfg.lost = &run_lost;
	ft_perf_source_count_lost(ps); /* no fds: the kernel counted none */
	CHECK_EQ_U64(run_lost, 5, "the run's lost count kept when the kernel's is lower");
	CHECK_EQ_U64(ft_perf_source_ring_kb(NULL, 0) + ft_perf_source_bad_records(NULL), 0,
		     "no source: no ring, no bad records");
	source_free(ps);
}

/* Drains PS every 10 ms until CPU's ring is KB (or, NEXT, has a new ring
 * beside it), 5 s at most; *OTHER_NEXT counts the drains at which CPU
 * OTHER had a new ring. Returns whether it came. */
static bool drain_until(struct ft_perf_source *ps, int cpu, size_t kb, bool next, int other,
			int *other_next)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (int i = 0; i < 500; i++) {
		const struct ft_perf_ring *r = &ps->rings[cpu];
		if (next ? r->next.base != NULL : r->ring.data_size == kb * 1024)
			return true;
		if (ft_perf_source_drain_all(ps) < 0)
			return false;
		*other_next += ps->rings[other].next.base != NULL;
		nanosleep(&tick, NULL);
	}
	return false;
}

/* Rings that grow (perf_grow.c) on two real 8 KB rings of dummies on this
 * thread, growing to 16 KB: only the ring found 1/FT_GROW_AT full grows,
 * the other keeps its size (and reports it) until it fills too, and then
 * grows alone; a grown ring never grows again. */
static void test_grow_alone(void)
{
	struct ft_event events[1] = { { .kind = FT_EV_TRACEPOINT } };
	struct got g = { 0 };
	struct ft_perf_config cfg = { .record = record, .ctx = &g, .cgroup_fd = -1 };
	struct ft_perf_source *ps = ft_perf_source_alloc(&cfg, events, 1, 2);
	if (!ps)
		return;
	ps->dummy_owners = true;
	ps->ring_kb = 8;
	ps->grow_kb = 16;
	for (int c = 0; c < 2; c++) {
		struct ft_perf_ring *r = &ps->rings[c];
		r->cpu = c;
		r->owner_pid = 0;
		r->owner_fd = ft_perf_source_open_owner(ps, 0, c, 8192 / FT_GROW_AT);
		if (r->owner_fd < 0 || perfev_ring_map(&r->ring, r->owner_fd, 8192) < 0) {
			SKIP("a dummy event's ring on CPUs 0 and 1 refused here",
			     "each ring grows alone");
			ft_perf_source_close(ps, false);
			return;
		}
	}
	int next1 = 0, next0 = 0;
	ps->rings[0].ring.max_fill = 8192 / FT_GROW_AT;
	CHECK(drain_until(ps, 0, 0, true, 1, &next1) && !ps->rings[1].next.base,
	      "CPU 0's ring, 1/%d full, grows; CPU 1's does not", FT_GROW_AT);
	CHECK(drain_until(ps, 0, 16, false, 1, &next1) && ps->rings[1].ring.data_size == 8192 &&
	      !ps->grow && next1 == 0, "CPU 0's ring grown to 16 KB, CPU 1's kept at 8 KB");
	CHECK(ft_perf_source_ring_kb(ps, 0) == 16 && ft_perf_source_ring_kb(ps, 1) == 8,
	      "each ring's own size reported (%zu, %zu KB)", ft_perf_source_ring_kb(ps, 0),
	      ft_perf_source_ring_kb(ps, 1));
	ps->rings[0].ring.max_fill = 16384; /* full: but grown already */
	ps->rings[1].ring.max_fill = 8192 / FT_GROW_AT;
	CHECK(drain_until(ps, 1, 16, false, 0, &next0) && next0 == 0 &&
	      ft_perf_source_ring_kb(ps, 0) == 16,
	      "CPU 1's ring, 1/%d full later, grows then, alone; the grown one never again",
	      FT_GROW_AT);
	ft_perf_source_close(ps, false);
}

struct slow {
	struct ft_perf_source *ps;
	int n, stays_at;
	uint64_t last;
	bool ordered;
};

/* The record callback of test_grow_mid_drain: when CPU 0's ring was first
 * seen given up for growth, and whether the records came in order */
static int slow_record(void *ctx, const struct perfev_record *rec, int event)
{
	struct slow *s = ctx;
	(void)event;
	s->n++;
	s->ordered &= rec->time > s->last;
	s->last = rec->time;
	if (!s->stays_at && s->ps->rings[0].stays)
		s->stays_at = s->n;
	return 0;
}

/* A drain stops now and then, while a ring may grow, for a growth step:
 * a pass lasts as long as the rings hold records, and a reader slower
 * than its writers adopted a grown ring only at a pass's end, long after
 * it was mapped, while the small ring overflowed. Here CPU 0's 64 KB ring
 * holds 800 records and was found 1/FT_GROW_AT full; its growth fails at
 * once (its owner task is gone: the ring stays as it is), which the
 * records after the step see. Every record is still handed over once, in
 * order. */
static void test_grow_mid_drain(void)
{
	struct ft_event events[1] = { { .kind = FT_EV_TRACEPOINT } };
	struct slow sl = { .ordered = true };
	struct ft_perf_config cfg = { .record = slow_record, .ctx = &sl, .cgroup_fd = -1 };
	struct ft_perf_source *ps = ft_perf_source_alloc(&cfg, events, 1, 2);
	if (!ps)
		return;
	sl.ps = ps;
	struct wring w = { .r = &ps->rings[0].ring };
	w.meta = fake_ring_of(w.r, 65536);
	struct bld b;
	for (int i = 0; i < 800; i++)
		wput(&w, &b, sample(&b, 501, 100 + (uint64_t)i, 0));
	ps->rings[0].owner_pid = 0x3fffffff; /* above any pid_max: no such task */
	ps->rings[0].ring.max_fill = 65536;
	ps->grow_kb = 128;
	ps->dummy_owners = true;
	CHECK_EQ_U64(ft_perf_source_drain_all(ps), 0, "800 records drained");
	CHECK(sl.n == 800 && sl.ordered, "every one handed over once, in order (%d)", sl.n);
	CHECK(sl.stays_at > 0 && sl.stays_at < 400,
	      "the ring's growth tried during the drain, not at its end (seen at record %d of 800)",
	      sl.stays_at);
	fake_ring_free(w.r);
	ft_perf_source_close(ps, false);
}

/* Spins for about MS milliseconds of this thread's CPU time */
static void spin_cpu(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (volatile int i = 0; i < 10000; i++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* Whether the running kernel is older than MAJOR.MINOR (uname's release) */
static bool kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

/* The kernel's lost counts (PERF_FORMAT_LOST) of every fd, summed into the
 * run's count when higher: two task-clock events on this thread, each
 * sampling every 20 us into a one-page ring nobody drains. */
static void test_kernel_lost(void)
{
	struct ft_event events[1] = { { .kind = FT_EV_CPU_CLOCK } };
	struct got g = { 0 };
	struct wring w[2];
	struct perfev_ring ring[2] = { 0 };
	struct perfev_opts po = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				  .sample_period = 20000, .exclude_kernel = true };
	struct ft_perf_source *ps = source_of(events, 1, &g, w);
	int fd[2] = { perfev_open(&po, 0, -1, -1), perfev_open(&po, 0, -1, -1) };
	if (fd[0] < 0 || fd[1] < 0 || !ps) {
		SKIP("perf_event_open of a task clock on this thread refused here",
		     "the kernel's lost counts summed");
		close(fd[0]), close(fd[1]);
		if (ps)
			source_free(ps);
		return;
	}
	uint64_t k[2] = { 0, 0 }, run_lost = 0;
	for (int i = 0; i < 2; i++)
		CHECK(perfev_ring_map(&ring[i], fd[i], 4096) == 0 &&
		      ft_perf_source_add_fd(ps, fd[i], 0, 0) == 0, "event %d: a one-page ring", i);
	/* ~2500 samples each 50 ms, a page holds about 100; on busy CPUs the
	 * kernel took ~400 in 100 ms (a unit run beside two busy loops): the
	 * spin goes on until each ring has lost 1000, for 2 s at most */
	for (int t = 0; t < 40 && (k[0] <= 1000 || k[1] <= 1000); t++) {
		spin_cpu(50);
		if (perfev_lost(fd[0], &k[0]) < 0 || perfev_lost(fd[1], &k[1]) < 0)
			break;
	}
	for (int i = 0; i < 2; i++)
		perfev_disable(fd[i]);
	int r0 = perfev_lost(fd[0], &k[0]), r1 = perfev_lost(fd[1], &k[1]);
	if (r0 == -EOPNOTSUPP && kernel_before(6, 0)) {
		SKIP("no PERF_FORMAT_LOST before Linux 6.0", "the kernel's lost counts summed");
	} else {
		/* from 6.0 on, -EOPNOTSUPP means perfev_open did not ask for it */
		CHECK(r0 == 0 && r1 == 0 && k[0] > 1000 && k[1] > 1000,
		      "each full ring lost samples (%" PRIu64 ", %" PRIu64 "; read %d, %d)",
		      k[0], k[1], r0, r1);
		ps->cfg.lost = &run_lost;
		ft_perf_source_count_lost(ps);
		CHECK_EQ_U64(run_lost, k[0] + k[1], "the run's lost count: the sum over the fds");
		run_lost = k[0] + k[1] + 7;
		ft_perf_source_count_lost(ps);
		CHECK_EQ_U64(run_lost, k[0] + k[1] + 7, "a higher count (LOST records) kept");
	}
	for (int i = 0; i < 2; i++)
		perfev_ring_unmap(&ring[i]);
	source_free(ps); /* closes the fds */
}

int main(void)
{
	test_merge();
	test_single_event();
	test_kernel_lost();
	test_grow_alone();
	test_grow_mid_drain();
	return check_failures != 0;
}
