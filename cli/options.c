/* Command-line parsing: doc/DESIGN.md section 1. Every value is checked here, so
 * bad usage exits 2 before anything is created in the kernel. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "host/host.h"
#include "report/report.h"
#include "fleet/fleet.h"

enum {
	OPT_FORMAT = 256, OPT_BACKEND, OPT_CALL_GRAPH, OPT_BUFFER_SIZE, OPT_MAX_STACKS,
	OPT_THROUGH, OPT_DEBUG, OPT_PERIOD, OPT_MIN_BLOCK, OPT_MAX_BLOCK, OPT_STATE,
	OPT_MIN_TOTAL, OPT_HELP, OPT_VERSION, OPT_MAX_PROBES, OPT_INPUT_FORMAT, OPT_DIFF, OPT_MECHANISM,
	OPT_NO_DEMANGLE,
	OPT_WEIGHT, /* report --weight */
	OPT_KEEP_ROOT,
	OPT_FORCE,
	OPT_SINK, OPT_SINK_BUFFER, OPT_HOST_NAME, OPT_SINCE, OPT_UNTIL, OPT_HOST,
	OPT_EVENT, OPT_MODE,
	OPT_CGROUP, OPT_PER_CGROUP,
};

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

/* Says what is wrong with the command line; the caller exits 2. */
#define bad(...) (ft_error(__VA_ARGS__), -EINVAL)

/* Parses a non-negative integer that must fit in uint64; rejects junk. */
static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return bad("%s needs a non-negative integer, got '%s'", opt, s ? s : "");
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad("%s needs a non-negative integer, got '%s'", opt, s);
	*out = v;
	return 0;
}

/* parse_u64 of a value in MIN..MAX (MAX UINT64_MAX: no upper bound); UNIT
 * follows the bounds in the message (" Hz"). */
static int parse_u64_in(const char *opt, const char *s, uint64_t min, uint64_t max,
			const char *unit, uint64_t *out)
{
	uint64_t v;
	if (parse_u64(opt, s, &v) < 0)
		return -EINVAL;
	if (v < min && max == UINT64_MAX)
		return bad("%s needs at least %" PRIu64 "%s, got '%s'", opt, min, unit, s);
	if (v < min || v > max)
		return bad("%s needs %" PRIu64 "..%" PRIu64 "%s, got '%s'", opt, min, max, unit, s);
	*out = v;
	return 0;
}

/* Parses seconds (fractions allowed), > 0. */
static int parse_secs(const char *opt, const char *s, double *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return bad("%s needs a positive number of seconds, got '%s'", opt, s ? s : "");
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e7)
		return bad("%s needs a positive number of seconds, got '%s'", opt, s);
	*out = v;
	return 0;
}

static bool is_number(const char *s)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return false;
	(void)strtod(s, &end);
	return *end == '\0';
}

/* "1,2,5" into ints, each checked (whether they exist is the run's
 * question: task/targets.c). */
static int parse_id_list(const char *opt, const char *s, pid_t *ids, int *n, int max)
{
	char *copy = strdup(s), *save = NULL;
	int ret = 0;
	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if ((ret = parse_u64(opt, tok, &v)) < 0)
			break;
		if (v == 0 || v > INT_MAX || *n >= max) {
			ret = bad("%s: '%s' is not a valid id", opt, tok);
			break;
		}
		ids[(*n)++] = (pid_t)v;
	}
	free(copy);
	return ret;
}

static int parse_cpus(const char *s, struct ft_options *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int max = ncpu < FT_MAX_CPUS ? (int)ncpu : FT_MAX_CPUS;
	const char *item = s;
	int ret = host_cpu_list_parse(s, o->cpus, max, &item);
	o->cpus_set = true;
	if (ret == -EINVAL)
		return bad("-C needs CPU numbers and ranges like 0-1,4, got '%s'", s);
	if (ret == -ERANGE)
		return bad("-C: no CPU %.*s on this machine (it has CPUs 0-%s)", (int)strcspn(item, ","),
			   item, ncpu > 1 ? "N" : "0");
	return ret < 0 ? ret : 0;
}

/* copy[,SIZE] and dwarf[,SIZE]: MODE is the word before the comma. */
static int parse_copy_mode(const char *s, const char *mode, uint32_t dflt, struct ft_options *o)
{
	size_t len = strlen(mode);
	o->call_graph_copy = true;
	o->copy_size = dflt;
	if (s[len] != ',')
		return 0;
	char what[32];
	uint64_t v;
	snprintf(what, sizeof(what), "--call-graph %s,SIZE", mode);
	if (parse_u64(what, s + len + 1, &v) < 0)
		return -EINVAL;
	if (v < 64 || v > 65528 || v % 8)
		return bad("%s: SIZE must be a multiple of 8 in 64..65528, got '%s'", what, s + len + 1);
	o->copy_size = (uint32_t)v;
	return 0;
}

static int parse_call_graph(const char *s, struct ft_options *o)
{
	o->call_graph_copy = o->call_graph_dwarf = false;
	o->call_graph_set = true;
	if (strcmp(s, "fp") == 0)
		return 0;
	if (strncmp(s, "copy", 4) == 0 && (s[4] == '\0' || s[4] == ','))
		return parse_copy_mode(s, "copy", FT_COPY_SIZE_DEFAULT, o);
	if (strncmp(s, "dwarf", 5) == 0 && (s[5] == '\0' || s[5] == ',')) {
		o->call_graph_dwarf = true;
		return parse_copy_mode(s, "dwarf", FT_DWARF_SIZE_DEFAULT, o);
	}
	return bad("--call-graph takes fp, copy[,SIZE] or dwarf[,SIZE], got '%s'", s);
}

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


/* --sink URL: refused here when malformed, so a typo exits 2 at once. */
static int parse_sink(const char *arg, struct ft_options *o)
{
	struct fleet_url u;
	char err[256];
	int ret = fleet_url_parse(arg, NULL, &u, err, sizeof(err));
	explicit_bzero(u.password, sizeof(u.password));
	if (ret < 0)
		return bad("--sink: %s", err);
	o->sink = arg;
	return 0;
}

static int parse_time(const char *opt, const char *arg, const char **out)
{
	int64_t t;
	if (fleet_time_parse(arg, time(NULL), &t) < 0)
		return bad("%s: '%s' is not a time (epoch seconds, YYYY-MM-DD[ HH:MM[:SS]][Z], now, -2h)",
			   opt, arg);
	*out = arg;
	return 0;
}

/* The fleet options: the sink, and report's filters on a clickhouse:// source. */
static int apply_fleet_option(int c, const char *arg, struct ft_options *o)
{
	switch (c) {
	case OPT_SINK: return parse_sink(arg, o);
	case OPT_SINK_BUFFER: {
		char *end;
		errno = 0;
		double mb = strtod(arg, &end);
		if (errno || *end || !(mb > 0) || mb > 1048576)
			return bad("--sink-buffer needs megabytes above 0 (0.5, 64), got '%s'", arg);
		o->sink_buffer = (size_t)(mb * 1048576.0);
		o->sink_buffer_given = true;
		return 0;
	}
	case OPT_HOST_NAME:
		if (!*arg)
			return bad("--host-name needs a name");
		o->host_name = arg;
		return 0;
	case OPT_SINCE: return parse_time("--since", arg, &o->since);
	case OPT_UNTIL: return parse_time("--until", arg, &o->until);
	case OPT_HOST: o->host_pattern = arg; return 0;
	case OPT_EVENT: o->event_filter = arg; return 0;
	case OPT_MODE:
		if (strcmp(arg, "count") != 0 && strcmp(arg, "profile") != 0 && strcmp(arg, "offcpu") != 0)
			return bad("--mode takes count, profile or offcpu, got '%s'", arg);
		o->mode_filter = arg;
		return 0;
	default:
		return -EINVAL;
	}
}

static int apply_option(int c, const char *arg, struct ft_options *o)
{
	uint64_t v;
	switch (c) {
	case 'e':
		if (o->nspecs >= FT_MAX_EVENTS)
			return bad("too many -e events (at most %s)", "1024");
		o->specs[o->nspecs++] = arg;
		return 0;
	case 'l': o->lib = arg; return 0;
	case 'p': return parse_id_list("-p", arg, o->pids, &o->npids, 256);
	case 'L': return parse_id_list("-L", arg, o->tids, &o->ntids, 256);
	case 'c':
		if (o->command)
			return bad("give the command once (-c or --)");
		if (ft_command_split(arg, &o->command) < 0)
			return bad("-c: cannot parse command '%s'", arg);
		o->owned[o->nowned++] = o->command;
		/* the words live in one buffer: argv[0], or argv[2] of sh -c */
		o->owned[o->nowned++] = strcmp(o->command[0], "/bin/sh") == 0 &&
					o->command[1] && strcmp(o->command[1], "-c") == 0 ?
					o->command[2] : o->command[0];
		return 0;
	case 'C': return parse_cpus(arg, o);
	case 'U': o->user_only = true; return 0;
	case 'K': o->kernel_only = true; return 0;
	case 'f': o->format = OUT_FOLDED; return 0;
	case OPT_FORMAT:
		if (out_format_parse(arg, &o->format) < 0)
			return bad("--format: unknown format '%s' (text, folded, top, pprof, speedscope, svg)", arg);
		return 0;
	case 'o': o->output = arg; return 0;
	case 'd': o->delimiter = true; return 0;
	case 'a': o->annotate = true; return 0;
	case 's': o->offsets = true; return 0;
	case 'v': o->addresses = true; return 0;
	case 'P': o->per_process = o->pid_frame = true; return 0;
	case 'm':
		if (parse_u64("-m", arg, &v) < 0)
			return -EINVAL;
		o->min_count = v;
		o->min_block_us = v;
		return 0;
	case OPT_MIN_BLOCK: return parse_u64("--min-block", arg, &o->min_block_us);
	case 'M':
	case OPT_MAX_BLOCK: return parse_u64("--max-block", arg, &o->max_block_us);
	case OPT_MIN_TOTAL: return parse_u64("--min-total", arg, &o->min_total_us);
	case 't':
		if (parse_u64_in("-t", arg, 1, UINT64_MAX, "", &v) < 0)
			return -EINVAL;
		o->top = v;
		return 0;
	case 'x':
		if (o->nexcludes >= 63)
			return bad("too many -x patterns");
		/* "a,b" is two patterns, as kmalloc-top's -e takes them */
		{
			char *dup = strdup(arg), *save = NULL;
			if (!dup || o->nowned >= 128)
				return bad("out of memory");
			o->owned[o->nowned++] = dup;
			for (char *tok = strtok_r(dup, ",", &save); tok && o->nexcludes < 63;
			     tok = strtok_r(NULL, ",", &save))
				o->excludes[o->nexcludes++] = tok;
		}
		return 0;
	case 'r': o->regex = true; return 0;
	case 'i': return parse_secs("-i", arg, &o->interval);
	case 'T': o->timestamp = true; return 0;
	case 'D': return parse_secs("-D", arg, &o->duration);
	case 'F':
		if (parse_u64_in("-F", arg, 1, UINT64_MAX, " Hz", &v) < 0)
			return -EINVAL;
		o->freq = v;
		return 0;
	case OPT_PERIOD:
		if (parse_u64_in("--period", arg, 10000, UINT64_MAX, " ns", &v) < 0)
			return -EINVAL;
		o->period_ns = v;
		return 0;
	case 'I': o->idle = true; return 0;
	case 'u': o->user_threads = true; return 0;
	case 'k': o->kernel_threads = true; return 0;
	case OPT_STATE:
		if (parse_u64("--state", arg, &v) < 0)
			return -EINVAL;
		if (v > 0xffff)
			return bad("--state: '%s' is not a task state mask (0 running, 1 interruptible, 2 uninterruptible, ...)", arg);
		o->state = (long)v;
		return 0;
	case OPT_BACKEND:
		if (strcmp(arg, "perf") == 0)
			o->backend = FT_BACKEND_PERF;
		else if (strcmp(arg, "ftrace") == 0)
			o->backend = FT_BACKEND_FTRACE;
		else
			return bad("--backend takes perf or ftrace, got '%s'", arg);
		return 0;
	case OPT_CALL_GRAPH: return parse_call_graph(arg, o);
	case OPT_BUFFER_SIZE:
		if (parse_u64_in("--buffer-size", arg, 8, 1024 * 1024, " KB per CPU", &v) < 0)
			return -EINVAL;
		o->buffer_kb = v;
		o->buffer_set = true;
		return 0;
	case OPT_MAX_STACKS:
		if (parse_u64_in("--max-stacks", arg, 1, UINT64_MAX, "", &v) < 0)
			return -EINVAL;
		o->max_stacks = v;
		return 0;
	case OPT_THROUGH: o->through = arg; return 0;
	case OPT_MAX_PROBES:
		if (parse_u64_in("--max-probes", arg, 1, UINT64_MAX, "", &v) < 0)
			return -EINVAL;
		o->max_probes = v;
		return 0;
	case OPT_DEBUG: o->debug = true; return 0;
	case OPT_NO_DEMANGLE: o->no_demangle = true; return 0;
	case OPT_KEEP_ROOT: o->keep_root = true; return 0;
	case OPT_FORCE: o->force = true; return 0;
	case OPT_CGROUP:
		if (!*arg)
			return bad("--cgroup needs a cgroup2 path (/system.slice/x.service)");
		o->cgroup = arg;
		return 0;
	case OPT_PER_CGROUP: o->per_cgroup = true; return 0;
	case OPT_INPUT_FORMAT:
		if (report_format_parse(arg, &(enum report_format){ REPORT_AUTO }) < 0)
			return bad("--input-format takes auto, ftrace, perf-script, hist or folded, got '%s'", arg);
		o->input_format = arg;
		return 0;
	case OPT_DIFF: o->diff = true; return 0;
	case OPT_WEIGHT:
		if (strcmp(arg, "samples") == 0)
			o->weight = FT_WEIGHT_SAMPLES;
		else if (strcmp(arg, "period") == 0)
			o->weight = FT_WEIGHT_PERIOD;
		else
			return bad("--weight takes samples or period, got '%s'", arg);
		return 0;
	case OPT_MECHANISM:
		if (strcmp(arg, "kprobe-pmu") != 0 && strcmp(arg, "kprobe-events") != 0 &&
		    strcmp(arg, "function") != 0 && strcmp(arg, "tracepoint") != 0)
			return bad("--mechanism takes kprobe-pmu, kprobe-events, function or tracepoint, got '%s'", arg);
		o->mechanism = arg;
		return 0;
	default:
		return apply_fleet_option(c, arg, o);
	}
}

/* Positional words: count mode takes events and one number (the duration);
 * profile/offcpu take the duration; report takes files. */
static int apply_positional(const char *arg, struct ft_options *o)
{
	switch (o->cmd) {
	case FT_REPORT:
		if (o->nreport_files >= 64)
			return bad("report: at most 64 files");
		o->report_files[o->nreport_files++] = arg;
		return 0;
	case FT_COUNT:
		if (!is_number(arg)) {
			if (o->nspecs >= FT_MAX_EVENTS)
				return bad("too many events");
			o->specs[o->nspecs++] = arg;
			return 0;
		}
		/* a number is the duration */
		__attribute__((fallthrough));
	case FT_PROFILE:
	case FT_OFFCPU:
		if (o->duration > 0)
			return bad("unexpected argument '%s': the duration was already given", arg);
		return parse_secs("DURATION", arg, &o->duration);
	default:
		return bad("unexpected argument '%s'", arg);
	}
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
		o->freq = 49;
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
			ret = apply_positional(gargv[optind++], o);
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
			ret = apply_option(c, optarg, o);
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
