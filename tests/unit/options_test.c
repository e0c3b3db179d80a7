/* Unit tests of the command line: where the subcommand may stand (after
 * global options, never as an option's value), and that the words around it
 * keep their meaning. Touches no kernel state. */
#include "collector/collector.h"
#include "tests/unit/check.h"

#include <errno.h>

#define ARGS(...) ((char *[]){ "ftstack", __VA_ARGS__, NULL })
#define NARGS(a) ((int)(sizeof(a) / sizeof(*(a))) - 1)

static struct ft_options o;

/* parse(argv): ft_options_parse on a fresh, writable argv */
#define PARSE(...) ({ \
	char **a_ = ARGS(__VA_ARGS__); \
	ft_options_free(&o); \
	ft_options_parse(NARGS(ARGS(__VA_ARGS__)), a_, &o); \
})

static void test_subcommand_after_options(void)
{
	CHECK_EQ_U64(PARSE("--debug", "cleanup"), 0, "--debug cleanup parses");
	CHECK(o.cmd == FT_CLEANUP && o.debug && o.nspecs == 0,
	      "--debug cleanup: cleanup with debug, no event named cleanup");
	CHECK_EQ_U64(PARSE("--debug", "check"), 0, "--debug check parses");
	CHECK(o.cmd == FT_CHECK && o.debug, "--debug check: check");
	CHECK_EQ_U64(PARSE("-K", "--format", "folded", "profile", "5"), 0, "options before profile");
	CHECK(o.cmd == FT_PROFILE && o.kernel_only && o.format == OUT_FOLDED && o.duration == 5,
	      "-K --format folded profile 5: profile, folded, 5 s");
	CHECK_EQ_U64(PARSE("--format=folded", "offcpu"), 0, "--opt=VAL before offcpu");
	CHECK(o.cmd == FT_OFFCPU && o.format == OUT_FOLDED, "--format=folded offcpu: offcpu");
	CHECK_EQ_U64(PARSE("--form", "folded", "profile"), 0, "a long-name prefix before profile");
	CHECK(o.cmd == FT_PROFILE && o.format == OUT_FOLDED, "--form folded profile: profile");
	CHECK_EQ_U64(PARSE("-Uo", "out", "profile"), 0, "a cluster whose value is the next word");
	CHECK(o.cmd == FT_PROFILE && o.user_only && o.output && !strcmp(o.output, "out"),
	      "-Uo out profile: profile, -o out");
	CHECK_EQ_U64(PARSE("--debug", "report", "--diff", "a", "b"), 0, "--debug report --diff");
	CHECK(o.cmd == FT_REPORT && o.diff && o.nreport_files == 2 &&
	      !strcmp(o.report_files[0], "a") && !strcmp(o.report_files[1], "b"),
	      "--debug report --diff a b: both files");
	CHECK_EQ_U64(PARSE("-o", "--", "report", "f"), 0, "-o -- report f");
	CHECK(o.cmd == FT_REPORT && !strcmp(o.output, "--") && o.nreport_files == 1,
	      "-o --: -- is -o's value, report the subcommand");
	CHECK_EQ_U64(PARSE("check"), 0, "check alone");
	CHECK(o.cmd == FT_CHECK, "check alone: check");
	CHECK_EQ_U64(PARSE("profile", "-F", "99"), 0, "options after the subcommand");
	CHECK(o.cmd == FT_PROFILE && o.freq == 99, "profile -F 99");
	CHECK(PARSE("profile", "--no-demangle") == 0 && o.no_demangle, "--no-demangle");
	CHECK(PARSE("profile") == 0 && !o.no_demangle, "demangling by default");
	/* names for stripped binaries (issue 31) */
	CHECK(PARSE("profile") == 0 && o.debuginfod == FT_DEBUGINFOD_ENV && !o.build_ids &&
	      !o.debug_dir, "debuginfod from the environment, no --build-ids, default debug dir");
	CHECK(PARSE("profile", "--no-debuginfod", "--debuginfod") == 0 &&
	      o.debuginfod == FT_DEBUGINFOD_ON, "--debuginfod: the last one given");
	CHECK(PARSE("report", "--debuginfod", "--no-debuginfod", "f") == 0 &&
	      o.debuginfod == FT_DEBUGINFOD_OFF, "report --no-debuginfod");
	CHECK(PARSE("profile", "--build-ids", "--debug-dir", "/d") == 0 && o.build_ids &&
	      o.debug_dir && !strcmp(o.debug_dir, "/d"), "--build-ids --debug-dir /d");
	CHECK(PARSE("profile", "--debug-dir", "") == -EINVAL, "--debug-dir '': refused");
}

static void test_values_are_not_subcommands(void)
{
	CHECK_EQ_U64(PARSE("-e", "cleanup"), 0, "-e cleanup parses");
	CHECK(o.cmd == FT_COUNT && o.nspecs == 1 && !strcmp(o.specs[0], "cleanup"),
	      "-e cleanup: count of an event named cleanup");
	CHECK_EQ_U64(PARSE("-o", "check", "-e", "x"), 0, "-o check -e x parses");
	CHECK(o.cmd == FT_COUNT && !strcmp(o.output, "check"), "-o check: the output file");
	CHECK_EQ_U64(PARSE("-ocheck", "-e", "x"), 0, "-ocheck -e x parses");
	CHECK(o.cmd == FT_COUNT && !strcmp(o.output, "check"), "-ocheck: the output file");
	CHECK_EQ_U64(PARSE("--format", "text", "-x", "report", "-e", "x"), 0, "-x report parses");
	CHECK(o.cmd == FT_COUNT && o.nexcludes == 1 && !strcmp(o.excludes[0], "report"),
	      "-x report: an exclude pattern");
	/* 70 patterns in one -x: 63 kept, the list stays NULL-terminated for agg_filter */
	char many[256] = "a";
	for (int i = 1; i < 70; i++)
		strcat(many, ",a");
	CHECK_EQ_U64(PARSE("-x", many, "-e", "x"), 0, "-x with 70 patterns parses");
	CHECK(o.nexcludes == 63 && o.excludes[63] == NULL, "-x: 63 kept (%d), NULL after them",
	      o.nexcludes);
	CHECK_EQ_U64(PARSE("-c", "check", "-e", "x"), 0, "-c check -e x parses");
	CHECK(o.cmd == FT_COUNT && o.command && !strcmp(o.command[0], "check"),
	      "-c check: the command to run");
	CHECK_EQ_U64(PARSE("-e", "x", "--", "check"), 0, "-e x -- check parses");
	CHECK(o.cmd == FT_COUNT && o.command && !strcmp(o.command[0], "check"),
	      "-- check: the command to run");
	CHECK_EQ_U64(PARSE("-e", "x", "5", "check"), 0, "-e x 5 check parses");
	CHECK(o.cmd == FT_COUNT && o.duration == 5 && o.nspecs == 2 &&
	      !strcmp(o.specs[1], "check"), "only the first word can be the subcommand");
	CHECK_EQ_U64(PARSE("--through", "profile", "-e", "x"), 0, "--through profile parses");
	CHECK(o.cmd == FT_COUNT && !strcmp(o.through, "profile"), "--through profile: a function");
}

static void test_errors(void)
{
	CHECK(PARSE("--bogus", "check") == -EINVAL, "an unknown option before check is refused");
	/* numbers with a minimum (and --buffer-size's maximum): each bound taken, one past refused */
	static const struct {
		char *opt, *lo, *below, *above;
	} num[] = {
		{ "-t", "1", "0", NULL }, { "-F", "1", "0", NULL },
		{ "--period", "10000", "9999", NULL }, { "--buffer-size", "8", "7", "1048577" },
		{ "--max-stacks", "1", "0", NULL }, { "--max-probes", "1", "0", NULL },
	};
	for (size_t i = 0; i < sizeof(num) / sizeof(*num); i++) {
		CHECK(PARSE(num[i].opt, num[i].lo, "-e", "x") == 0, "%s %s: the least taken",
		      num[i].opt, num[i].lo);
		CHECK(PARSE(num[i].opt, num[i].below, "-e", "x") == -EINVAL, "%s %s: refused",
		      num[i].opt, num[i].below);
		if (num[i].above)
			CHECK(PARSE(num[i].opt, num[i].above, "-e", "x") == -EINVAL, "%s %s: refused",
			      num[i].opt, num[i].above);
	}
	CHECK(PARSE("--buffer-size", "1048576", "-e", "x") == 0 && o.buffer_kb == 1048576,
	      "--buffer-size 1048576: the most taken");
	CHECK(PARSE("-e", "x", "check") == -EINVAL, "check takes no event");
	CHECK(PARSE("--debug", "profile", "-e", "x") == -EINVAL, "profile takes no event");
	CHECK(PARSE("-e", "x", "--") == -EINVAL, "nothing after -- is refused");
	CHECK(PARSE("-e", "x", "-c", "a", "--", "b") == -EINVAL, "-c and -- together are refused");
	CHECK(PARSE("report", "--weight", "samples", "f") == 0 && o.weight == FT_WEIGHT_SAMPLES,
	      "report --weight samples");
	CHECK(PARSE("report", "--weight", "period", "f") == 0 && o.weight == FT_WEIGHT_PERIOD,
	      "report --weight period");
	CHECK(PARSE("report", "f") == 0 && o.weight == FT_WEIGHT_AUTO, "report weighs by default");
	CHECK(PARSE("report", "--weight", "cycles", "f") == -EINVAL, "--weight cycles is refused");
	CHECK(PARSE("-e", "x", "--weight", "period") == -EINVAL, "--weight is report's");
	CHECK(PARSE("-e", "x", "--sink-buffer", "8") == -EINVAL, "--sink-buffer needs --sink");
	CHECK(PARSE("-e", "x", "--host-name", "web1") == -EINVAL, "--host-name needs --sink");
	CHECK(PARSE("-e", "x", "--sink", "clickhouse://h/db", "--sink-buffer", "8", "--host-name",
		    "web1") == 0 && o.sink_buffer == 8u << 20 && !strcmp(o.host_name, "web1"),
	      "--sink-buffer and --host-name with --sink");
}

static void test_call_graph(void)
{
	CHECK(PARSE("-e", "x", "--call-graph", "copy") == 0 && o.call_graph_copy &&
	      o.copy_size == FT_COPY_SIZE_DEFAULT, "--call-graph copy: %u bytes", o.copy_size);
	CHECK(PARSE("-e", "x", "--call-graph", "copy,8192") == 0 && o.copy_size == 8192,
	      "--call-graph copy,8192");
	CHECK(PARSE("-e", "x", "--call-graph", "copy,8192", "--call-graph", "fp") == 0 &&
	      !o.call_graph_copy, "the last --call-graph wins");
	CHECK(PARSE("-e", "x", "--call-graph", "copy,100") == -EINVAL, "copy,100: not a multiple of 8");
	CHECK(PARSE("-e", "x", "--call-graph", "copy,65536") == -EINVAL, "copy,65536: too big");
	CHECK(PARSE("-e", "x", "--call-graph", "copy,") == -EINVAL, "copy,: no size");
	CHECK(PARSE("-e", "x", "--call-graph", "copyx") == -EINVAL, "copyx is not copy");
	CHECK(PARSE("-e", "x", "--call-graph", "dwarf") == 0 && o.call_graph_dwarf && o.call_graph_copy &&
	      o.copy_size == FT_DWARF_SIZE_DEFAULT, "--call-graph dwarf: a %u-byte copy", o.copy_size);
	CHECK(PARSE("-e", "x", "--call-graph", "dwarf,1024") == 0 && o.call_graph_dwarf &&
	      o.copy_size == 1024, "--call-graph dwarf,1024");
	CHECK(PARSE("-e", "x", "--call-graph", "dwarf", "--call-graph", "copy") == 0 &&
	      !o.call_graph_dwarf && o.copy_size == FT_COPY_SIZE_DEFAULT, "copy after dwarf: copy");
	CHECK(PARSE("-e", "x", "--call-graph", "dwarf,12") == -EINVAL, "dwarf,12: too small");
	CHECK(PARSE("-e", "x", "--call-graph", "lbr") == -EINVAL, "lbr: not a mode");
	CHECK(PARSE("-e", "x", "--backend", "ftrace", "--call-graph", "copy") == -EINVAL,
	      "copy with --backend ftrace is refused");
}

static void test_cgroup(void)
{
	CHECK(PARSE("profile", "--cgroup", "/system.slice/x.service") == 0 &&
	      !strcmp(o.cgroup, "/system.slice/x.service") && !o.per_cgroup, "--cgroup PATH");
	CHECK(PARSE("profile", "--per-cgroup") == 0 && o.per_cgroup && !o.cgroup, "--per-cgroup");
	CHECK(PARSE("-e", "x", "--cgroup", "a", "--per-cgroup") == 0 && o.per_cgroup &&
	      !strcmp(o.cgroup, "a"), "--cgroup with --per-cgroup");
	CHECK(PARSE("profile", "--cgroup", "") == -EINVAL, "--cgroup '' refused");
	CHECK(PARSE("profile", "--cgroup", "a", "-c", "true") == -EINVAL, "--cgroup with -c refused");
	CHECK(PARSE("profile", "--cgroup", "a", "-p", "1") == -EINVAL, "--cgroup with -p refused");
	CHECK(PARSE("profile", "--per-cgroup", "-c", "true") == 0, "--per-cgroup with -c");
	CHECK(PARSE("-e", "x", "--backend", "ftrace", "--per-cgroup") == -EINVAL,
	      "--per-cgroup with --backend ftrace refused");
	CHECK(PARSE("report", "--cgroup", "a", "f") == -EINVAL, "--cgroup with report refused");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	test_cgroup();
	test_subcommand_after_options();
	test_values_are_not_subcommands();
	test_errors();
	test_call_graph();
	ft_options_free(&o);
	CHECK_DONE();
}
