/* host/sched.c: the calling thread moved to a CPU, its slices shortened,
 * SCHED_FIFO taken, a policy chosen for it kept. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "host/host.h"
#include "tests/unit/check.h"

/* se.slice of this thread, from /proc/self/sched (0: not shown) */
static unsigned long long own_slice(void)
{
	FILE *f = fopen("/proc/self/sched", "r");
	char line[256];
	unsigned long long v = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "se.slice", 8) && sscanf(strchr(line, ':') + 1, "%llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

int main(void)
{
	cpu_set_t all;
	sched_getaffinity(0, sizeof(all), &all);
	int last = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all))
			last = c;
	CHECK(host_sched_run_on((uint32_t)last) == 0 && sched_getcpu() == last,
	      "runs on CPU %d once moved there (on %d)", last, sched_getcpu());
	CHECK(host_sched_run_on(CPU_SETSIZE) == -EINVAL, "a CPU past the set is refused");
	cpu_set_t now;
	CHECK(sched_getaffinity(0, sizeof(now), &now) == 0 && CPU_COUNT(&now) == 1 &&
	      CPU_ISSET(last, &now), "that CPU alone");
	sched_setaffinity(0, sizeof(all), &all);

	int err = host_sched_short_slice(100000);
	if (err == -EINVAL)
		SKIP("this kernel takes no slice for SCHED_OTHER (before 6.12)", "slices of 0.1 ms");
	else if (err == -ENOSYS)
		SKIP("no sched_setattr here (an emulator's: valgrind)", "slices of 0.1 ms");
	else if (!own_slice())
		SKIP("/proc/self/sched shows no se.slice", "slices of 0.1 ms");
	else
		CHECK(err == 0 && own_slice() == 100000, "slices of 0.1 ms (se.slice %llu)", own_slice());

	struct sched_param rt = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO, &rt) < 0) {
		SKIP("SCHED_FIFO is refused here (not root)", "a policy chosen with chrt is kept");
	} else {
		CHECK(host_sched_short_slice(100000) == -EPERM && sched_getscheduler(0) == SCHED_FIFO,
		      "a policy chosen with chrt is kept");
		CHECK(host_sched_realtime() == -EPERM && sched_getscheduler(0) == SCHED_FIFO,
		      "SCHED_FIFO asked under a policy chosen with chrt: refused, the policy kept");
		rt.sched_priority = 0;
		sched_setscheduler(0, SCHED_OTHER, &rt);
	}

	/* SCHED_FIFO for a reader, refused exactly where check says it would be */
	struct host_access h;
	host_access_read("/proc", "/sys", &h);
	bool allowed = host_sched_realtime_allowed(&h);
	struct host_access none = h;
	none.cap_eff = 0;
	struct rlimit rtlim;
	CHECK(host_sched_realtime_allowed(&(struct host_access){ .cap_eff = 1ull << HOST_CAP_SYS_NICE }),
	      "CAP_SYS_NICE alone: allowed");
	CHECK(getrlimit(RLIMIT_RTPRIO, &rtlim) < 0 || host_sched_realtime_allowed(&none) == (rtlim.rlim_cur >= 1),
	      "no capability: allowed only by RLIMIT_RTPRIO (%llu)", (unsigned long long)rtlim.rlim_cur);
	err = host_sched_realtime();
	CHECK(allowed == (err != -EPERM), "check's answer (%s) is what SCHED_FIFO did (%d)",
	      allowed ? "allowed" : "refused", err);
	if (err == -EPERM) {
		SKIP("SCHED_FIFO is refused here (no CAP_SYS_NICE, RLIMIT_RTPRIO 0)",
		     "SCHED_FIFO at priority 1");
	} else {
		struct sched_param got = { 0 };
		CHECK(err == 0 && sched_getscheduler(0) == SCHED_FIFO &&
		      sched_getparam(0, &got) == 0 && got.sched_priority == 1,
		      "SCHED_FIFO at priority 1 (%d)", err);
	}
	CHECK_DONE();
}
