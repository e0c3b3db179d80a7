/* offcpu: switch-outs (sched_switch samples) paired with switch-ins (perf
 * switch records) into off-CPU intervals, on synthetic records: rings read
 * out of order, threads hopping CPUs, exits, switch-outs left out by
 * --state, lost partners, -p, ftstack's own threads, --min-block, and the
 * threads still off CPU at the end. Field offsets come from the fixture
 * tracefs's sched_switch format. */
#include <stdlib.h>
#include <string.h>
#include "collector/offcpu.h"
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

#define TRACEFS "tests/unit/fixtures/tracefs"
#define US 1000ull /* records carry ns */

struct interval {
	uint32_t pid, tid;
	uint64_t start, us, leaf;
	uint32_t nk, nu;
};

static struct interval got[64];
static int ngot;

static void count(void *ctx, const struct perfev_sample *smp, uint32_t event, uint64_t us)
{
	(void)ctx;
	(void)event;
	if (ngot < 64)
		got[ngot++] = (struct interval){ smp->pid, smp->tid, smp->time, us,
						 smp->nkips ? smp->kips[0] : 0, smp->nkips, smp->nuips };
}

static const uint64_t kstack[] = { 0xffffffff81003010ull, 0xffffffff81000020ull };
static const uint64_t ustack[] = { 0x401000, 0x401100, 0x401200 };

/* The switch-out of TID (process PID) at T us, with both stacks. */
static void out(struct ft_offcpu *oc, uint32_t pid, uint32_t tid, uint64_t t)
{
	struct perfev_sample smp = { .pid = pid, .tid = tid, .time = t * US, .kips = kstack,
				     .nkips = 2, .uips = ustack, .nuips = 3 };
	ft_offcpu_sample(oc, &smp, 0);
}

/* The same with sched_switch's raw fields: prev_pid at 24, prev_state at 32. */
static void out_state(struct ft_offcpu *oc, uint32_t pid, uint32_t tid, uint64_t t, long state)
{
	uint8_t raw[64] = { 0 };
	int32_t prev = (int32_t)tid;
	memcpy(raw + 24, &prev, 4);
	memcpy(raw + 32, &state, 8);
	struct perfev_sample smp = { .pid = pid, .tid = tid, .time = t * US, .kips = kstack,
				     .nkips = 2, .uips = ustack, .nuips = 3, .raw = raw,
				     .raw_size = sizeof(raw) };
	ft_offcpu_sample(oc, &smp, 0);
}

static void in(struct ft_offcpu *oc, uint32_t tid, uint64_t t)
{
	ft_offcpu_switch_in(oc, tid, t * US);
}

static struct ft_options opt;

static struct ft_offcpu *make(void)
{
	struct ft_offcpu_config c = { .opt = &opt, .self = 999, .proc_root = "/nonexistent",
				      .count = count };
	struct ft_offcpu *oc = NULL;
	ngot = 0;
	if (ft_offcpu_alloc(TRACEFS, &c, &oc) < 0)
		return NULL;
	return oc;
}

static void reset_opts(void)
{
	memset(&opt, 0, sizeof(opt));
	opt.cmd = FT_OFFCPU;
	opt.state = -1;
}

static void test_simple(void)
{
	struct ft_offcpu *oc = make();
	CHECK(oc != NULL, "offcpu reads sched_switch's fields from the fixture");
	if (!oc)
		return;
	out(oc, 10, 11, 1000);
	in(oc, 11, 3000);
	ft_offcpu_settle(oc, 2500 * US);
	CHECK_EQ_U64(ngot, 0, "a switch-in after the horizon: nothing paired yet");
	ft_offcpu_settle(oc, 4000 * US);
	CHECK(ngot == 1 && got[0].us == 2000 && got[0].pid == 10 && got[0].tid == 11 &&
	      got[0].start == 1000 * US, "out at 1000 us, in at 3000 us: one interval of 2000 us");
	CHECK(ngot == 1 && got[0].nk == 2 && got[0].nu == 3 && got[0].leaf == kstack[0],
	      "with the switch-out's kernel and user stacks");
	ft_offcpu_finish(oc, 10000 * US);
	CHECK_EQ_U64(ngot, 1, "nothing left at the end");
	ft_offcpu_free(oc);
}

static void test_out_of_order(void)
{
	struct ft_offcpu *oc = make();
	if (!oc)
		return;
	/* CPU 1's ring (the switch-in) is read before CPU 0's (the switch-out) */
	in(oc, 21, 5000);
	out(oc, 20, 21, 4000);
	ft_offcpu_settle(oc, 6000 * US);
	CHECK(ngot == 1 && got[0].us == 1000, "a switch-in read before its switch-out: 1000 us (%d)",
	      ngot ? (int)got[0].us : -1);
	ft_offcpu_free(oc);
}

static void test_cpu_hops(void)
{
	struct ft_offcpu *oc = make();
	if (!oc)
		return;
	/* thread 31 naps twice, moving between CPUs: ring A holds out@1000 and
	 * in@7000, ring B in@2000 and out@3000; A is read first */
	out(oc, 30, 31, 1000);
	in(oc, 31, 7000);
	ft_offcpu_settle(oc, 1500 * US); /* only A read so far: pairs nothing wrongly */
	CHECK_EQ_U64(ngot, 0, "after one ring, nothing past the horizon is paired");
	in(oc, 31, 2000);
	out(oc, 30, 31, 3000);
	ft_offcpu_settle(oc, 8000 * US);
	CHECK(ngot == 2 && got[0].us == 1000 && got[1].us == 4000,
	      "two naps across two rings: 1000 and 4000 us, not 6000 (%d: %d, %d)", ngot,
	      ngot > 0 ? (int)got[0].us : -1, ngot > 1 ? (int)got[1].us : -1);
	ft_offcpu_free(oc);
}

static void test_exit(void)
{
	struct ft_offcpu *oc = make();
	if (!oc)
		return;
	out(oc, 40, 41, 1000);
	in(oc, 41, 2000);
	ft_offcpu_exit(oc, 41, 2500 * US);
	out(oc, 40, 41, 2600); /* do_task_dead: after EXIT, ends nothing */
	ft_offcpu_finish(oc, 10000 * US);
	CHECK(ngot == 1 && got[0].us == 1000, "the exiting thread's last switch-out is not off CPU");
	ft_offcpu_free(oc);

	oc = make();
	if (!oc)
		return;
	out(oc, 42, 43, 1000);
	in(oc, 43, 2000);
	out(oc, 42, 43, 2600); /* read before the EXIT record from another ring */
	ft_offcpu_exit(oc, 43, 2500 * US);
	ft_offcpu_finish(oc, 10000 * US);
	CHECK(ngot == 1 && got[0].us == 1000, "... also when the EXIT record is read after it");
	ft_offcpu_free(oc);

	oc = make();
	if (!oc)
		return;
	ft_offcpu_exit(oc, 45, 1000 * US);
	in(oc, 45, 1500); /* a new thread with the old tid */
	out(oc, 44, 45, 2000);
	in(oc, 45, 2700);
	ft_offcpu_finish(oc, 10000 * US);
	CHECK(ngot == 1 && got[0].us == 700, "a new thread reusing the tid is counted (700 us)");
	ft_offcpu_free(oc);
}

/* Threads that exited are forgotten once the rings were read past their
 * exit and the grace: the table holds the threads that live. */
static void test_forget(void)
{
	struct ft_offcpu *oc = make();
	if (!oc)
		return;
	for (uint32_t tid = 100; tid < 150; tid++) {
		out(oc, tid, tid, 1000);
		in(oc, tid, 2000);
		ft_offcpu_exit(oc, tid, 3000 * US);
	}
	out(oc, 5, 6, 1000); /* a thread still blocked */
	ft_offcpu_settle(oc, 3000 * US + 10);
	CHECK(ngot == 50 && ft_offcpu_threads(oc) == 51,
	      "50 intervals; threads that exited kept within the grace (%zu)", ft_offcpu_threads(oc));
	ft_offcpu_settle(oc, 3000 * US + SYM_EXIT_GRACE_NS + 1);
	CHECK_EQ_U64(ft_offcpu_threads(oc), 1, "then forgotten: the blocked one stays");
	in(oc, 6, 5000000);
	out(oc, 100, 100, 5000100); /* tid 100 again: a new thread */
	in(oc, 100, 5000300);
	ft_offcpu_finish(oc, 6000000 * US);
	CHECK(ngot == 52 && got[50].us + got[51].us == 4999200 &&
	      (got[50].us == 200 || got[51].us == 200),
	      "the blocked thread's interval (4999000 us) and the new thread's (200 us) counted");
	ft_offcpu_free(oc);
}

static void test_left_out(void)
{
	reset_opts();
	opt.state = 2; /* --state D */
	struct ft_offcpu *oc = make();
	if (!oc)
		return;
	out_state(oc, 50, 51, 1000, 1); /* S: left out */
	in(oc, 51, 2000);
	out_state(oc, 50, 51, 3000, 2); /* D */
	in(oc, 51, 3500);
	ft_offcpu_finish(oc, 10000 * US);
	struct ft_offcpu_stats st;
	ft_offcpu_stats(oc, &st);
	CHECK(ngot == 1 && got[0].us == 500, "--state D: only the D nap (500 us) counts");
	CHECK_EQ_U64(st.filtered, 1, "the S nap is counted as filtered");
	ft_offcpu_free(oc);

	/* the left-out switch-out still pairs with its switch-in, which then
	 * cannot end the next (kept) switch-out's interval */
	oc = make();
	if (!oc)
		return;
	out_state(oc, 50, 51, 3000, 2);
	out_state(oc, 50, 51, 1000, 1);
	in(oc, 51, 2000);
	in(oc, 51, 3500);
	ft_offcpu_finish(oc, 10000 * US);
	CHECK(ngot == 1 && got[0].us == 500, "... whatever order the rings give them in");
	ft_offcpu_free(oc);
	reset_opts();
}

static void test_lost_and_open(void)
{
	struct ft_offcpu *oc = make();
	if (!oc)
		return;
	in(oc, 61, 500);        /* off CPU since before tracing: ends nothing */
	out(oc, 60, 61, 1000);  /* its switch-in was lost */
	out(oc, 60, 61, 3000);
	in(oc, 61, 4000);
	out(oc, 60, 61, 6000);  /* still off CPU at the end */
	ft_offcpu_finish(oc, 9000 * US);
	struct ft_offcpu_stats st;
	ft_offcpu_stats(oc, &st);
	CHECK(ngot == 2 && got[0].us == 1000 && got[1].us == 3000,
	      "a lost switch-in ends nothing; the open nap counts up to the end (%d)", ngot);
	CHECK_EQ_U64(st.open_at_end, 1, "one thread still off CPU at the end");
	ft_offcpu_free(oc);
}

static void test_who(void)
{
	reset_opts();
	opt.npids = 1;
	opt.pids[0] = 70;
	struct ft_offcpu *oc = make();
	if (!oc)
		return;
	out(oc, 70, 71, 1000);
	in(oc, 71, 2000);
	out(oc, 72, 73, 1000); /* another process */
	in(oc, 73, 2000);
	out(oc, 999, 999, 1000); /* ftstack itself */
	in(oc, 999, 2000);
	out(oc, 0, 0, 1000); /* the idle task */
	ft_offcpu_finish(oc, 3000 * US);
	CHECK(ngot == 1 && got[0].pid == 70, "-p 70: only its threads; never ftstack or the idle task");
	ft_offcpu_free(oc);

	reset_opts();
	opt.min_block_us = 1500;
	opt.max_block_us = 5000;
	oc = make();
	if (!oc)
		return;
	out(oc, 80, 81, 1000);
	in(oc, 81, 2000);  /* 1000 us: too short */
	out(oc, 80, 81, 3000);
	in(oc, 81, 5000);  /* 2000 us */
	out(oc, 80, 81, 6000);
	in(oc, 81, 16000); /* 10000 us: too long */
	ft_offcpu_finish(oc, 20000 * US);
	struct ft_offcpu_stats st;
	ft_offcpu_stats(oc, &st);
	CHECK(ngot == 1 && got[0].us == 2000, "--min-block 1500 --max-block 5000: the 2000 us nap");
	CHECK_EQ_U64(st.filtered, 2, "the other two filtered");
	ft_offcpu_free(oc);
	reset_opts();
}

/* offcpu without tracefs: perf's context-switch event. Its samples carry
 * no fields (the sampled task is the one switched out), the switch-ins are
 * the same switch records; system-wide the idle task's switch-outs come
 * too. The same pairing must give the same intervals: a nap read in
 * order, one whose switch-in ring is read first, one across CPUs, the
 * idle task's switch-out left out, one still off CPU at the end. */
static void test_ctxsw(void)
{
	struct ft_offcpu_config c = { .opt = &opt, .self = 999, .proc_root = "/nonexistent",
				      .count = count };
	struct ft_offcpu *oc = NULL;
	ngot = 0;
	CHECK(ft_offcpu_alloc(NULL, &c, &oc) == 0 && oc, "ctxsw: created without tracefs");
	if (!oc)
		return;
	out(oc, 40, 41, 1000);           /* CPU 0 */
	out(oc, 0, 0, 1000);             /* the idle task, CPU 1: not blocked */
	in(oc, 0, 1200);
	in(oc, 41, 1400);                /* back on CPU 1 */
	in(oc, 42, 2600);                /* CPU 1's ring read first ... */
	out(oc, 40, 42, 2000);           /* ... then CPU 0's */
	out(oc, 40, 41, 3000);           /* still off CPU at the end */
	ft_offcpu_settle(oc, 2700 * US);
	CHECK(ngot == 2 && got[0].tid == 41 && got[0].us == 400 && got[1].tid == 42 &&
	      got[1].us == 600, "ctxsw: 400 us (tid 41) and 600 us (tid 42, read out of order), "
	      "the idle task left out (%d)", ngot);
	ft_offcpu_finish(oc, 3500 * US);
	CHECK(ngot == 3 && got[2].tid == 41 && got[2].us == 500 && got[2].nk == 2 && got[2].nu == 3,
	      "ctxsw: the last nap counted up to the end, 500 us, with both stacks (%d)", ngot);
	ft_offcpu_free(oc);
}

int main(void)
{
	reset_opts();
	test_ctxsw();
	test_simple();
	test_out_of_order();
	test_cpu_hops();
	test_exit();
	test_forget();
	test_left_out();
	test_lost_and_open();
	test_who();
	CHECK_DONE();
}
