/* collector/ustack.c: the per-host rule that picks the default's user-stack
 * method, and what --call-graph asks for. Pure: nothing is timed here (the
 * measurement itself: perfev_test). */
#include <stdlib.h>
#include <string.h>
#include "collector/session.h"
#include "tests/unit/check.h"

static void test_rule(void)
{
	char why[160];
	/* the verdict is perfev_ustack_judge's (perfev_test tests it); the
	 * rule follows it and says the figures, never a negative one */
	struct perfev_ustack_cost slow = { .fp_ns = 40000, .copy_ns = 600, .fp_measured = true,
					   .copy_measured = true, .verdict = PERFEV_USTACK_COPY,
					   .frames = 16 };
	CHECK(ft_ustack_rule(&slow, why, sizeof(why)) == FT_USTACK_COPY &&
	      strcmp(why, "walk of 16 frames 40.00 us, 2048-byte copy 0.60 us: "
		     "the copy < half the walk") == 0,
	      "slow reads of user memory: copy (%s)", why);
	struct perfev_ustack_cost fast = { .fp_ns = 150, .copy_ns = 400, .fp_measured = true,
					   .copy_measured = true, .verdict = PERFEV_USTACK_FP,
					   .frames = 16 };
	CHECK(ft_ustack_rule(&fast, why, sizeof(why)) == FT_USTACK_FP &&
	      strstr(why, ": the copy not measurably < half the walk"), "a cheap walk: fp (%s)", why);
	struct perfev_ustack_cost same = { .verdict = PERFEV_USTACK_TOO_SMALL, .frames = 16 };
	CHECK(ft_ustack_rule(&same, why, sizeof(why)) == FT_USTACK_FP &&
	      strcmp(why, "walk of 16 frames under the noise, 2048-byte copy under the noise: "
		     "within the noise; the walk keeps deeper stacks") == 0,
	      "both within the noise: fp, whose walk keeps deeper stacks (%s)", why);
	CHECK_STR(ft_ustack_name(FT_USTACK_FP), "fp", "name of fp");
	CHECK_STR(ft_ustack_name(FT_USTACK_COPY), "copy", "name of copy");
	CHECK_STR(ft_ustack_name(FT_USTACK_DWARF), "dwarf", "name of dwarf");
}

/* --call-graph given: no timing, the method and copy size asked for */
static void test_asked(void)
{
	static const struct { const char *arg; bool copy, dwarf; uint32_t size;
			      enum ft_ustack_method m; uint32_t want; } cases[] = {
		{ "fp", false, false, 0, FT_USTACK_FP, FT_FIX_SIZE_DEFAULT },
		{ "copy,4096", true, false, 4096, FT_USTACK_COPY, 4096 },
		{ "dwarf", true, true, FT_DWARF_SIZE_DEFAULT, FT_USTACK_DWARF, FT_DWARF_SIZE_DEFAULT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ft_options o = { .call_graph_set = true, .call_graph_copy = cases[i].copy,
					.call_graph_dwarf = cases[i].dwarf, .copy_size = cases[i].size };
		struct ft_session s = { .opt = &o };
		ft_ustack_choose(&s, "/nonexistent");
		CHECK(s.ustack == cases[i].m && s.ucopy_size == cases[i].want &&
		      strncmp(s.ustack_why, "--call-graph ", 13) == 0,
		      "--call-graph %s: %s, %u bytes copied (%s)", cases[i].arg,
		      ft_ustack_name(s.ustack), s.ucopy_size, s.ustack_why);
	}
}

int main(void)
{
	test_rule();
	test_asked();
	CHECK_DONE();
}
