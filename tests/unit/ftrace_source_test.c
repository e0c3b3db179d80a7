/* source/ftrace_source.c on captured records: the pages of
 * fixtures/ftrace_raw (40 getppid calls of getppid_paths on a 6.18 kernel,
 * 10 from caller_a and 30 from caller_b, pid 12265; see tracefs_raw_test)
 * fed to one CPU of a source built by hand, as trace_pipe_raw hands them:
 * what reaches the count callback, ftstack's own events left out, a
 * function event's stack cut at its function. No tracefs is touched. */
#include <stdlib.h>
#include <string.h>
#include "source/ftrace_source.h"
#include "tests/unit/check.h"

#define FIX "tests/unit/fixtures/ftrace_raw/"
#define SUBBUF 4096

struct got {
	int n, a, b;
	uint64_t weight;
	uint32_t pid, tid, cpu, event, nkips, nuips;
	uint64_t k0, k2;
};

static void count(void *ctx, const struct perfev_sample *smp, uint32_t event, uint64_t weight)
{
	struct got *g = ctx;
	g->n++;
	g->weight += weight;
	g->pid = smp->pid, g->tid = smp->tid, g->cpu = smp->cpu, g->event = event;
	g->nkips = smp->nkips, g->nuips = smp->nuips;
	g->k0 = smp->nkips ? smp->kips[0] : 0;
	g->k2 = smp->nkips > 2 ? smp->kips[2] : 0;
	g->a += smp->nuips > 1 && smp->uips[1] == 0x564b30b430e2ull;
	g->b += smp->nuips > 1 && smp->uips[1] == 0x564b30b430edull;
}

/* Feeds the captured pages of CPU 1 to a source whose one plan event is
 * KIND, as seen by ftstack SELF; G gets the samples. Returns the source's
 * count of ftstack's own events. */
static uint64_t run(enum ft_event_kind kind, uint64_t kstart, uint64_t kend, pid_t self,
		    struct got *g)
{
	static struct ft_plan plan;
	static struct ft_event ev;
	static struct ft_ftrace_source fs;
	static struct ft_ftrace_cpu pc;
	uint64_t lost = 0, self_events = 0;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind, ev.kstart = kstart, ev.kend = kend;
	plan.events = &ev, plan.nevents = 1;
	memset(&fs, 0, sizeof(fs));
	fs.cfg = (struct ft_ftrace_config){ .plan = &plan, .self = self, .want_kernel = true,
		.want_user = true, .lost = &lost, .self_events = &self_events,
		.count = count, .ctx = g };
	memset(&pc, 0, sizeof(pc));
	pc.src = &fs, pc.cpu = 1;
	uint16_t getppid = 305;
	struct tfs_raw_types t = { .kernel_stack = 4, .user_stack = 13,
				   .events = &getppid, .nevents = 1 };
	if (tfs_raw_alloc(&t, SUBBUF, true, true, &pc.raw) < 0)
		return UINT64_MAX;
	uint8_t *pages;
	size_t n = check_read_fixture(FIX "cpu1.raw", &pages);
	for (size_t off = 0; off + SUBBUF <= n; off += SUBBUF)
		ft_ftrace_cpu_feed(&pc, pages + off, SUBBUF);
	ft_ftrace_cpu_flush(&pc);
	/* and a page that is not one */
	memset(pages, 0xff, 64);
	ft_ftrace_cpu_feed(&pc, pages, 16);
	CHECK_EQ_U64(fs.bad_pages, 1, "a page whose header does not fit is counted");
	CHECK_EQ_U64(lost, 0, "nothing lost in captured pages");
	free(pages);
	tfs_raw_free(pc.raw);
	return self_events;
}

int main(void)
{
	struct got g = { 0 };
	uint64_t own = run(FT_EV_TRACEPOINT, 0, 0, 1, &g);
	CHECK_EQ_U64(g.n, 40, "every sample reaches the callback");
	CHECK_EQ_U64(g.weight, 40, "each weighs 1");
	CHECK_EQ_U64(g.a * 1000 + g.b, 10030, "caller_a 10, caller_b 30 (user frames kept)");
	CHECK(g.pid == 12265 && g.tid == 12265, "pid and tid: %u %u", g.pid, g.tid);
	CHECK_EQ_U64(g.cpu, 1, "the CPU is the buffer's");
	CHECK_EQ_U64(g.event, 0, "the plan's event index");
	CHECK(g.nkips == 5 && g.k0 == 0xffffffff814c2981ull && g.nuips == 3,
	      "5 kernel frames (ftrace_syscall_enter first) and 3 user frames: %u %u",
	      g.nkips, g.nuips);
	CHECK_EQ_U64(own, 0, "no event of ftstack's own");

	uint64_t k2 = g.k2;
	struct got self = { 0 };
	own = run(FT_EV_TRACEPOINT, 0, 0, 12265, &self);
	CHECK_EQ_U64(self.n, 0, "ftstack's own process: nothing counted");
	CHECK_EQ_U64(own, 40, "... and every one of its events said so");

	/* a function event's stack starts at its function: the frames the
	 * function tracer adds before it are cut */
	struct got cut = { 0 };
	run(FT_EV_FUNCTION, k2, k2 + 1, 1, &cut);
	CHECK(cut.n == 40 && cut.nkips == 3 && cut.k0 == k2,
	      "function event: stack cut at its function (%d samples, %u frames)", cut.n,
	      cut.nkips);
	CHECK_DONE();
}
