/* perfev's clock offset (perfev/clock.c): two measurements agree, and (as
 * root) a getppid tracepoint record's time, moved to CLOCK_MONOTONIC by
 * the offset, falls between clock reads taken around the call. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "perfev/perfev.h"
#include "tests/unit/check.h"
#include "tests/unit/perf_live.h"

/* the offset's error is half the window of its best try: a few us here;
 * this much is allowed either side */
#define SLACK_NS 20000

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int note_time(void *ctx, const struct perfev_record *rec)
{
	if (rec->kind == PERFEV_SAMPLE)
		*(uint64_t *)ctx = rec->time;
	return 0;
}

/* a record of getppid, stamped between T0 and T1 on CLOCK_MONOTONIC */
static void test_record_between(struct perfev_clock *c, int tp)
{
	struct perfev_ring r = { .fd = -1 };
	int fd = tp < 0 ? tp : open_getppid(tp, 4096, false, 0, &r);
	if (fd < 0) {
		SKIP("raw_syscalls:sys_enter cannot be opened here", "a record's time on CLOCK_MONOTONIC");
		return;
	}
	int64_t off = 0;
	perfev_enable(fd);
	int err = perfev_clock_offset(c, &off);
	uint64_t t0 = now_ns();
	getppid();
	uint64_t t1 = now_ns(), time = 0;
	perfev_disable(fd);
	perfev_ring_drain(&r, PERFEV_SAMPLE_TYPE, 0, note_time, &time);
	uint64_t mono = time + (uint64_t)off;
	CHECK(err == 0 && time && mono + SLACK_NS >= t0 && mono <= t1 + SLACK_NS,
	      "getppid's record at %lld ns from the call's start on CLOCK_MONOTONIC (the call took %llu ns)",
	      (long long)(mono - t0), (unsigned long long)(t1 - t0));
	perfev_ring_unmap(&r);
	close(fd);
}

int main(void)
{
	struct perfev_clock c;
	int err = perfev_clock_open(&c);
	if (err < 0) {
		SKIP("a page-fault event on this thread is refused here", "perf's clock measured");
		CHECK_DONE();
	}
	int64_t a = 0, b = 0;
	CHECK(perfev_clock_offset(&c, &a) == 0 && perfev_clock_offset(&c, &b) == 0 &&
	      llabs(a - b) <= SLACK_NS,
	      "two measurements agree (%lld and %lld ns)", (long long)a, (long long)b);
	if (geteuid() != 0)
		SKIP("not root", "a record's time on CLOCK_MONOTONIC");
	else
		test_record_between(&c, sys_enter_id());
	perfev_clock_close(&c);
	CHECK(perfev_clock_offset(&c, &a) == -EBADF, "a closed clock is not measured");
	CHECK_DONE();
}
