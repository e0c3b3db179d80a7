/* collector/ring_maps.c: the rule on ftstack check's timing of the rings
 * mapped by one process against a helper a CPU. Pure: nothing is timed
 * here (the timing itself: perfev_ring_maps_time, in live runs of check). */
#include <string.h>
#include "collector/session.h"
#include "tests/unit/check.h"

static void test_rule(void)
{
	char why[200];
	/* the EPYC VM of doc/PERFORMANCE.md: one process sooner most rounds */
	double one[5] = { 6.1, 5.9, 7.4, 6.0, 6.2 }, helped[5] = { 7.8, 8.3, 7.0, 7.6, 8.1 };
	CHECK(ft_ring_maps_rule(one, helped, 5, why, sizeof(why)) &&
	      strcmp(why, "one process 6.1 ms, a helper a CPU 7.8 ms (medians of 5 rounds; "
		     "one / helped per round 0.78): one process sooner") == 0,
	      "one process sooner in the median round: alone (%s)", why);
	/* the Xeon VM: rings made side by side in about half the time */
	double slow[5] = { 17.0, 18.2, 16.9, 17.5, 9.0 }, fast[5] = { 9.5, 10.1, 9.2, 9.9, 10.0 };
	CHECK(!ft_ring_maps_rule(slow, fast, 5, why, sizeof(why)) &&
	      strstr(why, "one process 17.0 ms, a helper a CPU 9.9 ms") &&
	      strstr(why, ": helpers sooner or even"), "helpers sooner: helpers (%s)", why);
	/* even: the helpers, the way never far behind */
	double a[4] = { 8, 8, 8, 8 };
	CHECK(!ft_ring_maps_rule(a, a, 4, why, sizeof(why)) &&
	      strstr(why, "(medians of 4 rounds; one / helped per round 1.00)"),
	      "even: helpers (%s)", why);
	/* a round whose helped time is 0 (never measured) counts as even */
	double z[1] = { 0 }, w[1] = { 5 };
	CHECK(!ft_ring_maps_rule(w, z, 1, why, sizeof(why)), "no helped time: helpers (%s)", why);
	/* no round at all: helpers, the default */
	CHECK(!ft_ring_maps_rule(w, z, 0, why, sizeof(why)) && strcmp(why, "not timed") == 0,
	      "no round: helpers (%s)", why);
}

int main(void)
{
	test_rule();
	CHECK_DONE();
}
