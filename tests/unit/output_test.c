/* output: exact text for text/folded/top, the format names, write errors,
 * the name-cleaning rule and the comm rule (pprof, speedscope, svg and
 * --per-cgroup's cgroups: output_rich_test.c). */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "output/output.h"
#include "tests/unit/check.h"
#include "tests/unit/output_fixture.h"

static const char *u1[] = { "malloc", "a;b\nc" };

static void test_parse(void)
{
	enum out_format f = OUT_TEXT;
	CHECK(out_format_parse("folded", &f) == 0 && f == OUT_FOLDED, "parse folded");
	CHECK(out_format_parse("top", &f) == 0 && f == OUT_TOP, "parse top");
	CHECK(out_format_parse("pprof", &f) == 0 && f == OUT_PPROF, "parse pprof");
	CHECK(out_format_parse("speedscope", &f) == 0 && f == OUT_SPEEDSCOPE, "parse speedscope");
	CHECK(out_format_parse("svg", &f) == 0 && f == OUT_SVG, "parse svg");
	CHECK(out_format_parse("text", &f) == 0 && f == OUT_TEXT, "parse text");
	CHECK(out_format_parse("Text", &f) == -EINVAL, "parse is exact");
	CHECK(out_format_parse("", &f) == -EINVAL, "parse empty");
	char buf[8];
	CHECK_STR(out_folded_frame("a;b\nc\rd", buf, sizeof(buf)), "a_b_c_d", "folded frame");
	CHECK_STR(out_folded_frame("abcdefghij", buf, sizeof(buf)), "abcdefg", "folded truncates");
	CHECK_STR(out_folded_frame(NULL, buf, sizeof(buf)), "[unknow", "folded NULL");
}

static void test_text(void)
{
	struct out_options o = { .format = OUT_TEXT };
	check_out(&o, stacks, 2, NULL,
		  "    __kmalloc\n    do_sys_open\n    entry_SYSCALL_64\n        2\n\n"
		  "    kfree\n    sys_close\n    main\n    __libc_start_main\n        7\n\n",
		  "text plain");
	o.delimiter = true;
	o.per_process = true;
	o.event_frame = true;
	o.event_names = ev_names;
	o.nevents = 2;
	o.event_in_stack = ev_in;
	check_out(&o, stacks, 2, NULL,
		  "    __kmalloc\n    do_sys_open\n    entry_SYSCALL_64\n        2\n\n"
		  "    [t:syscalls:sys_enter_read]\n    kfree\n    sys_close\n    --\n"
		  "    main\n    __libc_start_main\n    -                bash (185)\n        7\n\n",
		  "text -d -P event frame");
	o.mode = OUT_MODE_OFFCPU;
	o.event_frame = false;
	check_out(&o, stacks + 1, 1, NULL,
		  "    kfree\n    sys_close\n    --\n    main\n    __libc_start_main\n"
		  "    -                bash (185)\n        70\n\n",
		  "text offcpu prints weight");
	o.mode = OUT_MODE_PROFILE;
	check_out(&o, stacks, 0, NULL, "", "text empty");
}

static void test_folded(void)
{
	struct out_options o = { .format = OUT_FOLDED };
	check_out(&o, stacks, 2, NULL,
		  "entry_SYSCALL_64;do_sys_open;__kmalloc 2\n"
		  "__libc_start_main;main;sys_close;kfree 7\n",
		  "folded plain");
	o.delimiter = true;
	o.annotate = true;
	o.show_comm = true;
	o.event_frame = true;
	o.event_names = ev_names;
	o.nevents = 2;
	o.event_in_stack = ev_in;
	check_out(&o, stacks, 2, NULL,
		  "[unknown];entry_SYSCALL_64_[k];do_sys_open_[k];__kmalloc_[k] 2\n"
		  "bash;__libc_start_main;main;-;sys_close_[k];kfree_[k];"
		  "[t:syscalls:sys_enter_read] 7\n",
		  "folded -d -a comm event");
	struct agg_named_stack u = { .comm = "a;b", .frames = u1, .nuframes = 2, .count = 3,
				     .weight = 99 };
	o.mode = OUT_MODE_OFFCPU;
	check_out(&o, &u, 1, NULL, "a_b;a_b\\x0ac;malloc 99\n", "folded: ; replaced, newline escaped as \\x0a, offcpu weight");
	o.event_frame = false;
	const char *nul[] = { NULL, "x" };
	struct agg_named_stack un = { .frames = nul, .nkframes = 1, .nuframes = 1, .count = 1 };
	o.mode = OUT_MODE_PROFILE;
	o.show_comm = false;
	check_out(&o, &un, 1, NULL, "x;-;[unknown]_[k] 1\n", "folded NULL frame");
}

static void test_top(void)
{
	struct out_options o = { .format = OUT_TOP, .delimiter = true };
	struct agg_named_stats st = { .stacks_before = 10, .stacks_after = 2,
				      .count_before = 12, .count_after = 9 };
	struct out_totals t = { .named = &st, .event_label = "kmalloc" };
	check_out(&o, stacks, 2, &t,
		  "This path seen 2 times:\n __kmalloc\n do_sys_open\n entry_SYSCALL_64\n\n"
		  "This path seen 7 times:\n kfree\n sys_close\n --\n main\n __libc_start_main\n\n"
		  "Num stacks before filtering: 10\n"
		  "Num stacks after filtering: 2\n"
		  "Total kmallocs (before filtering): 12\n"
		  "Total kmallocs (after filtering): 9\n"
		  "The filter stacks have 75.0% of the kmallocs\n",
		  "top with totals");
	check_out(&o, stacks, 1, NULL,
		  "This path seen 2 times:\n __kmalloc\n do_sys_open\n entry_SYSCALL_64\n\n"
		  "Num stacks before filtering: 1\n"
		  "Num stacks after filtering: 1\n"
		  "Total events (before filtering): 2\n"
		  "Total events (after filtering): 2\n"
		  "The filter stacks have 100.0% of the events\n",
		  "top without totals");
	check_out(&o, stacks, 0, NULL,
		  "Num stacks before filtering: 0\n"
		  "Num stacks after filtering: 0\n"
		  "Total events (before filtering): 0\n"
		  "Total events (after filtering): 0\n"
		  "The filter stacks have 0.0% of the events\n",
		  "top empty");
}

static void test_errors(void)
{
	struct out_options o = { .format = OUT_TEXT };
	FILE *f = fopen("/dev/full", "w");
	if (!f) {
		SKIP("no /dev/full", "write error is -EIO");
		return;
	}
	CHECK_EQ_U64(out_write(f, &o, stacks, 2, NULL), (uint64_t)-EIO, "write error is -EIO");
	fclose(f);
	CHECK_EQ_U64(out_write(NULL, &o, stacks, 2, NULL), (uint64_t)-EINVAL, "NULL file");
	int fd[2];
	if (pipe(fd) == 0) {
		signal(SIGPIPE, SIG_IGN);
		close(fd[0]);
		f = fdopen(fd[1], "w");
		CHECK(f && out_write(f, &o, stacks, 2, NULL) == -EPIPE, "reader gone is -EPIPE");
		if (f)
			fclose(f);
		else
			close(fd[1]);
	}
}

/* Issue 15: one cleaning rule (every format goes through out_path_build),
 * comm-PID with -P, annotations never doubled, period weighting. */
static void test_names(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "plain", NULL },
		{ "caf\xc3\xa9", NULL },
		{ "bad\xff", "bad\xef\xbf\xbd" },
		{ "cut\xc3", "cut\xef\xbf\xbd" },
		{ "sur\xed\xa0\x80x", "sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx" },
		{ "over\xc0\xaf", "over\xef\xbf\xbd\xef\xbf\xbd" },
		{ "big\xf4\x90\x80\x80", "big\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "f4ok\xf4\x8f\xbf\xbd", NULL },
		{ "nc\xef\xbf\xbe", "nc\xef\xbf\xbd" },
		{ "esc\x1b[0m", "esc\\x1b[0m" },
		{ "c1\xc2\x85", "c1\\x85" },
		{ "del\x7f", "del\\x7f" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int err = 0;
		char *got = out_clean_name(cases[i].in, &err);
		if (!cases[i].want)
			CHECK(!got && !err, "clean: \"%s\" needs no change", cases[i].in);
		else
			CHECK_STR(got, cases[i].want, "clean name");
		free(got);
	}
	static const char *fr[] = { "inl_[i]", "k2", "bad\xfe" };
	struct agg_named_stack s = { .comm = "my comm", .pid = 77, .frames = fr, .nkframes = 2,
				     .nuframes = 1, .count = 2, .weight = 500 };
	struct out_options o = { .format = OUT_FOLDED, .show_comm = true, .per_process = true,
				 .comm_pid = true, .annotate = true };
	check_out(&o, &s, 1, NULL, "my_comm-77;bad\xef\xbf\xbd;k2_[k];inl_[i] 2\n",
		  "folded -P -a: comm-PID, blanks as _, _[i] not annotated again, UTF-8 cleaned");
	static const bool weighted[] = { true };
	static const char *const ev[] = { "page-faults" };
	o.event_weighted = weighted;
	o.event_names = ev;
	o.nevents = 1;
	o.comm_pid = false;
	check_out(&o, &s, 1, NULL, "my_comm;bad\xef\xbf\xbd;k2_[k];inl_[i] 500\n",
		  "folded: a weighted event prints its summed period");
	o.format = OUT_TEXT;
	o.per_process = true;
	check_out(&o, &s, 1, NULL, "    inl_[i]\n    k2\n    bad\xef\xbf\xbd\n"
		  "    -                my comm (77)\n        500\n\n", "text: same names");
}

/* The one comm rule record, report and the fleet report share. */
static void test_comm_rule(void)
{
	static const enum out_format shown[] = { OUT_FOLDED, OUT_PPROF, OUT_SPEEDSCOPE, OUT_SVG };
	for (size_t i = 0; i < sizeof(shown) / sizeof(*shown); i++)
		CHECK(out_format_shows_comm(shown[i]) && out_needs_comm(shown[i], false),
		      "format %d shows the comm", (int)shown[i]);
	CHECK(!out_format_shows_comm(OUT_TEXT) && !out_format_shows_comm(OUT_TOP),
	      "text and top show no comm of their own");
	CHECK(!out_needs_comm(OUT_TEXT, false) && out_needs_comm(OUT_TEXT, true) &&
	      !out_needs_comm(OUT_TOP, false) && out_needs_comm(OUT_TOP, true),
	      "text and top need it only per process (-P)");
}

int main(void)
{
	test_comm_rule();
	test_parse();
	test_text();
	test_folded();
	test_top();
	test_errors();
	test_names();
	CHECK_DONE();
}
