/* collector/ustack.c: the per-host rule that picks the default's user-stack
 * method, what --call-graph asks for, and the summary's line for stacks cut
 * at the copy's end. Pure: nothing is timed here (the measurement itself:
 * perfev_test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector/result.h"
#include "collector/session.h"
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"

static void test_rule(void)
{
	char why[160];
	/* the verdict is perfev_ustack_judge's (perfev_test tests it); the
	 * rule follows it and says the figures, never a negative one */
	struct perfev_ustack_cost slow = { .fp_ns = 1370, .copy_ns = 550, .fp_measured = true,
					   .copy_measured = true, .verdict = PERFEV_USTACK_COPY,
					   .frames = 16, .fp_bytes = 1024, .copy_bytes = 2048 };
	CHECK(ft_ustack_rule(&slow, why, sizeof(why)) == FT_USTACK_COPY &&
	      strcmp(why, "fp (16-frame walk + 1024-byte copy) 1.37 us, 2048-byte copy 0.55 us: "
		     "copy measurably cheaper") == 0,
	      "slow reads of user memory: copy (%s)", why);
	struct perfev_ustack_cost fast = { .fp_ns = 150, .copy_ns = 400, .fp_measured = true,
					   .copy_measured = true, .verdict = PERFEV_USTACK_FP,
					   .frames = 16, .fp_bytes = 1024, .copy_bytes = 2048 };
	CHECK(ft_ustack_rule(&fast, why, sizeof(why)) == FT_USTACK_FP &&
	      strstr(why, ": fp measurably cheaper"), "a cheap walk: fp (%s)", why);
	/* too small to tell: copy, the cheaper-or-equal one whose cut stacks
	 * are counted (the old rule took fp here) */
	struct perfev_ustack_cost same = { .verdict = PERFEV_USTACK_TOO_SMALL, .frames = 16,
					   .fp_bytes = 1024, .copy_bytes = 2048 };
	CHECK(ft_ustack_rule(&same, why, sizeof(why)) == FT_USTACK_COPY &&
	      strcmp(why, "fp (16-frame walk + 1024-byte copy) too small to measure here, 2048-byte "
		     "copy too small to measure here: within the noise: copy (its cut stacks are "
		     "counted)") == 0,
	      "both within the noise: copy (%s)", why);
	/* ftstack check's line ("copy (WHY); saved for this boot") holds the
	 * longest reason whole (ft_ustack_check itself writes /run: not here) */
	struct tfs_check_item it;
	CHECK(strlen("copy (); saved for this boot") + strlen(why) < sizeof(it.detail),
	      "check's line holds the reason whole (%zu bytes of %zu)", strlen(why) + 28,
	      sizeof(it.detail));
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
		/* the frame walks take bp, sp, ip, r10, r11; CFI for every frame
		 * all 17 (x86-64 perf register numbers) */
		CHECK(s.uregs_mask == (cases[i].dwarf ? 0xff01ffULL : 0xc01c0ULL),
		      "--call-graph %s: the user registers taken (%#llx)", cases[i].arg,
		      (unsigned long long)s.uregs_mask);
	}
}

/* The summary's line for SM's cut stacks (stderr captured), or "". */
static const char *cut_line(const struct ft_summary *sm)
{
	static char buf[1024];
	struct agg_named_stats st;
	memset(&st, 0, sizeof(st));
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	buf[0] = '\0';
	if (!f || saved < 0)
		return buf;
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	ft_result_summary(sm, &st);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	char line[512];
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "user stacks reached"))
			snprintf(buf, sizeof(buf), "%s", line);
	fclose(f);
	return buf;
}

/* stacks cut at the copy's end are counted, and the hint names what keeps
 * them whole: copy's stacks, --call-graph fp (the kernel walks them) */
static void test_cut_summary(void)
{
	struct ft_summary sm = { .live = true, .counted = 10, .stack_cut = 7, .copy_size = 2048,
				 .ustack = "copy", .full_cpu = -1 };
	CHECK_STR(cut_line(&sm), "ftstack: 7 user stacks reached the end of the 2048-byte stack "
		  "copy and may be cut (user stacks: copy; --call-graph copy,SIZE copies more; "
		  "--call-graph fp walks them whole)\n", "copy: cut stacks counted, --call-graph fp named");
	sm.ustack = "dwarf", sm.copy_size = 8192;
	CHECK(strstr(cut_line(&sm), "7 user stacks reached the end of the 8192-byte") &&
	      strstr(cut_line(&sm), "--call-graph dwarf,SIZE copies more"), "dwarf: its own hint");
	sm.stack_cut = 0;
	CHECK_STR(cut_line(&sm), "", "none cut: no line");
}

int main(void)
{
	test_cut_summary();
	test_rule();
	test_asked();
	CHECK_DONE();
}
