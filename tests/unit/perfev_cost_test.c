/* perfev's user-stack cost (perfev/cost.c): perfev_ustack_judge's verdicts
 * on made-up rounds with known costs and noise, and (as root) the
 * measurement on this host. */
#include <unistd.h>

#include "perfev/perfev.h"
#include "tests/unit/check.h"
#include "tests/unit/perf_live.h"

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

int main(void)
{
	test_ustack_judge();
	if (geteuid() != 0)
		SKIP("not root", "perfev_ustack_cost on this host");
	else
		test_live_ustack_cost(sys_enter_id());
	CHECK_DONE();
}
