/* Command-line parsing: doc/DESIGN.md section 1. Every value is checked
 * before anything is created in the kernel, so bad usage exits 2.
 * This file: the option table, the subcommand's place, getopt's loop and
 * the combinations refused; each option's value is parsed and checked in
 * option_values.c, apart because that is a long list of its own, one case
 * per option, that grows with every option while this loop does not. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options_internal.h"

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "through", required_argument, NULL, OPT_THROUGH },
	{ "max-probes", required_argument, NULL, OPT_MAX_PROBES },
	{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "mechanism", required_argument, NULL, OPT_MECHANISM },
	{ "debug", no_argument, NULL, OPT_DEBUG },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "debuginfod", no_argument, NULL, OPT_DEBUGINFOD },
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
	{ "build-ids", no_argument, NULL, OPT_BUILD_IDS },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "period", required_argument, NULL, OPT_PERIOD },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "min-total", required_argument, NULL, OPT_MIN_TOTAL },
	{ "keep-root", no_argument, NULL, OPT_KEEP_ROOT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "sink", required_argument, NULL, OPT_SINK },
	{ "sink-buffer", required_argument, NULL, OPT_SINK_BUFFER },
	{ "host-name", required_argument, NULL, OPT_HOST_NAME },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "per-cgroup", no_argument, NULL, OPT_PER_CGROUP },
	{ "help", no_argument, NULL, OPT_HELP },
	/* report */
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static const char shorts[] = "+e:l:p:L:c:C:UKfo:dasvPm:M:t:x:ri:TD:F:Iukh";

/* Index of the first word that is neither an option nor an option's value,
 * found with getopt itself (clusters, joined values, --opt=VAL and long-name
 * prefixes read the same as in the real parse), or argc when there is none
 * before "--". */
static int first_word(int argc, char **argv)
{
	optind = 0; /* glibc: start afresh */
	opterr = 0;
	for (;;) {
		int at = optind ? optind : 1;
		if (getopt_long(argc, argv, shorts, long_opts, NULL) != -1)
			continue;
		if (optind == at + 1 && strcmp(argv[at], "--") == 0)
			return argc; /* the rest is the command to run */
		return optind;
	}
}

/* The subcommand is the first word that is not an option or an option's
 * value, so global options may come before it (ftstack --debug cleanup) while
 * -e check or -o report stay values. It is moved to argv[1], where the rest
 * of the parse expects it. Returns the index of the first word after it. */
static int parse_subcommand(int argc, char **argv, struct ft_options *o)
{
	static const struct { const char *name; enum ft_cmd cmd; } cmds[] = {
		{ "count", FT_COUNT }, { "profile", FT_PROFILE }, { "offcpu", FT_OFFCPU },
		{ "report", FT_REPORT }, { "check", FT_CHECK }, { "cleanup", FT_CLEANUP },
	};
	o->cmd = FT_COUNT;
	int w = first_word(argc, argv);
	if (w >= argc)
		return 1;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[w], cmds[i].name) != 0)
			continue;
		o->cmd = cmds[i].cmd;
		char *word = argv[w];
		memmove(&argv[2], &argv[1], (size_t)(w - 1) * sizeof(*argv));
		argv[1] = word;
		return 2;
	}
	return 1; /* a positional event of count mode */
}

static void set_defaults(struct ft_options *o)
{
	memset(o, 0, sizeof(*o));
	o->format = OUT_TEXT;
	o->state = -1;
	o->min_block_us = 1;
	o->backend = FT_BACKEND_PERF;
	o->sink_buffer = 64u << 20;
}

/* Combinations that make no sense, refused before anything is opened. */
static int check_combinations(struct ft_options *o)
{
	if (o->user_only && o->kernel_only)
		return bad("-U (user stacks only) and -K (kernel stacks only) exclude each other; give one");
	if (o->cmd == FT_COUNT && o->nspecs == 0)
		return bad("count needs an event: -e t:SUBSYS:EVENT (see ftstack --help)");
	if (o->cmd != FT_COUNT && o->cmd != FT_REPORT && o->nspecs > 0)
		return bad("-e is for count mode; %s takes no events",
			   o->cmd == FT_PROFILE ? "profile" : "this subcommand");
	if (o->cmd == FT_OFFCPU) {
		if (o->user_threads && o->kernel_threads)
			return bad("-u (user threads only) and -k (kernel threads only) exclude each other");
		if (o->user_only && o->kernel_threads)
			return bad("Displaying user stacks for kernel threads doesn't make sense.");
		if (o->max_block_us && o->max_block_us < o->min_block_us)
			return bad("--max-block must not be below --min-block");
	}
	if (o->cmd == FT_REPORT && o->nreport_files == 0)
		return bad("report needs a FILE (or - for standard input)");
	if (o->diff && (o->cmd != FT_REPORT || o->nreport_files != 2))
		return bad("--diff compares two files: ftstack report --diff A B");
	if ((o->diff || o->input_format) && o->cmd != FT_REPORT)
		return bad("--diff and --input-format are for ftstack report");
	if (o->weight != FT_WEIGHT_AUTO && o->cmd != FT_REPORT)
		return bad("--weight is for ftstack report (a live run counts events)");
	if (o->sink && (o->cmd == FT_REPORT || o->cmd == FT_CHECK || o->cmd == FT_CLEANUP))
		return bad("--sink is for count, profile and offcpu");
	if ((o->sink_buffer_given || o->host_name) && !o->sink)
		return bad("%s is for --sink clickhouse://HOST/DB (it sets how the rows are sent)",
			   o->host_name ? "--host-name" : "--sink-buffer");
	if ((o->since || o->until || o->host_pattern || o->event_filter || o->mode_filter) &&
	    o->cmd != FT_REPORT)
		return bad("--since, --until, --host, --event and --mode are for ftstack report "
			   "clickhouse://...");
	if (o->freq && o->period_ns)
		return bad("give -F or --period, not both");
	if (o->call_graph_copy && o->backend == FT_BACKEND_FTRACE)
		return bad("--call-graph %s needs --backend perf (ftrace's user stacks are the "
			   "kernel's own walk)", o->call_graph_dwarf ? "dwarf" : "copy");
	if (o->keep_root && !o->command)
		return bad("--keep-root is for the command of -c or --");
	if (o->force && !o->output)
		return bad("--force is for -o FILE (it writes through a symlink at FILE)");
	if ((o->npids || o->ntids) && o->command)
		return bad("-p/-L and a command (-c or --) exclude each other");
	if ((o->cgroup || o->per_cgroup) && (o->cmd == FT_REPORT || o->backend == FT_BACKEND_FTRACE))
		return bad("%s needs a live run with --backend perf (the cgroup comes with perf's samples)",
			   o->cgroup ? "--cgroup" : "--per-cgroup");
	if (o->cgroup && (o->npids || o->ntids || o->command))
		return bad("--cgroup traces every task of the cgroup; -p/-L/-c exclude it");
	if (o->cmd == FT_PROFILE && !o->freq && !o->period_ns)
		o->freq = FT_PROFILE_FREQ_DEFAULT;
	if (o->cmd == FT_PROFILE || o->cmd == FT_OFFCPU)
		o->per_process = true;
	return 0;
}

/* Everything after "--" is the command to run. */
static int take_command(char **words, struct ft_options *o)
{
	if (!words[0])
		return bad("nothing after --: give the command to run");
	if (o->command)
		return bad("give the command once (-c or --)");
	o->command = words;
	return 0;
}

static int report_bad_option(char **argv)
{
	const char *w = argv[optind - 1];
	if (optopt && strchr(shorts, optopt) && w[0] == '-' && w[1] == optopt)
		return bad("option -%s needs a value (see ftstack --help)",
			   (char[]){ (char)optopt, 0 });
	return bad("unknown option '%s' (see ftstack --help)", w);
}

int ft_options_parse(int argc, char **argv, struct ft_options *o)
{
	set_defaults(o);
	int first = parse_subcommand(argc, argv, o);
	/* getopt starts after the subcommand; argv[first-1] is its argv[0] */
	int gargc = argc - first + 1;
	char **gargv = argv + first - 1;
	char *saved0 = gargv[0];
	gargv[0] = argv[0];
	optind = 0; /* glibc: start afresh after first_word() */
	opterr = 0;
	int c, ret = 0;
	while (ret == 0) {
		int at = optind ? optind : 1;
		if (at >= gargc)
			break;
		c = getopt_long(gargc, gargv, shorts, long_opts, NULL);
		if (c == -1 && optind == at + 1 && strcmp(gargv[at], "--") == 0) {
			/* getopt's own "--", so "-o --" stays -o's value */
			ret = take_command(gargv + optind, o);
			break;
		}
		if (c == -1) {
			/* a positional word: take it and go on parsing options after it */
			ret = ft_option_positional(gargv[optind++], o);
			continue;
		}
		if (c == 'h' || c == OPT_HELP) {
			ft_usage(stdout);
			ret = 1;
		} else if (c == OPT_VERSION) {
			printf("ftstack %s\n", FTSTACK_VERSION);
			ret = 1;
		} else if (c == '?' || c == ':') {
			ret = report_bad_option(gargv);
		} else {
			ret = ft_option_apply(c, optarg, o);
		}
	}
	gargv[0] = saved0;
	if (ret)
		return ret;
	return check_combinations(o);
}

void ft_options_free(struct ft_options *o)
{
	for (int i = 0; i < o->nowned; i++)
		free(o->owned[i]);
	o->nowned = 0;
}
